// Asks polkit whether a D-Bus caller may do an action, without blocking the
// daemon's loop: org.freedesktop.PolicyKit1.Authority.CheckAuthorization on
// the caller's ("system-bus-name", {"name": <unique name>}) subject, as
// systemd's services do (src/shared/bus-polkit.c was read for the facts).
#pragma once

#include "auth/access_policy.hpp"
#include "auth/caller.hpp"
#include "bus/sd_bus_handles.hpp"

#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <sdbus-c++/Error.h>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace tracectl::auth {

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
    /// dispatched by the caller's loop: replies arrive there). Call
    /// forget() when a sender leaves the bus.
    ///
    /// `instanceOwner` is set for a per-user instance (tracectld --user, on
    /// a session bus where no polkitd serves): then the owner and uid 0 are
    /// allowed everything and every other uid is denied, polkit never asked.
    ///
    /// A question asked without interaction that polkitd leaves unanswered
    /// for `quietTimeout` fails (closed, AccessDenied), so a hung polkitd
    /// holds first calls (VisibilityGate) for that long, not for D-Bus's
    /// 25 s; interactive questions wait 300 s (a person types a password).
    explicit PolkitAuthority(sd_bus* bus, std::optional<uid_t> instanceOwner = std::nullopt,
                             std::chrono::microseconds quietTimeout = kDefaultQuietTimeout);
    static constexpr std::chrono::microseconds kDefaultQuietTimeout = std::chrono::seconds(5);
    ~PolkitAuthority();
    PolkitAuthority(const PolkitAuthority&) = delete;
    PolkitAuthority& operator=(const PolkitAuthority&) = delete;

    /// Decides whether `caller` may do `action`. uid 0 and results cached
    /// for (sender, action) answer at once (`done` runs before check()
    /// returns); otherwise polkitd is asked (flags 1 = allow user
    /// interaction when `interactive`) and `done` runs on the bus loop when
    /// it answers. Grants and final denials (no challenge) are cached until
    /// the sender leaves the bus; challenges and failures are not.
    /// `details`: CheckAuthorization's details, which a rules file reads
    /// with action.lookup(KEY) (polkit(8)); a check with details is never
    /// answered from the cache, merged with another, or cached.
    using Details = std::map<std::string, std::string>;
    void check(const Caller& caller, Action action, bool interactive, Done done,
               Details details = {});

    /// What is cached for (sender, action): true granted, false denied,
    /// nullopt never asked (or the sender left). Never asks polkitd.
    std::optional<bool> cached(const std::string& sender, Action action) const;

    /// Whether `sender` may see what `action` would let it see, for reads
    /// that cannot ask an agent (Properties, GetManagedObjects, signals):
    /// cached() if known; else false if polkit, asked without interaction,
    /// wanted to authenticate (a later grant, say through an interactive
    /// call, replaces that); nullopt if never asked. Never asks polkitd.
    std::optional<bool> cachedForReading(const std::string& sender, Action action) const;

    /// False for a per-user instance, which never asks polkitd.
    bool asksPolkit() const noexcept { return !instanceOwner_; }

    /// Drops every result about `sender` (it left the bus; unique names are
    /// never reused); answers still in flight for it will not be cached.
    void forget(const std::string& sender);

    /// At most this many CheckAuthorization calls are in flight; later
    /// questions wait, in order, for answers. dbus-daemon refuses a
    /// connection more than max_replies_per_connection pending replies
    /// (128 by default on the system bus), and the daemon makes other calls
    /// too; beyond it every user's checks failed with LimitsExceeded.
    static constexpr std::size_t kMaxQuestionsInFlight = 64;

    /// Number of cached results (for tests and the journal).
    std::size_t cacheSize() const noexcept { return cache_.size(); }
    /// Number of remembered challenges (for tests).
    std::size_t quietChallengeCount() const noexcept { return quietChallenges_.size(); }

private:
    struct Query;
    static int onReply(sd_bus_message* reply, void* userdata, sd_bus_error* error);
    /// Sends `query`'s CheckAuthorization; if it cannot be sent, answers
    /// its checks with AccessDenied and takes it out of queries_.
    void send(Query& query);
    /// Sends waiting questions while fewer than kMaxQuestionsInFlight are;
    /// those of senders that left meanwhile are answered AccessDenied, unsent.
    void sendWaiting();
    /// Removes `query` from queries_ and hands it over (nullptr if absent).
    std::unique_ptr<Query> takeOut(Query& query);
    /// Runs the outcome of `query`'s CheckAuthorization reply (or error).
    void finish(Query& query, sd_bus_message* reply);

    sd_bus* bus_;
    std::optional<uid_t> instanceOwner_;
    std::chrono::microseconds quietTimeout_;
    std::map<std::pair<std::string, Action>, bool> cache_;
    /// Challenges answered to calls without interaction: "not without authenticating".
    std::map<std::pair<std::string, Action>, bool> quietChallenges_;
    /// CheckAuthorization calls in flight; a reply finds its entry by address.
    std::list<std::unique_ptr<Query>> queries_;
    /// Entries of queries_ sent to polkitd, not yet answered.
    std::size_t sent_ = 0;
};

} // namespace tracectl::auth
