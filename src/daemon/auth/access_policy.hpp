// The polkit actions of tracectld and which D-Bus method needs which.
//
// | method                                   | action checked                                  |
// |------------------------------------------|-------------------------------------------------|
// | Manager.CreateSession                    | trace-own (options "interactive" b)             |
// | Manager.GetSession, ListSessions,        | none for the caller's own sessions; another     |
// |   ObjectManager.GetManagedObjects        |   user's only with manage-all-sessions (asked   |
// |                                          |   without interaction; GetSession answers       |
// |                                          |   NoSuchSession without it)                     |
// | Manager.ListApplications                 | none for the caller's apps; all with            |
// |                                          |   trace-all-users (without interaction)         |
// | Manager.ListTracepoints("kernel"),       | trace-kernel (ListTracepointsWithOptions also   |
// |   ListTracepointsWithOptions             |   takes "interactive" b in its options)         |
// | Manager.CreateIpAggregation              | trace-kernel (options "interactive" b)          |
// | Manager.ReadIpAggregation,               | none: only the connection that created the      |
// |   CloseIpAggregation                     |   aggregation may, and it was authorized then   |
// | Manager.DefaultOutputPath                | none: it tells callers about themselves only    |
// | Session.* on the caller's own session    | trace-own                                       |
// | Session.* on another user's session      | manage-all-sessions                             |
// |   (Start, Stop, Destroy, Rotate, Clear,  |                                                 |
// |   RecordSnapshot, ...: the same rule)    |                                                 |
// | Session.EnableEvents (also)              | trace-all-users of the owner, when the owner    |
// |                                          |   calls: never fails; granted -> the session    |
// |                                          |   records every uid's apps (TracesAllUsers)     |
// | Session.DisableEvents, DisableChannel    | as EnableEvents (trace-own / manage-all-        |
// |                                          |   sessions, trace-kernel for "kernel"), without |
// |                                          |   trace-all-users                               |
// | Session.TrackProcessAttribute,           | as EnableEvents: trace-all-users of the owner,  |
// |   UntrackProcessAttribute (also)         |   when the owner calls (never fails; a tracked  |
// |                                          |   uid never widens what the owner may trace)    |
// | Session.* with domain "kernel" (also)    | trace-kernel                                    |
// | Properties.Get/GetAll of a session/app   | owner or root, or a cached manage-all-sessions  |
// |                                          |   (sessions) / trace-all-users (apps) grant     |
//
// uid 0 is allowed everything without asking polkit. Every Session method
// and CreateSession let polkit ask an authentication agent when the call
// carries the D-Bus message flag ALLOW_INTERACTIVE_AUTHORIZATION
// (MethodReply::allowsInteractiveAuthorization; busctl sets it by default)
// or its options hold "interactive" (b) true (auth/call_options.hpp): either
// is enough. The reads marked "without interaction" above never let polkit
// ask, whatever the flag. Without both, a challenge answers
// org.freedesktop.DBus.Error.InteractiveAuthorizationRequired; a denial (or
// polkitd unreachable) answers org.freedesktop.DBus.Error.AccessDenied.
#pragma once

#include <string_view>

namespace tracectl::auth {

enum class Action {
    TraceOwn,          ///< org.tracectl.Tracing1.trace-own (yes/yes/yes)
    TraceAllUsers,     ///< org.tracectl.Tracing1.trace-all-users (auth_admin_keep)
    TraceKernel,       ///< org.tracectl.Tracing1.trace-kernel (auth_admin_keep)
    ManageAllSessions, ///< org.tracectl.Tracing1.manage-all-sessions (auth_admin_keep)
};

/// The polkit action id, e.g. "org.tracectl.Tracing1.trace-own".
std::string_view actionId(Action action) noexcept;

/// What the action allows, for messages: "trace their own applications", ...
std::string_view actionPurpose(Action action) noexcept;

} // namespace tracectl::auth
