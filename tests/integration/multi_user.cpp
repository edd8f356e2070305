#include "multi_user.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

namespace tracectl::test {

uid_t uidOf(const std::string& user) {
    const passwd* pw = getpwnam(user.c_str());
    return pw != nullptr ? pw->pw_uid : static_cast<uid_t>(-1);
}

namespace {

/// Where this test process writes in `user`'s home: a folder of its own,
/// since suites run side by side and each removes its folder at the end.
std::string homeBase(const std::string& user) {
    return "/home/" + user + "/polkit-test-" + std::to_string(getpid());
}

/// Holds an exclusive flock(2) on a machine-wide lock file while it lives:
/// useradd, groupadd and usermod refuse to run while another holds
/// /etc/passwd's lock, so suites running side by side take turns here.
class UsersLock {
public:
    UsersLock() : fd_(open("/run/tracectl-test-users.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
        if (fd_ < 0 || flock(fd_, LOCK_EX) != 0)
            throw std::runtime_error("cannot lock /run/tracectl-test-users.lock");
    }
    ~UsersLock() { close(fd_); }
    UsersLock(const UsersLock&) = delete;
    UsersLock& operator=(const UsersLock&) = delete;

private:
    int fd_;
};

} // namespace

void ensureUsers() {
    const UsersLock lock;
    run({"groupadd", "-f", "tracing"});
    for (const std::string user : {"alice", "bob", "carol"}) {
        if (uidOf(user) == static_cast<uid_t>(-1)) {
            const RunResult made = run({"useradd", "-m", "-s", "/usr/sbin/nologin", user});
            if (!made.ok() && uidOf(user) == static_cast<uid_t>(-1))
                throw std::runtime_error("useradd " + user + ": " + made.describe());
        }
        run({"chmod", "0700", "/home/" + user});
    }
    run({"usermod", "-aG", "tracing", "carol"});
}

std::string errorOf(const RunResult& r) {
    if (r.ok())
        return "no error";
    const std::string tag = "GDBus.Error:";
    const auto at = r.err.find(tag);
    if (at == std::string::npos)
        return "unparsed: " + r.describe();
    const auto start = at + tag.size();
    return r.err.substr(start, r.err.find(':', start) - start);
}

std::string quoted(const std::string& out) {
    const auto a = out.find('\'');
    const auto b = out.find('\'', a + 1);
    return a == std::string::npos || b == std::string::npos ? "" : out.substr(a + 1, b - a - 1);
}

void MultiUserSuite::SetUpTestSuite() {
    ensureUsers();
    SandboxSuite::SetUpTestSuite();
}

void MultiUserSuite::TearDownTestSuite() {
    SandboxSuite::TearDownTestSuite();
    // The users stay (for the next run); what the tests wrote goes.
    for (const std::string user : {"alice", "bob", "carol"})
        run({"rm", "-rf", homeBase(user)});
}

RunResult MultiUserSuite::as(const std::string& user, std::vector<std::string> argv) {
    std::vector<std::string> full{"setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups",
                                  "--"};
    full.insert(full.end(), argv.begin(), argv.end());
    return run(full);
}

RunResult MultiUserSuite::call(const std::string& user, const std::string& path,
                               const std::string& method, std::vector<std::string> args) {
    std::vector<std::string> argv{"gdbus",         "call", "--system", "--dest", kService,
                                  "--object-path", path,   "--method", method};
    argv.insert(argv.end(), args.begin(), args.end());
    return user == "root" ? run(argv) : as(user, argv);
}

std::string MultiUserSuite::createAs(const std::string& user, const std::string& name,
                                     const std::string& output) {
    const RunResult made = call(user, kManagerPath, "org.tracectl.Tracing1.Manager.CreateSession",
                                {"'" + name + "'", "{'output-path': <'" + output + "'>}"});
    EXPECT_TRUE(made.ok()) << made.describe();
    const std::string path = quoted(made.out);
    const RunResult enabled = call(user, path, "org.tracectl.Tracing1.Session.EnableEvents",
                                   {"'ust'", "''", "'tracectl_demo:*'", "{}"});
    EXPECT_TRUE(enabled.ok()) << enabled.describe();
    return path;
}

std::string MultiUserSuite::homeOutput(const std::string& user, const std::string& name) {
    const std::string base = homeBase(user);
    run({"rm", "-rf", base + "/" + name});
    as(user, {"mkdir", "-p", base});
    return base + "/" + name;
}

bool MultiUserSuite::lists(const std::string& user, const std::string& path) {
    const RunResult r = call(user, kManagerPath, "org.tracectl.Tracing1.Manager.ListSessions");
    EXPECT_TRUE(r.ok()) << r.describe();
    return r.out.find(path) != std::string::npos;
}

} // namespace tracectl::test
