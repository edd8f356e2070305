#include "auth/polkit_authority.hpp"

#include "bus_call.hpp"
#include "common/log.hpp"

namespace tracectl::auth {

namespace {

constexpr const char* kPolkitName = "org.freedesktop.PolicyKit1";
constexpr const char* kPolkitPath = "/org/freedesktop/PolicyKit1/Authority";
constexpr const char* kPolkitInterface = "org.freedesktop.PolicyKit1.Authority";
/// CheckAuthorization flag: polkit may ask an authentication agent.
constexpr uint32_t kAllowUserInteraction = 1;

using Subject = sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>>;
using AuthResult = sdbus::Struct<bool, bool, std::map<std::string, std::string>>;

std::string who(const Caller& caller) {
    return "uid " + std::to_string(caller.uid) + " (" + caller.sender + ")";
}

} // namespace

PolkitAuthority::PolkitAuthority(sdbus::IConnection& bus, std::optional<uid_t> instanceOwner)
    : instanceOwner_(instanceOwner), polkit_(sdbus::createProxy(bus, kPolkitName, kPolkitPath)),
      busDaemon_(sdbus::createProxy(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus")) {
    busDaemon_->uponSignal("NameOwnerChanged")
        .onInterface("org.freedesktop.DBus")
        .call(
            [this](const std::string& name, const std::string& oldOwner,
                   const std::string& newOwner) { onNameOwnerChanged(name, oldOwner, newOwner); });
    busDaemon_->finishRegistration();
    polkit_->finishRegistration();
}

PolkitAuthority::~PolkitAuthority() {
    *alive_ = false;
}

void PolkitAuthority::onNameOwnerChanged(const std::string& name, const std::string&,
                                         const std::string& newOwner) {
    // A unique name is never reused: once it has no owner, its results go.
    if (name.empty() || name[0] != ':' || !newOwner.empty())
        return;
    for (auto it = cache_.lower_bound({name, Action::TraceOwn});
         it != cache_.end() && it->first.first == name;)
        it = cache_.erase(it);
}

std::optional<bool> PolkitAuthority::cached(const std::string& sender, Action action) const {
    const auto it = cache_.find({sender, action});
    if (it == cache_.end())
        return std::nullopt;
    return it->second;
}

void PolkitAuthority::check(const Caller& caller, Action action, bool interactive, Done done) {
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
    if (const auto known = cached(caller.sender, action)) {
        if (*known)
            done(std::nullopt);
        else
            done(sdbus::Error(kAccessDenied, denial));
        return;
    }
    const Subject subject{"system-bus-name", {{"name", sdbus::Variant(caller.sender)}}};
    const std::map<std::string, std::string> details;
    const uint32_t flags = interactive ? kAllowUserInteraction : 0;
    std::weak_ptr<bool> alive = alive_;
    auto answer = std::make_shared<Done>(std::move(done));
    auto reply = [this, alive, caller, action, id, denial, interactive,
                  answer](const sdbus::Error* error, const AuthResult& result) {
        const Done& finish = *answer;
        if (alive.expired() || !*alive.lock())
            return;
        if (error != nullptr) {
            // Fail closed: nobody is allowed anything polkit was not asked about.
            log::warning("cannot ask polkit whether " + who(caller) + " may do " + id + ": " +
                         error->getName() + ": " + error->getMessage() + "; denied");
            finish(sdbus::Error(kAccessDenied, "polkit (" + std::string(kPolkitName) +
                                                   ") cannot be reached to authorize " + id + " (" +
                                                   error->getName() + "); access denied"));
            return;
        }
        const bool authorized = std::get<0>(result);
        const bool challenge = std::get<1>(result);
        if (authorized) {
            cache_[{caller.sender, action}] = true;
            finish(std::nullopt);
        } else if (challenge && interactive) {
            // polkitd answers a challenge even with interaction allowed
            // when no authentication agent serves the caller's session.
            finish(sdbus::Error(kAccessDenied, denial +
                                                   ": polkit could not authenticate the caller (no "
                                                   "authentication agent answered)"));
        } else if (challenge) {
            finish(sdbus::Error(kInteractiveAuthorizationRequired,
                                denial + " without authenticating; retry with the option "
                                         "interactive=true and an authentication agent"));
        } else {
            cache_[{caller.sender, action}] = false;
            log::info("polkit denied " + id + " to " + who(caller));
            finish(sdbus::Error(kAccessDenied, denial));
        }
    };
    try {
        polkit_->callMethodAsync("CheckAuthorization")
            .onInterface(kPolkitInterface)
            .withArguments(subject, id, details, flags, std::string())
            .uponReplyInvoke(std::move(reply));
    } catch (const sdbus::Error& e) {
        log::warning("cannot send CheckAuthorization for " + id + ": " + e.getMessage());
        (*answer)(sdbus::Error(kAccessDenied, "polkit cannot be reached to authorize " + id + " (" +
                                                  e.getName() + "); access denied"));
    }
}

} // namespace tracectl::auth
