// Waiting on facts, not on time: eventually(condition, deadline) polls a
// condition until it holds, so a test goes on as soon as what it waits for
// has happened, and fails (with how long it waited) only if it never does.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace tracectl::test {

/// Calls `condition` every `poll` until it returns true (then true) or
/// `deadline` has passed (then false, after one last try).
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds deadline = std::chrono::seconds(10),
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
        if (condition())
            return true;
        std::this_thread::sleep_for(poll);
    }
    return condition();
}

/// Seconds `f` took to run.
inline double secondsOf(const std::function<void()>& f) {
    const auto begin = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

} // namespace tracectl::test
