#include "socket_deadlines.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/socket.h>
#include <system_error>
#include <utility>

namespace tracectl {

SocketDeadlines::SocketDeadlines() : thread_([this] { run(); }) {}

SocketDeadlines::~SocketDeadlines() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

SocketDeadlines::Armed SocketDeadlines::arm(int fd, std::chrono::milliseconds budget) {
    UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (!copy)
        throw std::system_error(errno, std::generic_category(), "dup of an app socket");
    uint64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        id = nextId_++;
        entries_[id] = Entry{std::move(copy), Clock::now() + budget, false};
    }
    changed_.notify_all();
    return Armed(this, id);
}

void SocketDeadlines::disarm(uint64_t id) {
    std::lock_guard lock(mutex_);
    entries_.erase(id);
}

bool SocketDeadlines::expired(uint64_t id) const {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(id);
    return it != entries_.end() && it->second.expired;
}

void SocketDeadlines::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        auto next = Clock::time_point::max();
        const auto now = Clock::now();
        for (auto& [id, e] : entries_) {
            if (e.expired)
                continue;
            if (e.deadline <= now) {
                ::shutdown(e.fd.get(), SHUT_RDWR);
                e.expired = true;
            } else if (e.deadline < next) {
                next = e.deadline;
            }
        }
        if (next == Clock::time_point::max())
            changed_.wait(lock);
        else
            changed_.wait_until(lock, next);
    }
}

SocketDeadlines::Armed::Armed(Armed&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), id_(other.id_) {}

SocketDeadlines::Armed::~Armed() {
    if (owner_ != nullptr)
        owner_->disarm(id_);
}

bool SocketDeadlines::Armed::expired() const {
    return owner_ != nullptr && owner_->expired(id_);
}

} // namespace tracectl
