// The daemon's sessions: creation with validation, lookup, removal. Free of
// D-Bus types; used from the event loop thread only.
#pragma once

#include "session/session.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracectl {

/// What a client asked for in Manager.CreateSession, before validation.
struct SessionRequest {
    std::string name;
    std::optional<std::string> outputPath;
    std::optional<std::string> mode; ///< "normal" | "snapshot" | "live"
    /// lttng-create(1) --set-url: net://, net6:// or file:// (relay_address.hpp).
    std::optional<std::string> url;
    std::optional<std::string> controlUrl;      ///< --ctrl-url, with dataUrl
    std::optional<std::string> dataUrl;         ///< --data-url, with controlUrl
    std::optional<uint64_t> liveTimerUs;        ///< mode "live" only; µs
    std::optional<std::string> bufferOwnership; ///< "per-uid" | "per-pid"
    std::optional<bool> countEvents;            ///< SessionConfig::countEvents
};

/// A live session's live timer when none is given (lttng-tools
/// DEFAULT_LTTNG_LIVE_TIMER, 1 s), and the longest one (CREATE_SESSION's
/// live_timer is a u32 of microseconds, lttng-tools sessiond-comm/relayd.h).
/// The shortest is kMinTimerUs (channel_config.hpp), as for the channels'
/// timers: the consumer flushes every stream each period (LTTng 2.13 takes
/// any period from 1 µs, and at 1 µs its consumer would use a whole core).
inline constexpr uint64_t kDefaultLiveTimerUs = 1'000'000;
inline constexpr uint64_t kMaxLiveTimerUs = 0xFFFFFFFFu;

/// The OutputUrl a session made from `request` would have ("" for a local
/// session), for polkit's "output-url" detail before the request is
/// authorized. Throws tracectl::Error(InvalidArgument) for a bad URL.
std::string requestedOutputUrl(const SessionRequest& request);

/// Most sessions one uid may hold at once; bounds what one client can make
/// the daemon keep.
inline constexpr std::size_t kMaxSessionsPerOwner = 256;

class SessionRegistry {
public:
    /// Home folder of a uid, for default output paths; nullopt if it has none.
    using HomeLookup = std::function<std::optional<std::string>(uid_t)>;
    using Clock = std::function<std::chrono::system_clock::time_point()>;

    /// Every session made drives `domains` and records into `recorder`
    /// (borrowed; they outlive the registry).
    explicit SessionRegistry(HomeLookup home, Clock clock = std::chrono::system_clock::now,
                             std::vector<DomainBackend*> domains = {},
                             SessionRecorder* recorder = nullptr)
        : home_(std::move(home)), clock_(std::move(clock)), domains_(std::move(domains)),
          recorder_(recorder) {}

    /// A validated request: the configuration and creation time of a
    /// session not added yet.
    struct Plan {
        SessionConfig config;
        std::chrono::system_clock::time_point created;
    };
    /// Validates `request` of `owner` and resolves its output path (the
    /// default one from the clock and the owner's home) without adding
    /// anything. Throws tracectl::Error: InvalidName, InvalidArgument (bad
    /// mode, buffer ownership or output path; no home folder for a default
    /// path; a bad or conflicting URL, live timer), SessionExists (owner already has that name),
    /// LimitExceeded (owner holds kMaxSessionsPerOwner sessions).
    Plan plan(const SessionRequest& request, uid_t owner) const;
    /// Adds the session `plan` describes, checking again what may have
    /// changed since plan() (SessionExists, LimitExceeded). The registry
    /// owns the result.
    Session& add(Plan plan);
    /// Brings back a session a restarted daemon read from disk, with its
    /// own id (restart/session_record.hpp). Throws tracectl::Error:
    /// SessionExists (its owner has that name, or the id is taken),
    /// LimitExceeded. The caller then gives it Session::restore().
    Session& restore(const SessionId& id, SessionConfig config,
                     std::chrono::system_clock::time_point created);
    /// The output folder a session of `owner` named `name` made now without
    /// an output path would get: ~owner/lttng-traces/<name>-<YYYYmmdd-HHMMSS>
    /// (the clock's local time). Throws tracectl::Error: InvalidName,
    /// InvalidArgument (owner has no home folder).
    std::string defaultOutputPathOf(uid_t owner, const std::string& name) const;
    /// add(plan(request, owner)).
    Session& create(const SessionRequest& request, uid_t owner) {
        return add(plan(request, owner));
    }

    /// The session `owner` named `name`, or nullptr.
    Session* findByName(uid_t owner, std::string_view name) const;
    /// The session with that id, or nullptr.
    Session* findById(const SessionId& id) const;
    /// Sessions `viewer` may see, in creation order: its own, or every
    /// session when `seesAll`.
    std::vector<Session*> visibleTo(uid_t viewer, bool seesAll) const;
    /// Removes the session and hands it over (nullptr if unknown).
    std::unique_ptr<Session> remove(const SessionId& id);

    std::size_t size() const noexcept { return sessions_.size(); }

private:
    /// The default output folder of `owner`'s session `name` created at
    /// `now`; throws InvalidArgument if owner has no home folder.
    std::string defaultOutputFolder(uid_t owner, const std::string& name,
                                    std::chrono::system_clock::time_point now) const;
    /// Throws SessionExists or LimitExceeded if `owner` cannot have one
    /// more session named `name`.
    void checkRoomFor(uid_t owner, const std::string& name) const;

    HomeLookup home_;
    Clock clock_;
    std::vector<DomainBackend*> domains_;
    SessionRecorder* recorder_ = nullptr;
    std::vector<std::unique_ptr<Session>> sessions_; // creation order
};

/// HomeLookup through getpwuid_r(3); nullopt when the passwd entry's
/// folder does not exist (e.g. nobody's /nonexistent).
std::optional<std::string> homeFromPasswd(uid_t uid);

} // namespace tracectl
