// What loading one <session> of an LTTng session file makes: the
// CreateSession request and every step after it (channels, contexts, event
// rules, trackers, the rotation schedule, Start), read from a
// session_file::SessionDescription. What LTTng has and tracectl lacks is
// named in a warning and left out; nothing is dropped silently.
//
// Mapping facts from lttng-tools 2.13 (src/common/config/session.xsd,
// src/bin/lttng-sessiond/save.c): sizes in bytes, timers in µs; loglevel
// RANGE is lttng-enable-event(1) --loglevel, SINGLE --loglevel-only;
// context types are lttng-add-context(1)'s names in upper case; a tracker
// element is an inclusion set (no element: every process).
#pragma once

#include "session/channel_config.hpp"
#include "session/process_trackers.hpp"
#include "session/session_registry.hpp"
#include "session/session_snapshot.hpp"
#include "session_file/session_description.hpp"

#include <string>
#include <vector>

namespace tracectl {

/// A context to add once the channels exist (Session::addContext()).
struct PlannedContext {
    TracingDomain domain = TracingDomain::Ust;
    std::string channel;
    std::string type; ///< context_type.hpp's name ("vpid")
};

/// A tracker to set (Session::trackProcessAttribute()): an inclusion set.
/// User and group names are resolved when the plan is carried out (NSS
/// lookups block: off the loop).
struct PlannedTracker {
    ProcessAttribute attribute = ProcessAttribute::Vpid;
    std::vector<uint32_t> ids;
    std::vector<std::string> names; ///< vuid: user names; vgid: group names
};

/// One session to load.
struct LoadPlan {
    SessionRequest request;
    /// In file order, each with its domain; `enabled` false: disabled
    /// once added (Session::disableChannel()).
    std::vector<std::pair<TracingDomain, ChannelConfig>> channels;
    std::vector<PlannedContext> contexts;
    /// Each with its filter compiled; `enabled` false: disabled once
    /// enabled (Session::disableEvents() of its pattern).
    std::vector<EventRule> rules;
    std::vector<PlannedTracker> trackers;
    RotationSchedule schedule;
    bool start = false; ///< <started>true</started>: Start once loaded
    /// Auto-load: when the file's output folder holds a trace already (an
    /// earlier boot's, or the run before a restart), write to
    /// <folder>-<YYYYmmdd-HHMMSS> instead of refusing the session.
    bool freshFolderIfTaken = false;
    bool usesKernel = false; ///< has kernel channels: needs trace-kernel
};

/// Most warning lines a reply or a log carries, and most bytes of each: a
/// D-Bus message over the bus's size limit gets the sender disconnected.
inline constexpr std::size_t kMaxWarningLines = 100;
inline constexpr std::size_t kMaxWarningLineBytes = 512;

/// `lines` bounded: the first kMaxWarningLines (each cut to
/// kMaxWarningLineBytes, at a UTF-8 character boundary), then one line
/// counting the others.
std::vector<std::string> boundedWarnings(std::vector<std::string> lines);

/// The plan for `session`. Appends to `warnings` one line per thing left
/// out or changed, each starting with "session 'NAME': ". Throws
/// tracectl::Error(InvalidArgument) when the session cannot be loaded at
/// all (a filter that does not compile, an unusable output, a tracker
/// value out of range), naming the session and what is wrong.
LoadPlan planLoad(const session_file::SessionDescription& session,
                  std::vector<std::string>& warnings);

} // namespace tracectl
