// The generic field codec (common/wire_fields.hpp) on a struct of every
// kind of field, in both byte orders: the bytes, and the bounds both ways.
#include "common/wire_fields.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace wire = tracectl::wire;

namespace {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Colour : std::uint8_t { Red = 1, Green = 2, Blue = 3 };

struct Pair {
    std::uint16_t a = 0;
    std::uint16_t b = 0;
    static constexpr auto kFields =
        std::tuple{wire::field("a", &Pair::a), wire::field("b", &Pair::b)};
    bool operator==(const Pair&) const = default;
};

struct Inner {
    std::uint32_t width = 0;
    bool flag = false;
    bool operator==(const Inner&) const = default;
};
inline constexpr auto kInnerFields = std::tuple{wire::narrow<std::uint8_t>("width", &Inner::width),
                                                wire::field("flag", &Inner::flag)};

struct Sample {
    std::uint32_t u = 0;
    std::int64_t i = 0;
    Colour colour = Colour::Red;
    std::string name;
    std::string blob;
    std::vector<std::uint16_t> numbers;
    std::vector<Pair> pairs;
    Inner inner;
    std::array<std::uint8_t, 16> uuid{};
    static constexpr auto kFields = std::tuple{
        wire::field("u", &Sample::u),
        wire::field("i", &Sample::i),
        wire::field("colour", &Sample::colour, Colour::Red, Colour::Blue),
        wire::text("name", &Sample::name, 4),
        wire::bytes("blob", &Sample::blob, 2),
        wire::list("numbers", &Sample::numbers, 2),
        wire::list("pairs", &Sample::pairs, 1),
        wire::nested("inner", &Sample::inner, kInnerFields),
        wire::field("uuid", &Sample::uuid),
    };
    bool operator==(const Sample&) const = default;
};

Sample sample() {
    Sample s{0x01020304, -2,       Colour::Blue, "ab", std::string("\0x", 2),
             {0x0506},   {{7, 8}}, {64, true},   {}};
    s.uuid[15] = 0xee;
    return s;
}

template <std::endian Order>
std::vector<std::byte> encode(const Sample& s) {
    std::vector<std::byte> out;
    wire::Writer<Order> w(out);
    wire::putFields<Error>(w, s, Sample::kFields, "Sample");
    return out;
}

template <std::endian Order>
Sample decode(const std::vector<std::byte>& bytes) {
    wire::Reader<Order, Error> r(bytes.data(), bytes.size());
    Sample s;
    wire::getFields(r, s, Sample::kFields, "Sample");
    r.finish();
    return s;
}

std::vector<std::byte> bytesOf(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int v : values)
        out.push_back(static_cast<std::byte>(v));
    return out;
}

std::vector<std::byte> tail(std::vector<std::byte> all) {
    all.resize(all.size() - 16); // the uuid
    return all;
}

} // namespace

TEST(WireFields, LittleEndianBytesInFieldOrder) {
    EXPECT_EQ(tail(encode<std::endian::little>(sample())),
              bytesOf({4,    3,    2,    1,                            // u
                       0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // i
                       3,                                              // colour
                       2,    0,    0,    0,    'a',  'b',              // name
                       2,    0,    0,    0,    0,    'x',              // blob
                       1,    0,    0,    0,    6,    5,                // numbers
                       1,    0,    0,    0,    7,    0,    8,    0,    // pairs
                       64,   1}));                                     // inner
    EXPECT_EQ(decode<std::endian::little>(encode<std::endian::little>(sample())), sample());
}

TEST(WireFields, BigEndianBytesInFieldOrder) {
    EXPECT_EQ(tail(encode<std::endian::big>(sample())),
              bytesOf({1,    2,    3,    4,                            // u
                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, // i
                       3,                                              // colour
                       0,    0,    0,    2,    'a',  'b',              // name
                       0,    0,    0,    2,    0,    'x',              // blob
                       0,    0,    0,    1,    5,    6,                // numbers
                       0,    0,    0,    1,    0,    7,    0,    8,    // pairs
                       64,   1}));                                     // inner
    EXPECT_EQ(decode<std::endian::big>(encode<std::endian::big>(sample())), sample());
    EXPECT_EQ(encode<std::endian::big>(sample()).back(), std::byte{0xee});
}

TEST(WireFields, BoundsAreCheckedWhenEncoding) {
    const auto refused = [](auto change) {
        Sample s = sample();
        change(s);
        EXPECT_THROW(encode<std::endian::little>(s), Error);
    };
    refused([](Sample& s) { s.colour = Colour{0}; });
    refused([](Sample& s) { s.colour = Colour{4}; });
    refused([](Sample& s) { s.name = "abcde"; });
    refused([](Sample& s) { s.name = std::string("a\0", 2); });
    refused([](Sample& s) { s.blob = "abc"; });
    refused([](Sample& s) { s.numbers = {1, 2, 3}; });
    refused([](Sample& s) { s.pairs = {{}, {}}; });
    refused([](Sample& s) { s.inner.width = 256; });
    Sample most = sample();
    most.name = "abcd";
    most.numbers = {1, 2};
    most.inner.width = 255;
    EXPECT_EQ(decode<std::endian::little>(encode<std::endian::little>(most)), most);
}

TEST(WireFields, BoundsAreCheckedWhenDecoding) {
    const std::vector<std::byte> good = encode<std::endian::little>(sample());
    const auto refused = [&](std::size_t at, int value) {
        std::vector<std::byte> bad = good;
        bad.at(at) = static_cast<std::byte>(value);
        EXPECT_THROW(decode<std::endian::little>(bad), Error) << at << " = " << value;
    };
    refused(12, 0); // colour below its range
    refused(12, 4); // colour above it
    refused(13, 5); // name longer than 4
    refused(17, 0); // a NUL in name
    refused(25, 3); // numbers: more than 2
    refused(31, 2); // pairs: more than 1
    refused(40, 2); // a bool neither 0 nor 1
    std::vector<std::byte> shorter = good;
    shorter.pop_back();
    EXPECT_THROW(decode<std::endian::little>(shorter), Error);
    std::vector<std::byte> longer = good;
    longer.push_back(std::byte{0});
    EXPECT_THROW(decode<std::endian::little>(longer), Error);
    std::vector<std::byte> bad = good;
    bad[13] = std::byte{5};
    try {
        decode<std::endian::little>(bad);
        ADD_FAILURE() << "an over-long name decoded";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "Sample.name: longer than 4 bytes");
    }
}
