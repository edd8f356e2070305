#include "common/lifetime.hpp"

#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using tracectl::Lifetime;

namespace {

/// An owner as the daemon's are: callbacks capture `this`, its Lifetime is
/// its last member.
struct Owner {
    std::vector<std::string> seen;
    std::function<void(std::string)> later() {
        return lifetime.guard([this](std::string what) { seen.push_back(std::move(what)); });
    }
    Lifetime lifetime;
};

} // namespace

TEST(Lifetime, CallsWhileTheOwnerLives) {
    Owner owner;
    auto f = owner.later();
    f("a");
    f("b");
    EXPECT_EQ(owner.seen, (std::vector<std::string>{"a", "b"}));
}

TEST(Lifetime, OwnerDestroyedNoCall) {
    int calls = 0;
    std::function<void()> f;
    {
        Lifetime lifetime;
        f = lifetime.guard([&calls] { ++calls; });
        f();
    }
    f();
    EXPECT_EQ(calls, 1);
}

TEST(Lifetime, FallbackCalledOnceTheOwnerIsGone) {
    std::vector<std::string> answers;
    std::function<void(std::optional<std::string>)> f;
    {
        Lifetime lifetime;
        f = lifetime.guard(
            [&answers](std::optional<std::string> e) { answers.push_back(e.value_or("ok")); },
            [&answers](std::optional<std::string>) { answers.push_back("destroyed"); });
        f(std::nullopt);
    }
    f(std::string("late"));
    EXPECT_EQ(answers, (std::vector<std::string>{"ok", "destroyed"}));
}

TEST(Lifetime, AFallbackMayTakeNoArguments) {
    int fallbacks = 0;
    std::function<void(int, const std::string&)> f;
    {
        Lifetime lifetime;
        f = lifetime.guard([](int, const std::string&) {}, [&fallbacks] { ++fallbacks; });
    }
    f(1, "x");
    EXPECT_EQ(fallbacks, 1);
}

TEST(Lifetime, CopiesOfTheGuardedCallableShareTheOwner) {
    int calls = 0;
    std::vector<std::function<void()>> copies;
    {
        Lifetime lifetime;
        auto guarded = lifetime.guard([&calls] { ++calls; });
        copies.push_back(guarded);
        copies.push_back(guarded);
        auto moved = std::move(guarded);
        copies.push_back(moved);
        for (auto& c : copies)
            c();
        EXPECT_EQ(calls, 3);
    }
    for (auto& c : copies)
        c();
    EXPECT_EQ(calls, 3);
}

TEST(Lifetime, AGuardOutlivesWhatItGuards) {
    auto owner = std::make_unique<Owner>();
    auto f = owner->later();
    f("kept");
    owner.reset();
    f("dropped"); // nothing is touched
    SUCCEED();
}

TEST(Lifetime, ConstAndMutableCallables) {
    Lifetime lifetime;
    int total = 0;
    const auto constant = lifetime.guard([&total](int n) { total += n; });
    constant(2); // callable through a const object
    auto counter = lifetime.guard([count = 0, &total]() mutable { total += ++count; });
    counter();
    counter();
    EXPECT_EQ(total, 2 + 1 + 2);
}

TEST(Lifetime, TheOwnersMembersDestroyedAfterItSeeItGone) {
    // A member destroyed after the Lifetime (declared before it) calls
    // back from its destructor: the owner is already gone.
    struct CallsBackWhenDestroyed {
        std::function<void()> callback;
        ~CallsBackWhenDestroyed() {
            if (callback)
                callback();
        }
    };
    struct Holder {
        explicit Holder(int& calls) {
            child.callback = lifetime.guard([&calls] { ++calls; });
        }
        CallsBackWhenDestroyed child;
        Lifetime lifetime; // last: goes first
    };
    int calls = 0;
    { Holder h(calls); }
    EXPECT_EQ(calls, 0);
}
