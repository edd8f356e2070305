// UTF-8 well-formedness, for arguments that travel as D-Bus strings.
#pragma once

#include <string_view>

namespace tracectl::cli {

/// True if `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF) without NUL bytes, as the D-Bus
/// specification requires of a string.
bool isValidUtf8(std::string_view s) noexcept;

} // namespace tracectl::cli
