// `tracectl track` and `tracectl untrack` on the command line (lttng-track(1),
// lttng-untrack(1) of LTTng 2.13): their options, what they resolve to (one
// Session.TrackProcessAttribute or UntrackProcessAttribute call), and the
// "Process attribute tracking" section of `tracectl show`. Pure: no bus.
#pragma once

#include "cli11_fwd.hpp"
#include "kernel_domain.hpp"
#include "property_map.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::cli {

/// What CLI11 fills in for one of the two subcommands.
struct TrackFlags {
    DomainFlags domain;
    std::string session;
    CLI::Option* sessionOption = nullptr;
    /// --vpid, --vuid, --vgid, --pid, --uid, --gid: each takes an optional
    /// comma-separated VALUES.
    struct Attribute {
        const char* name = "";
        std::string values; ///< as given: comma-separated
        CLI::Option* option = nullptr;
    };
    std::vector<Attribute> attributes;
    bool all = false;
    CLI::App* command = nullptr;
};

/// One call, once parsed.
struct TrackCall {
    bool track = true; ///< false: untrack
    Domain domain = Domain::Ust;
    std::optional<std::string> session; ///< default: the caller's only session
    std::string attribute;              ///< "vpid", ..., as Session.TrackProcessAttribute takes it
    std::vector<std::uint32_t> values;  ///< empty with `all`
    bool all = false;
    bool operator==(const TrackCall&) const = default;
};

/// A user's or group's id by name (getpwnam_r / getgrnam_r), nullopt if none.
using IdLookup = std::function<std::optional<std::uint32_t>(const std::string& name)>;
std::optional<std::uint32_t> lookupUserId(const std::string& name);
std::optional<std::uint32_t> lookupGroupId(const std::string& name);

/// Adds subcommand `track` (or `untrack`) to `app`, with -u/-k, -s, the six
/// attribute options and --all, its help and example.
CLI::App* addTrackCommand(CLI::App& app, bool track, TrackFlags& flags);

/// The call `flags` ask for, once parsed. Throws CLI::ValidationError (a
/// usage error) for no attribute or more than one, an attribute of the other
/// domain (-u: vpid, vuid, vgid; -k: pid, uid, gid), neither VALUES nor
/// --all or both, a value that is not a whole number from 0 to 4294967295
/// (vuid/uid, vgid/gid: or a user/group name `users`/`groups` know).
TrackCall resolveTrackCall(const TrackFlags& flags, bool track, const IdLookup& users,
                           const IdLookup& groups);

/// show's section: "Process attribute tracking:" then one line per tracker
/// of ProcessAttributeTrackers ("  ust vpid: 12, 34", "all", or "none");
/// empty if the property is absent.
std::string formatTrackingSection(const PropertyMap& properties);

} // namespace tracectl::cli
