#include "auth/peer_directory.hpp"

#include "bus/bus_call.hpp"
#include "common/log.hpp"

#include <sdbus-c++/Error.h>

namespace tracectl::bus {

PeerDirectory::PeerDirectory(sd_bus* bus) : bus_(bus) {
    sd_bus_slot* slot = nullptr;
    check(sd_bus_add_filter(bus_, &slot, &PeerDirectory::onMessage, this), "sd_bus_add_filter");
    filter_.reset(slot);
    check(sd_bus_match_signal(bus_, &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                              "org.freedesktop.DBus", "NameOwnerChanged",
                              &PeerDirectory::onNameOwnerChanged, this),
          "match NameOwnerChanged");
    nameOwnerChanged_.reset(slot);
}

std::optional<uid_t> PeerDirectory::uidOf(const std::string& sender) {
    if (const auto it = peers_.find(sender); it != peers_.end())
        return it->second;
    // dbus-daemon answers GetConnectionCredentials with the uid it read
    // from SO_PEERCRED when the client connected.
    sd_bus_creds* raw = nullptr;
    if (sd_bus_get_name_creds(bus_, sender.c_str(), SD_BUS_CREDS_UID | SD_BUS_CREDS_EUID, &raw) < 0)
        return std::nullopt;
    CredsPtr creds(raw);
    uid_t uid = 0;
    if (sd_bus_creds_get_euid(creds.get(), &uid) < 0 && sd_bus_creds_get_uid(creds.get(), &uid) < 0)
        return std::nullopt;
    peers_.emplace(sender, uid);
    return uid;
}

std::optional<pid_t> PeerDirectory::pidOf(const std::string& sender) {
    sd_bus_creds* raw = nullptr;
    if (sd_bus_get_name_creds(bus_, sender.c_str(), SD_BUS_CREDS_PID, &raw) < 0)
        return std::nullopt;
    CredsPtr creds(raw);
    pid_t pid = 0;
    if (sd_bus_creds_get_pid(creds.get(), &pid) < 0 || pid <= 0)
        return std::nullopt;
    return pid;
}

auth::Caller PeerDirectory::callerOf(sd_bus_message* m) {
    const char* sender = m != nullptr ? sd_bus_message_get_sender(m) : nullptr;
    if (sender == nullptr || *sender == '\0')
        throw sdbus::Error(kAccessDenied, "the caller's bus name is unknown");
    const auto uid = uidOf(sender);
    if (!uid)
        throw sdbus::Error(kAccessDenied, "the caller's credentials are unknown");
    return auth::Caller{sender, *uid};
}

std::optional<auth::Caller> PeerDirectory::currentCaller() {
    sd_bus_message* m = sd_bus_get_current_message(bus_);
    if (m == nullptr || sd_bus_message_get_sender(m) == nullptr)
        return std::nullopt;
    const auto uid = uidOf(sd_bus_message_get_sender(m));
    if (!uid)
        return std::nullopt;
    return auth::Caller{sd_bus_message_get_sender(m), *uid};
}

int PeerDirectory::onMessage(sd_bus_message* m, void* userdata, sd_bus_error*) {
    if (sd_bus_message_is_method_call(m, nullptr, nullptr) <= 0)
        return 0;
    const char* sender = sd_bus_message_get_sender(m);
    if (sender == nullptr || sender[0] != ':')
        return 0;
    // Recorded now, so the peer gets the signals about what it may see
    // from here on (a peer that left already is simply not recorded).
    static_cast<PeerDirectory*>(userdata)->uidOf(sender);
    return 0;
}

int PeerDirectory::onNameOwnerChanged(sd_bus_message* m, void* userdata, sd_bus_error*) {
    auto* self = static_cast<PeerDirectory*>(userdata);
    const char* name = nullptr;
    const char* oldOwner = nullptr;
    const char* newOwner = nullptr;
    if (sd_bus_message_read(m, "sss", &name, &oldOwner, &newOwner) < 0)
        return 0;
    // A unique name is never reused: once it has no owner, it is gone.
    if (name == nullptr || name[0] != ':' || (newOwner != nullptr && *newOwner != '\0'))
        return 0;
    self->peers_.erase(name);
    const std::string gone(name);
    for (const auto& hook : self->goneHooks_)
        hook(gone);
    return 0;
}

} // namespace tracectl::bus
