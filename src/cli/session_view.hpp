// A tracing session as the CLI sees it: the properties of one org.tracectl.Tracing1.Session
// object, turned into a plain struct.
#pragma once

#include "property_map.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::cli {

/// One session. The typed fields are copies of the well-known properties (empty string or 0
/// when the property is missing or has an unexpected type); `properties` keeps every property
/// exactly as received, for `show` and `--json`.
struct SessionView {
    std::string objectPath;           ///< /org/tracectl/Tracing1/session/<32 hex digits>
    std::string id;                   ///< "Id": UUID, 8-4-4-4-12 lowercase hex
    std::string name;                 ///< "Name"
    std::uint32_t owner = 0;          ///< "Owner": uid of the creator
    std::string state;                ///< "State": created|active|stopped|rotating|error
    std::string mode;                 ///< "Mode": normal|snapshot|live
    std::string outputPath;           ///< "OutputPath": absolute folder of the trace ("" when
                                      ///< the session streams)
    std::string outputUrl;            ///< "OutputUrl": the relay, net://HOST:CTRL:DATA or
                                      ///< "tcp://... tcp://..."; "" local (or an older daemon)
    std::uint64_t liveTimerUs = 0;    ///< "LiveTimer": microseconds, 0 unless mode live
    std::string bufferOwnership;      ///< "BufferOwnership": per-uid|per-pid
    std::uint64_t creationTimeUs = 0; ///< "CreationTime": microseconds since the Unix epoch
    PropertyMap properties;           ///< every property, keyed by D-Bus property name
};

/// Builds the view of the session at `object_path` from its Session-interface properties.
/// Never throws on missing or mistyped properties (the typed field keeps its default).
SessionView sessionViewFromProperties(std::string objectPath, PropertyMap properties);

/// Where the session's trace goes, for people: its OutputUrl when it streams to a relay
/// (non-empty), else its OutputPath.
const std::string& outputLocation(const SessionView& session) noexcept;

/// For the commands that read a session's trace files on this machine (view, aggregate
/// --session): nullopt when the session writes to a local folder; for a network session, the
/// one-line message saying its trace is on the relay ("session NAME streams to URL: ...").
std::optional<std::string> remoteTraceNote(const SessionView& session);

/// Sorts sessions oldest first by CreationTime; ties are ordered by name, then object path.
void sortByCreationTime(std::vector<SessionView>& sessions);

} // namespace tracectl::cli
