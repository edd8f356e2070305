// Synthetic ftrace pages and records, and little-endian reads of CTF
// bytes, for the kernel conversion tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ktest {

using Bytes = std::vector<std::byte>;

inline void putLe(Bytes& out, std::uint64_t v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

inline std::uint64_t getLe(std::span<const std::byte> b, std::size_t at, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
        v |= static_cast<std::uint64_t>(b[at + i]) << (8 * i);
    return v;
}

/// An ftrace record: the common fields, then `fields`.
class Record {
public:
    Record(std::uint16_t type, std::int32_t pid) {
        putLe(bytes_, type, 2);
        putLe(bytes_, 0, 1); // common_flags
        putLe(bytes_, 0, 1); // common_preempt_count
        putLe(bytes_, static_cast<std::uint32_t>(pid), 4);
    }
    Record& le(std::uint64_t v, std::size_t n) {
        putLe(bytes_, v, n);
        return *this;
    }
    Record& text(std::string_view s, std::size_t n) { // fixed char[n]
        for (std::size_t i = 0; i < n; ++i)
            bytes_.push_back(static_cast<std::byte>(i < s.size() ? s[i] : '\0'));
        return *this;
    }
    Record& raw(std::string_view s) {
        for (char c : s)
            bytes_.push_back(static_cast<std::byte>(c));
        return *this;
    }
    Record& padTo4() {
        while (bytes_.size() % 4 != 0)
            bytes_.push_back(std::byte{0});
        return *this;
    }
    const Bytes& bytes() const { return bytes_; }
    std::size_t size() const { return bytes_.size(); }

private:
    Bytes bytes_;
};

/// One ftrace page, written event by event (KERNEL-NOTES.md layout:
/// u64 timestamp, u64 commit, data from 16).
class PageWriter {
public:
    explicit PageWriter(std::uint64_t timestamp, std::size_t pageSize = 4096)
        : timestamp_(timestamp), pageSize_(pageSize) {}

    static std::uint32_t header(std::uint32_t typeLen, std::uint32_t delta) {
        return (delta << 5) | typeLen;
    }
    void u32(std::uint32_t v) { putLe(data_, v, 4); }

    /// A data record: type_len = size/4 when the payload is 4-aligned and
    /// at most 112 bytes (and not forced long), else type_len 0.
    void record(std::uint32_t delta, std::span<const std::byte> payload, bool forceLong = false) {
        const bool small =
            !forceLong && !payload.empty() && payload.size() % 4 == 0 && payload.size() <= 112;
        if (small) {
            u32(header(static_cast<std::uint32_t>(payload.size() / 4), delta));
        } else {
            u32(header(0, delta));
            u32(static_cast<std::uint32_t>(payload.size() + 4));
        }
        data_.insert(data_.end(), payload.begin(), payload.end());
        while (data_.size() % 4 != 0)
            data_.push_back(std::byte{0});
    }
    void record(std::uint32_t delta, const Record& r, bool forceLong = false) {
        record(delta, r.bytes(), forceLong);
    }
    void extend(std::uint32_t delta, std::uint32_t high) {
        u32(header(30, delta));
        u32(high);
    }
    void absolute(std::uint64_t ts) {
        u32(header(31, static_cast<std::uint32_t>(ts & ((1u << 27) - 1))));
        u32(static_cast<std::uint32_t>(ts >> 27));
    }
    /// Padding of `length` bytes after its header (length counts the length
    /// word itself).
    void padding(std::uint32_t delta, std::uint32_t length) {
        u32(header(29, delta));
        u32(length);
        for (std::uint32_t i = 4; i < length; ++i)
            data_.push_back(std::byte{0xAA});
    }
    void nullPadding() { u32(header(29, 0)); }

    std::size_t dataSize() const { return data_.size(); }

    /// The page: header, data, the missed count if `stored`, zeros to
    /// pageSize. `commitExtra` is OR-ed into the commit word.
    Bytes finish(std::uint64_t commitExtra = 0, std::optional<std::uint64_t> stored = {}) const {
        Bytes page;
        putLe(page, timestamp_, 8);
        std::uint64_t commit = data_.size() | commitExtra;
        if (stored)
            commit |= (1ull << 31) | (1ull << 30);
        putLe(page, commit, 8);
        page.insert(page.end(), data_.begin(), data_.end());
        if (stored)
            putLe(page, *stored, 8);
        page.resize(pageSize_, std::byte{0});
        return page;
    }

private:
    std::uint64_t timestamp_;
    std::size_t pageSize_;
    Bytes data_;
};

} // namespace ktest
