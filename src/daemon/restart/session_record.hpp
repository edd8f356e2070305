// What the daemon keeps on disk of each session, so that a restarted
// tracectld brings its sessions back (restart/session_store.hpp): identity
// (id, so the same D-Bus path; name; owner; creation time), configuration,
// channels, event rules, contexts, trackers, the rotation schedule and the
// state. One JSON document per session, versioned; a document this code
// does not fully understand is refused whole, never half read.
#pragma once

#include "session/session.hpp"

#include <optional>
#include <stdexcept>
#include <string>

namespace tracectl {

/// A state document that cannot be restored; the message says why.
class StateFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// "format" of every state document, and its version.
inline constexpr const char* kStateFormat = "tracectl-session-state";
inline constexpr int kStateVersion = 1;
/// Longest error reason a document may hold (the daemon's own are far
/// shorter).
inline constexpr std::size_t kMaxErrorReasonBytes = 4096;

/// One session's state as saved.
struct SessionRecord {
    SessionId id = SessionId::random(); ///< replaced by what is read
    SessionConfig config;
    std::chrono::system_clock::time_point created;
    RestoredSession restored;
    /// The consumer unit the session started ("" before its first start):
    /// always consumerUnitOf(id).
    std::string consumerUnit;
};

/// The systemd unit a session's consumer runs as (UstTracer names it so):
/// "tracectl-consumer-<32 hex digits>.service".
std::string consumerUnitOf(const SessionId& id);

/// The record of `session` now.
SessionRecord recordOf(const Session& session);

/// The JSON document of `record` (UTF-8, one line).
std::string toStateDocument(const SessionRecord& record);

/// Reads a document written by toStateDocument(). Throws StateFileError: not
/// JSON, another format or version, a member missing or of the wrong type,
/// an unknown enumeration value, a name, channel, rule, filter, tracker or
/// URL the daemon would refuse from a client, a consumer unit that is not
/// this session's.
SessionRecord fromStateDocument(const std::string& text);

} // namespace tracectl
