#include "ust_app_registrar.hpp"

#include "common/log.hpp"
#include "common/log_rate_limit.hpp"
#include "registration_message.hpp"
#include "ust_error.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <future>
#include <lttng/ust-ctl.h>
#include <lttng/ust-error.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <system_error>
#include <time.h>

namespace tracectl {

namespace {

void check(int r, const char* what) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), what);
}

void boundSocketCalls(int fd) {
    timeval tv{};
    tv.tv_sec = kAppSocketTimeout.count();
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/// Every line about app connections goes through one limit: anyone can
/// connect to the app socket, nobody may flood the journal through it.
void appWarning(const std::string& line) {
    static log::RateLimit limit(50, std::chrono::seconds(10));
    if (const std::string out = limit.pass(line); !out.empty())
        log::warning(out);
}

std::string ustError(int r) {
    return ustErrorString(r);
}

/// Whether `fd` can no longer carry a round trip: its peer hung up, or it
/// was shut down (as liblttng-ust-ctl does after a failed or timed-out call).
bool connectionBroken(int fd) {
    pollfd p{};
    p.fd = fd;
    p.events = POLLRDHUP;
    return poll(&p, 1, 0) < 0 || (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}

/// Ends every exchange with `app`: later calls on its sockets fail at once,
/// and whoever watches its notify socket sees a hang-up.
void cutOff(const UstApp& app) {
    shutdown(app.command.get(), SHUT_RDWR);
    shutdown(app.notify.get(), SHUT_RDWR);
}

/// Whether process `pid` is in the daemon's own namespace of kind `ns`
/// ("pid", "user"), from /proc/<pid>/ns/<ns>. If that cannot be read, yes:
/// the strict answer.
bool sharesNamespace(pid_t pid, const char* ns) {
    struct stat mine {};
    struct stat theirs {};
    const std::string self = std::string("/proc/self/ns/") + ns;
    const std::string peer = "/proc/" + std::to_string(pid) + "/ns/" + ns;
    if (stat(self.c_str(), &mine) < 0 || stat(peer.c_str(), &theirs) < 0)
        return true;
    return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/// The soft RLIMIT_NOFILE of the daemon; 1024 if it cannot be read.
rlim_t openFilesLimit() noexcept {
    rlimit r{};
    return getrlimit(RLIMIT_NOFILE, &r) == 0 ? r.rlim_cur : 1024;
}

} // namespace

std::string printableProcessName(const char* raw, std::size_t max) {
    std::string out;
    for (std::size_t i = 0; i < max && raw[i] != '\0'; ++i) {
        const auto c = static_cast<unsigned char>(raw[i]);
        out += (c >= 0x20 && c <= 0x7E) ? static_cast<char>(c) : '?';
    }
    return out;
}

UstAppRegistrar::UstAppRegistrar(EventLoop& loop, UniqueFd listenFd, RegisteredHandler onRegistered,
                                 SetupHandler setUp)
    : waitingFds_(waitingFdShares(openFilesLimit()).perUid,
                  waitingFdShares(openFilesLimit()).total),
      loop_(loop), listenFd_(std::move(listenFd)), onRegistered_(std::move(onRegistered)),
      setUp_(std::move(setUp)) {
    sd_event_source* s = nullptr;
    check(sd_event_add_io(loop_.get(), &s, listenFd_.get(), EPOLLIN, &UstAppRegistrar::onAccept,
                          this),
          "sd_event_add_io");
    listenSource_.reset(s);
    check(sd_event_add_time_relative(loop_.get(), &s, CLOCK_MONOTONIC, 1'000'000, 0,
                                     &UstAppRegistrar::onSweep, this),
          "sd_event_add_time_relative");
    sweepTimer_.reset(s);
    check(sd_event_source_set_enabled(s, SD_EVENT_ON), "set_enabled");
}

UstAppRegistrar::~UstAppRegistrar() {
    for (auto& [id, q] : versionQueries_)
        cutOff(*q.app); // its worker returns at once; joined below
    versionQueries_.clear();
    queued_.clear();
    for (auto& [fd, c] : unregistered_)
        c.source.reset();
}

int UstAppRegistrar::onAccept(sd_event_source*, int listenFd, uint32_t, void* userdata) {
    auto* self = static_cast<UstAppRegistrar*>(userdata);
    for (;;) {
        UniqueFd fd(accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC));
        if (!fd) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                appWarning(std::string("accepting an app connection failed: ") +
                           std::strerror(errno));
            return 0;
        }
        // Counted per peer uid: one user holding connections open without a
        // word uses up its own share, not everyone's.
        ucred cred{};
        socklen_t len = sizeof cred;
        if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
            appWarning(std::string("app connection without peer credentials: ") +
                       std::strerror(errno));
            continue;
        }
        self->admit(std::move(fd), cred.uid);
    }
}

void UstAppRegistrar::admit(UniqueFd fd, uid_t uid) {
    boundSocketCalls(fd.get());
    // A connection whose whole message is there already (the usual case in
    // a burst: the app sent it while the thread was busy) is registered at
    // once; only one still silent is held, and counted, until it speaks.
    int queued = 0;
    if (ioctl(fd.get(), FIONREAD, &queued) == 0 &&
        static_cast<std::size_t>(std::max(queued, 0)) >= kUstRegistrationMessageSize) {
        registerSocket(std::move(fd));
        return;
    }
    if (!unregisteredQuota_.fits(uid) && !makeRoomForIdle(uid))
        return;
    PerUidQuota::Slot slot = unregisteredQuota_.tryAcquire(uid);
    if (!slot)
        return;
    sd_event_source* s = nullptr;
    // Edge-triggered: a connection with part of a message queued wakes the
    // loop once per arrival, not in a busy loop. Added while the message
    // may already be there: epoll reports it once, at once.
    if (sd_event_add_io(loop_.get(), &s, fd.get(), EPOLLIN | EPOLLRDHUP | EPOLLET,
                        &UstAppRegistrar::onRegistrationMessage, this) < 0)
        return;
    const int key = fd.get();
    const uint64_t seq = nextIdleSeq_++;
    idleOrder_.emplace(std::pair(uid, seq), key);
    unregistered_.emplace(key,
                          Connection{std::move(fd), EventSourcePtr(s),
                                     std::chrono::steady_clock::now(), uid, seq, std::move(slot)});
}

bool UstAppRegistrar::makeRoomForIdle(uid_t uid) {
    const bool uidFull = unregisteredQuota_.held(uid) >= unregisteredQuota_.perUid();
    const std::optional<uid_t> payer = uidFull ? uid : unregisteredQuota_.largestHolder();
    if (!payer)
        return false;
    const auto oldest = idleOrder_.lower_bound(std::pair(*payer, uint64_t{0}));
    if (oldest == idleOrder_.end() || oldest->first.first != *payer)
        return false;
    const auto victim = unregistered_.find(oldest->second);
    if (victim == unregistered_.end())
        return false;
    const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - victim->second.since);
    appWarning((uidFull ? "uid " + std::to_string(uid) + " has " +
                              std::to_string(unregisteredQuota_.perUid()) +
                              " app connections without a registration message; "
                              "closing its oldest"
                        : std::to_string(unregisteredQuota_.total()) +
                              " app connections without a registration message (all uids); "
                              "closing the oldest of uid " +
                              std::to_string(*payer) + " (it holds the most)") +
               ", silent for " + std::to_string(idle.count()) + " ms, for a new one of uid " +
               std::to_string(uid));
    dropUnregistered(victim);
    return true;
}

void UstAppRegistrar::dropUnregistered(std::map<int, Connection>::iterator it) {
    idleOrder_.erase(std::pair(it->second.uid, it->second.seq));
    unregistered_.erase(it); // its event source, its fd and its slot go with it
}

int UstAppRegistrar::onRegistrationMessage(sd_event_source*, int fd, uint32_t revents,
                                           void* userdata) {
    static_cast<UstAppRegistrar*>(userdata)->readRegistration(fd, revents);
    return 0;
}

void UstAppRegistrar::readRegistration(int fd, uint32_t revents) {
    const auto found = unregistered_.find(fd);
    if (found == unregistered_.end())
        return;
    // Never block here: read the message only once all of it is queued.
    // The source is edge-triggered, so a partial message does not wake the
    // loop again until more bytes (or a hang-up) arrive.
    int queued = 0;
    if (ioctl(fd, FIONREAD, &queued) < 0) {
        appWarning(std::string("app connection dropped: FIONREAD: ") + std::strerror(errno));
        dropUnregistered(found);
        return;
    }
    const bool hungUp = (revents & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    const auto available = static_cast<std::size_t>(std::max(queued, 0));
    switch (registrationReadiness(available, hungUp)) {
    case RegistrationReadiness::Wait:
        return; // more bytes, a hang-up, or the sweep's timeout
    case RegistrationReadiness::Truncated:
        if (available == 0)
            log::info("an app connection closed before sending its registration message");
        else
            appWarning("app connection refused: truncated registration message (" +
                       std::to_string(available) + " of " +
                       std::to_string(kUstRegistrationMessageSize) + " bytes, then hang-up)");
        dropUnregistered(found);
        return;
    case RegistrationReadiness::Complete:
        break;
    }
    UniqueFd sock = std::move(found->second.fd);
    dropUnregistered(found); // its event source goes with it
    registerSocket(std::move(sock));
}

void UstAppRegistrar::registerSocket(UniqueFd sock) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(sock.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
        appWarning(std::string("app connection without peer credentials: ") + std::strerror(errno));
        return;
    }
    const std::string who =
        "app pid " + std::to_string(cred.pid) + " uid " + std::to_string(cred.uid);

    // The raw bytes, for the identity the app claims: liblttng-ust-ctl
    // replaces it by SO_PEERCRED without telling.
    std::array<std::byte, kUstRegistrationMessageSize> raw{};
    if (recv(sock.get(), raw.data(), raw.size(), MSG_PEEK | MSG_DONTWAIT) !=
        static_cast<ssize_t>(raw.size())) {
        appWarning(who + " refused: its registration message could not be read (" +
                   std::strerror(errno) + ")");
        return;
    }
    // All of it is queued: this reads exactly kUstRegistrationMessageSize
    // bytes without waiting.
    lttng_ust_ctl_socket_type type{};
    uint32_t major = 0, minor = 0, pid = 0, ppid = 0, uid = 0, gid = 0, bits = 0;
    uint32_t a8 = 0, a16 = 0, a32 = 0, a64 = 0, along = 0;
    int byteOrder = 0;
    char name[LTTNG_UST_ABI_PROCNAME_LEN + 1] = {};
    const int r =
        lttng_ust_ctl_recv_reg_msg(sock.get(), &type, &major, &minor, &pid, &ppid, &uid, &gid,
                                   &bits, &a8, &a16, &a32, &a64, &along, &byteOrder, name);
    if (r == -LTTNG_UST_ERR_UNSUP_MAJOR) {
        appWarning(who + " refused: LTTng-UST ABI " + std::to_string(major) + "." +
                   std::to_string(minor) + " is not supported (this daemon speaks " +
                   std::to_string(LTTNG_UST_ABI_MAJOR_VERSION) + ".x)");
        return;
    }
    if (r < 0) {
        appWarning(who + " refused: bad registration message (" + ustError(r) + ")");
        return;
    }
    // The message is the app's word; the kernel's credentials are the truth.
    // An app in a nested pid (user) namespace honestly claims the pid (uid)
    // it sees there: only claims made from the daemon's namespace are held
    // against it.
    const auto claims = decodeRegistrationClaims(raw);
    if (!claims) {
        appWarning(who + " refused: bad registration message (magic)");
        return;
    }
    if (claims->pid != static_cast<uint32_t>(cred.pid) && sharesNamespace(cred.pid, "pid")) {
        appWarning(who + " refused: its registration claims pid " + std::to_string(claims->pid));
        return;
    }
    if ((claims->uid != static_cast<uint32_t>(cred.uid) ||
         claims->gid != static_cast<uint32_t>(cred.gid)) &&
        sharesNamespace(cred.pid, "user")) {
        appWarning(who + " refused: its registration claims uid " + std::to_string(claims->uid) +
                   " gid " + std::to_string(claims->gid));
        return;
    }
    if (bits != 32 && bits != 64) {
        appWarning(who + " refused: unsupported bitness " + std::to_string(bits));
        return;
    }
    if (const std::string why =
            abiMismatch(RegistrationAbi{bits, a8, a16, a32, a64, along, byteOrder});
        !why.empty()) {
        appWarning(who + " refused: " + why);
        return;
    }
    if (type != LTTNG_UST_CTL_SOCKET_CMD && type != LTTNG_UST_CTL_SOCKET_NOTIFY) {
        appWarning(who + " refused: unknown socket type");
        return;
    }

    PendingRegistrations::Half half;
    UstAppInfo& info = half.info;
    info.pid = cred.pid;
    info.ppid = static_cast<pid_t>(ppid);
    info.uid = cred.uid;
    info.gid = cred.gid;
    info.bitness = bits;
    info.name = printableProcessName(name, LTTNG_UST_ABI_PROCNAME_LEN);
    info.abiMajor = major;
    info.abiMinor = minor;
    info.uint8Alignment = a8;
    info.uint16Alignment = a16;
    info.uint32Alignment = a32;
    info.uint64Alignment = a64;
    info.longAlignment = along;
    info.byteOrder = byteOrder;
    half.isNotify = type == LTTNG_UST_CTL_SOCKET_NOTIFY;
    half.fd = std::move(sock);
    half.slot = waitingFds_.tryAcquire(cred.uid);
    if (!half.slot) {
        const bool uidFull = waitingFds_.held(cred.uid) >= waitingFds_.perUid();
        appWarning(who + " refused: " +
                   (uidFull ? "uid " + std::to_string(cred.uid) + " holds its share of "
                            : "all uids hold ") +
                   std::to_string(uidFull ? waitingFds_.perUid() : waitingFds_.total()) +
                   " file descriptors of registering apps");
        return;
    }
    if (auto app = pending_.add(std::move(half), PendingRegistrations::Clock::now()))
        complete(std::move(*app));
}

void UstAppRegistrar::complete(UstApp app) {
    const uid_t uid = app.info.uid;
    // Its two halves gave their fds back as they were paired: the same
    // two, of the same uid, are taken again at once.
    PerUidQuota::Slot fds = waitingFds_.tryAcquire(uid, 2);
    if (!fds) {
        cutOff(app);
        appWarning("app " + app.info.name + " (pid " + std::to_string(app.info.pid) +
                   ") dropped: uid " + std::to_string(uid) + " holds its share of " +
                   std::to_string(waitingFds_.perUid()) + " file descriptors of registering apps");
        return;
    }
    const int command = app.command.get();
    const auto id = queued_.push(uid, QueuedApp{std::move(app), std::move(fds), {}});
    try {
        // An app that leaves while it waits gives its fds back at once.
        // Taken out of the line outside the watch's own callback.
        queued_.find(id)->hangUp = watchHangUp(command, [this, id] {
            loop_.defer([this, id] {
                if (QueuedApp* q = queued_.find(id))
                    log::info("app " + q->app.info.name + " (pid " +
                              std::to_string(q->app.info.pid) +
                              ") left before its turn to register came");
                queued_.erase(id);
            });
        });
    } catch (const std::exception& e) {
        appWarning(std::string("watching a queued app: ") + e.what()); // served all the same
    }
    startQueued();
}

void UstAppRegistrar::startQueued() {
    while (auto next = queued_.pop([this](uid_t uid) { return versionQuota_.fits(uid); })) {
        QueuedApp& q = next->second;
        q.hangUp.reset();
        if (connectionBroken(q.app.command.get()) || connectionBroken(q.app.notify.get())) {
            log::info("app " + q.app.info.name + " (pid " + std::to_string(q.app.info.pid) +
                      ") left before its turn to register came");
            continue;
        }
        queryVersion(std::move(q.app), versionQuota_.tryAcquire(next->first));
    }
}

void UstAppRegistrar::queryVersion(UstApp app, PerUidQuota::Slot slot) {
    auto shared = std::make_shared<UstApp>(std::move(app));
    const uint64_t id = nextQuery_++;
    VersionQuery& q = versionQueries_[id];
    q.app = shared;
    q.slot = std::move(slot);
    q.worker = std::jthread([this, shared, id] {
        lttng_ust_abi_tracer_version v{};
        int r = -ECANCELED;
        try {
            const auto budget = deadlines_.arm(shared->command.get(), kAppSocketTimeout);
            r = lttng_ust_ctl_tracer_version(shared->command.get(), &v);
        } catch (const std::exception& e) {
            appWarning(std::string("app version query: ") + e.what());
        }
        loop_.post([this, shared, id, r, v] {
            // The worker has nothing left to do but return: join it.
            versionQueries_.erase(id);
            finish(shared, r, v);
            // Its slot is free: the next app in line (fair across uids).
            startQueued();
        });
    });
}

void UstAppRegistrar::finish(const std::shared_ptr<UstApp>& shared, int r,
                             lttng_ust_abi_tracer_version v) {
    const std::string who =
        "app " + shared->info.name + " (pid " + std::to_string(shared->info.pid) + ")";
    // The first call that fails or times out (kAppSocketTimeout) ends every
    // exchange with the app. cutOff() shuts both sockets down, so any later
    // call on them fails at once (liblttng-ust-ctl itself shuts a socket
    // down after a failed send or receive, lttng-ust src/common/ustcomm.c),
    // and the notify thread sees the hang-up and makes the tracer forget
    // the app.
    const auto drop = [who](const UstApp& a, const std::string& why) {
        cutOff(a);
        appWarning(who + " dropped: " + why);
    };
    if (r < 0) {
        drop(*shared, "tracer version query failed (" + ustError(r) + ")");
        return;
    }
    shared->info.tracerMajor = v.major;
    shared->info.tracerMinor = v.minor;
    shared->info.tracerPatchlevel = v.patchlevel;
    shared->info.registeredAt = std::chrono::system_clock::now();
    // And one budget for the rest: an app answering every call just before
    // the per-call bound is cut off too (socket_deadlines.hpp).
    auto budget = std::make_shared<std::optional<SocketDeadlines::Armed>>();
    try {
        budget->emplace(deadlines_.arm(shared->command.get(), kAppSocketTimeout));
    } catch (const std::exception& e) {
        drop(*shared, std::string("setting it up failed: ") + e.what());
        return;
    }
    // Once the app has joined the active sessions (or the set-up hook's own
    // bound passed), register_done lets its constructor return.
    auto proceed = [this, shared, who, drop, budget] {
        budget->reset();
        // The set-up hook reports failures per session and goes on; a call
        // that timed out left the socket shut down: the app is gone for good.
        if (connectionBroken(shared->command.get())) {
            drop(*shared, "it stopped answering while being set up for the active sessions");
            return;
        }
        const int done = lttng_ust_ctl_register_done(shared->command.get());
        if (done < 0) {
            drop(*shared, "register_done failed (" + ustError(done) + ")");
            return;
        }
        log::info(who + " registered: uid " + std::to_string(shared->info.uid) + ", " +
                  std::to_string(shared->info.bitness) + "-bit, lttng-ust " +
                  shared->info.tracerVersion());
        onRegistered_(shared);
    };
    if (!setUp_)
        return proceed();
    try {
        // Sessions are set up in the app before register_done, so that no
        // event after the app's constructor returns is lost (LTTNG-NOTES.md).
        setUp_(shared, std::move(proceed));
    } catch (const std::exception& e) {
        drop(*shared, std::string("setting it up failed: ") + e.what());
    }
}

int UstAppRegistrar::onSweep(sd_event_source* s, uint64_t usec, void* userdata) {
    auto* self = static_cast<UstAppRegistrar*>(userdata);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = self->unregistered_.begin(); it != self->unregistered_.end();) {
        if (now - it->second.since > kPairingTimeout) {
            int queued = 0;
            ioctl(it->first, FIONREAD, &queued);
            appWarning("app connection dropped: " +
                       (queued > 0 ? "only " + std::to_string(queued) + " of " +
                                         std::to_string(kUstRegistrationMessageSize) +
                                         " bytes of a registration message"
                                   : std::string("no registration message")) +
                       " in " + std::to_string(kPairingTimeout.count()) + " s");
            const auto expired = it++;
            self->dropUnregistered(expired);
        } else {
            ++it;
        }
    }
    for (pid_t pid : self->pending_.expire(PendingRegistrations::Clock::now(), kPairingTimeout))
        appWarning("app pid " + std::to_string(pid) +
                   " dropped: its second socket did not arrive in time");
    sd_event_source_set_time(s, usec + 1'000'000);
    sd_event_source_set_enabled(s, SD_EVENT_ON);
    return 0;
}

EventSourcePtr UstAppRegistrar::watchHangUp(int fd, std::function<void()> onHangUp,
                                            uint32_t events) {
    using Handler = std::function<void()>;
    auto handler = std::make_unique<Handler>(std::move(onHangUp));
    sd_event_source* s = nullptr;
    check(sd_event_add_io(
              loop_.get(), &s, fd, events,
              [](sd_event_source*, int, uint32_t, void* userdata) -> int {
                  try {
                      (*static_cast<Handler*>(userdata))();
                  } catch (const std::exception& e) {
                      appWarning(std::string("handling a hang-up failed: ") + e.what());
                  }
                  return 0;
              },
              handler.get()),
          "sd_event_add_io(hang-up)");
    EventSourcePtr source(s);
    // The source owns the handler from now on.
    check(sd_event_source_set_destroy_callback(
              s, [](void* userdata) { std::unique_ptr<Handler>(static_cast<Handler*>(userdata)); }),
          "sd_event_source_set_destroy_callback");
    handler.release();
    check(sd_event_source_set_enabled(s, SD_EVENT_ONESHOT), "sd_event_source_set_enabled");
    return source;
}

} // namespace tracectl
