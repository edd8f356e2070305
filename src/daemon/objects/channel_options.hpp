// Session.AddChannel's and Session.EnableEvents' a{sv} options, read into
// the domain structs of session/channel_config.hpp.
#pragma once

#include "session/channel_config.hpp"

#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

using VariantMap = std::map<std::string, sdbus::Variant>;

/// Throws Error(InvalidArgument) unless `domain` is one this daemon traces ("ust").
void checkDomain(const std::string& domain);

/// Reads AddChannel's options ("subbuf-size", "subbuf-count", "overwrite",
/// "switch-timer", "read-timer"; see the Session XML) over `defaults`.
/// Throws Error(InvalidArgument) for an unknown key or a wrong type.
ChannelConfig readChannelOptions(const std::string& name, const VariantMap& options,
                                 ChannelConfig defaults = {});

/// Reads EnableEvents' options ("loglevel", "loglevel-only", "exclusions").
/// Throws Error(InvalidArgument) for an unknown key, a wrong type, an
/// unknown log level name, or both log level keys at once.
EventRule readEventOptions(const std::string& channel, const std::string& pattern,
                           const VariantMap& options);

} // namespace tracectl
