// What every method handler of tracectld shares: the names of its objects
// and errors, and how a domain error becomes a D-Bus error reply.
#pragma once

#include "common/error.hpp"
#include "common/log.hpp"

#include <sdbus-c++/Error.h>
#include <string>

namespace tracectl {

/// Object path root of every tracectld object.
inline constexpr const char* kManagerPath = "/org/tracectl/Tracing1";
inline constexpr const char* kBusName = "org.tracectl.Tracing1";
/// Standard D-Bus error names tracectld answers with besides its own table.
inline constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";
inline constexpr const char* kUnknownObject = "org.freedesktop.DBus.Error.UnknownObject";
inline constexpr const char* kInteractiveAuthorizationRequired =
    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired";

/// Most bytes of an error message sent on the bus: a message naming what a
/// client sent (a filter, a document) must never make a reply the bus
/// refuses, which gets the daemon disconnected.
inline constexpr std::size_t kMaxErrorMessageBytes = 4096;
/// `message` cut to kMaxErrorMessageBytes at a UTF-8 character boundary,
/// "..." appended when cut.
std::string boundedErrorMessage(std::string message);

/// The `sdbus::Error` (a D-Bus error name and message) for a domain error:
/// the table's D-Bus name, the message (boundedErrorMessage()). Logs nothing: what failed (a
/// consumer, a session) was logged where it was seen.
sdbus::Error toBusError(const Error& e);

/// Runs `handler`, turning tracectl::Error into its D-Bus error and any
/// other exception into Error.Failed (logged), so that only sdbus::Error
/// leaves a method handler.
template <class F>
auto handleCall(const char* member, F&& handler) -> decltype(handler()) {
    try {
        return handler();
    } catch (const sdbus::Error&) {
        throw;
    } catch (const Error& e) {
        throw toBusError(e);
    } catch (const std::exception& e) {
        // Not one of ours: a fault of the daemon itself, logged as such.
        log::error(std::string("internal failure in ") + member + ": " + e.what());
        throw toBusError(Error(ErrorCode::Failed, std::string(member) + ": " + e.what()));
    }
}

} // namespace tracectl
