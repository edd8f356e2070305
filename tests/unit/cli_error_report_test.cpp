// Unit tests of tracectl's error lines and exit statuses.
#include "cli/error_report.hpp"
#include "cli/exit_status.hpp"

#include <gtest/gtest.h>
#include <sstream>
#include <stdexcept>

using namespace tracectl::cli;

namespace {

std::pair<ExitStatus, std::string> report(std::exception_ptr error) {
    std::ostringstream err;
    const ExitStatus status = reportException(std::move(error), err);
    return {status, err.str()};
}

} // namespace

TEST(CliExitStatus, UnreachableNames) {
    for (const char* name :
         {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
          "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Disconnected",
          "org.freedesktop.DBus.Error.TimedOut"}) {
        EXPECT_EQ(exitStatusForError(name), ExitStatus::Unreachable) << name;
    }
}

TEST(CliExitStatus, DaemonErrors) {
    for (const char* name :
         {"org.tracectl.Tracing1.Error.NoSuchSession", "org.freedesktop.DBus.Error.AccessDenied",
          "org.freedesktop.DBus.Error.UnknownObject", ""}) {
        EXPECT_EQ(exitStatusForError(name), ExitStatus::DaemonError) << name;
    }
}

TEST(CliExitStatus, RelayUnavailableIsTheDaemonsAnswerNotAnUnreachableDaemon) {
    // tracectld answered; only its lttng-relayd could not be reached: status 1, not 3.
    EXPECT_EQ(exitStatusForError("org.tracectl.Tracing1.Error.RelayUnavailable"),
              ExitStatus::DaemonError);
    EXPECT_NE(kExitStatusHelp.find("RelayUnavailable"), std::string_view::npos);
}

TEST(CliErrorReport, RelayUnavailableNamesTheAddressOnOneLine) {
    const auto [status, text] = report(std::make_exception_ptr(
        sdbus::Error("org.tracectl.Tracing1.Error.RelayUnavailable",
                     "lttng-relayd at net://127.0.0.1:5342:5343: connect: Connection refused")));
    EXPECT_EQ(status, ExitStatus::DaemonError);
    EXPECT_EQ(text, "tracectl: org.tracectl.Tracing1.Error.RelayUnavailable: lttng-relayd at "
                    "net://127.0.0.1:5342:5343: connect: Connection refused\n");
}

TEST(CliExitStatus, Values) {
    EXPECT_EQ(static_cast<int>(ExitStatus::Success), 0);
    EXPECT_EQ(static_cast<int>(ExitStatus::DaemonError), 1);
    EXPECT_EQ(static_cast<int>(ExitStatus::Usage), 2);
    EXPECT_EQ(static_cast<int>(ExitStatus::Unreachable), 3);
}

TEST(CliErrorReport, DaemonErrorIsOneLine) {
    const auto [status, text] = report(std::make_exception_ptr(
        sdbus::Error("org.tracectl.Tracing1.Error.NoSuchSession", "No session \"x\"")));
    EXPECT_EQ(status, ExitStatus::DaemonError);
    EXPECT_EQ(text, "tracectl: org.tracectl.Tracing1.Error.NoSuchSession: No session \"x\"\n");
}

TEST(CliErrorReport, ServiceUnknownIsUnreachable) {
    const auto [status, text] = report(std::make_exception_ptr(
        sdbus::Error("org.freedesktop.DBus.Error.ServiceUnknown", "not activatable")));
    EXPECT_EQ(status, ExitStatus::Unreachable);
    EXPECT_EQ(text, "tracectl: org.freedesktop.DBus.Error.ServiceUnknown: not activatable\n");
}

TEST(CliErrorReport, ConnectionFailureIsUnreachable) {
    const auto [status, text] = report(std::make_exception_ptr(
        ConnectionFailed("org.freedesktop.DBus.Error.FileNotFound", "Failed to open bus")));
    EXPECT_EQ(status, ExitStatus::Unreachable);
    EXPECT_EQ(text, "tracectl: org.freedesktop.DBus.Error.FileNotFound: Failed to open bus\n");
}

TEST(CliErrorReport, MultiLineMessagesAreFlattened) {
    const auto [status, text] =
        report(std::make_exception_ptr(sdbus::Error("a.b.C", "line one\nline two")));
    EXPECT_EQ(text, "tracectl: a.b.C: line one line two\n");
}

TEST(CliErrorReport, EmptyMessageGivesNameOnly) {
    const auto [status, text] = report(std::make_exception_ptr(sdbus::Error("a.b.C", "")));
    EXPECT_EQ(text, "tracectl: a.b.C\n");
}

TEST(CliErrorReport, OtherExceptions) {
    const auto [status, text] = report(std::make_exception_ptr(std::runtime_error("boom")));
    EXPECT_EQ(status, ExitStatus::DaemonError);
    EXPECT_EQ(text, "tracectl: boom\n");
    const auto [status2, text2] = report(std::make_exception_ptr(42));
    EXPECT_EQ(status2, ExitStatus::DaemonError);
    EXPECT_EQ(text2, "tracectl: unknown error\n");
}
