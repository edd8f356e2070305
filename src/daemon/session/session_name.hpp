// The rules a session name must follow. A name becomes part of a folder
// name (<name>-<YYYYmmdd-HHMMSS>), a journal field and a table cell, so it
// must be a harmless single path element.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl {

/// Longest accepted session name, in bytes. NAME_MAX (255) minus room for
/// the "-YYYYmmdd-HHMMSS" suffix and a snapshot counter.
inline constexpr std::size_t kMaxSessionNameBytes = 200;

/// Why `name` is not a valid session name, or nullopt if it is. Rules: 1 to
/// kMaxSessionNameBytes bytes of well-formed UTF-8 (no overlong forms, no
/// surrogates); no '/'; no leading '.'; no leading or trailing space
/// separator (U+0020, U+00A0, U+2000-U+200A, ...); no control character (U+0000-U+001F,
/// U+007F-U+009F); no invisible formatting character (bidi overrides and
/// isolates, zero-width marks, BOM).
std::optional<std::string> sessionNameProblem(std::string_view name);

/// Quotes `text` for a log line or an error message: at most `maxBytes`
/// bytes are shown, control characters and invalid bytes as \xNN escapes.
std::string quoteForMessage(std::string_view text, std::size_t maxBytes = 64);

} // namespace tracectl
