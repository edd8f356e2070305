#include "error_report.hpp"

#include <algorithm>
#include <ostream>
#include <string>

namespace tracectl::cli {

void printErrorLine(std::ostream& err, std::string_view text) {
    std::string line{text};
    std::replace_if(
        line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
    err << "tracectl: " << line << '\n' << std::flush;
}

namespace {

std::string describe(const sdbus::Error& error) {
    if (error.getMessage().empty()) {
        return error.getName();
    }
    return error.getName() + ": " + error.getMessage();
}

} // namespace

ExitStatus reportException(std::exception_ptr error, std::ostream& err) noexcept {
    try {
        try {
            std::rethrow_exception(error);
        } catch (const ConnectionFailed& e) {
            printErrorLine(err, describe(e));
            return ExitStatus::Unreachable;
        } catch (const sdbus::Error& e) {
            printErrorLine(err, describe(e));
            return exitStatusForError(e.getName());
        } catch (const std::exception& e) {
            printErrorLine(err, e.what());
            return ExitStatus::DaemonError;
        } catch (...) {
            printErrorLine(err, "unknown error");
            return ExitStatus::DaemonError;
        }
    } catch (...) {
        // Writing the report failed (e.g. out of memory); the status still tells the story.
        return ExitStatus::DaemonError;
    }
}

} // namespace tracectl::cli
