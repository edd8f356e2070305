// UTF-8 decoding (RFC 3629) shared by every check of text from clients and
// apps: session names, CLI arguments, TSDL strings. Header-only so that the
// D-Bus-free libraries can use it without linking tracectl-common.
#pragma once

#include <cstddef>
#include <string_view>

namespace tracectl {

/// Decodes the UTF-8 sequence at `s[i]` (i < s.size()): returns its length
/// in bytes and stores the code point in `cp`, or returns 0 if the bytes
/// are not well-formed (truncated, overlong, surrogate, above U+10FFFF).
inline std::size_t decodeUtf8(std::string_view s, std::size_t i, char32_t& cp) noexcept {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = at(i);
    std::size_t len = 0;
    char32_t min = 0;
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    } else if ((b0 & 0xE0) == 0xC0) {
        len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + len > s.size())
        return 0;
    for (std::size_t k = 1; k < len; ++k) {
        if ((at(i + k) & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (at(i + k) & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

} // namespace tracectl
