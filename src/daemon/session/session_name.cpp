#include "session/session_name.hpp"

#include "common/utf8.hpp"

#include <cstdint>
#include <cstdio>

namespace tracectl {

namespace {

bool isControl(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

// Invisible characters that change how the text around them is shown:
// zero-width and direction marks (U+200B-U+200F), bidi embeddings and
// overrides (U+202A-U+202E), isolates (U+2066-U+2069), word joiner and
// invisible operators (U+2060-U+2064), BOM (U+FEFF). Unicode category Cf.
bool isInvisibleFormat(char32_t cp) {
    return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

// Space separators (Unicode category Zs): U+0020, U+00A0, U+1680,
// U+2000-U+200A, U+202F, U+205F, U+3000.
bool isSpace(char32_t cp) {
    return cp == 0x20 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

} // namespace

std::optional<std::string> sessionNameProblem(std::string_view name) {
    if (name.empty())
        return "a session name must not be empty";
    if (name.size() > kMaxSessionNameBytes)
        return "a session name must be at most " + std::to_string(kMaxSessionNameBytes) +
               " bytes long (got " + std::to_string(name.size()) + ")";
    if (name.front() == '.')
        return "a session name must not start with '.'";
    for (std::size_t i = 0; i < name.size();) {
        char32_t cp = 0;
        const std::size_t len = decodeUtf8(name, i, cp);
        if (len == 0)
            return "a session name must be valid UTF-8";
        // Shown in lists and typed in commands: padding would be invisible.
        if (isSpace(cp) && (i == 0 || i + len == name.size()))
            return "a session name must not begin or end with a space";
        if (cp == U'/')
            return "a session name must not contain '/'";
        if (isControl(cp))
            return "a session name must not contain control characters";
        if (isInvisibleFormat(cp))
            return "a session name must not contain invisible formatting characters "
                   "(bidi overrides, zero-width marks)";
        i += len;
    }
    return std::nullopt;
}

std::string quoteForMessage(std::string_view text, std::size_t maxBytes) {
    std::string out = "'";
    const std::size_t shown = text.size() < maxBytes ? text.size() : maxBytes;
    for (std::size_t i = 0; i < shown;) {
        char32_t cp = 0;
        const std::size_t len = decodeUtf8(text, i, cp);
        if (len == 0 || isControl(cp) || isInvisibleFormat(cp) || i + len > shown) {
            char buf[5];
            std::snprintf(buf, sizeof buf, "\\x%02x",
                          static_cast<unsigned>(static_cast<std::uint8_t>(text[i])));
            out += buf;
            ++i;
            continue;
        }
        out.append(text.substr(i, len));
        i += len;
    }
    out += '\'';
    if (shown < text.size())
        out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

} // namespace tracectl
