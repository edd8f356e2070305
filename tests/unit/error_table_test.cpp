#include "common/error.hpp"

#include <cerrno>
#include <gtest/gtest.h>
#include <set>
#include <string>

using namespace tracectl;

TEST(ErrorTable, EveryCodeHasAUniqueNamespacedName) {
    std::set<std::string> names;
    for (int c = 0; c <= static_cast<int>(ErrorCode::Failed); ++c) {
        const ErrorInfo& info = errorInfo(static_cast<ErrorCode>(c));
        EXPECT_EQ(info.dbusName.substr(0, kErrorPrefix.size()), kErrorPrefix);
        EXPECT_GT(info.errnoValue, 0);
        EXPECT_TRUE(names.insert(std::string(info.dbusName)).second) << info.dbusName;
    }
}

TEST(ErrorTable, NamesMatchTheCodes) {
    EXPECT_EQ(errorInfo(ErrorCode::NoSuchSession).dbusName,
              "org.tracectl.Tracing1.Error.NoSuchSession");
    EXPECT_EQ(errorInfo(ErrorCode::WrongState).dbusName, "org.tracectl.Tracing1.Error.WrongState");
    EXPECT_EQ(errorInfo(ErrorCode::InvalidName).dbusName,
              "org.tracectl.Tracing1.Error.InvalidName");
    EXPECT_EQ(errorInfo(ErrorCode::LimitExceeded).dbusName,
              "org.tracectl.Tracing1.Error.LimitExceeded");
    EXPECT_EQ(errorInfo(ErrorCode::EventRuleExists).dbusName,
              "org.tracectl.Tracing1.Error.EventRuleExists");
    EXPECT_EQ(errorInfo(ErrorCode::EventRuleExists).errnoValue, EEXIST);
    EXPECT_EQ(errorInfo(ErrorCode::NoSuchEventRule).dbusName,
              "org.tracectl.Tracing1.Error.NoSuchEventRule");
    EXPECT_EQ(errorInfo(ErrorCode::NoSuchEventRule).errnoValue, ENOENT);
    EXPECT_EQ(errorInfo(ErrorCode::RelayUnavailable).dbusName,
              "org.tracectl.Tracing1.Error.RelayUnavailable");
    EXPECT_EQ(errorInfo(ErrorCode::RelayUnavailable).errnoValue, ECONNREFUSED);
}
