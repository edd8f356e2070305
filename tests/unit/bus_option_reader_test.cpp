// readOptions (src/daemon/bus/option_reader.cpp): the a{sv} options of a raw
// sd-bus message, read into sdbus::Variant values, on messages built
// without a bus daemon.
#include "bus/option_reader.hpp"
#include "bus_message_test_support.hpp"
#include "common/error.hpp"

#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <system_error>
#include <vector>

using tracectl::Error;
using tracectl::ErrorCode;
using namespace tracectl::bus;
using namespace tracectl::bus::test;

namespace {

using Options = std::map<std::string, sdbus::Variant>;

/// The tracectl::Error `f` throws; fails the test when it throws none.
Error errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no tracectl::Error thrown";
    return Error(ErrorCode::Failed, "none");
}

class OptionReader : public ::testing::Test {
protected:
    UnconnectedBusPtr bus_ = unconnectedBus();
    MessagePtr m_ = newMessage(bus_.get());
};

TEST_F(OptionReader, EveryBasicTypeComesBackAsItsVariant) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}", 12,                        //
                                    "b", "b", 1,                                  //
                                    "y", "y", uint8_t{200},                       //
                                    "n", "n", int16_t{-1234},                     //
                                    "q", "q", uint16_t{54321},                    //
                                    "i", "i", int32_t{-70000},                    //
                                    "u", "u", uint32_t{4000000000u},              //
                                    "x", "x", int64_t{-5000000000},               //
                                    "t", "t", uint64_t{18000000000000000000u},    //
                                    "d", "d", 2.5,                                //
                                    "s", "s", "text with spaces",                 //
                                    "o", "o", "/org/tracectl/Tracing1/session/x", //
                                    "g", "g", "a{sv}"),
              0);
    sealForReading(m_.get());
    const Options o = readOptions(m_.get());
    ASSERT_EQ(o.size(), 12u);
    const std::map<std::string, std::string> expectedTypes = {
        {"b", "b"}, {"y", "y"}, {"n", "n"}, {"q", "q"}, {"i", "i"}, {"u", "u"},
        {"x", "x"}, {"t", "t"}, {"d", "d"}, {"s", "s"}, {"o", "o"}, {"g", "g"}};
    for (const auto& [key, type] : expectedTypes)
        EXPECT_EQ(o.at(key).peekValueType(), type) << key;
    EXPECT_EQ(o.at("b").get<bool>(), true);
    EXPECT_EQ(o.at("y").get<uint8_t>(), 200);
    EXPECT_EQ(o.at("n").get<int16_t>(), -1234);
    EXPECT_EQ(o.at("q").get<uint16_t>(), 54321);
    EXPECT_EQ(o.at("i").get<int32_t>(), -70000);
    EXPECT_EQ(o.at("u").get<uint32_t>(), 4000000000u);
    EXPECT_EQ(o.at("x").get<int64_t>(), -5000000000);
    EXPECT_EQ(o.at("t").get<uint64_t>(), 18000000000000000000u);
    EXPECT_EQ(o.at("d").get<double>(), 2.5);
    EXPECT_EQ(o.at("s").get<std::string>(), "text with spaces");
    // Paths and signatures keep their types: an option that wants a string
    // (s) refuses them, as it refuses every other type.
    EXPECT_EQ(o.at("o").get<sdbus::ObjectPath>(), "/org/tracectl/Tracing1/session/x");
    EXPECT_EQ(o.at("g").get<sdbus::Signature>(), "a{sv}");
    EXPECT_FALSE(o.at("o").containsValueOfType<std::string>());
    EXPECT_FALSE(o.at("g").containsValueOfType<std::string>());
}

TEST_F(OptionReader, FalseAndEmptyValuesAreKept) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}", 3, "off", "b", 0, "empty", "s", "", "none",
                                    "as", 0),
              0);
    sealForReading(m_.get());
    const Options o = readOptions(m_.get());
    ASSERT_EQ(o.size(), 3u);
    EXPECT_EQ(o.at("off").get<bool>(), false);
    EXPECT_EQ(o.at("empty").get<std::string>(), "");
    EXPECT_EQ(o.at("none").peekValueType(), "as");
    EXPECT_TRUE(o.at("none").get<std::vector<std::string>>().empty());
}

TEST_F(OptionReader, StringArraysComeBackInOrder) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}", 1, "events", "as", 3, "app:start", "app:*",
                                    "app:start"),
              0);
    sealForReading(m_.get());
    const Options o = readOptions(m_.get());
    ASSERT_EQ(o.size(), 1u);
    EXPECT_EQ(o.at("events").peekValueType(), "as");
    EXPECT_EQ(o.at("events").get<std::vector<std::string>>(),
              (std::vector<std::string>{"app:start", "app:*", "app:start"}));
}

// A client's message is read on the daemon's one loop: an array or a dictionary past its
// bound is refused when reading gets there, not read whole first.
TEST_F(OptionReader, StringArraysAreBoundedAndRefusedPastTheBound) {
    const auto message = [&](std::size_t items) {
        MessagePtr m = newMessage(bus_.get());
        EXPECT_GE(sd_bus_message_open_container(m.get(), 'a', "{sv}"), 0);
        EXPECT_GE(sd_bus_message_open_container(m.get(), 'e', "sv"), 0);
        EXPECT_GE(sd_bus_message_append_basic(m.get(), 's', "probes"), 0);
        EXPECT_GE(sd_bus_message_open_container(m.get(), 'v', "as"), 0);
        EXPECT_GE(sd_bus_message_open_container(m.get(), 'a', "s"), 0);
        for (std::size_t i = 0; i < items; ++i)
            EXPECT_GE(sd_bus_message_append_basic(m.get(), 's', "x"), 0);
        for (int level = 0; level < 4; ++level)
            EXPECT_GE(sd_bus_message_close_container(m.get()), 0);
        sealForReading(m.get());
        return m;
    };
    const MessagePtr atBound = message(kMaxOptionArrayItems);
    EXPECT_EQ(readOptions(atBound.get()).at("probes").get<std::vector<std::string>>().size(),
              kMaxOptionArrayItems);
    const MessagePtr past = message(kMaxOptionArrayItems + 1);
    const Error e = errorOf([&] { readOptions(past.get()); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'probes' holds more than 4096 strings"),
              std::string::npos)
        << e.what();
}

TEST_F(OptionReader, ADictionaryPastItsBoundIsRefused) {
    EXPECT_GE(sd_bus_message_open_container(m_.get(), 'a', "{sv}"), 0);
    for (std::size_t i = 0; i <= kMaxOptionEntries; ++i) {
        const std::string key = "k" + std::to_string(i);
        EXPECT_GE(sd_bus_message_append(m_.get(), "{sv}", key.c_str(), "b", 1), 0);
    }
    EXPECT_GE(sd_bus_message_close_container(m_.get()), 0);
    sealForReading(m_.get());
    const Error e = errorOf([&] { readOptions(m_.get()); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("more than 256 options"), std::string::npos) << e.what();
}

TEST_F(OptionReader, AnEmptyDictionaryGivesNoOptions) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}", 0), 0);
    sealForReading(m_.get());
    EXPECT_TRUE(readOptions(m_.get()).empty());
    EXPECT_EQ(sd_bus_message_at_end(m_.get(), 1), 1);
}

TEST_F(OptionReader, TheReadPositionEndsRightAfterTheDictionary) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}su", 2, "a", "u", 1u, "b", "as", 1, "x",
                                    "next argument", 42u),
              0);
    sealForReading(m_.get());
    EXPECT_EQ(readOptions(m_.get()).size(), 2u);
    const char* next = nullptr;
    uint32_t last = 0;
    ASSERT_EQ(sd_bus_message_read(m_.get(), "su", &next, &last), 1);
    EXPECT_STREQ(next, "next argument");
    EXPECT_EQ(last, 42u);
    EXPECT_EQ(sd_bus_message_at_end(m_.get(), 1), 1);
}

TEST_F(OptionReader, AnEmptyDictionaryIsFollowedByTheNextArgument) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}s", 0, "next"), 0);
    sealForReading(m_.get());
    EXPECT_TRUE(readOptions(m_.get()).empty());
    const char* next = nullptr;
    ASSERT_EQ(sd_bus_message_read(m_.get(), "s", &next), 1);
    EXPECT_STREQ(next, "next");
}

TEST_F(OptionReader, AKeyGivenTwiceIsAnInvalidArgumentNamingIt) {
    // Same type and different types: neither the first nor the last value wins.
    ASSERT_GE(sd_bus_message_append(m_.get(), "a{sv}", 3, "output-path", "s", "/tmp/a", "mode", "s",
                                    "local", "output-path", "s", "/tmp/b"),
              0);
    sealForReading(m_.get());
    const Error e = errorOf([&] { readOptions(m_.get()); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'output-path'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
}

TEST_F(OptionReader, AKeyGivenTwiceWithDifferentTypesIsRefusedToo) {
    ASSERT_GE(
        sd_bus_message_append(m_.get(), "a{sv}", 2, "interactive", "b", 1, "interactive", "u", 0u),
        0);
    sealForReading(m_.get());
    const Error e = errorOf([&] { readOptions(m_.get()); });
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'interactive'"), std::string::npos) << e.what();
}

/// The error for one option `key` whose variant holds `type`, appended by
/// `appendValue` (which appends the variant's contents).
class UnsupportedType : public OptionReader {
protected:
    Error readWith(const char* key, const char* type,
                   const std::function<void(sd_bus_message*)>& appendValue) {
        sd_bus_message* m = m_.get();
        check(sd_bus_message_open_container(m, 'a', "{sv}"), "a{sv}");
        check(sd_bus_message_append(m, "{sv}", "good", "u", 1u), "{sv}");
        check(sd_bus_message_open_container(m, 'e', "sv"), "{sv}");
        check(sd_bus_message_append(m, "s", key), "s");
        check(sd_bus_message_open_container(m, 'v', type), "v");
        appendValue(m);
        check(sd_bus_message_close_container(m), "v");
        check(sd_bus_message_close_container(m), "{sv}");
        check(sd_bus_message_close_container(m), "a{sv}");
        sealForReading(m);
        return errorOf([&] { readOptions(m); });
    }

    static void expectNamesKeyAndType(const Error& e, const std::string& key,
                                      const std::string& type) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("'" + key + "'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'" + type + "'"), std::string::npos) << e.what();
    }
};

TEST_F(UnsupportedType, AStringDictionaryIsRefused) {
    const Error e = readWith("labels", "a{ss}", [](sd_bus_message* m) {
        check(sd_bus_message_append(m, "a{ss}", 1, "k", "v"), "a{ss}");
    });
    expectNamesKeyAndType(e, "labels", "a{ss}");
}

TEST_F(UnsupportedType, AVariantInsideTheVariantIsRefused) {
    const Error e = readWith("nested", "v", [](sd_bus_message* m) {
        check(sd_bus_message_append(m, "v", "s", "inner"), "v");
    });
    expectNamesKeyAndType(e, "nested", "v");
}

TEST_F(UnsupportedType, AStructIsRefused) {
    const Error e = readWith("pair", "(ii)", [](sd_bus_message* m) {
        check(sd_bus_message_append(m, "(ii)", 1, 2), "(ii)");
    });
    expectNamesKeyAndType(e, "pair", "(ii)");
}

TEST_F(UnsupportedType, AnArrayOfIntegersIsRefused) {
    const Error e = readWith("cpus", "au", [](sd_bus_message* m) {
        check(sd_bus_message_append(m, "au", 2, 0u, 1u), "au");
    });
    expectNamesKeyAndType(e, "cpus", "au");
}

TEST_F(OptionReader, AMessageWithoutADictionaryThereIsASystemError) {
    ASSERT_GE(sd_bus_message_append(m_.get(), "s", "not options"), 0);
    sealForReading(m_.get());
    EXPECT_THROW(readOptions(m_.get()), std::system_error);
}

} // namespace
