// A watchdog for exchanges with LTTng-UST apps. Every call on an app socket
// is bounded (kAppSocketTimeout), but an app answering each call just before
// the bound could still hold a worker for many bounds in a row. An
// exchange made of several calls (a registration, setting up a session in
// an app) is armed here with one budget for all of it: when the budget runs
// out, the watchdog thread shuts the socket down (shutdown(2) SHUT_RDWR), so
// the call in progress and every later one fail at once.
#pragma once

#include "common/unique_fd.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

namespace tracectl {

class SocketDeadlines {
public:
    using Clock = std::chrono::steady_clock;

    SocketDeadlines();
    /// Stops the watchdog thread; nothing armed is cut off any more.
    ~SocketDeadlines();
    SocketDeadlines(const SocketDeadlines&) = delete;
    SocketDeadlines& operator=(const SocketDeadlines&) = delete;

    /// One armed exchange; disarms when destroyed. The watchdog holds a
    /// duplicate of the fd until then, so closing the app's fd first is
    /// harmless (no reused fd number is ever cut off).
    class Armed {
    public:
        Armed(Armed&& other) noexcept;
        Armed& operator=(Armed&&) = delete;
        Armed(const Armed&) = delete;
        ~Armed();
        /// True once the watchdog has shut the socket down.
        bool expired() const;

    private:
        friend class SocketDeadlines;
        Armed(SocketDeadlines* owner, uint64_t id) : owner_(owner), id_(id) {}
        SocketDeadlines* owner_;
        uint64_t id_;
    };

    /// Shuts the socket `fd` down once `budget` has passed, unless the
    /// returned Armed is gone by then. Thread-safe. Throws std::system_error
    /// if `fd` cannot be duplicated.
    [[nodiscard]] Armed arm(int fd, std::chrono::milliseconds budget);

private:
    struct Entry {
        UniqueFd fd; ///< a duplicate: shutdown(2) acts on the socket itself
        Clock::time_point deadline;
        bool expired = false;
    };
    void run();
    void disarm(uint64_t id);
    bool expired(uint64_t id) const;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<uint64_t, Entry> entries_; // guarded by mutex_
    uint64_t nextId_ = 1;               // guarded by mutex_
    bool stopping_ = false;             // guarded by mutex_
    std::thread thread_;                // last: starts once the rest is built
};

} // namespace tracectl
