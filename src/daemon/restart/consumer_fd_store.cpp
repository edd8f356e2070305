#include "consumer_fd_store.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <systemd/sd-daemon.h>

namespace tracectl {

namespace {

std::string fdName(const std::string& idHex) {
    return std::string(kConsumerFdNamePrefix) + idHex;
}

} // namespace

std::string sessionOfConsumerFdName(std::string_view name) {
    if (name.substr(0, kConsumerFdNamePrefix.size()) != kConsumerFdNamePrefix)
        return "";
    const std::string_view id = name.substr(kConsumerFdNamePrefix.size());
    if (id.size() != 32 || !std::all_of(id.begin(), id.end(), [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        }))
        return "";
    return std::string(id);
}

ConsumerFdStore::ConsumerFdStore(std::map<std::string, UniqueFd> passed)
    : enabled_(std::getenv("NOTIFY_SOCKET") != nullptr), passed_(std::move(passed)) {}

bool ConsumerFdStore::keep(const std::string& idHex, int fd) {
    if (!enabled_)
        return false;
    // Once per consumer: a name stored twice would be two entries.
    const std::string text = "FDSTORE=1\nFDNAME=" + fdName(idHex);
    const int r = sd_pid_notify_with_fds(0, 0, text.c_str(), &fd, 1);
    if (r <= 0) {
        log::warning("cannot keep the consumer connection of session " + idHex +
                     " in systemd's fd store (" +
                     (r == 0 ? std::string("no $NOTIFY_SOCKET") : std::strerror(-r)) +
                     "): its session will not survive a restart");
        return false;
    }
    return true;
}

void ConsumerFdStore::forget(const std::string& idHex) {
    if (!enabled_)
        return;
    const std::string text = "FDSTOREREMOVE=1\nFDNAME=" + fdName(idHex);
    if (const int r = sd_notify(0, text.c_str()); r < 0)
        log::warning("cannot remove the consumer connection of session " + idHex +
                     " from systemd's fd store: " + std::strerror(-r));
}

UniqueFd ConsumerFdStore::take(const std::string& idHex) {
    const auto it = passed_.find(idHex);
    if (it == passed_.end())
        return {};
    UniqueFd fd = std::move(it->second);
    passed_.erase(it);
    return fd;
}

std::vector<std::string> ConsumerFdStore::dropUntaken() {
    std::vector<std::string> dropped;
    for (auto& [idHex, fd] : passed_) {
        forget(idHex);
        dropped.push_back(idHex);
    }
    passed_.clear(); // closes them
    return dropped;
}

} // namespace tracectl
