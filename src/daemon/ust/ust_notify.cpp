// UstTracer: the notify thread's side. Apps register their channels,
// events and enums on their notify socket (during start_session, or when an
// event fires first); each is answered from the trace's metadata registry
// (under its registryMutex, in memory only), and the metadata it adds is
// queued for the consumer before the app is answered: the notify thread
// never waits for a consumer. A registration answered after a Rotate (or
// RecordSnapshot) was sent but before the consumer took its boundary still
// reaches the old chunk (snapshot): RotateMetadata (SnapshotMetadata)
// follows the request's Ok, behind every metadata queued until then.
#include "common/log.hpp"
#include "ust_tracer.hpp"

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <lttng/ust-ctl.h>
#include <memory>
#include <span>
#include <stdexcept>
#include <system_error>

namespace tracectl {

std::pair<UstTracer::Traced&, UstTracer::Trace&> UstTracer::routeOf(pid_t pid,
                                                                    int sessionHandle) const {
    const auto route = routes_.find(pid, sessionHandle);
    if (!route || route->isChannel)
        throw std::out_of_range("unknown session handle " + std::to_string(sessionHandle));
    return {*static_cast<Traced*>(route->session), *static_cast<Trace*>(route->trace)};
}

uint32_t UstTracer::channelIdOf(pid_t pid, int channelHandle) const {
    const auto route = routes_.find(pid, channelHandle);
    if (!route || !route->isChannel)
        throw std::out_of_range("unknown channel handle " + std::to_string(channelHandle));
    return route->chanId;
}

bool UstTracer::handleNotify(UstApp& app) {
    const int fd = app.notify.get();
    const pid_t pid = app.info.pid;
    lttng_ust_ctl_notify_cmd cmd{};
    if (lttng_ust_ctl_recv_notify(fd, &cmd) < 0)
        return false;
    switch (cmd) {
    case LTTNG_UST_CTL_NOTIFY_CMD_CHANNEL: {
        int sobjd = 0, cobjd = 0;
        size_t nr = 0;
        lttng_ust_ctl_field* fields = nullptr;
        if (lttng_ust_ctl_recv_register_channel(fd, &sobjd, &cobjd, &nr, &fields) < 0)
            return false;
        std::unique_ptr<lttng_ust_ctl_field, decltype(&std::free)> owned(fields, &std::free);
        uint32_t chanId = 0;
        auto header = LTTNG_UST_CTL_CHANNEL_HEADER_LARGE;
        int ret = 0;
        try {
            RcuReadSection read;
            const auto [session, trace] = routeOf(pid, sobjd);
            chanId = channelIdOf(pid, cobjd);
            {
                std::lock_guard lock(trace.registryMutex);
                const auto reply = trace.registry->registerChannel(
                    chanId, std::span<const lttng_ust_ctl_field>(fields, nr));
                chanId = reply.chanId;
                header = reply.headerType;
                queueMetadataLocked(session, trace);
            }
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) +
                         ": channel registration refused: " + e.what());
            ret = -EINVAL;
        }
        return lttng_ust_ctl_reply_register_channel(fd, chanId, header, ret) >= 0;
    }
    case LTTNG_UST_CTL_NOTIFY_CMD_EVENT: {
        int sobjd = 0, cobjd = 0, loglevel = 0;
        char name[LTTNG_UST_ABI_SYM_NAME_LEN] = {};
        char* signature = nullptr;
        size_t nr = 0;
        lttng_ust_ctl_field* fields = nullptr;
        char* emf = nullptr;
        if (lttng_ust_ctl_recv_register_event(fd, &sobjd, &cobjd, name, &loglevel, &signature, &nr,
                                              &fields, &emf) < 0)
            return false;
        std::unique_ptr<char, decltype(&std::free)> ownedSig(signature, &std::free);
        std::unique_ptr<lttng_ust_ctl_field, decltype(&std::free)> ownedFields(fields, &std::free);
        std::unique_ptr<char, decltype(&std::free)> ownedEmf(emf, &std::free);
        name[LTTNG_UST_ABI_SYM_NAME_LEN - 1] = '\0';
        uint32_t id = 0;
        int ret = 0;
        try {
            RcuReadSection read;
            const auto [session, trace] = routeOf(pid, sobjd);
            const uint32_t chanId = channelIdOf(pid, cobjd);
            {
                std::lock_guard lock(trace.registryMutex);
                id = trace.registry->registerEvent(
                    chanId, name, loglevel, signature != nullptr ? signature : "",
                    std::span<const lttng_ust_ctl_field>(fields, nr), emf != nullptr ? emf : "");
                queueMetadataLocked(session, trace);
            }
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) + ": event '" + name +
                         "' registration refused: " + e.what());
            ret = -EINVAL;
        }
        return lttng_ust_ctl_reply_register_event(fd, id, ret) >= 0;
    }
    case LTTNG_UST_CTL_NOTIFY_CMD_ENUM: {
        int sobjd = 0;
        char name[LTTNG_UST_ABI_SYM_NAME_LEN] = {};
        lttng_ust_ctl_enum_entry* entries = nullptr;
        size_t nr = 0;
        if (lttng_ust_ctl_recv_register_enum(fd, &sobjd, name, &entries, &nr) < 0)
            return false;
        std::unique_ptr<lttng_ust_ctl_enum_entry, decltype(&std::free)> owned(entries, &std::free);
        name[LTTNG_UST_ABI_SYM_NAME_LEN - 1] = '\0';
        uint64_t id = 0;
        int ret = 0;
        try {
            RcuReadSection read;
            const auto [session, trace] = routeOf(pid, sobjd);
            {
                std::lock_guard lock(trace.registryMutex);
                id = trace.registry->registerEnum(
                    name, std::span<const lttng_ust_ctl_enum_entry>(entries, nr));
                queueMetadataLocked(session, trace);
            }
        } catch (const std::exception& e) {
            log::warning("app " + std::to_string(pid) + ": enum registration refused: " + e.what());
            ret = -EINVAL;
        }
        return lttng_ust_ctl_reply_register_enum(fd, id, ret) >= 0;
    }
    default:
        log::warning("app " + std::to_string(pid) + ": unknown notify command");
        return false;
    }
}

} // namespace tracectl
