#include "bus_source.hpp"

#include <cstdint>
#include <ctime>
#include <limits>
#include <poll.h>
#include <sdbus-c++/Error.h>
#include <utility>

namespace tracectl::gui {
namespace {

std::uint64_t monotonicUs() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000U +
           static_cast<std::uint64_t>(now.tv_nsec) / 1'000U;
}

GIOCondition conditionFor(short events) {
    unsigned condition = G_IO_HUP | G_IO_ERR;
    if ((events & POLLIN) != 0) {
        condition |= G_IO_IN;
    }
    if ((events & POLLOUT) != 0) {
        condition |= G_IO_OUT;
    }
    return static_cast<GIOCondition>(condition);
}

} // namespace

struct BusSource::Glue {
    GSource source; // first: GLib allocates and frees the whole struct
    BusSource* owner;
};

BusSource::BusSource(sdbus::IConnection& connection,
                     std::function<void(const std::string&)> onFailure)
    : connection_(connection), onFailure_(std::move(onFailure)) {
    static GSourceFuncs funcs{
        .prepare = &BusSource::prepare,
        .check = &BusSource::check,
        .dispatch = &BusSource::dispatch,
        .finalize = nullptr,
        .closure_callback = nullptr,
        .closure_marshal = nullptr,
    };
    source_ = g_source_new(&funcs, sizeof(Glue));
    reinterpret_cast<Glue*>(source_)->owner = this;
    g_source_set_name(source_, "tracectl-gui D-Bus");
    const auto pollData = connection_.getEventLoopPollData();
    condition_ = conditionFor(pollData.events);
    fdTag_ = g_source_add_unix_fd(source_, pollData.fd, condition_);
    g_source_attach(source_, nullptr);
}

BusSource::~BusSource() {
    g_source_destroy(source_);
    g_source_unref(source_);
}

int BusSource::arm() {
    const auto pollData = connection_.getEventLoopPollData();
    const GIOCondition wanted = conditionFor(pollData.events);
    if (wanted != condition_) {
        g_source_modify_unix_fd(source_, fdTag_, wanted);
        condition_ = wanted;
    }
    if (pollData.timeout_usec == std::numeric_limits<std::uint64_t>::max()) {
        return -1;
    }
    const std::uint64_t now = monotonicUs();
    if (pollData.timeout_usec <= now) {
        return 0; // messages already read and queued, or a deadline that passed
    }
    const std::uint64_t ms = (pollData.timeout_usec - now + 999) / 1000;
    return ms > static_cast<std::uint64_t>(std::numeric_limits<int>::max())
               ? std::numeric_limits<int>::max()
               : static_cast<int>(ms);
}

gboolean BusSource::prepare(GSource* source, gint* timeoutMs) {
    BusSource& self = *reinterpret_cast<Glue*>(source)->owner;
    try {
        *timeoutMs = self.arm();
    } catch (const sdbus::Error&) {
        *timeoutMs = 0; // dispatch reports it
    }
    return *timeoutMs == 0 ? TRUE : FALSE;
}

gboolean BusSource::check(GSource* source) {
    BusSource& self = *reinterpret_cast<Glue*>(source)->owner;
    if (g_source_query_unix_fd(source, self.fdTag_) != 0) {
        return TRUE;
    }
    try {
        return self.arm() == 0 ? TRUE : FALSE;
    } catch (const sdbus::Error&) {
        return TRUE;
    }
}

gboolean BusSource::dispatch(GSource* source, GSourceFunc, gpointer) {
    BusSource& self = *reinterpret_cast<Glue*>(source)->owner;
    try {
        while (self.connection_.processPendingRequest()) {
        }
    } catch (const sdbus::Error& e) {
        if (self.onFailure_) {
            // The callback may destroy this BusSource: nothing of it is touched afterwards.
            auto onFailure = std::move(self.onFailure_);
            onFailure(e.getMessage());
        }
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

} // namespace tracectl::gui
