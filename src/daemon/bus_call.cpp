#include "bus_call.hpp"

#include "common/log.hpp"

namespace tracectl {

uid_t callerUid(const sdbus::IObject& object) {
    const sdbus::Message* msg = object.getCurrentlyProcessedMessage();
    if (msg == nullptr)
        throw sdbus::Error(kAccessDenied, "the caller's credentials are unknown");
    // dbus-daemon reports the uid the sender had when it connected
    // (SO_PEERCRED), which sd-bus exposes as the effective uid.
    return msg->getCredsEuid();
}

auth::Caller currentCaller(const sdbus::IObject& object) {
    const sdbus::Message* msg = object.getCurrentlyProcessedMessage();
    if (msg == nullptr)
        throw sdbus::Error(kAccessDenied, "the caller's credentials are unknown");
    std::string sender = msg->getSender();
    if (sender.empty())
        throw sdbus::Error(kAccessDenied, "the caller's bus name is unknown");
    return auth::Caller{std::move(sender), msg->getCredsEuid()};
}

sdbus::Error toBusError(const Error& e) {
    if (e.code() == ErrorCode::Failed)
        log::error(std::string("internal failure: ") + e.what());
    return sdbus::Error(std::string(errorInfo(e.code()).dbusName), e.what());
}

} // namespace tracectl
