// Turning a failure into the one line tracectl prints on stderr, and its exit status.
#pragma once

#include "exit_status.hpp"

#include <exception>
#include <iosfwd>
#include <sdbus-c++/Error.h>
#include <string_view>

namespace tracectl::cli {

/// Thrown when the bus connection itself cannot be set up (no bus at the address, refused,
/// authentication failed). Carries the D-Bus error name and message sdbus-c++ reported;
/// always maps to ExitStatus::unreachable.
class ConnectionFailed : public sdbus::Error {
public:
    using sdbus::Error::Error;
};

/// Writes "tracectl: <text>\n" to `err`, with every line break and tab in `text` replaced
/// by a space so that the report is exactly one line.
void printErrorLine(std::ostream& err, std::string_view text);

/// Reports `error` as one line on `err` and returns the exit status it stands for:
/// ConnectionFailed -> unreachable; sdbus::Error -> "tracectl: NAME: MESSAGE", status from
/// exit_status_for_error(NAME); any other exception -> "tracectl: WHAT", daemon_error.
/// Never throws (a failure to write is ignored).
ExitStatus reportException(std::exception_ptr error, std::ostream& err) noexcept;

} // namespace tracectl::cli
