// What a domain backend needs to know of a session: a copy taken on the
// main loop when it starts, so the threads share no mutable session state.
#pragma once

#include "session/channel_config.hpp"
#include "session/process_trackers.hpp"
#include "session/relay_address.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tracectl {

/// When a session rotates on its own (Session.SetRotationSchedule); 0 = never.
struct RotationSchedule {
    uint64_t timerUs = 0;   ///< every that many microseconds while active
    uint64_t sizeBytes = 0; ///< once the current chunk holds that many bytes
    bool any() const noexcept { return timerUs != 0 || sizeBytes != 0; }
};

struct SessionSnapshot {
    std::string idHex; ///< SessionId::hex()
    std::string name;
    uid_t owner = 0;
    gid_t ownerGid = 0;
    std::string outputPath; ///< "" for a network session
    /// A network session's relay; nullopt: the trace goes to outputPath.
    std::optional<RelayAddress> relay;
    uint64_t liveTimerUs = 0; ///< live sessions' live timer period (µs); 0 otherwise
    /// The creation time the relay is told (names its folder
    /// <session>-<date>): creationTime, or when a failed network session
    /// was started again (a new folder, beside the first run's).
    int64_t relayCreationTime = 0;
    bool snapshotMode = false;
    bool tracesAllUsers = false;         ///< record every uid's apps, not only the owner's
    bool perPid = false;                 ///< buffer-ownership per-pid (else per-uid)
    bool countEvents = false;            ///< SessionConfig::countEvents
    int64_t creationTime = 0;            ///< seconds since the Epoch
    std::vector<ChannelConfig> channels; ///< UST
    std::vector<EventRule> rules;        ///< UST
    std::vector<ChannelConfig> kernelChannels;
    std::vector<EventRule> kernelRules;
    /// Which processes are recorded (lttng-track(1)); every one by default.
    ProcessTrackers trackers;
};

} // namespace tracectl
