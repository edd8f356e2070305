// Asks polkit whether a D-Bus caller may do an action, without blocking the
// daemon's loop: org.freedesktop.PolicyKit1.Authority.CheckAuthorization on
// the caller's ("system-bus-name", {"name": <unique name>}) subject, as
// systemd's services do (src/shared/bus-polkit.c was read for the facts).
#pragma once

#include "auth/access_policy.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <sys/types.h>
#include <utility>

namespace tracectl::auth {

/// Who sent the message being handled: its unique bus name and uid.
struct Caller {
    std::string sender; ///< unique name, ":1.42"
    uid_t uid = 0;      ///< from the bus's credentials of the sender
};

class PolkitAuthority {
public:
    /// The outcome: nullopt = allowed; else the error to answer the call
    /// with: org.freedesktop.DBus.Error.AccessDenied (denied, or polkitd
    /// cannot be reached: fail closed, the message says which) or
    /// org.freedesktop.DBus.Error.InteractiveAuthorizationRequired (polkit
    /// wants to authenticate the caller and `interactive` was false; with
    /// `interactive` true a challenge left unanswered, because no
    /// authentication agent serves the caller, is AccessDenied).
    using Done = std::function<void(std::optional<sdbus::Error>)>;

    /// Talks to polkitd through `bus` (which must outlive this object and be
    /// dispatched by the caller's loop: replies arrive there) and follows
    /// NameOwnerChanged to drop the results of callers that left the bus.
    ///
    /// `instanceOwner` is set for a per-user instance (tracectld --user, on
    /// a session bus where no polkitd serves): then the owner and uid 0 are
    /// allowed everything and every other uid is denied, polkit never asked.
    explicit PolkitAuthority(sdbus::IConnection& bus,
                             std::optional<uid_t> instanceOwner = std::nullopt);
    ~PolkitAuthority();
    PolkitAuthority(const PolkitAuthority&) = delete;
    PolkitAuthority& operator=(const PolkitAuthority&) = delete;

    /// Decides whether `caller` may do `action`. uid 0 and results cached
    /// for (sender, action) answer at once (`done` runs before check()
    /// returns); otherwise polkitd is asked (flags 1 = allow user
    /// interaction when `interactive`) and `done` runs on the bus loop when
    /// it answers. Grants and final denials (no challenge) are cached until
    /// the sender leaves the bus; challenges and failures are not.
    void check(const Caller& caller, Action action, bool interactive, Done done);

    /// What is cached for (sender, action): true granted, false denied,
    /// nullopt never asked (or the sender left). Never asks polkitd.
    std::optional<bool> cached(const std::string& sender, Action action) const;

    /// Number of cached results (for tests and the journal).
    std::size_t cacheSize() const noexcept { return cache_.size(); }

private:
    void onNameOwnerChanged(const std::string& name, const std::string& oldOwner,
                            const std::string& newOwner);

    std::optional<uid_t> instanceOwner_;
    std::unique_ptr<sdbus::IProxy> polkit_;
    std::unique_ptr<sdbus::IProxy> busDaemon_;
    std::map<std::pair<std::string, Action>, bool> cache_;
    /// Cleared when destroyed: replies arriving later do nothing.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace tracectl::auth
