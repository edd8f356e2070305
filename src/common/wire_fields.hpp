// Table-driven wire codecs: a message struct lists its fields once, as a
// tuple of the descriptors below (member pointer, wire name, bound), and
// putFields()/getFields() encode and decode any such struct in that order.
//
// Wire encodings, by the member's type (byte order: the Writer's/Reader's):
//   - integer (u8..u64, i64): its own width; signed as two's complement;
//   - bool: one byte, 0 or 1 (anything else is refused on decode);
//   - enum: its underlying width, within [low, high] both ways;
//   - std::array<std::uint8_t, N>: N raw bytes;
//   - text(): u32 byte count then the bytes, at most `max`, no NUL byte;
//     bytes(): the same with NUL bytes allowed;
//   - list(): u32 element count (at most `max`) then each element: an
//     integer, or a struct with its own `kFields`;
//   - narrow<W>(): an integer member carried as the narrower integer W
//     (encoding a value W cannot hold is refused);
//   - nested(): another struct's fields, in the order of the tuple given,
//     with no prefix.
// Every bound is checked both ways, so an encoder never produces what the
// decoder would refuse. Errors are thrown as the codec's own `Error` type
// (a std::runtime_error built from a message "<Message>.<field>: why").
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tracectl::wire {

// ---- field descriptors -------------------------------------------------------

/// An integer, bool or raw byte array member, at its own width.
template <class T, class M>
struct Plain {
    const char* name;
    M T::*member;
};

/// An enum member at its underlying width, within [low, high].
template <class T, class E>
struct Enum {
    const char* name;
    E T::*member;
    E low;
    E high;
};

/// A std::string member: u32 count then bytes, at most `maxBytes`.
template <class T>
struct Text {
    const char* name;
    std::string T::*member;
    std::size_t maxBytes;
    bool nulAllowed;
};

/// A std::vector member: u32 count (at most `maxCount`) then the elements.
template <class T, class E>
struct List {
    const char* name;
    std::vector<E> T::*member;
    std::size_t maxCount;
};

/// An integer member carried as the narrower integer `W`.
template <class W, class T, class M>
struct Narrow {
    const char* name;
    M T::*member;
};

/// A struct member whose own fields (`fields`, over M) follow in line.
template <class T, class M, class Fields>
struct Nested {
    const char* name;
    M T::*member;
    Fields fields;
};

template <class T, class M>
constexpr Plain<T, M> field(const char* name, M T::*member) {
    static_assert(std::is_integral_v<M> || std::is_same_v<M, std::array<std::uint8_t, 16>>,
                  "field(): integers, bools and 16-byte arrays; enums take their range");
    return {name, member};
}

template <class T, class E>
constexpr Enum<T, E> field(const char* name, E T::*member, E low, E high) {
    static_assert(std::is_enum_v<E>);
    return {name, member, low, high};
}

template <class T>
constexpr Text<T> text(const char* name, std::string T::*member, std::size_t maxBytes) {
    return {name, member, maxBytes, false};
}

template <class T>
constexpr Text<T> bytes(const char* name, std::string T::*member, std::size_t maxBytes) {
    return {name, member, maxBytes, true};
}

template <class T, class E>
constexpr List<T, E> list(const char* name, std::vector<E> T::*member, std::size_t maxCount) {
    return {name, member, maxCount};
}

template <class W, class T, class M>
constexpr Narrow<W, T, M> narrow(const char* name, M T::*member) {
    static_assert(std::is_integral_v<W> && std::is_integral_v<M> && sizeof(W) < sizeof(M));
    return {name, member};
}

template <class T, class M, class Fields>
constexpr Nested<T, M, Fields> nested(const char* name, M T::*member, Fields fields) {
    return {name, member, fields};
}

// ---- byte streams --------------------------------------------------------------

/// `v` with its bytes in order `Order` (as the host reads them: swapped
/// when `Order` is not the host's).
template <std::endian Order, class U>
constexpr U inOrder(U v) noexcept {
    static_assert(std::is_unsigned_v<U>);
    if constexpr (Order == std::endian::native || sizeof(U) == 1) {
        return v;
    } else {
        U swapped = 0;
        for (std::size_t i = 0; i < sizeof(U); ++i) {
            swapped = static_cast<U>((swapped << 8) | (v & 0xff));
            v = static_cast<U>(v >> 8);
        }
        return swapped;
    }
}

/// Appends integers in byte order `Order` to a byte vector.
template <std::endian Order>
class Writer {
public:
    explicit Writer(std::vector<std::byte>& out) : out_(out) {}

    template <class I>
    void integer(I v) {
        static_assert(std::is_integral_v<I>);
        const auto u = inOrder<Order>(static_cast<std::make_unsigned_t<I>>(v));
        raw(&u, sizeof u);
    }
    void raw(const void* data, std::size_t n) {
        const auto* p = static_cast<const std::byte*>(data);
        out_.insert(out_.end(), p, p + n);
    }

private:
    std::vector<std::byte>& out_;
};

/// Reads integers in byte order `Order` from a payload; throws `Error` for a
/// payload too short.
template <std::endian Order, class Error>
class Reader {
public:
    Reader(const std::byte* data, std::size_t size) : data_(data), size_(size) {}

    template <class I>
    I integer() {
        static_assert(std::is_integral_v<I>);
        std::make_unsigned_t<I> u;
        std::memcpy(&u, raw(sizeof u), sizeof u);
        return static_cast<I>(inOrder<Order>(u));
    }
    /// The next `n` bytes (valid as long as the payload is).
    const std::byte* raw(std::size_t n) {
        need(n);
        const std::byte* p = data_ + pos_;
        pos_ += n;
        return p;
    }
    /// Throws unless every byte was read.
    void finish() const {
        if (pos_ != size_)
            throw Error(std::to_string(size_ - pos_) + " trailing payload bytes");
    }

private:
    void need(std::size_t n) const {
        if (size_ - pos_ < n)
            throw Error("payload too short");
    }
    const std::byte* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

// ---- the generic codec --------------------------------------------------------

namespace detail {

template <class Error>
[[noreturn]] void fail(std::string_view owner, const char* field, std::string_view why) {
    std::string what(owner);
    what += '.';
    what += field;
    what += ": ";
    what += why;
    throw Error(what);
}

template <class Error>
void checkText(std::string_view s, std::size_t maxBytes, bool nulAllowed, std::string_view owner,
               const char* field) {
    if (s.size() > maxBytes)
        fail<Error>(owner, field, "longer than " + std::to_string(maxBytes) + " bytes");
    if (!nulAllowed && s.find('\0') != std::string_view::npos)
        fail<Error>(owner, field, "contains a NUL byte");
}

template <class Error, class E>
void checkEnum(E v, E low, E high, std::string_view owner, const char* field) {
    using U = std::underlying_type_t<E>;
    if (static_cast<U>(v) < static_cast<U>(low) || static_cast<U>(v) > static_cast<U>(high))
        fail<Error>(owner, field, "unknown value");
}

template <class E>
concept HasFields = requires {
    E::kFields;
};

} // namespace detail

template <class Error, std::endian Order, class T, class Fields>
void putFields(Writer<Order>& w, const T& m, const Fields& fields, std::string_view owner);
template <class Error, std::endian Order, class T, class Fields>
void getFields(Reader<Order, Error>& r, T& m, const Fields& fields, std::string_view owner);

template <class Error, std::endian Order, class T, class M>
void put(Writer<Order>& w, const T& m, const Plain<T, M>& f, std::string_view) {
    const M& v = m.*f.member;
    if constexpr (std::is_same_v<M, bool>)
        w.integer(std::uint8_t{v ? std::uint8_t{1} : std::uint8_t{0}});
    else if constexpr (std::is_integral_v<M>)
        w.integer(v);
    else
        w.raw(v.data(), v.size());
}

template <class Error, std::endian Order, class T, class M>
void get(Reader<Order, Error>& r, T& m, const Plain<T, M>& f, std::string_view owner) {
    M& v = m.*f.member;
    if constexpr (std::is_same_v<M, bool>) {
        const auto b = r.template integer<std::uint8_t>();
        if (b > 1)
            detail::fail<Error>(owner, f.name, "boolean must be 0 or 1");
        v = b == 1;
    } else if constexpr (std::is_integral_v<M>) {
        v = r.template integer<M>();
    } else {
        std::memcpy(v.data(), r.raw(v.size()), v.size());
    }
}

template <class Error, std::endian Order, class T, class E>
void put(Writer<Order>& w, const T& m, const Enum<T, E>& f, std::string_view owner) {
    detail::checkEnum<Error>(m.*f.member, f.low, f.high, owner, f.name);
    w.integer(static_cast<std::underlying_type_t<E>>(m.*f.member));
}

template <class Error, std::endian Order, class T, class E>
void get(Reader<Order, Error>& r, T& m, const Enum<T, E>& f, std::string_view owner) {
    const auto v = static_cast<E>(r.template integer<std::underlying_type_t<E>>());
    detail::checkEnum<Error>(v, f.low, f.high, owner, f.name);
    m.*f.member = v;
}

template <class Error, std::endian Order, class T>
void put(Writer<Order>& w, const T& m, const Text<T>& f, std::string_view owner) {
    const std::string& s = m.*f.member;
    detail::checkText<Error>(s, f.maxBytes, f.nulAllowed, owner, f.name);
    w.integer(static_cast<std::uint32_t>(s.size()));
    w.raw(s.data(), s.size());
}

template <class Error, std::endian Order, class T>
void get(Reader<Order, Error>& r, T& m, const Text<T>& f, std::string_view owner) {
    const auto n = r.template integer<std::uint32_t>();
    if (n > f.maxBytes)
        detail::fail<Error>(owner, f.name, "longer than " + std::to_string(f.maxBytes) + " bytes");
    std::string& s = m.*f.member;
    s.assign(reinterpret_cast<const char*>(r.raw(n)), n);
    detail::checkText<Error>(s, f.maxBytes, f.nulAllowed, owner, f.name);
}

template <class Error, std::endian Order, class T, class E>
void put(Writer<Order>& w, const T& m, const List<T, E>& f, std::string_view owner) {
    const std::vector<E>& v = m.*f.member;
    if (v.size() > f.maxCount)
        detail::fail<Error>(owner, f.name, "more than " + std::to_string(f.maxCount));
    w.integer(static_cast<std::uint32_t>(v.size()));
    for (const E& e : v) {
        if constexpr (detail::HasFields<E>)
            putFields<Error>(w, e, E::kFields, owner);
        else
            w.integer(e);
    }
}

template <class Error, std::endian Order, class T, class E>
void get(Reader<Order, Error>& r, T& m, const List<T, E>& f, std::string_view owner) {
    const auto n = r.template integer<std::uint32_t>();
    if (n > f.maxCount)
        detail::fail<Error>(owner, f.name, "more than " + std::to_string(f.maxCount));
    std::vector<E>& v = m.*f.member;
    v.clear();
    v.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        if constexpr (detail::HasFields<E>)
            getFields<Error>(r, v.emplace_back(), E::kFields, owner);
        else
            v.push_back(r.template integer<E>());
    }
}

template <class Error, std::endian Order, class W, class T, class M>
void put(Writer<Order>& w, const T& m, const Narrow<W, T, M>& f, std::string_view owner) {
    const M v = m.*f.member;
    if (!std::in_range<W>(v))
        detail::fail<Error>(owner, f.name, "does not fit its wire width");
    w.integer(static_cast<W>(v));
}

template <class Error, std::endian Order, class W, class T, class M>
void get(Reader<Order, Error>& r, T& m, const Narrow<W, T, M>& f, std::string_view) {
    m.*f.member = static_cast<M>(r.template integer<W>());
}

template <class Error, std::endian Order, class T, class M, class Fields>
void put(Writer<Order>& w, const T& m, const Nested<T, M, Fields>& f, std::string_view owner) {
    putFields<Error>(w, m.*f.member, f.fields, owner);
}

template <class Error, std::endian Order, class T, class M, class Fields>
void get(Reader<Order, Error>& r, T& m, const Nested<T, M, Fields>& f, std::string_view owner) {
    getFields<Error>(r, m.*f.member, f.fields, owner);
}

/// Writes `m`'s `fields` in order. Throws Error for a value out of its bound.
template <class Error, std::endian Order, class T, class Fields>
void putFields(Writer<Order>& w, const T& m, const Fields& fields, std::string_view owner) {
    std::apply([&](const auto&... f) { (put<Error>(w, m, f, owner), ...); }, fields);
}

/// Reads `m`'s `fields` in order. Throws Error for a value out of its bound
/// or a payload too short.
template <class Error, std::endian Order, class T, class Fields>
void getFields(Reader<Order, Error>& r, T& m, const Fields& fields, std::string_view owner) {
    std::apply([&](const auto&... f) { (get(r, m, f, owner), ...); }, fields);
}

} // namespace tracectl::wire
