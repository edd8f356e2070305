// The systemd launcher against a stand-in manager on its "private socket"
// (a peer-to-peer sd-bus server in the test, on the same loop): jobs
// completed by JobRemoved whenever it comes, failed jobs, jobs never
// finished, calls never answered, a unit's end seen through its
// PropertiesChanged, and a manager that goes away.
#include "common/event_loop.hpp"
#include "recording/consumer_launcher.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

using namespace tracectl;
using namespace std::chrono_literals;

namespace {

struct BusUnref {
    void operator()(sd_bus* b) const noexcept { sd_bus_flush_close_unref(b); }
};
struct SlotUnref {
    void operator()(sd_bus_slot* s) const noexcept { sd_bus_slot_unref(s); }
};

/// Dispatches `loop` until `done()` or `timeout`; returns done().
template <typename Pred>
bool drive(EventLoop& loop, Pred done, std::chrono::milliseconds timeout) {
    bool late = false;
    auto timer = loop.addTimer(timeout, [&late] { late = true; });
    while (!done() && !late)
        if (sd_event_run(loop.get(), UINT64_MAX) < 0)
            return false;
    return done();
}

/// What the stand-in manager does with a job.
enum class Job {
    RemovedAfterReply,  ///< reply, then JobRemoved
    RemovedBeforeReply, ///< JobRemoved, then the reply naming the job
    NeverRemoved,       ///< reply, no JobRemoved
    NoReply,            ///< no reply at all
};

/// A systemd manager's private socket, as far as the launcher uses it.
class FakeManager {
public:
    explicit FakeManager(EventLoop& loop) : loop_(loop) {
        char tmpl[] = "/tmp/tracectl-fake-systemd-XXXXXX";
        dir_ = mkdtemp(tmpl);
        std::filesystem::create_directory(dir_ + "/systemd");
        listen_ = UniqueFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::string path = dir_ + "/systemd/private";
        path.copy(addr.sun_path, sizeof addr.sun_path - 1);
        EXPECT_EQ(bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        EXPECT_EQ(::listen(listen_.get(), 4), 0);
        sd_event_source* s = nullptr;
        EXPECT_GE(sd_event_add_io(loop_.get(), &s, listen_.get(), EPOLLIN, &onAccept, this), 0);
        accept_.reset(s);
    }
    ~FakeManager() {
        connections_.clear();
        std::filesystem::remove_all(dir_);
    }

    std::string address() const { return "unix:path=" + dir_ + "/systemd/private"; }

    /// Closes every connection (the manager "restarted").
    void dropConnections() {
        filters_.clear();
        connections_.clear();
    }
    /// Emits PropertiesChanged on `unit`'s object path.
    void unitChanged(const std::string& unit) {
        for (auto& c : connections_)
            EXPECT_GE(sd_bus_emit_signal(c.get(), unitPath(unit).c_str(),
                                         "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                         "sa{sv}as", "org.freedesktop.systemd1.Unit", 0, 1,
                                         "ActiveState"),
                      0);
    }

    Job startJob = Job::RemovedAfterReply;
    std::string startResult = "done";
    Job stopJob = Job::RemovedAfterReply;
    /// Unit name -> (ActiveState, Result, ExecMainStatus); absent: not loaded.
    struct Unit {
        std::string active, result;
        int32_t status = 0;
    };
    std::map<std::string, Unit> units;
    int started = 0; ///< StartTransientUnit calls seen
    int subscribed = 0;

private:
    static std::string unitPath(const std::string& unit) {
        char* p = nullptr;
        EXPECT_GE(sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit.c_str(), &p), 0);
        std::string out = p;
        free(p);
        return out;
    }

    static int onAccept(sd_event_source*, int fd, uint32_t, void* userdata) {
        auto& self = *static_cast<FakeManager*>(userdata);
        const int c = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
            return 0;
        sd_bus* raw = nullptr;
        EXPECT_GE(sd_bus_new(&raw), 0);
        std::unique_ptr<sd_bus, BusUnref> bus(raw);
        EXPECT_GE(sd_bus_set_fd(raw, c, c), 0);
        sd_id128_t id;
        EXPECT_GE(sd_id128_randomize(&id), 0);
        EXPECT_GE(sd_bus_set_server(raw, 1, id), 0);
        EXPECT_GE(sd_bus_start(raw), 0);
        EXPECT_GE(sd_bus_attach_event(raw, self.loop_.get(), 0), 0);
        sd_bus_slot* slot = nullptr;
        EXPECT_GE(sd_bus_add_filter(raw, &slot, &onMessage, &self), 0);
        self.filters_.emplace_back(slot);
        self.connections_.push_back(std::move(bus));
        return 0;
    }

    void jobRemoved(sd_bus* bus, const std::string& job, const std::string& unit,
                    const std::string& result) {
        EXPECT_GE(sd_bus_emit_signal(bus, "/org/freedesktop/systemd1",
                                     "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss",
                                     uint32_t{1}, job.c_str(), unit.c_str(), result.c_str()),
                  0);
    }

    /// Answers a job-creating call as `mode` says.
    void job(sd_bus_message* m, Job mode, const std::string& unit, const std::string& result) {
        if (mode == Job::NoReply)
            return;
        const std::string path = "/org/freedesktop/systemd1/job/" + std::to_string(++jobs_);
        sd_bus* bus = sd_bus_message_get_bus(m);
        if (mode == Job::RemovedBeforeReply)
            jobRemoved(bus, path, unit, result);
        EXPECT_GE(sd_bus_reply_method_return(m, "o", path.c_str()), 0);
        if (mode == Job::RemovedAfterReply)
            jobRemoved(bus, path, unit, result);
    }

    static int onMessage(sd_bus_message* m, void* userdata, sd_bus_error*) {
        auto& self = *static_cast<FakeManager*>(userdata);
        uint8_t type = 0;
        if (sd_bus_message_get_type(m, &type) < 0 || type != SD_BUS_MESSAGE_METHOD_CALL)
            return 0;
        const std::string member = sd_bus_message_get_member(m);
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", "Get")) {
            const char* iface = nullptr;
            const char* name = nullptr;
            EXPECT_GE(sd_bus_message_read(m, "ss", &iface, &name), 0);
            for (const auto& [unit, u] : self.units)
                if (unitPath(unit) == sd_bus_message_get_path(m)) {
                    const std::string n = name;
                    if (n == "ExecMainStatus")
                        return sd_bus_reply_method_return(m, "v", "i", u.status), 1;
                    return sd_bus_reply_method_return(
                               m, "v", "s", (n == "ActiveState" ? u.active : u.result).c_str()),
                           1;
                }
            return sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.UnknownObject",
                                              "no such unit"),
                   1;
        }
        const char* unit = nullptr;
        if (member == "Subscribe") {
            ++self.subscribed;
            return 1; // sent without wanting a reply
        }
        if (member == "StartTransientUnit") {
            ++self.started;
            EXPECT_GE(sd_bus_message_read(m, "s", &unit), 0);
            self.job(m, self.startJob, unit, self.startResult);
        } else if (member == "StopUnit") {
            EXPECT_GE(sd_bus_message_read(m, "s", &unit), 0);
            self.job(m, self.stopJob, unit, "done");
        } else if (member == "GetUnit") {
            EXPECT_GE(sd_bus_message_read(m, "s", &unit), 0);
            if (self.units.count(unit) == 0)
                sd_bus_reply_method_errorf(m, "org.freedesktop.systemd1.NoSuchUnit",
                                           "Unit %s not loaded.", unit);
            else
                sd_bus_reply_method_return(m, "o", unitPath(unit).c_str());
        }
        return 1;
    }

    EventLoop& loop_;
    std::string dir_;
    UniqueFd listen_;
    EventSourcePtr accept_;
    std::vector<std::unique_ptr<sd_bus_slot, SlotUnref>> filters_;
    std::vector<std::unique_ptr<sd_bus, BusUnref>> connections_;
    int jobs_ = 0;
};

class SystemdLauncherTest : public ::testing::Test {
protected:
    void SetUp() override {
        LauncherTimeouts t;
        t.call = 300ms;
        t.job = 300ms;
        launcher_ = makeSystemdLauncher(loop_, manager_.address(), t);
    }

    /// start(), driven until it answers: nullopt or the error's text.
    std::optional<std::string> start(const std::string& unit) {
        ConsumerSpec spec;
        spec.unitName = unit;
        spec.binary = "/bin/true";
        spec.outputDir = "/tmp";
        int sv[2];
        EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        UniqueFd ours(sv[0]);
        bool called = false;
        std::optional<std::string> error;
        launcher_->start(spec, UniqueFd(sv[1]), [&](std::optional<Error> e) {
            called = true;
            if (e)
                error = e->what();
        });
        EXPECT_TRUE(drive(
            loop_, [&] { return called; }, 5s))
            << "start() never answered";
        return error;
    }

    EventLoop loop_;
    FakeManager manager_{loop_};
    std::unique_ptr<ConsumerLauncher> launcher_;
};

ConsumerSpec specOf(const std::string& unit) {
    ConsumerSpec spec;
    spec.unitName = unit;
    return spec;
}

} // namespace

TEST_F(SystemdLauncherTest, AStartIsDoneWhenItsJobIsRemoved) {
    EXPECT_EQ(start("a.service"), std::nullopt);
    EXPECT_EQ(manager_.subscribed, 1);
}

TEST_F(SystemdLauncherTest, AJobRemovedBeforeTheReplyIsNotMissed) {
    manager_.startJob = Job::RemovedBeforeReply;
    EXPECT_EQ(start("early.service"), std::nullopt);
}

TEST_F(SystemdLauncherTest, AFailedJobSaysHowTheUnitEnded) {
    manager_.startResult = "failed";
    manager_.units["bad.service"] = {"failed", "exit-code", 203};
    EXPECT_EQ(start("bad.service"),
              "bad.service did not start (ActiveState failed, Result exit-code, status 203; job "
              "failed)");
}

TEST_F(SystemdLauncherTest, AJobNeverRemovedTimesOut) {
    manager_.startJob = Job::NeverRemoved;
    const auto e = start("stuck.service");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(*e, "the systemd manager did not finish the start job of stuck.service within 300 "
                  "ms (no JobRemoved)");
}

TEST_F(SystemdLauncherTest, ACallNeverAnsweredTimesOut) {
    manager_.startJob = Job::NoReply;
    const auto e = start("mute.service");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(
        e->rfind("no answer from the systemd manager to StartTransientUnit for mute.service", 0),
        0u)
        << *e;
}

TEST_F(SystemdLauncherTest, ALostManagerFailsTheCallThenTheNextStartReconnects) {
    manager_.startJob = Job::NeverRemoved;
    ConsumerSpec spec = specOf("lost.service");
    spec.binary = "/bin/true";
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd ours(sv[0]);
    std::optional<std::string> error;
    launcher_->start(spec, UniqueFd(sv[1]),
                     [&](std::optional<Error> e) { error = e ? e->what() : "no error"; });
    ASSERT_TRUE(drive(
        loop_, [&] { return manager_.started == 1; }, 5s));
    manager_.dropConnections();
    ASSERT_TRUE(drive(
        loop_, [&] { return error.has_value(); }, 5s));
    EXPECT_EQ(*error, "the connection to the systemd manager was lost");
    manager_.startJob = Job::RemovedAfterReply;
    EXPECT_EQ(start("again.service"), std::nullopt);
    EXPECT_EQ(manager_.subscribed, 2);
}

TEST_F(SystemdLauncherTest, AUnitsEndIsSeenInItsPropertiesChanged) {
    manager_.units["ending.service"] = {"deactivating", "success", 0};
    std::optional<std::optional<std::string>> reason;
    launcher_->whenEnded(specOf("ending.service"), 5s,
                         [&](std::optional<std::string> r) { reason = r; });
    // Still deactivating: nothing yet, and nobody asks again by itself.
    EXPECT_FALSE(drive(
        loop_, [&] { return reason.has_value(); }, 300ms));
    manager_.units["ending.service"] = {"failed", "signal", 0};
    manager_.unitChanged("ending.service");
    ASSERT_TRUE(drive(
        loop_, [&] { return reason.has_value(); }, 2s));
    EXPECT_EQ(*reason, std::optional<std::string>("ActiveState failed, Result signal"));
}

TEST_F(SystemdLauncherTest, AUnitStillRunningAtTheDeadlineIsStopped) {
    manager_.units["running.service"] = {"active", "success", 0};
    std::optional<std::optional<std::string>> reason;
    launcher_->whenEnded(specOf("running.service"), 200ms,
                         [&](std::optional<std::string> r) { reason = r; });
    ASSERT_TRUE(drive(
        loop_, [&] { return reason.has_value(); }, 2s));
    EXPECT_EQ(*reason, std::nullopt);
}

TEST_F(SystemdLauncherTest, ACollectedUnitIsGone) {
    std::optional<std::optional<std::string>> reason;
    launcher_->whenEnded(specOf("collected.service"), 1s,
                         [&](std::optional<std::string> r) { reason = r; });
    ASSERT_TRUE(drive(
        loop_, [&] { return reason.has_value(); }, 2s));
    EXPECT_EQ(*reason, std::optional<std::string>("its unit is gone"));
}

TEST_F(SystemdLauncherTest, DestroyedWithAJobUnderWayCallsNobody) {
    manager_.startJob = Job::NeverRemoved;
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd ours(sv[0]);
    bool called = false;
    ConsumerSpec spec = specOf("dropped.service");
    spec.binary = "/bin/true";
    launcher_->start(spec, UniqueFd(sv[1]), [&](std::optional<Error>) { called = true; });
    ASSERT_TRUE(drive(
        loop_, [&] { return manager_.started == 1; }, 5s));
    launcher_.reset();
    EXPECT_FALSE(drive(
        loop_, [&] { return called; }, 500ms));
}
