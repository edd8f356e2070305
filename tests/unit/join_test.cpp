#include "common/join.hpp"

#include <gtest/gtest.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using tracectl::Error;
using tracectl::ErrorCode;
using tracectl::Join;

namespace {

/// What a join's `done` was called with, and how often.
struct Outcome {
    int calls = 0;
    std::optional<Error> error;
    std::string path;

    Join::Done done() {
        return [this](std::optional<Error> e) {
            ++calls;
            error = std::move(e);
        };
    }
    Join::PathDone pathDone() {
        return [this](std::optional<Error> e, std::string p) {
            ++calls;
            error = std::move(e);
            path = std::move(p);
        };
    }
};

Error failed(const std::string& what) {
    return Error(ErrorCode::Failed, what);
}

} // namespace

TEST(Join, ZeroStepsAnswersAtSeal) {
    Outcome out;
    Join join(out.done());
    EXPECT_EQ(out.calls, 0);
    join.seal();
    EXPECT_EQ(out.calls, 1);
    EXPECT_FALSE(out.error);
}

TEST(Join, ZeroStepsOfAFixedCountAnswersAtOnce) {
    Outcome out;
    Join join(0, out.done());
    EXPECT_EQ(out.calls, 1);
    EXPECT_FALSE(out.error);
    EXPECT_THROW(join.add(), std::logic_error);
}

TEST(Join, WaitsForEveryStepThenKeepsTheFirstError) {
    Outcome out;
    Join join(out.done());
    auto a = join.add();
    auto b = join.add();
    auto c = join.add();
    join.seal();
    b(failed("b"));
    a(std::nullopt);
    EXPECT_EQ(out.calls, 0);
    c(failed("c"));
    ASSERT_EQ(out.calls, 1);
    ASSERT_TRUE(out.error);
    EXPECT_STREQ(out.error->what(), "b");
}

TEST(Join, KeepsTheFirstNonEmptyPath) {
    Outcome out;
    Join join(out.pathDone());
    auto none = join.add();
    auto empty = join.addWithPath();
    auto first = join.addWithPath();
    auto second = join.addWithPath();
    join.seal();
    none(std::nullopt);
    empty(std::nullopt, "");
    first(std::nullopt, "/a");
    second(std::nullopt, "/b");
    ASSERT_EQ(out.calls, 1);
    EXPECT_FALSE(out.error);
    EXPECT_EQ(out.path, "/a");
}

TEST(Join, PathsOfAJoinWithoutPathsAreDropped) {
    Outcome out;
    Join join(out.done());
    join.addWithPath()(failed("x"), "/a");
    join.seal();
    ASSERT_EQ(out.calls, 1);
    EXPECT_STREQ(out.error->what(), "x");
}

TEST(Join, DoneIsCalledOnceWhateverHappensAfter) {
    Outcome out;
    Join join(out.done());
    auto a = join.add();
    auto copy = a;
    join.seal();
    a(std::nullopt);
    EXPECT_EQ(out.calls, 1);
    a(failed("again")); // a second answer of the same step counts for nothing
    copy(failed("copy"));
    join.seal();
    EXPECT_EQ(out.calls, 1);
    EXPECT_FALSE(out.error);
    EXPECT_THROW(join.add(), std::logic_error);
}

TEST(Join, AStepAnsweredTwiceDoesNotStandForAnother) {
    Outcome out;
    Join join(out.done());
    auto a = join.add();
    auto b = join.add();
    join.seal();
    a(std::nullopt);
    a(std::nullopt);
    EXPECT_EQ(out.calls, 0);
    b(std::nullopt);
    EXPECT_EQ(out.calls, 1);
}

TEST(Join, StepsAnsweringAfterSeal) {
    Outcome out;
    std::vector<Join::Done> steps;
    {
        Join join(out.done());
        for (int i = 0; i < 3; ++i)
            steps.push_back(join.add());
        join.seal();
    } // the steps keep the join
    for (auto& s : steps) {
        EXPECT_EQ(out.calls, 0);
        s(std::nullopt);
    }
    EXPECT_EQ(out.calls, 1);
}

TEST(Join, StepsAnsweringInsideTheCallThatGotThemWaitForTheSeal) {
    Outcome out;
    Join join(out.done());
    // Each "request" answers before it returns.
    const auto request = [](const Join::Done& step) { step(std::nullopt); };
    request(join.add());
    request(join.add());
    EXPECT_EQ(out.calls, 0);
    join.seal();
    EXPECT_EQ(out.calls, 1);
}

TEST(Join, AFixedCountSealsAtItsLastStepAndNotBefore) {
    Outcome out;
    Join join(3, out.done());
    join.add()(std::nullopt); // answered at once: the others are still to come
    join.add()(std::nullopt);
    EXPECT_EQ(out.calls, 0);
    auto last = join.add();
    EXPECT_EQ(out.calls, 0);
    EXPECT_THROW(join.add(), std::logic_error);
    last(std::nullopt);
    EXPECT_EQ(out.calls, 1);
}

TEST(Join, AFixedCountAnsweredInsideTheCallsAnswersWithTheLast) {
    Outcome out;
    Join join(2, out.done());
    join.add()(std::nullopt);
    join.add()(failed("last"));
    ASSERT_EQ(out.calls, 1);
    EXPECT_STREQ(out.error->what(), "last");
}

TEST(Join, AStepMapsItsOwnError) {
    Outcome out;
    Join join(out.done());
    const auto named = [](const std::string& name) -> Join::MapError {
        return [name](const Error& e) { return Error(e.code(), name + ": " + e.what()); };
    };
    auto plain = join.add();
    auto a = join.add(named("a"));
    auto b = join.addWithPath(named("b"));
    join.seal();
    a(std::nullopt);                                           // no error: nothing to map
    b(Error(ErrorCode::InvalidArgument, "bad"), "/somewhere"); // the first error, mapped
    plain(failed("later"));
    ASSERT_EQ(out.calls, 1);
    ASSERT_TRUE(out.error);
    EXPECT_EQ(out.error->code(), ErrorCode::InvalidArgument);
    EXPECT_STREQ(out.error->what(), "b: bad");
}

TEST(Join, DoneMayDropTheLastStep) {
    Outcome out;
    auto held = std::make_shared<Join::Done>();
    Join join([&out, held](std::optional<Error> e) {
        *held = nullptr; // frees the step being called
        out.done()(std::move(e));
    });
    *held = join.add();
    join.seal();
    (*held)(std::nullopt);
    EXPECT_EQ(out.calls, 1);
}

TEST(Join, AnEmptyDoneIsAllowed) {
    Join join(Join::Done{});
    auto a = join.add();
    join.seal();
    a(std::nullopt); // nobody to tell: nothing happens
    SUCCEED();
}
