// The fixture of the suites that act as several real users against the
// sandbox (polkit_test, visibility_test): alice and bob (ordinary users),
// carol (group "tracing", which polkit/50-org.tracectl.Tracing1-tracing-group.rules
// grants manage-all-sessions, trace-all-users and trace-kernel), made with
// useradd if missing (idempotent; left on the machine for the next run).
// Clients run as them with setpriv; D-Bus calls go through gdbus, which
// prints the D-Bus error name of a failed call.
#pragma once

#include "sandbox.hpp"
#include "sandbox_suite.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl::test {

inline constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";
inline constexpr const char* kInteractive =
    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired";
inline constexpr const char* kNoSuchSession = "org.tracectl.Tracing1.Error.NoSuchSession";
inline constexpr const char* kInvalidArgument = "org.tracectl.Tracing1.Error.InvalidArgument";
inline constexpr const char* kSessionIface = "org.tracectl.Tracing1.Session";

/// The uid of `user`, (uid_t)-1 if there is none.
uid_t uidOf(const std::string& user);

/// alice, bob, carol (in group tracing) exist, with private homes (0700).
/// Throws std::runtime_error if useradd fails.
void ensureUsers();

/// The D-Bus error name of a failed gdbus call, "no error" if it succeeded.
std::string errorOf(const RunResult& r);

/// The first '...' quoted text of gdbus output ("(objectpath '/x',)" -> "/x").
std::string quoted(const std::string& out);

class MultiUserSuite : public SandboxSuite {
protected:
    /// Makes the users, then the sandbox.
    static void SetUpTestSuite();
    /// Takes the sandbox down and removes what the tests wrote in the homes.
    static void TearDownTestSuite();

    /// argv run as `user` (its uid, primary group and supplementary groups).
    static RunResult as(const std::string& user, std::vector<std::string> argv);

    /// gdbus call as `user` ("root": directly) of `method`
    /// (interface.member) on `path`, with gdbus-syntax `args`.
    static RunResult call(const std::string& user, const std::string& path,
                          const std::string& method, std::vector<std::string> args = {});

    /// A session of `user` writing to `output`, with events of the demo app
    /// enabled (so it can start); its object path. Failures are test failures.
    static std::string createAs(const std::string& user, const std::string& name,
                                const std::string& output);

    /// A fresh folder of `user`'s own under its home (removed first; its
    /// parent /home/<user>/polkit-test-<pid> made as the user: each test
    /// process its own, removed at the end of the suite).
    static std::string homeOutput(const std::string& user, const std::string& name);

    /// Does `user`'s ListSessions contain `path`?
    static bool lists(const std::string& user, const std::string& path);
};

} // namespace tracectl::test
