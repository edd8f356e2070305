#include "session/session.hpp"

#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "session/context_type.hpp"
#include "session/domain_answers.hpp"

#include <algorithm>
#include <utility>

namespace tracectl {

using session_detail::destroyedError;

std::string_view toString(SessionState s) noexcept {
    switch (s) {
    case SessionState::Created:
        return "created";
    case SessionState::Active:
        return "active";
    case SessionState::Stopped:
        return "stopped";
    case SessionState::Error:
        return "error";
    }
    return "unknown";
}

std::string_view toString(SessionMode m) noexcept {
    switch (m) {
    case SessionMode::Snapshot:
        return "snapshot";
    case SessionMode::Live:
        return "live";
    case SessionMode::Normal:
        break;
    }
    return "normal";
}

std::string_view toString(BufferOwnership b) noexcept {
    return b == BufferOwnership::PerPid ? "per-pid" : "per-uid";
}

SessionRecorder& Session::recorder(const char* member) const {
    if (recorder_ == nullptr)
        throw Error(ErrorCode::WrongState,
                    std::string(member) + ": session '" + config_.name + "' records nothing");
    return *recorder_;
}

namespace {

SessionChange channelsChange(TracingDomain d) {
    return d == TracingDomain::Kernel ? SessionChange::KernelChannels : SessionChange::Channels;
}

SessionChange eventsChange(TracingDomain d) {
    return d == TracingDomain::Kernel ? SessionChange::KernelEvents : SessionChange::Events;
}

} // namespace

Session::~Session() = default;

std::string Session::stateName() const {
    if (rotating_ && state_ != SessionState::Error)
        return "rotating";
    return std::string(toString(state_));
}

void Session::notify(std::vector<SessionChange> what) {
    if (listener_ != nullptr)
        listener_->changed(what);
}

void Session::fail(std::string reason) {
    state_ = SessionState::Error;
    errorReason_ = std::move(reason);
    log::error("session '" + config_.name + "' failed: " + errorReason_ +
                   (config_.relay ? "; what the relay at " + config_.relay->url() +
                                        " received stays there; Start streams again"
                                  : "; what was written stays in " + config_.outputPath),
               id_.uuid());
    notify({SessionChange::State, SessionChange::ErrorReason});
}

void Session::setRingBufferSize(uint64_t bytes) {
    if (bytes == ringBufferSize_)
        return;
    ringBufferSize_ = bytes;
    notify({SessionChange::RingBufferSize});
}

void Session::setStatistics(const std::string& domain, DomainStatistics statistics) {
    auto& held = statistics_[domain];
    if (held == statistics)
        return;
    held = std::move(statistics);
    notify({SessionChange::Statistics});
}

DomainStatistics Session::statistics() const {
    DomainStatistics all;
    for (const auto& [domain, s] : statistics_) {
        all.sampledAtUsec = std::max(all.sampledAtUsec, s.sampledAtUsec);
        all.total += s.total;
        all.appsRefused += s.appsRefused;
    }
    // Every channel the session has today, with the figures its domain
    // reported. The total's events-recorded is known when every channel's
    // is: kernel channels always count their records, UST ones with
    // count-events.
    bool everyCounted = true;
    for (const TracingDomain d : {TracingDomain::Ust, TracingDomain::Kernel})
        for (const ChannelConfig& c : d == TracingDomain::Kernel ? kernelChannels_ : channels_) {
            ChannelStatistics entry{std::string(toString(d)),
                                    c.name,
                                    {},
                                    d == TracingDomain::Kernel || config_.countEvents};
            if (const auto it = statistics_.find(entry.domain); it != statistics_.end())
                for (const ChannelStatistics& reported : it->second.channels)
                    if (reported.channel == c.name) {
                        entry.figures = reported.figures;
                        entry.eventsCounted = reported.eventsCounted;
                    }
            everyCounted = everyCounted && entry.eventsCounted;
            all.channels.push_back(std::move(entry));
        }
    all.eventsCounted = all.channels.empty() ? config_.countEvents : everyCounted;
    return all;
}

bool Session::traceAllUsers() {
    if (tracesAllUsers())
        return false;
    allUsers_ = true;
    log::info("session '" + config_.name +
                  "' traces the applications of every user (its owner holds trace-all-users)",
              id_.uuid());
    notify({SessionChange::TracesAllUsers});
    return true;
}

void Session::checkIdle(const char* member, bool evenDuringSnapshot) const {
    if (operation_ == SessionOperation::Resuming)
        throw Error(ErrorCode::WrongState,
                    std::string(member) + ": session '" + config_.name +
                        "' is being taken over after a restart of tracectld (its consumer "
                        "drains what the previous daemon left); try again in a moment");
    if (operation_ != SessionOperation::None)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" + config_.name +
                                               "' is busy with another Start, Stop or Destroy");
    if (snapshotting_ && !evenDuringSnapshot)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" + config_.name +
                                               "' is recording a snapshot; wait for it");
    if (clearing_ && !evenDuringSnapshot)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" + config_.name +
                                               "' is being cleared; wait for it");
}

std::string Session::failedText() const {
    return "session '" + config_.name + "' failed (" + errorReason_ + ")" +
           (config_.relay ? "; Start streams again, to a new session on the relay, or destroy it"
                          : "; destroy it");
}

void Session::refuseInLiveMode(const char* member) const {
    // As lttng-tools 2.13 cmd.c cmd_rotate_session: a live session's
    // viewers follow its streams; a chunk switch under them shows as lost
    // packets (LTTNG_ERR_ROTATION_NOT_AVAILABLE).
    if (config_.mode == SessionMode::Live)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" + config_.name +
                                               "' is a live session, which does not rotate");
}

void Session::refuseInSnapshotMode(const char* member) const {
    // Nothing is written between snapshots: there is no chunk to rotate.
    if (config_.mode == SessionMode::Snapshot)
        throw Error(ErrorCode::WrongState, std::string(member) + ": session '" + config_.name +
                                               "' is a snapshot session; record snapshots instead");
}

SessionSnapshot Session::snapshot() const {
    SessionSnapshot s;
    s.idHex = id_.hex();
    s.name = config_.name;
    s.owner = config_.owner;
    s.outputPath = config_.outputPath;
    s.relay = config_.relay;
    s.liveTimerUs = config_.liveTimerUs;
    s.snapshotMode = config_.mode == SessionMode::Snapshot;
    s.tracesAllUsers = tracesAllUsers();
    s.perPid = config_.bufferOwnership == BufferOwnership::PerPid;
    s.countEvents = config_.countEvents;
    s.creationTime =
        std::chrono::duration_cast<std::chrono::seconds>(created_.time_since_epoch()).count();
    s.relayCreationTime = restartedAt_.value_or(s.creationTime);
    s.channels = channels_;
    s.rules = rules_;
    s.kernelChannels = kernelChannels_;
    s.kernelRules = kernelRules_;
    s.trackers = trackers_;
    return s;
}

void Session::start(Done done) {
    checkIdle("Start");
    // As lttng-start(1): nothing could ever be recorded, and no channel can
    // be made once the session has started.
    if (channels_.empty() && kernelChannels_.empty())
        throw Error(ErrorCode::WrongState,
                    "session '" + config_.name +
                        "' has no channel: enable events first (channel0 is made then) "
                        "or add a channel");
    if (state_ == SessionState::Error && !config_.relay)
        throw Error(ErrorCode::WrongState, failedText());
    if (state_ == SessionState::Active)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is already active");
    const SessionSnapshot s = snapshot();
    for (DomainBackend* d : domains_)
        if (auto refused = d->refuseStart(s))
            throw *refused;
    operation_ = SessionOperation::Starting;
    if (state_ == SessionState::Error)
        return restartAfterFailure(std::move(done));
    startRecordingAndDomains(std::move(done));
}

void Session::startRecordingAndDomains(Done done) {
    if (recorder_ == nullptr)
        return startDomains(std::move(done));
    recorder_->startRecording(snapshot(),
                              lifetime_.guard(
                                  [this, done](std::optional<Error> error) {
                                      if (!error)
                                          return startDomains(done);
                                      operation_ = SessionOperation::None;
                                      log::warning("session '" + config_.name +
                                                       "' did not start: " + error->what(),
                                                   id_.uuid());
                                      done(std::move(error));
                                  },
                                  [done] { done(destroyedError()); }));
}

void Session::restartAfterFailure(Done done) {
    // A network session whose relay went away (or whose consumer failed):
    // what the failed run left is let go in every domain, then it starts as
    // for the first time, with a new consumer and a new session on the
    // relay (lttng-relayd keeps what the first one sent).
    log::info("session '" + config_.name + "': starting again after its failure (" + errorReason_ +
                  ")",
              id_.uuid());
    auto torn = lifetime_.guard(
        [this, done](std::optional<Error>) {
            state_ = everStarted_ ? SessionState::Stopped : SessionState::Created;
            errorReason_.clear();
            restartedAt_ = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
            rotating_ = false;
            notify({SessionChange::State, SessionChange::ErrorReason});
            // The failed run's recording ended with its schedule.
            if (recorder_ != nullptr && schedule_.any())
                applySchedule([](std::optional<Error>) {});
            startRecordingAndDomains(done);
        },
        [done] { done(destroyedError()); });
    // The domains let go of their channels, then the recording goes.
    Join domainsTorn(domains_.size(),
                     lifetime_.guard(
                         [this, torn](std::optional<Error>) {
                             if (recorder_ == nullptr)
                                 return torn(std::nullopt);
                             recorder_->endRecording(id_.hex(), torn);
                         },
                         [done](std::optional<Error>) { done(destroyedError()); }));
    if (recorder_ != nullptr)
        recorder_->recordingEnding(id_.hex());
    for (DomainBackend* d : domains_)
        d->destroy(id_.hex(), domainsTorn.add());
}

void Session::startDomains(Done done) {
    Join all(domains_.size(),
             lifetime_.guard(
                 [this, done](std::optional<Error> error) {
                     operation_ = SessionOperation::None;
                     if (error) {
                         log::warning("session '" + config_.name +
                                          "' did not start: " + error->what(),
                                      id_.uuid());
                         return done(std::move(error));
                     }
                     if (state_ != SessionState::Error) { // a domain may have failed it meanwhile
                         if (recorder_ != nullptr)
                             recorder_->setRecordingActive(id_.hex(), true);
                         state_ = SessionState::Active;
                         everStarted_ = true;
                         emptySinceStop_ = false;
                         notify({SessionChange::State});
                         log::info("session '" + config_.name + "' started", id_.uuid());
                     }
                     done(std::nullopt);
                 },
                 [done] { done(destroyedError()); }));
    const SessionSnapshot s = snapshot();
    for (DomainBackend* d : domains_)
        d->start(s, all.add());
}

void Session::stop(Done done) {
    checkIdle("Stop");
    if (state_ != SessionState::Active)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is not active (state " +
                                               std::string(toString(state_)) + ")");
    operation_ = SessionOperation::Stopping;
    // It rotates on its schedule no more, whatever the domains answer.
    if (recorder_ != nullptr)
        recorder_->setRecordingActive(id_.hex(), false);
    Join all(domains_.size(), lifetime_.guard(
                                  [this, done](std::optional<Error> error) {
                                      operation_ = SessionOperation::None;
                                      if (error)
                                          return done(std::move(error));
                                      if (state_ == SessionState::Active) {
                                          state_ = SessionState::Stopped;
                                          notify({SessionChange::State});
                                          log::info("session '" + config_.name + "' stopped",
                                                    id_.uuid());
                                      }
                                      done(std::nullopt);
                                  },
                                  [done] { done(destroyedError()); }));
    for (DomainBackend* d : domains_)
        d->stop(id_.hex(), all.add());
}

void Session::destroy(Done done) {
    checkIdle("Destroy", true);
    operation_ = SessionOperation::Destroying;
    auto finish = lifetime_.guard(
        [this, done](std::optional<Error> lost) {
            if (lost)
                log::warning("session '" + config_.name + "' destroyed, but " + lost->what(),
                             id_.uuid());
            else
                log::info("session '" + config_.name + "' destroyed", id_.uuid());
            done(std::move(lost));
        },
        [done](std::optional<Error> lost) { done(std::move(lost)); });
    // The domains close their channels, then the recording ends: the first
    // loss reported (the relay did not get everything) is the answer.
    Join domainsDone(domains_.size(),
                     lifetime_.guard(
                         [this, finish](std::optional<Error> lost) {
                             if (recorder_ == nullptr)
                                 return finish(std::move(lost));
                             recorder_->endRecording(id_.hex(),
                                                     [lost, finish](std::optional<Error> e) {
                                                         finish(e ? std::move(e) : lost);
                                                     });
                         },
                         finish));
    if (recorder_ != nullptr)
        recorder_->recordingEnding(id_.hex());
    for (DomainBackend* d : domains_)
        d->destroy(id_.hex(), domainsDone.add());
}

void Session::rotate(PathDone started) {
    checkIdle("Rotate");
    refuseInSnapshotMode("Rotate");
    refuseInLiveMode("Rotate");
    if (state_ == SessionState::Created || state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is in state " +
                                               std::string(toString(state_)) +
                                               ": only a started session rotates");
    if (rotating_)
        throw Error(ErrorCode::WrongState,
                    "a rotation of session '" + config_.name + "' is under way");
    // As lttng-tools cmd.cpp cmd_rotate_session (LTTNG_ERR_ROTATION_MULTIPLE_AFTER_STOP,
    // LTTNG_ERR_ROTATION_AFTER_STOP_CLEAR): it would archive an empty chunk.
    if (state_ == SessionState::Stopped && emptySinceStop_)
        throw Error(ErrorCode::WrongState,
                    "session '" + config_.name + "' was already " + emptiedBy_ +
                        " since it stopped: nothing was recorded since, so there is nothing "
                        "to rotate (start it to record again)");
    SessionRecorder& r = recorder("Rotate");
    rotating_ = true;
    notify({SessionChange::State});
    // A rotation that did not begin never completes: it ends at once.
    r.rotate(id_.hex(),
             lifetime_.guard(
                 [this, started](std::optional<Error> error, std::string path) {
                     if (error) {
                         rotating_ = false;
                         notify({SessionChange::State});
                     } else if (state_ == SessionState::Stopped) {
                         // Begun while stopped: the new chunk holds nothing
                         // until the next start (a clear then has nothing to do).
                         emptySinceStop_ = true;
                         emptiedBy_ = "rotated";
                     }
                     started(std::move(error), std::move(path));
                 },
                 [started](std::optional<Error>, std::string) { started(destroyedError(), {}); }),
             lifetime_.guard([this](std::optional<Error> error, std::string path) {
                 rotationEnded(error, path);
             }));
}

void Session::rotationEnded(const std::optional<Error>& error, const std::string& path) {
    rotating_ = false;
    notify({SessionChange::State});
    if (error)
        log::warning("session '" + config_.name + "': " + error->what(), id_.uuid());
    if (listener_ != nullptr)
        listener_->rotationEnded(error, path);
}

void Session::clear(Done done) {
    checkIdle("Clear");
    if (state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState, failedText());
    // A snapshot session's Clear empties its buffers only: what its
    // snapshots left on the relay stays there, as a local one's do.
    if (config_.relay && config_.mode != SessionMode::Snapshot)
        throw Error(ErrorCode::WrongState,
                    "Clear: session '" + config_.name + "' streams to the relay at " +
                        config_.relay->url() +
                        "; clearing a network session is not supported (what the relay holds "
                        "is the relay's)");
    if (rotating_)
        throw Error(ErrorCode::WrongState, "Clear: a rotation of session '" + config_.name +
                                               "' is under way; clear once it is over");
    // Never started, or nothing recorded since the last stop's clear or
    // rotation: nothing to delete, and no error (lttng-tools clear.c).
    if (state_ == SessionState::Created || (state_ == SessionState::Stopped && emptySinceStop_)) {
        log::info("session '" + config_.name + "': nothing to clear", id_.uuid());
        return done(std::nullopt);
    }
    SessionRecorder& r = recorder("Clear");
    clearing_ = true;
    r.clear(id_.hex(), lifetime_.guard(
                           [this, done](std::optional<Error> error) {
                               clearing_ = false;
                               if (error && operation_ == SessionOperation::Destroying)
                                   return done(destroyedError());
                               if (error) {
                                   log::warning("session '" + config_.name +
                                                    "': clear failed: " + error->what(),
                                                id_.uuid());
                                   return done(std::move(error));
                               }
                               if (state_ == SessionState::Stopped) {
                                   emptySinceStop_ = true;
                                   emptiedBy_ = "cleared";
                               }
                               log::info("session '" + config_.name + "' cleared", id_.uuid());
                               done(std::nullopt);
                           },
                           [done](std::optional<Error>) { done(destroyedError()); }));
}

void Session::recordSnapshot(uint64_t maxSize, PathDone done) {
    checkIdle("RecordSnapshot");
    if (config_.mode != SessionMode::Snapshot)
        throw Error(ErrorCode::WrongState,
                    "session '" + config_.name +
                        "' is not a snapshot session (create it with mode 'snapshot')");
    if (state_ == SessionState::Created || state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState,
                    "session '" + config_.name + "' is in state " + std::string(toString(state_)) +
                        ": a snapshot needs a started session (active or stopped)");
    // Start, Stop and another snapshot are refused meanwhile; Destroy is
    // not, and overtakes it: the snapshot then fails as destroyed.
    SessionRecorder& r = recorder("RecordSnapshot");
    snapshotting_ = true;
    r.recordSnapshot(
        id_.hex(), maxSize,
        lifetime_.guard(
            [this, done](std::optional<Error> error, std::string path) {
                snapshotting_ = false;
                if (error && operation_ == SessionOperation::Destroying)
                    return done(destroyedError(), {});
                if (error) {
                    log::warning("session '" + config_.name +
                                     "': snapshot failed: " + error->what(),
                                 id_.uuid());
                    return done(std::move(error), {});
                }
                if (listener_ != nullptr)
                    listener_->snapshotRecorded(path);
                done(std::nullopt, path);
            },
            [done](std::optional<Error>, std::string) { done(destroyedError(), {}); }));
}

void Session::setRotationSchedule(RotationSchedule schedule, Done done) {
    refuseInSnapshotMode("SetRotationSchedule");
    if (schedule.any())
        refuseInLiveMode("SetRotationSchedule");
    const bool changed =
        schedule.timerUs != schedule_.timerUs || schedule.sizeBytes != schedule_.sizeBytes;
    schedule_ = schedule;
    if (changed)
        notify({SessionChange::RotationSchedule});
    if (recorder_ == nullptr)
        return done(std::nullopt); // kept: nothing records (yet) to apply it
    applySchedule(lifetime_.guard(
        [this, done, schedule](std::optional<Error> error) {
            if (!error)
                log::info("session '" + config_.name + "': rotation schedule " +
                              (schedule.any()
                                   ? "every " + std::to_string(schedule.timerUs) + " us / " +
                                         std::to_string(schedule.sizeBytes) + " bytes (0 = not)"
                                   : std::string("cleared")),
                          id_.uuid());
            done(std::move(error));
        },
        [done](std::optional<Error>) { done(destroyedError()); }));
}

void Session::applySchedule(Done done) {
    // The session follows scheduled rotations as it follows Rotate's.
    recorder_->setRotationSchedule(
        id_.hex(), schedule_,
        lifetime_.guard([this](std::optional<Error> error, const std::string&) {
            if (!error && !rotating_) {
                rotating_ = true;
                notify({SessionChange::State});
            }
        }),
        lifetime_.guard([this](std::optional<Error> error, const std::string& path) {
            rotationEnded(error, path);
        }),
        std::move(done));
}

} // namespace tracectl

namespace tracectl {

void Session::addChannel(ChannelConfig channel, TracingDomain domain) {
    if (everStarted_)
        throw Error(ErrorCode::WrongState, "channels can only be added before session '" +
                                               config_.name + "' first starts");
    checkNewChannel(channel);
    if (config_.mode == SessionMode::Snapshot && !channel.overwrite)
        throw Error(ErrorCode::InvalidArgument,
                    "the channels of a snapshot session must be in overwrite mode");
    auto& list = channelsOf(domain);
    for (const auto& c : list)
        if (c.name == channel.name)
            throw Error(ErrorCode::InvalidArgument, "session '" + config_.name +
                                                        "' already has a " +
                                                        std::string(toString(domain)) +
                                                        " channel named '" + channel.name + "'");
    if (channels_.size() + kernelChannels_.size() >= kMaxChannels)
        throw Error(ErrorCode::LimitExceeded,
                    "a session has at most " + std::to_string(kMaxChannels) + " channels");
    list.push_back(std::move(channel));
    notify({channelsChange(domain)});
}

void Session::takeBack(const EventRule& rule, bool createdDefault) {
    auto& rules = rule.domain == TracingDomain::Kernel ? kernelRules_ : rules_;
    const auto it = std::find_if(rules.begin(), rules.end(),
                                 [&](const EventRule& r) { return sameEventRule(r, rule); });
    if (it == rules.end())
        return;
    rules.erase(it);
    std::vector<SessionChange> changed{eventsChange(rule.domain)};
    auto& channels = channelsOf(rule.domain);
    const bool used = std::any_of(rules.begin(), rules.end(),
                                  [&](const EventRule& r) { return r.channel == rule.channel; });
    if (createdDefault && !everStarted_ && !used) {
        std::erase_if(channels, [&](const ChannelConfig& c) { return c.name == rule.channel; });
        changed.push_back(channelsChange(rule.domain));
    }
    notify(changed);
    log::info("session '" + config_.name + "': events '" + rule.pattern + "' refused, taken back",
              id_.uuid());
}

std::vector<ChannelConfig>& Session::channelsOf(TracingDomain d) {
    return d == TracingDomain::Kernel ? kernelChannels_ : channels_;
}

ChannelConfig Session::defaultChannel(TracingDomain d) const {
    ChannelConfig c = d == TracingDomain::Kernel
                          ? defaultKernelChannel(std::string(kDefaultChannelName))
                          : ChannelConfig{};
    c.name = std::string(kDefaultChannelName);
    c.overwrite = config_.mode == SessionMode::Snapshot;
    return c;
}

bool Session::enableEvents(EventRule rule, Done done) {
    if (state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState, failedText());
    checkNewEventRule(rule);
    if (rule.channel.empty())
        rule.channel = kDefaultChannelName;
    auto& rules = rule.domain == TracingDomain::Kernel ? kernelRules_ : rules_;
    auto& channels = channelsOf(rule.domain);
    // LTTng refuses a rule it has already (LTTNG_ERR_UST_EVENT_ENABLED):
    // the same rule twice would be listed, and sent to every app, twice.
    for (std::size_t i = 0; i < rules.size(); ++i) {
        const EventRule& r = rules[i];
        if (!sameEventRule(r, rule))
            continue;
        if (!r.enabled) { // a disabled rule comes back on (lttng-enable-event(1))
            checkMayToggle("EnableEvents");
            log::info("session '" + config_.name + "': events '" + rule.pattern + "' re-enabled",
                      id_.uuid());
            setRulesEnabled(rule.domain, {i}, true, std::move(done));
            return false;
        }
        throw Error(ErrorCode::EventRuleExists, "session '" + config_.name +
                                                    "' already has the event rule " +
                                                    describeEventRule(rule));
    }
    if (rules_.size() + kernelRules_.size() >= kMaxEventRules)
        throw Error(ErrorCode::LimitExceeded,
                    "a session has at most " + std::to_string(kMaxEventRules) + " event rules");
    bool createdDefault = false;
    const bool exists = std::any_of(channels.begin(), channels.end(),
                                    [&](const ChannelConfig& c) { return c.name == rule.channel; });
    if (!exists) {
        if (rule.channel != kDefaultChannelName || !channels.empty())
            throw Error(ErrorCode::InvalidArgument, "session '" + config_.name + "' has no " +
                                                        std::string(toString(rule.domain)) +
                                                        " channel named '" + rule.channel + "'");
        // Start refuses a session without channels: this is before it.
        addChannel(defaultChannel(rule.domain), rule.domain);
        createdDefault = true;
    }
    rules.push_back(rule);
    notify({eventsChange(rule.domain)});
    log::info("session '" + config_.name + "': events '" + rule.pattern + "' enabled", id_.uuid());
    // In order with Start on every backend: a Start still in flight sees
    // the rule too. A rule a domain refuses (the kernel's: it names no
    // tracepoint, or the kernel refuses its filter) is taken back, with the
    // channel0 it made, so that nothing is changed by a failed call.
    Join all(domains_.size(), lifetime_.guard(
                                  [this, rule, createdDefault, done](std::optional<Error> error) {
                                      if (error)
                                          takeBack(rule, createdDefault);
                                      done(std::move(error));
                                  },
                                  [done](std::optional<Error> error) { done(std::move(error)); }));
    for (DomainBackend* d : domains_)
        d->enableEvents(id_.hex(), rule, tracesAllUsers(), all.add());
    return createdDefault;
}

} // namespace tracectl

namespace tracectl {

bool Session::addContext(TracingDomain domain, const std::string& channel,
                         const std::string& type) {
    if (everStarted_)
        throw Error(ErrorCode::WrongState, "context fields can only be added before session '" +
                                               config_.name + "' first starts");
    const bool known = domain == TracingDomain::Kernel ? kernelContextBit(type) != 0
                                                       : ustContextType(type).has_value();
    if (!known && domain == TracingDomain::Ust && isCallstackContext(type))
        throw Error(ErrorCode::InvalidArgument,
                    "context type '" + type +
                        "' is kernel-only: LTTng-UST 2.13 records no call stacks (use "
                        "add-context -k -t " +
                        type + " to record those of system calls and other kernel events)");
    if (!known) {
        std::string names;
        for (const auto n :
             domain == TracingDomain::Kernel ? kernelContextTypeNames() : contextTypeNames())
            names += (names.empty() ? "" : ", ") + std::string(n);
        throw Error(ErrorCode::InvalidArgument, "unknown " + std::string(toString(domain)) +
                                                    " context type '" + type +
                                                    "' (known: " + names + ")");
    }
    auto& channels = channelsOf(domain);
    std::vector<ChannelConfig*> targets;
    for (auto& c : channels)
        if (channel.empty() || c.name == channel)
            targets.push_back(&c);
    bool createdDefault = false;
    if (targets.empty()) {
        if (!channel.empty() && (channel != kDefaultChannelName || !channels.empty()))
            throw Error(ErrorCode::InvalidArgument, "session '" + config_.name + "' has no " +
                                                        std::string(toString(domain)) +
                                                        " channel named '" + channel + "'");
        addChannel(defaultChannel(domain), domain);
        createdDefault = true;
        targets.push_back(&channels.back());
    }
    for (const ChannelConfig* c : targets) {
        if (std::find(c->contexts.begin(), c->contexts.end(), type) != c->contexts.end())
            throw Error(ErrorCode::InvalidArgument,
                        "channel '" + c->name + "' already records context '" + type + "'");
        if (c->contexts.size() >= kMaxContexts)
            throw Error(ErrorCode::LimitExceeded,
                        "channel '" + c->name + "' has too many context fields");
    }
    for (ChannelConfig* c : targets)
        c->contexts.push_back(type);
    notify({domain == TracingDomain::Kernel ? SessionChange::KernelContexts
                                            : SessionChange::Contexts});
    return createdDefault;
}

} // namespace tracectl
