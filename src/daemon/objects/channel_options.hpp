// Session.AddChannel's and Session.EnableEvents' a{sv} options, read into
// the domain structs of session/channel_config.hpp.
#pragma once

#include "session/channel_config.hpp"

#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

using VariantMap = std::map<std::string, sdbus::Variant>;

/// The domain named `domain` ("ust", "kernel"). Throws Error(InvalidArgument)
/// for any other name.
TracingDomain checkDomain(const std::string& domain);

/// Reads AddChannel's options ("subbuf-size", "subbuf-count", "overwrite",
/// "switch-timer", "read-timer"; see the Session XML) over `defaults`.
/// Throws Error(InvalidArgument) for an unknown key or a wrong type.
ChannelConfig readChannelOptions(const std::string& name, const VariantMap& options,
                                 ChannelConfig defaults = {});

/// Reads EnableEvents' options: UST "loglevel", "loglevel-only",
/// "exclusions", "filter" (compiled to lttng-ust bytecode); kernel "filter"
/// (checked to translate into tracefs' filter syntax), "syscall" (b) and
/// "userspace-probe" (s: a location of userspace_probe_location.hpp, its
/// path absolute; resolved for the caller later, by the session object).
/// Throws Error(InvalidArgument) for an unknown key, a wrong type, an
/// unknown log level name, both log level keys at once, or a filter that
/// does not compile (the message names the place).
EventRule readEventOptions(TracingDomain domain, const std::string& channel,
                           const std::string& pattern, const VariantMap& options);

} // namespace tracectl
