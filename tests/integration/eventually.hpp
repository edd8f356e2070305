// Waiting on facts, not on time: eventually(condition, deadline) polls a
// condition until it holds, so a test goes on as soon as what it waits for
// has happened, and fails (with how long it waited) only if it never does.
// observeFor(window) is the one other way a test lets time pass: a fixed
// window in which it checks that nothing happens (no rotation while
// stopped, no signal to a silent connection). It is never used to wait for
// something to happen.
#pragma once

#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <sys/types.h>
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

/// A fixed observation window: lets `window` pass so that the test can then
/// check that something did NOT happen meanwhile. Not a way to wait for an
/// event: that is eventually()'s job.
inline void observeFor(std::chrono::milliseconds window) {
    std::this_thread::sleep_for(window);
}

/// Seconds `f` took to run.
inline double secondsOf(const std::function<void()>& f) {
    const auto begin = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

/// The text of file `path` ("" if it cannot be read).
inline std::string fileText(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Whether the demo app of `pid` has printed its "ready <pid>" line into
/// `log` (its stdout): its liblttng-ust constructor has returned.
inline bool printedReady(const std::string& log, pid_t pid) {
    const std::string text = fileText(log);
    const std::string line = "ready " + std::to_string(pid) + "\n";
    return text.rfind(line, 0) == 0 || text.find("\n" + line) != std::string::npos;
}

} // namespace tracectl::test
