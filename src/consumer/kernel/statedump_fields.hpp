// The bytes of one statedump event's fields, as kernel_records.hpp lays
// them out: little-endian integers, fixed arrays, NUL-terminated strings.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace tracectl::consumer::kernel {

class StatedumpFields {
public:
    /// Appends `v` little-endian (the host's order: x86, as the trace).
    template <typename T>
    void le(T v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        bytes_.insert(bytes_.end(), p, p + sizeof v);
    }
    void raw(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        bytes_.insert(bytes_.end(), b, b + n);
    }
    /// A CTF string: `s` up to its first NUL, then a NUL.
    void string(std::string_view s) {
        s = s.substr(0, s.find('\0'));
        raw(s.data(), s.size());
        bytes_.push_back(std::byte{0});
    }
    void clear() noexcept { bytes_.clear(); }
    std::span<const std::byte> view() const noexcept { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

} // namespace tracectl::consumer::kernel
