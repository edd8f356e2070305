// UstTracer's disable and re-enable (ust_disable.cpp) with a fake
// AppCommands (fake_app_commands.hpp) and the real consumer: each app
// traced gets a disable/enable of its own event or channel object, never a
// second event for a rule it has; an app that joins while a rule is
// disabled gets no event for it until the rule is enabled again, and then
// exactly one.
#include "tracer_harness.hpp"

using namespace tracectl;
using namespace tracectl::testing;
using namespace std::chrono_literals;

namespace {

class TracerDisable : public TracerHarness {
protected:
    void start() {
        snapshot_ = session("89abcdef0123456789abcdef01234567", "disable");
        TracerHarness::start(snapshot_);
    }
    /// Registers app `pid` and waits until it is set up and started.
    void join(pid_t pid) {
        Gate ready;
        registerApp(fakeApp(pid, peers_), ready);
        ASSERT_TRUE(ready.wait());
        ASSERT_TRUE(eventuallyCount(pid, "start"));
    }
    /// Waits until every job queued for app `pid` so far has run.
    void drain(pid_t pid) {
        std::promise<void> idle;
        thread_.run([&] { tracer_->withApp(pid, [&] { idle.set_value(); }); });
        ASSERT_EQ(idle.get_future().wait_for(10s), std::future_status::ready);
    }
    bool eventuallyCount(pid_t pid, const std::string& call, std::size_t n = 1) {
        return eventually([&] { return count(pid, call) >= n; });
    }
    void setRule(bool enabled) {
        std::promise<void> answered;
        thread_.run([&] {
            tracer_->setRulesEnabled(snapshot_.idHex, {snapshot_.rules.front()}, enabled,
                                     [&](auto) { answered.set_value(); });
        });
        ASSERT_EQ(answered.get_future().wait_for(10s), std::future_status::ready);
    }
    void setChannel(bool enabled) {
        std::promise<void> answered;
        thread_.run([&] {
            tracer_->setChannelEnabled(snapshot_.idHex, "channel0", enabled,
                                       [&](auto) { answered.set_value(); });
        });
        ASSERT_EQ(answered.get_future().wait_for(10s), std::future_status::ready);
    }
    /// The calls of `pid` whose name starts with `prefix`.
    std::size_t countPrefix(pid_t pid, const std::string& prefix) const {
        std::size_t n = 0;
        for (const auto& c : commands_->calls(pid))
            n += c.rfind(prefix, 0) == 0 ? 1 : 0;
        return n;
    }

    SessionSnapshot snapshot_;
};

} // namespace

TEST_F(TracerDisable, EachAppDisablesAndEnablesItsOwnEventOnceAnswered) {
    start();
    const pid_t a = kFirstPid + 20, b = kFirstPid + 21;
    join(a);
    join(b);
    setRule(false); // answered once both apps have
    EXPECT_EQ(countPrefix(a, "disable "), 1u);
    EXPECT_EQ(countPrefix(b, "disable "), 1u);
    setRule(false); // nothing more to ask
    setRule(true);
    EXPECT_EQ(countPrefix(a, "enable "), 1u);
    EXPECT_EQ(countPrefix(b, "enable "), 1u);
    EXPECT_EQ(count(a, "create_event first:*"), 1u) << "re-enabled, not made again";
    EXPECT_EQ(count(b, "create_event first:*"), 1u);
}

TEST_F(TracerDisable, AnAppJoiningWhileDisabledGetsTheEventOnlyOnceEnabled) {
    start();
    setRule(false);
    setChannel(false);
    const pid_t late = kFirstPid + 22;
    join(late);
    drain(late);
    EXPECT_EQ(count(late, "create_event first:*"), 0u);
    // Its channel is disabled before its session starts.
    const auto calls = commands_->calls(late);
    const auto disabled = std::find_if(calls.begin(), calls.end(), [](const std::string& c) {
        return c.rfind("disable ", 0) == 0;
    });
    const auto started = std::find(calls.begin(), calls.end(), "start");
    ASSERT_NE(disabled, calls.end());
    EXPECT_LT(disabled - calls.begin(), started - calls.begin());
    setRule(true);
    setChannel(true);
    EXPECT_EQ(count(late, "create_event first:*"), 1u);
    EXPECT_EQ(countPrefix(late, "enable "), 1u); // the channel; the event was made enabled
}
