// The process attribute trackers (session/process_trackers.hpp): LTTng
// 2.13's policies, values and errors, and that a refused call changes
// nothing.
#include "common/error.hpp"
#include "session/process_trackers.hpp"

#include <gtest/gtest.h>

using namespace tracectl;

namespace {

template <class F>
ErrorCode refusal(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "accepted";
    return ErrorCode::Failed;
}

constexpr auto kVpid = ProcessAttribute::Vpid;

} // namespace

TEST(ProcessTrackers, NamesAndDomainsAreLttngs) {
    for (const char* name : {"vpid", "vuid", "vgid", "pid", "uid", "gid"}) {
        const auto a = processAttributeFromName(name);
        ASSERT_TRUE(a) << name;
        EXPECT_EQ(toString(*a), name);
        EXPECT_EQ(domainOf(*a), name[0] == 'v' ? TracingDomain::Ust : TracingDomain::Kernel);
    }
    EXPECT_FALSE(processAttributeFromName("tid"));
    EXPECT_FALSE(processAttributeFromName("VPID"));
    EXPECT_FALSE(processAttributeFromName(""));
}

TEST(ProcessTrackers, EveryProcessIsTrackedByDefault) {
    const ProcessTrackers t;
    for (const auto& tracker : t.all()) {
        EXPECT_TRUE(tracker.all);
        EXPECT_TRUE(tracker.values.empty());
    }
    EXPECT_TRUE(t.admitsUst(1, 2, 3));
    EXPECT_EQ(t.of(ProcessAttribute::Gid).attribute, ProcessAttribute::Gid);
}

TEST(ProcessTrackers, TrackingFromAllMakesTheSetOfThoseValuesThenAdds) {
    ProcessTrackers t;
    EXPECT_TRUE(t.track(kVpid, {42, 7}, false));
    EXPECT_FALSE(t.of(kVpid).all);
    EXPECT_EQ(t.of(kVpid).values, (std::set<uint32_t>{7, 42}));
    EXPECT_TRUE(t.admitsUst(42, 0, 0));
    EXPECT_FALSE(t.admitsUst(43, 0, 0));
    EXPECT_TRUE(t.track(kVpid, {43}, false));
    EXPECT_TRUE(t.admitsUst(43, 0, 0));
    // The other trackers still admit everything.
    EXPECT_TRUE(t.of(ProcessAttribute::Vuid).all);
}

TEST(ProcessTrackers, AnAppMustBeAdmittedByEveryUstTracker) {
    ProcessTrackers t;
    t.track(ProcessAttribute::Vuid, {1000}, false);
    t.track(ProcessAttribute::Vgid, {100}, false);
    EXPECT_TRUE(t.admitsUst(5, 1000, 100));
    EXPECT_FALSE(t.admitsUst(5, 1001, 100));
    EXPECT_FALSE(t.admitsUst(5, 1000, 101));
    // Kernel trackers do not decide for UST apps.
    t.untrack(ProcessAttribute::Pid, {}, true);
    EXPECT_TRUE(t.admitsUst(5, 1000, 100));
}

TEST(ProcessTrackers, UntrackAllTracksNothingAndTrackAllGoesBack) {
    ProcessTrackers t;
    EXPECT_TRUE(t.untrack(kVpid, {}, true));
    EXPECT_FALSE(t.of(kVpid).all);
    EXPECT_TRUE(t.of(kVpid).values.empty());
    EXPECT_FALSE(t.admitsUst(1, 0, 0));
    EXPECT_FALSE(t.untrack(kVpid, {}, true)); // nothing to change
    EXPECT_TRUE(t.track(kVpid, {1}, false));
    EXPECT_TRUE(t.untrack(kVpid, {}, true));
    EXPECT_TRUE(t.of(kVpid).values.empty());
    EXPECT_TRUE(t.track(kVpid, {}, true));
    EXPECT_TRUE(t.of(kVpid).all);
    EXPECT_FALSE(t.track(kVpid, {}, true));
    EXPECT_TRUE(t.admitsUst(1, 0, 0));
}

TEST(ProcessTrackers, UntrackRemovesOnlyTrackedValues) {
    ProcessTrackers t;
    t.track(kVpid, {1, 2, 3}, false);
    EXPECT_TRUE(t.untrack(kVpid, {1, 3}, false));
    EXPECT_EQ(t.of(kVpid).values, (std::set<uint32_t>{2}));
    // Not tracked (LTTNG_ERR_PROCESS_ATTR_MISSING): refused, nothing removed.
    const ProcessTrackers before = t;
    EXPECT_EQ(refusal([&] { t.untrack(kVpid, {2, 9}, false); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(t, before);
    // Untracking the last one leaves an empty set: nothing is tracked.
    EXPECT_TRUE(t.untrack(kVpid, {2}, false));
    EXPECT_FALSE(t.of(kVpid).all);
    EXPECT_FALSE(t.admitsUst(2, 0, 0));
}

TEST(ProcessTrackers, RefusedCallsChangeNothing) {
    ProcessTrackers t;
    // A value while every process is tracked: LTTng's invalid tracking policy.
    EXPECT_EQ(refusal([&] { t.untrack(kVpid, {1}, false); }), ErrorCode::InvalidArgument);
    EXPECT_TRUE(t.of(kVpid).all);
    // Neither values nor all; both.
    EXPECT_EQ(refusal([&] { t.track(kVpid, {}, false); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(refusal([&] { t.track(kVpid, {1}, true); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(refusal([&] { t.untrack(kVpid, {}, false); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(refusal([&] { t.untrack(kVpid, {1}, true); }), ErrorCode::InvalidArgument);
    EXPECT_TRUE(t.of(kVpid).all);
    // A value twice in one call, or tracked already (LTTNG_ERR_PROCESS_ATTR_EXISTS).
    EXPECT_EQ(refusal([&] { t.track(kVpid, {5, 5}, false); }), ErrorCode::InvalidArgument);
    EXPECT_TRUE(t.of(kVpid).all);
    t.track(kVpid, {5}, false);
    const ProcessTrackers before = t;
    EXPECT_EQ(refusal([&] { t.track(kVpid, {6, 5}, false); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(t, before);
}

TEST(ProcessTrackers, ATrackerHoldsAtMostItsBound) {
    ProcessTrackers t;
    std::vector<uint32_t> many;
    for (uint32_t v = 0; v < kMaxTrackedValues; ++v)
        many.push_back(v);
    EXPECT_TRUE(t.track(kVpid, many, false));
    EXPECT_EQ(t.of(kVpid).values.size(), kMaxTrackedValues);
    const ProcessTrackers before = t;
    EXPECT_EQ(refusal([&] { t.track(kVpid, {100000}, false); }), ErrorCode::LimitExceeded);
    EXPECT_EQ(t, before);
    // Back to all, and the bound counts from the new set.
    t.track(kVpid, {}, true);
    many.push_back(static_cast<uint32_t>(kMaxTrackedValues));
    EXPECT_EQ(refusal([&] { t.track(kVpid, many, false); }), ErrorCode::LimitExceeded);
    EXPECT_TRUE(t.of(kVpid).all);
}
