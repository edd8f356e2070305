#include "error_report.hpp"

#include <algorithm>
#include <ostream>
#include <string>

namespace tracectl::cli {

void print_error_line(std::ostream& err, std::string_view text) {
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

ExitStatus report_exception(std::exception_ptr error, std::ostream& err) noexcept {
    try {
        try {
            std::rethrow_exception(error);
        } catch (const ConnectionFailed& e) {
            print_error_line(err, describe(e));
            return ExitStatus::unreachable;
        } catch (const sdbus::Error& e) {
            print_error_line(err, describe(e));
            return exit_status_for_error(e.getName());
        } catch (const std::exception& e) {
            print_error_line(err, e.what());
            return ExitStatus::daemon_error;
        } catch (...) {
            print_error_line(err, "unknown error");
            return ExitStatus::daemon_error;
        }
    } catch (...) {
        // Writing the report failed (e.g. out of memory); the status still tells the story.
        return ExitStatus::daemon_error;
    }
}

} // namespace tracectl::cli
