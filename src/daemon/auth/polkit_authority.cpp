#include "auth/polkit_authority.hpp"

#include "bus/bus_call.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tracectl::auth {

namespace {

constexpr const char* kPolkitName = "org.freedesktop.PolicyKit1";
constexpr const char* kPolkitPath = "/org/freedesktop/PolicyKit1/Authority";
constexpr const char* kPolkitInterface = "org.freedesktop.PolicyKit1.Authority";
/// CheckAuthorization flag: polkit may ask an authentication agent.
constexpr uint32_t kAllowUserInteraction = 1;
/// polkitd may take long (an agent asks a person); D-Bus's default 25 s
/// would cut an interactive authentication short.
constexpr uint64_t kInteractiveTimeoutUs = 300ULL * 1000 * 1000;

std::string who(const Caller& caller) {
    return "uid " + std::to_string(caller.uid) + " (" + caller.sender + ")";
}

} // namespace

/// One CheckAuthorization in flight.
struct PolkitAuthority::Query {
    PolkitAuthority* authority;
    Caller caller;
    Action action;
    bool interactive;
    std::string denial; ///< "uid N (:1.x) may not ... (polkit action ...)"
    Done done;
    bus::SlotPtr slot;
    /// Later checks of the same sender and action, without interaction,
    /// made while this one was in flight: they get the same answer.
    std::vector<Done> alsoWaiting;
    /// The sender left the bus (forget()) before polkitd answered: the
    /// answer still goes to `done`, but is not cached, since nothing would
    /// ever drop it again.
    bool senderGone = false;
    /// CheckAuthorization's details (a{ss}), for rules files to read with
    /// action.lookup(); a question with details is never cached or merged.
    Details details;
};

PolkitAuthority::PolkitAuthority(sd_bus* bus, std::optional<uid_t> instanceOwner,
                                 std::chrono::microseconds quietTimeout)
    : bus_(bus), instanceOwner_(instanceOwner), quietTimeout_(quietTimeout) {}

// The slots of calls in flight go with queries_: their replies never run.
PolkitAuthority::~PolkitAuthority() = default;

void PolkitAuthority::forget(const std::string& sender) {
    for (const auto& query : queries_)
        if (query->caller.sender == sender)
            query->senderGone = true;
    for (auto* cache : {&cache_, &quietChallenges_})
        for (auto it = cache->lower_bound({sender, Action::TraceOwn});
             it != cache->end() && it->first.first == sender;)
            it = cache->erase(it);
}

std::optional<bool> PolkitAuthority::cached(const std::string& sender, Action action) const {
    const auto it = cache_.find({sender, action});
    if (it == cache_.end())
        return std::nullopt;
    return it->second;
}

std::optional<bool> PolkitAuthority::cachedForReading(const std::string& sender,
                                                      Action action) const {
    if (const auto known = cached(sender, action))
        return known;
    if (quietChallenges_.count({sender, action}) != 0)
        return false;
    return std::nullopt;
}

void PolkitAuthority::check(const Caller& caller, Action action, bool interactive, Done done,
                            Details details) {
    if (caller.uid == 0) {
        done(std::nullopt);
        return;
    }
    const std::string id(actionId(action));
    const std::string denial = who(caller) + " may not " + std::string(actionPurpose(action)) +
                               " (polkit action " + id + ")";
    if (instanceOwner_) {
        // A per-user instance serves its owner only; its session bus has no polkitd.
        if (caller.uid == *instanceOwner_)
            done(std::nullopt);
        else
            done(sdbus::Error(kAccessDenied, denial + ": this per-user tracectld serves uid " +
                                                 std::to_string(*instanceOwner_) + " only"));
        return;
    }
    // The answer may depend on the details (a rules file decides): never
    // reuse one given for other details, nor keep this one.
    const bool plain = details.empty();
    if (const auto known = plain ? cached(caller.sender, action) : std::nullopt) {
        if (*known)
            done(std::nullopt);
        else
            done(sdbus::Error(kAccessDenied, denial));
        return;
    }
    // One question in flight per sender and action: a client that sends
    // many calls at once (each held by the VisibilityGate, say) must not
    // multiply the calls to polkitd, whose pending replies the bus limits.
    if (!interactive && plain)
        for (const auto& query : queries_)
            if (!query->interactive && !query->senderGone && query->details.empty() &&
                query->action == action && query->caller.sender == caller.sender) {
                query->alsoWaiting.push_back(std::move(done));
                return;
            }
    queries_.push_back(std::make_unique<Query>(Query{this,
                                                     caller,
                                                     action,
                                                     interactive,
                                                     denial,
                                                     std::move(done),
                                                     nullptr,
                                                     {},
                                                     false,
                                                     std::move(details)}));
    // Questions beyond the bound wait, in order, for earlier answers.
    if (sent_ < kMaxQuestionsInFlight)
        send(*queries_.back());
}

void PolkitAuthority::send(Query& query) {
    const std::string id(actionId(query.action));
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_call(bus_, &raw, kPolkitName, kPolkitPath, kPolkitInterface,
                                           "CheckAuthorization");
    bus::MessagePtr call(raw);
    // CheckAuthorization(subject (sa{sv}), action_id s, details a{ss},
    // flags u, cancellation_id s) -> (is_authorized b, is_challenge b,
    // details a{ss}) (polkit(8), org.freedesktop.PolicyKit1.Authority).
    if (r >= 0)
        r = sd_bus_message_append(call.get(), "(sa{sv})s", "system-bus-name", 1, "name", "s",
                                  query.caller.sender.c_str(), id.c_str());
    if (r >= 0)
        r = sd_bus_message_open_container(call.get(), 'a', "{ss}");
    for (auto it = query.details.begin(); r >= 0 && it != query.details.end(); ++it)
        r = sd_bus_message_append(call.get(), "{ss}", it->first.c_str(), it->second.c_str());
    if (r >= 0)
        r = sd_bus_message_close_container(call.get());
    if (r >= 0)
        r = sd_bus_message_append(call.get(), "us", query.interactive ? kAllowUserInteraction : 0,
                                  "");
    if (r >= 0 && query.interactive)
        r = sd_bus_message_set_allow_interactive_authorization(call.get(), 1);
    sd_bus_slot* slot = nullptr;
    if (r >= 0)
        r = sd_bus_call_async(bus_, &slot, call.get(), &PolkitAuthority::onReply, &query,
                              query.interactive ? kInteractiveTimeoutUs
                                                : static_cast<uint64_t>(quietTimeout_.count()));
    if (r >= 0) {
        query.slot.reset(slot);
        ++sent_;
        return;
    }
    log::warning("cannot send CheckAuthorization for " + id + ": " + std::strerror(-r));
    std::unique_ptr<Query> owned = takeOut(query);
    const sdbus::Error failed(kAccessDenied,
                              "polkit cannot be reached to authorize " + id + "; access denied");
    owned->done(failed);
    for (const Done& waiting : owned->alsoWaiting)
        waiting(failed);
}

std::unique_ptr<PolkitAuthority::Query> PolkitAuthority::takeOut(Query& query) {
    for (auto it = queries_.begin(); it != queries_.end(); ++it)
        if (it->get() == &query) {
            std::unique_ptr<Query> owned = std::move(*it);
            queries_.erase(it);
            return owned;
        }
    return nullptr;
}

void PolkitAuthority::sendWaiting() {
    while (sent_ < kMaxQuestionsInFlight) {
        const auto next = std::find_if(queries_.begin(), queries_.end(),
                                       [](const std::unique_ptr<Query>& q) { return !q->slot; });
        if (next == queries_.end())
            return;
        if ((*next)->senderGone) {
            // Nobody is left to answer: not worth a question to polkitd.
            std::unique_ptr<Query> owned = takeOut(**next);
            const sdbus::Error gone(kAccessDenied, owned->denial + ": the caller left the bus");
            owned->done(gone);
            for (const Done& waiting : owned->alsoWaiting)
                waiting(gone);
            continue;
        }
        send(**next); // sent, or answered with an error and taken out
    }
}

int PolkitAuthority::onReply(sd_bus_message* reply, void* userdata, sd_bus_error*) {
    auto& query = *static_cast<Query*>(userdata);
    query.authority->finish(query, reply);
    return 1;
}

void PolkitAuthority::finish(Query& query, sd_bus_message* reply) {
    // Take the query out first: `done` may start other checks.
    std::unique_ptr<Query> owned = takeOut(query);
    if (!owned)
        return;
    --sent_;
    sendWaiting();
    // sd-bus holds its own reference to the slot while this runs: `owned`
    // may release ours when it goes.
    const Caller& caller = owned->caller;
    const std::string id(actionId(owned->action));
    const auto done = [&owned](const std::optional<sdbus::Error>& outcome) {
        owned->done(outcome);
        for (const Done& waiting : owned->alsoWaiting)
            waiting(outcome);
    };
    const sd_bus_error* error = sd_bus_message_get_error(reply);
    int authorized = 0;
    int challenge = 0;
    const bool read = error == nullptr &&
                      sd_bus_message_enter_container(reply, 'r', "bba{ss}") >= 0 &&
                      sd_bus_message_read(reply, "bb", &authorized, &challenge) >= 0;
    if (!read) {
        // Fail closed: nobody is allowed anything polkit was not asked about.
        const std::string name =
            error != nullptr && error->name != nullptr ? error->name : "an unreadable reply";
        // A caller that left before polkitd looked is no news (any user
        // can make many): debug, not a warning.
        const bool callerLeft = owned->senderGone || name == SD_BUS_ERROR_NAME_HAS_NO_OWNER;
        const std::string line =
            "cannot ask polkit whether " + who(caller) + " may do " + id + ": " + name +
            (error != nullptr && error->message != nullptr ? std::string(": ") + error->message
                                                           : std::string()) +
            "; denied";
        if (callerLeft)
            log::debug(line);
        else
            log::warning(line);
        done(sdbus::Error(kAccessDenied, "polkit (" + std::string(kPolkitName) +
                                             ") cannot be reached to authorize " + id + " (" +
                                             name + "); access denied"));
        return;
    }
    const bool cacheable = !owned->senderGone && owned->details.empty();
    if (authorized != 0) {
        if (cacheable) {
            cache_[{caller.sender, owned->action}] = true;
            quietChallenges_.erase({caller.sender, owned->action});
        }
        done(std::nullopt);
    } else if (challenge != 0 && owned->interactive) {
        // polkitd answers a challenge even with interaction allowed
        // when no authentication agent serves the caller's session.
        done(sdbus::Error(kAccessDenied, owned->denial +
                                             ": polkit could not authenticate the caller (no "
                                             "authentication agent answered)"));
    } else if (challenge != 0) {
        if (cacheable)
            quietChallenges_[{caller.sender, owned->action}] = false;
        done(sdbus::Error(kInteractiveAuthorizationRequired,
                          owned->denial + " without authenticating; retry with the option "
                                          "interactive=true and an authentication agent"));
    } else {
        if (cacheable)
            cache_[{caller.sender, owned->action}] = false;
        log::info("polkit denied " + id + " to " + who(caller));
        done(sdbus::Error(kAccessDenied, owned->denial));
    }
}

} // namespace tracectl::auth
