#include "kernel/syscall_strings.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <sys/epoll.h>

namespace tracectl::consumer::kernel {

void SyscallStrings::attach(EventLoop& loop, UniqueFd ring, UniqueFd counters, bool watch,
                            std::size_t cpus) {
    if (ring_)
        throw std::runtime_error("the system-call string program is attached already");
    std::optional<SyscallStringRing> reader;
    reader.emplace(std::move(ring), std::move(counters));
    // A sys_enter record takes at least 48 bytes of ftrace's buffer (the
    // header, nr and one argument, rounded up); its string, on average,
    // less than twice that.
    const std::size_t buffered = reader->ringBytes() * std::max<std::size_t>(cpus, 1);
    constexpr std::size_t kMostEntries = std::size_t{1} << 20; // 48 MiB
    constexpr std::size_t kMostText = std::size_t{64} << 20;
    table_.setLimits(std::clamp<std::size_t>(buffered / 48, 16384, kMostEntries),
                     std::clamp<std::size_t>(2 * buffered, std::size_t{4} << 20, kMostText));
    if (watch) {
        sd_event_source* s = nullptr;
        const int r = sd_event_add_io(loop.get(), &s, reader->pollFd(), EPOLLIN,
                                      &SyscallStrings::onReadable, this);
        if (r < 0)
            throw std::runtime_error("watching the system-call string ring buffer: " +
                                     std::string(std::strerror(-r)));
        watch_.reset(s);
    }
    ring_ = std::move(reader);
}

int SyscallStrings::onReadable(sd_event_source*, int, std::uint32_t, void* userdata) {
    static_cast<SyscallStrings*>(userdata)->drain();
    return 0;
}

void SyscallStrings::drain() noexcept {
    if (!ring_)
        return;
    try {
        ring_->drainInto(table_);
    } catch (const std::exception& e) {
        if (!std::exchange(errorTold_, true))
            log::warning("kernel channel " + channel_ + ": system-call strings: " + e.what() +
                         " (said once)");
    }
}

void SyscallStrings::tick(std::uint64_t now, std::uint64_t horizonNs) noexcept {
    drain();
    if (now > horizonNs)
        table_.dropOlderThan(now - horizonNs);
    const UserStringTable::Counters& c = table_.counters();
    if (c.unmatched != 0 && ring_ && !std::exchange(unmatchedTold_, true))
        log::warning("kernel channel " + channel_ + ": " + std::to_string(c.unmatched) +
                     " system call string argument(s) without their copy so far, recorded as "
                     "\"\" (ring full: " +
                     std::to_string(dropped()) + " lost; said once)");
}

void SyscallStrings::close() noexcept {
    watch_.reset();
    ring_.reset();
}

} // namespace tracectl::consumer::kernel
