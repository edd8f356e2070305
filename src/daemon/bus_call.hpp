// What every method handler of tracectld shares: who is calling, and how a
// domain error becomes a D-Bus error reply.
#pragma once

#include "auth/polkit_authority.hpp"
#include "common/error.hpp"

#include <sdbus-c++/sdbus-c++.h>
#include <string>
#include <sys/types.h>

namespace tracectl {

/// Object path root of every tracectld object.
inline constexpr const char* kManagerPath = "/org/tracectl/Tracing1";
inline constexpr const char* kBusName = "org.tracectl.Tracing1";
/// Standard D-Bus error names tracectld answers with besides its own table.
inline constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";
inline constexpr const char* kUnknownObject = "org.freedesktop.DBus.Error.UnknownObject";
inline constexpr const char* kInteractiveAuthorizationRequired =
    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired";

/// The effective uid of the sender of the message being handled on
/// `object`, from the bus's credentials for the sender's connection
/// (sd_bus_query_sender_creds(3)), never from the message body. Throws
/// sdbus::Error (AccessDenied) if the bus does not tell.
uid_t callerUid(const sdbus::IObject& object);

/// The sender (unique name) and uid of the message being handled on
/// `object`. Throws sdbus::Error (AccessDenied) if the bus does not tell.
auth::Caller currentCaller(const sdbus::IObject& object);

/// The `sdbus::Error` for a domain error: the table's D-Bus name, the message.
sdbus::Error toBusError(const Error& e);

/// Runs `handler`, turning tracectl::Error into its D-Bus error and any
/// other exception into Error.Failed (logged), so that only sdbus::Error
/// leaves a method handler (sdbus-c++ replies to nothing else).
template <class F>
auto handleCall(const char* member, F&& handler) -> decltype(handler()) {
    try {
        return handler();
    } catch (const sdbus::Error&) {
        throw;
    } catch (const Error& e) {
        throw toBusError(e);
    } catch (const std::exception& e) {
        throw toBusError(Error(ErrorCode::Failed, std::string(member) + ": " + e.what()));
    }
}

} // namespace tracectl
