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
//     with no prefix;
//   - optional(): a std::optional member as LTTng's LTTNG_OPTIONAL: u8
//     is_set (0 or 1), `Padding` zero bytes, then the value (0 when unset);
//   - lengthOf() + cstring(): a detached length (LTTng's `*_len` fields): a
//     u32 byte count, NUL included (0 for an absent std::optional), where
//     lengthOf() stands, and the string's bytes and NUL where cstring()
//     stands, later; at most `maxWithNul` bytes, no NUL inside;
//   - countOf() + elements(): a detached count: a u32 element count (at
//     most `max`) where countOf() stands, the elements where elements()
//     stands;
//   - tail(): a std::span<const std::byte> member: the rest of the payload,
//     raw, sized by the frame (decoding views the payload's bytes).
// wireSize() gives the bytes a struct encodes to; fixedSize<Fields>() the
// bytes of a field list made of fixed-width fields only (0 otherwise).
// put() and putFields() write to a Writer (appending to a vector) or a
// BufferWriter (a buffer sized with wireSize()).
// Every bound is checked both ways, so an encoder never produces what the
// decoder would refuse. Errors are thrown as the codec's own `Error` type
// (a std::runtime_error built from a message "<Message>.<field>: why").
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
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
    static constexpr std::size_t kWireSize = sizeof(M);
    const char* name;
    M T::*member;
};

/// An enum member at its underlying width, within [low, high].
template <class T, class E>
struct Enum {
    static constexpr std::size_t kWireSize = sizeof(E);
    const char* name;
    E T::*member;
    E low;
    E high;
};

/// A std::string member: u32 count then bytes, at most `maxBytes`.
template <class T>
struct Text {
    static constexpr std::size_t kWireSize = 0; ///< variable
    const char* name;
    std::string T::*member;
    std::size_t maxBytes;
    bool nulAllowed;
};

/// A std::vector member: u32 count (at most `maxCount`) then the elements.
template <class T, class E>
struct List {
    static constexpr std::size_t kWireSize = 0; ///< variable
    const char* name;
    std::vector<E> T::*member;
    std::size_t maxCount;
};

/// An integer member carried as the narrower integer `W`.
template <class W, class T, class M>
struct Narrow {
    static constexpr std::size_t kWireSize = sizeof(W);
    const char* name;
    M T::*member;
};

/// The bytes of a field list whose every field has a fixed width; 0 when
/// one has not.
template <class Fields>
constexpr std::size_t fixedSize() {
    return []<class... F>(std::type_identity<std::tuple<F...>>) {
        return ((F::kWireSize != 0) && ...) ? (F::kWireSize + ... + std::size_t{0}) : 0;
    }(std::type_identity<std::remove_cvref_t<Fields>>{});
}

/// A struct member whose own fields (`fields`, over M) follow in line.
template <class T, class M, class Fields>
struct Nested {
    static constexpr std::size_t kWireSize = fixedSize<Fields>();
    const char* name;
    M T::*member;
    Fields fields;
};

/// A std::optional<V> member as LTTNG_OPTIONAL(V), `Padding` bytes between
/// is_set and the value; an enum V within [low, high] when set.
template <std::size_t Padding, class T, class V>
struct Optional {
    static constexpr std::size_t kWireSize = 1 + Padding + sizeof(V);
    const char* name;
    std::optional<V> T::*member;
    V low;
    V high;
};

/// The detached u32 length of a std::string (or std::optional<std::string>)
/// member that a CString field carries later.
template <class T, class S>
struct LengthOf {
    static constexpr std::size_t kWireSize = 4;
    const char* name;
    S T::*member;
    std::size_t maxWithNul;
};

/// The bytes and NUL of a string member whose LengthOf field came before.
template <class T, class S>
struct CString {
    static constexpr std::size_t kWireSize = 0; ///< variable
    const char* name;
    S T::*member;
};

/// The detached u32 count of a std::vector member that an Elements field
/// carries later.
template <class T, class E>
struct CountOf {
    static constexpr std::size_t kWireSize = 4;
    const char* name;
    std::vector<E> T::*member;
    std::size_t maxCount;
};

/// The elements of a std::vector member whose CountOf field came before.
template <class T, class E>
struct Elements {
    static constexpr std::size_t kWireSize = 0; ///< variable
    const char* name;
    std::vector<E> T::*member;
};

/// A byte span member: the rest of the payload.
template <class T>
struct Tail {
    static constexpr std::size_t kWireSize = 0; ///< variable
    const char* name;
    std::span<const std::byte> T::*member;
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

template <std::size_t Padding = 0, class T, class V>
constexpr Optional<Padding, T, V> optional(const char* name, std::optional<V> T::*member) {
    static_assert(std::is_integral_v<V>, "optional(): integers; enums take their range");
    return {name, member, std::numeric_limits<V>::min(), std::numeric_limits<V>::max()};
}

template <std::size_t Padding = 0, class T, class E>
constexpr Optional<Padding, T, E> optional(const char* name, std::optional<E> T::*member, E low,
                                           E high) {
    static_assert(std::is_enum_v<E>);
    return {name, member, low, high};
}

template <class T, class S>
constexpr LengthOf<T, S> lengthOf(const char* name, S T::*member, std::size_t maxWithNul) {
    static_assert(std::is_same_v<S, std::string> || std::is_same_v<S, std::optional<std::string>>);
    return {name, member, maxWithNul};
}

template <class T, class S>
constexpr CString<T, S> cstring(const char* name, S T::*member) {
    return {name, member};
}

template <class T, class E>
constexpr CountOf<T, E> countOf(const char* name, std::vector<E> T::*member, std::size_t maxCount) {
    return {name, member, maxCount};
}

template <class T, class E>
constexpr Elements<T, E> elements(const char* name, std::vector<E> T::*member) {
    return {name, member};
}

template <class T>
constexpr Tail<T> tail(const char* name, std::span<const std::byte> T::*member) {
    return {name, member};
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

/// integer(): `v` in byte order `Order`, through the writer's own raw().
template <std::endian Order, class Self>
struct IntegerWriter {
    template <class I>
    void integer(I v) {
        static_assert(std::is_integral_v<I>);
        const auto u = inOrder<Order>(static_cast<std::make_unsigned_t<I>>(v));
        static_cast<Self*>(this)->raw(&u, sizeof u);
    }
};

/// Appends integers in byte order `Order` to a byte vector.
template <std::endian Order>
class Writer : public IntegerWriter<Order, Writer<Order>> {
public:
    explicit Writer(std::vector<std::byte>& out) : out_(out) {}

    void raw(const void* data, std::size_t n) {
        const auto* p = static_cast<const std::byte*>(data);
        out_.insert(out_.end(), p, p + n);
    }
    void zeros(std::size_t n) { out_.insert(out_.end(), n, std::byte{0}); }

private:
    std::vector<std::byte>& out_;
};

/// Writes integers in byte order `Order` into a buffer sized beforehand
/// (with wireSize()): no allocation nor capacity check per field. Writing
/// past the buffer's end throws std::length_error (a wireSize() that does
/// not match the fields: a bug).
template <std::endian Order>
class BufferWriter : public IntegerWriter<Order, BufferWriter<Order>> {
public:
    explicit BufferWriter(std::span<std::byte> buffer)
        : at_(buffer.data()), end_(buffer.data() + buffer.size()) {}

    void raw(const void* data, std::size_t n) {
        std::byte* to = claim(n);
        if (n != 0)
            std::memcpy(to, data, n);
    }
    void zeros(std::size_t n) { std::memset(claim(n), 0, n); }
    /// Bytes not written yet.
    std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - at_); }

private:
    std::byte* claim(std::size_t n) {
        if (n > left())
            throw std::length_error("wire::BufferWriter: more bytes than wireSize() said");
        std::byte* p = at_;
        at_ += n;
        return p;
    }
    std::byte* at_;
    std::byte* end_;
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
    std::size_t remaining() const noexcept { return size_ - pos_; }
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

template <class Error, class W, class T, class Fields>
void putFields(W& w, const T& m, const Fields& fields, std::string_view owner);
template <class Error, std::endian Order, class T, class Fields>
void getFields(Reader<Order, Error>& r, T& m, const Fields& fields, std::string_view owner);

template <class Error, class W, class T, class M>
void put(W& w, const T& m, const Plain<T, M>& f, std::string_view) {
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

template <class Error, class W, class T, class E>
void put(W& w, const T& m, const Enum<T, E>& f, std::string_view owner) {
    detail::checkEnum<Error>(m.*f.member, f.low, f.high, owner, f.name);
    w.integer(static_cast<std::underlying_type_t<E>>(m.*f.member));
}

template <class Error, std::endian Order, class T, class E>
void get(Reader<Order, Error>& r, T& m, const Enum<T, E>& f, std::string_view owner) {
    const auto v = static_cast<E>(r.template integer<std::underlying_type_t<E>>());
    detail::checkEnum<Error>(v, f.low, f.high, owner, f.name);
    m.*f.member = v;
}

template <class Error, class W, class T>
void put(W& w, const T& m, const Text<T>& f, std::string_view owner) {
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

template <class Error, class W, class T, class E>
void put(W& w, const T& m, const List<T, E>& f, std::string_view owner) {
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

template <class Error, class W, class N, class T, class M>
void put(W& w, const T& m, const Narrow<N, T, M>& f, std::string_view owner) {
    const M v = m.*f.member;
    if (!std::in_range<N>(v))
        detail::fail<Error>(owner, f.name, "does not fit its wire width");
    w.integer(static_cast<N>(v));
}

template <class Error, std::endian Order, class W, class T, class M>
void get(Reader<Order, Error>& r, T& m, const Narrow<W, T, M>& f, std::string_view) {
    m.*f.member = static_cast<M>(r.template integer<W>());
}

template <class Error, class W, class T, class M, class Fields>
void put(W& w, const T& m, const Nested<T, M, Fields>& f, std::string_view owner) {
    putFields<Error>(w, m.*f.member, f.fields, owner);
}

template <class Error, std::endian Order, class T, class M, class Fields>
void get(Reader<Order, Error>& r, T& m, const Nested<T, M, Fields>& f, std::string_view owner) {
    getFields<Error>(r, m.*f.member, f.fields, owner);
}

template <class Error, class W, std::size_t P, class T, class V>
void put(W& w, const T& m, const Optional<P, T, V>& f, std::string_view owner) {
    const std::optional<V>& v = m.*f.member;
    w.integer(std::uint8_t{v ? std::uint8_t{1} : std::uint8_t{0}});
    w.zeros(P);
    if constexpr (std::is_enum_v<V>) {
        if (v)
            detail::checkEnum<Error>(*v, f.low, f.high, owner, f.name);
        w.integer(v ? static_cast<std::underlying_type_t<V>>(*v) : std::underlying_type_t<V>{0});
    } else {
        w.integer(v.value_or(V{0}));
    }
}

/// As LTTng reads an LTTNG_OPTIONAL: the padding, and the value when unset,
/// are not looked at.
template <class Error, std::endian Order, std::size_t P, class T, class V>
void get(Reader<Order, Error>& r, T& m, const Optional<P, T, V>& f, std::string_view owner) {
    const auto isSet = r.template integer<std::uint8_t>();
    if (isSet > 1)
        detail::fail<Error>(owner, f.name, "is_set must be 0 or 1");
    r.raw(P);
    std::optional<V>& v = m.*f.member;
    if constexpr (std::is_enum_v<V>) {
        const auto value = static_cast<V>(r.template integer<std::underlying_type_t<V>>());
        if (isSet == 1)
            detail::checkEnum<Error>(value, f.low, f.high, owner, f.name);
        v = isSet == 1 ? std::optional<V>(value) : std::nullopt;
    } else {
        const auto value = r.template integer<V>();
        v = isSet == 1 ? std::optional<V>(value) : std::nullopt;
    }
}

namespace detail {

/// The string a LengthOf/CString pair carries; nullptr for an absent one.
template <class S>
constexpr auto* present(S& s) noexcept {
    if constexpr (std::is_same_v<std::remove_const_t<S>, std::string>)
        return &s;
    else
        return s ? &*s : nullptr;
}

} // namespace detail

template <class Error, class W, class T, class S>
void put(W& w, const T& m, const LengthOf<T, S>& f, std::string_view owner) {
    const std::string* s = detail::present(m.*f.member);
    if (s != nullptr) {
        if (s->size() + 1 > f.maxWithNul)
            detail::fail<Error>(owner, f.name,
                                std::to_string(s->size()) + " bytes long; at most " +
                                    std::to_string(f.maxWithNul - 1) + " (" +
                                    std::to_string(f.maxWithNul) + " with the NUL)");
        if (s->find('\0') != std::string::npos)
            detail::fail<Error>(owner, f.name, "contains a NUL byte");
    }
    w.integer(static_cast<std::uint32_t>(s != nullptr ? s->size() + 1 : 0));
}

/// Sizes the string (its bytes NULs for now) for its CString field.
template <class Error, std::endian Order, class T, class S>
void get(Reader<Order, Error>& r, T& m, const LengthOf<T, S>& f, std::string_view owner) {
    const auto n = r.template integer<std::uint32_t>();
    if (n > f.maxWithNul)
        detail::fail<Error>(owner, f.name, "longer than " + std::to_string(f.maxWithNul));
    if constexpr (std::is_same_v<S, std::string>) {
        if (n == 0)
            detail::fail<Error>(owner, f.name, "0, with no room for the NUL");
        (m.*f.member).assign(n - 1, '\0');
    } else {
        if (n == 0)
            (m.*f.member).reset();
        else
            (m.*f.member).emplace(n - 1, '\0');
    }
}

template <class Error, class W, class T, class S>
void put(W& w, const T& m, const CString<T, S>& f, std::string_view) {
    if (const std::string* s = detail::present(m.*f.member)) {
        w.raw(s->data(), s->size());
        w.integer(std::uint8_t{0});
    }
}

template <class Error, std::endian Order, class T, class S>
void get(Reader<Order, Error>& r, T& m, const CString<T, S>& f, std::string_view owner) {
    std::string* s = detail::present(m.*f.member);
    if (s == nullptr)
        return;
    const auto* p = reinterpret_cast<const char*>(r.raw(s->size() + 1));
    if (p[s->size()] != '\0')
        detail::fail<Error>(owner, f.name, "not NUL-terminated");
    if (std::memchr(p, 0, s->size()) != nullptr)
        detail::fail<Error>(owner, f.name, "contains a NUL byte");
    s->assign(p, s->size());
}

template <class Error, class W, class T, class E>
void put(W& w, const T& m, const CountOf<T, E>& f, std::string_view owner) {
    const std::size_t n = (m.*f.member).size();
    if (n > f.maxCount)
        detail::fail<Error>(owner, f.name, "more than " + std::to_string(f.maxCount));
    w.integer(static_cast<std::uint32_t>(n));
}

/// Sizes the vector for its Elements field (at most one element a byte
/// left, whatever the count says).
template <class Error, std::endian Order, class T, class E>
void get(Reader<Order, Error>& r, T& m, const CountOf<T, E>& f, std::string_view owner) {
    const auto n = r.template integer<std::uint32_t>();
    if (n > f.maxCount || n > r.remaining())
        detail::fail<Error>(owner, f.name,
                            "more than " + std::to_string(f.maxCount) +
                                " or than the payload holds");
    (m.*f.member).resize(n);
}

template <class Error, class W, class T, class E>
void put(W& w, const T& m, const Elements<T, E>& f, std::string_view owner) {
    for (const E& e : m.*f.member)
        putFields<Error>(w, e, E::kFields, owner);
}

template <class Error, std::endian Order, class T, class E>
void get(Reader<Order, Error>& r, T& m, const Elements<T, E>& f, std::string_view owner) {
    for (E& e : m.*f.member)
        getFields(r, e, E::kFields, owner);
}

template <class Error, class W, class T>
void put(W& w, const T& m, const Tail<T>& f, std::string_view) {
    w.raw((m.*f.member).data(), (m.*f.member).size());
}

template <class Error, std::endian Order, class T>
void get(Reader<Order, Error>& r, T& m, const Tail<T>& f, std::string_view) {
    const std::size_t n = r.remaining();
    m.*f.member = std::span<const std::byte>(r.raw(n), n);
}

/// Writes `m`'s `fields` in order. Throws Error for a value out of its bound.
template <class Error, class W, class T, class Fields>
void putFields(W& w, const T& m, const Fields& fields, std::string_view owner) {
    std::apply([&](const auto&... f) { (put<Error>(w, m, f, owner), ...); }, fields);
}

/// Reads `m`'s `fields` in order. Throws Error for a value out of its bound
/// or a payload too short.
template <class Error, std::endian Order, class T, class Fields>
void getFields(Reader<Order, Error>& r, T& m, const Fields& fields, std::string_view owner) {
    std::apply([&](const auto&... f) { (get(r, m, f, owner), ...); }, fields);
}

// ---- sizes ----------------------------------------------------------------------

template <class T, class Fields>
constexpr std::size_t wireSize(const T& m, const Fields& fields);

namespace detail {

template <class T>
constexpr std::size_t variableSize(const T& m, const Text<T>& f) {
    return 4 + (m.*f.member).size();
}
template <class E>
constexpr std::size_t elementsSize(const std::vector<E>& v) {
    if constexpr (!HasFields<E>)
        return v.size() * sizeof(E);
    else if constexpr (fixedSize<decltype(E::kFields)>() != 0)
        return v.size() * fixedSize<decltype(E::kFields)>();
    else {
        std::size_t n = 0;
        for (const E& e : v)
            n += wireSize(e, E::kFields);
        return n;
    }
}
template <class T, class E>
constexpr std::size_t variableSize(const T& m, const List<T, E>& f) {
    return 4 + elementsSize(m.*f.member);
}
template <class T, class E>
constexpr std::size_t variableSize(const T& m, const Elements<T, E>& f) {
    return elementsSize(m.*f.member);
}
template <class T, class M, class Fields>
constexpr std::size_t variableSize(const T& m, const Nested<T, M, Fields>& f) {
    return wireSize(m.*f.member, f.fields);
}
template <class T, class S>
constexpr std::size_t variableSize(const T& m, const CString<T, S>& f) {
    const std::string* s = present(m.*f.member);
    return s != nullptr ? s->size() + 1 : 0;
}
template <class T>
constexpr std::size_t variableSize(const T& m, const Tail<T>& f) {
    return (m.*f.member).size();
}

template <class T, class F>
constexpr std::size_t sizeOf(const T& m, const F& f) {
    if constexpr (F::kWireSize != 0)
        return F::kWireSize;
    else
        return variableSize(m, f);
}

} // namespace detail

/// The bytes putFields(m, fields) writes.
template <class T, class Fields>
constexpr std::size_t wireSize(const T& m, const Fields& fields) {
    return std::apply(
        [&](const auto&... f) { return (detail::sizeOf(m, f) + ... + std::size_t{0}); }, fields);
}

} // namespace tracectl::wire
