// setUpInApp(), the job that sets a session up in one app, with a fake
// AppCommands: the route of each handle exists before the app is sent
// anything after it (so it can name the handle in a notify message), a
// set-up cancelled half-way (the app left, the session went) leaves no
// route behind, a refused call stops it, and every rule reaches the app once.
#include "fake_app_commands.hpp"
#include "ust/app_set_up.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <lttng/ust-abi.h>

using namespace tracectl;
using tracectl::testing::FakeAppCommands;

namespace {

constexpr pid_t kPid = 42;
int session = 0;
int trace = 0;

/// Two channels of two streams each, one context on the first, one rule each.
AppSetUpRequest request() {
    AppSetUpRequest r;
    r.app = AppPeer{-1, kPid};
    r.session = &session;
    r.trace = &trace;
    for (int i = 0; i < 2; ++i) {
        AppSetUpRequest::Channel c;
        c.name = "channel" + std::to_string(i);
        c.chanId = static_cast<uint32_t>(i);
        c.channel = FakeAppCommands::channel();
        c.streams.push_back(FakeAppCommands::stream());
        c.streams.push_back(FakeAppCommands::stream());
        if (i == 0)
            c.contexts.push_back(LTTNG_UST_ABI_CONTEXT_VTID);
        EventRule rule;
        rule.channel = c.name;
        rule.pattern = "prov" + std::to_string(i) + ":*";
        c.events.push_back(eventSpecOf(rule));
        r.channels.push_back(std::move(c));
    }
    return r;
}

} // namespace

TEST(AppSetUp, SendsEverythingInOrderAndKeepsEveryHandle) {
    FakeAppCommands app;
    HandleRoutes routes;
    PendingRoutes pending(routes, kPid);
    AppSetUpResult result = setUpInApp(app, request(), pending);
    ASSERT_FALSE(result.error) << result.error->what();
    const std::vector<std::string> expected{
        "create_session", "send_channel",         "send_stream",  "send_stream",
        "add_context",    "create_event prov0:*", "send_channel", "send_stream",
        "send_stream",    "create_event prov1:*"};
    EXPECT_EQ(app.calls(kPid), expected);
    EXPECT_EQ(result.sessionHandle, 1);
    ASSERT_EQ(result.channels.size(), 2u);
    EXPECT_EQ(result.channels.at("channel0")->handle, 2);
    EXPECT_EQ(result.channels.at("channel1")->handle, 7);
    EXPECT_EQ(result.objects.size(), 1u); // a context
    EXPECT_EQ(result.events.size(), 2u);  // two events
    const auto chan = routes.find(kPid, 7);
    ASSERT_TRUE(chan);
    EXPECT_TRUE(chan->isChannel);
    EXPECT_EQ(chan->chanId, 1u);
    EXPECT_EQ(routes.find(kPid, 1)->session, &session);
    EXPECT_TRUE(pending.keep());
    pending.cancel(); // kept: a later cancel erases nothing
    EXPECT_TRUE(routes.find(kPid, 1));
}

TEST(AppSetUp, EachRouteExistsBeforeTheNextCall) {
    FakeAppCommands app;
    HandleRoutes routes;
    PendingRoutes pending(routes, kPid);
    std::vector<std::string> missing;
    int calls = 0;
    app.before = [&](pid_t, const std::string& name) {
        ++calls;
        // Handles so far: 1 the session, 2 channel0 (then 3-6 its streams,
        // context and event), 7 channel1.
        if (calls >= 2 && !routes.find(kPid, 1))
            missing.push_back(name + ": no route of the session handle");
        if (calls >= 3 && !routes.find(kPid, 2))
            missing.push_back(name + ": no route of channel0");
        if (calls >= 8 && !routes.find(kPid, 7))
            missing.push_back(name + ": no route of channel1");
    };
    const AppSetUpResult result = setUpInApp(app, request(), pending);
    ASSERT_FALSE(result.error);
    EXPECT_TRUE(missing.empty()) << missing.front();
}

TEST(AppSetUp, CancelledHalfWayLeavesNoRoute) {
    FakeAppCommands app;
    HandleRoutes routes;
    PendingRoutes pending(routes, kPid);
    // The app leaves while its first channel's streams are being sent:
    // the app thread cancels, the job makes no further call.
    app.before = [&](pid_t, const std::string& name) {
        if (name == "send_stream")
            pending.cancel();
    };
    const AppSetUpResult result = setUpInApp(app, request(), pending);
    ASSERT_TRUE(result.error);
    for (int h = 1; h <= 10; ++h)
        EXPECT_FALSE(routes.find(kPid, h)) << "handle " << h;
    EXPECT_FALSE(pending.keep());
    const std::vector<std::string> expected{"create_session", "send_channel", "send_stream"};
    EXPECT_EQ(app.calls(kPid), expected);
}

TEST(AppSetUp, ARefusedCallStopsItAndItsRoutesGoOnCancel) {
    FakeAppCommands app;
    HandleRoutes routes;
    PendingRoutes pending(routes, kPid);
    app.before = [](pid_t, const std::string& name) {
        if (name == "add_context")
            throw Error(ErrorCode::Failed, "refused");
    };
    const AppSetUpResult result = setUpInApp(app, request(), pending);
    ASSERT_TRUE(result.error);
    EXPECT_STREQ(result.error->what(), "refused");
    EXPECT_EQ(app.calls(kPid).back(), "send_stream");
    EXPECT_TRUE(routes.find(kPid, 2)); // until the app thread cancels
    pending.cancel();
    EXPECT_FALSE(routes.find(kPid, 1));
    EXPECT_FALSE(routes.find(kPid, 2));
}
