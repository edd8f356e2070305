// The "interactive" option and the action table of src/daemon/auth.
#include "auth/access_policy.hpp"
#include "auth/call_options.hpp"
#include "common/error.hpp"

#include <gtest/gtest.h>

using tracectl::Error;
using tracectl::ErrorCode;
using namespace tracectl::auth;

namespace {

ErrorCode codeOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "no error";
    return ErrorCode::Failed;
}

TEST(AuthOptions, InteractiveIsTakenOutAndDefaultsToFalse) {
    CallOptions options{{"interactive", sdbus::Variant(true)},
                        {"output-path", sdbus::Variant(std::string("/tmp/x"))}};
    EXPECT_TRUE(takeInteractive(options));
    EXPECT_EQ(options.size(), 1u);
    EXPECT_EQ(options.count("output-path"), 1u);
    EXPECT_FALSE(takeInteractive(options));
    CallOptions no{{"interactive", sdbus::Variant(false)}};
    EXPECT_FALSE(takeInteractive(no));
    EXPECT_TRUE(no.empty());
}

TEST(AuthOptions, WrongTypesAndUnknownKeysAreInvalidArguments) {
    CallOptions text{{"interactive", sdbus::Variant(std::string("yes"))}};
    EXPECT_EQ(codeOf([&] { takeInteractive(text); }), ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf([] {
                  readInteractiveOnly({{"force", sdbus::Variant(true)}});
              }),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf([] {
                  readInteractiveOnly({{"interactive", sdbus::Variant(uint32_t{1})}});
              }),
              ErrorCode::InvalidArgument);
    EXPECT_TRUE(readInteractiveOnly({{"interactive", sdbus::Variant(true)}}));
    EXPECT_FALSE(readInteractiveOnly({}));
}

TEST(AccessPolicy, ActionIdsAreThoseOfThePolicyFile) {
    EXPECT_EQ(actionId(Action::TraceOwn), "org.tracectl.Tracing1.trace-own");
    EXPECT_EQ(actionId(Action::TraceAllUsers), "org.tracectl.Tracing1.trace-all-users");
    EXPECT_EQ(actionId(Action::TraceKernel), "org.tracectl.Tracing1.trace-kernel");
    EXPECT_EQ(actionId(Action::ManageAllSessions), "org.tracectl.Tracing1.manage-all-sessions");
}

} // namespace
