// Lexical pieces of TSDL (CTF 1.8 metadata text): string literals,
// identifiers, uuids, dates. Whatever bytes an app sends, the result lexes
// in babeltrace2's TSDL scanner (src/plugins/ctf/common/metadata/lexer.l).
#pragma once

#include "trace_info.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tracectl::metadata {

/// `pattern` with each "{}" replaced by the next of `values`, in order (the
/// registry's fixed TSDL blocks are written as such patterns). Throws
/// std::logic_error if the counts differ.
std::string substitute(std::string_view pattern, std::initializer_list<std::string_view> values);

/// Appends `text` as a TSDL string literal, quotes included: `"` and `\`
/// are backslash-escaped, newline is `\n`, other control bytes are 3-digit
/// octal escapes, well-formed UTF-8 stays as is and every byte that is not
/// part of well-formed UTF-8 becomes U+FFFD.
void appendStringLiteral(std::string& out, std::string_view text);
std::string stringLiteral(std::string_view text);

/// The TSDL identifier of a field named `name` by an app, as lttng-sessiond
/// writes it: `_` + name, every byte other than [A-Za-z0-9_] replaced by `_`
/// (lttng-tools 2.14's escape_tsdl_identifier; babeltrace2 strips the one
/// leading `_` again when it shows the name). An empty name gives "_". The
/// three `_`-keywords of TSDL (_Bool, _Complex, _Imaginary) get a trailing
/// `_`. Uniqueness within a struct is the caller's business.
std::string fieldIdentifier(std::string_view name);

/// True if `word` is a TSDL keyword (lexer.l's reserved words).
bool isTsdlKeyword(std::string_view word) noexcept;

/// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase.
std::string uuidToString(const Uuid& uuid);

/// `seconds` since the Epoch as local time, "%Y%m%dT%H%M%S%z" (what
/// lttng-tools' time_to_iso8601_str writes into trace_creation_datetime and
/// vpid_datetime). Empty if the time cannot be represented.
std::string iso8601LocalTime(std::int64_t seconds);

} // namespace tracectl::metadata
