// A cap on how many lines one source of log lines may write: a peer that
// anyone can connect to (the world-writable LTTng-UST app socket) must not be
// able to flood the journal. At most `burst` lines per `interval`; what is
// held back is counted and reported with the next line let through.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace tracectl::log {

class RateLimit {
public:
    using Clock = std::chrono::steady_clock;

    RateLimit(std::size_t burst, std::chrono::seconds interval)
        : burst_(burst), interval_(interval) {}

    /// `line` as it may be logged now ("" = hold it back). A line let
    /// through after some were held back says how many. Thread-safe.
    std::string pass(const std::string& line, Clock::time_point now = Clock::now()) {
        std::lock_guard lock(mutex_);
        if (now - windowStart_ >= interval_) {
            windowStart_ = now;
            used_ = 0;
        }
        if (used_ >= burst_) {
            ++suppressed_;
            return {};
        }
        ++used_;
        if (suppressed_ == 0)
            return line;
        const std::string out =
            line + " (" + std::to_string(suppressed_) + " similar lines were not logged)";
        suppressed_ = 0;
        return out;
    }

private:
    std::mutex mutex_;
    const std::size_t burst_;
    const std::chrono::seconds interval_;
    Clock::time_point windowStart_{};
    std::size_t used_ = 0;
    std::size_t suppressed_ = 0;
};

} // namespace tracectl::log
