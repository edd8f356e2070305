#include "session/session_registry.hpp"

#include "common/error.hpp"
#include "session/channel_config.hpp"
#include "session/output_path.hpp"
#include "session/session_name.hpp"

#include <algorithm>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl {

namespace {

SessionMode parseMode(const std::optional<std::string>& mode) {
    if (!mode || *mode == "normal")
        return SessionMode::Normal;
    if (*mode == "snapshot")
        return SessionMode::Snapshot;
    if (*mode == "live")
        return SessionMode::Live;
    throw Error(ErrorCode::InvalidArgument,
                "mode " + quoteForMessage(*mode) + " is not one of 'normal', 'snapshot', 'live'");
}

BufferOwnership parseBufferOwnership(const std::optional<std::string>& b) {
    if (!b || *b == "per-uid")
        return BufferOwnership::PerUid;
    if (*b == "per-pid")
        return BufferOwnership::PerPid;
    throw Error(ErrorCode::InvalidArgument,
                "buffer-ownership " + quoteForMessage(*b) + " is not one of 'per-uid', 'per-pid'");
}

} // namespace

std::string requestedOutputUrl(const SessionRequest& request) {
    if (const auto relay = relayAddressOf(request.url, request.controlUrl, request.dataUrl))
        return relay->url();
    if (request.mode == "live" && !request.url)
        return parseNetUrl(kDefaultLiveUrl).url();
    return "";
}

void SessionRegistry::checkRoomFor(uid_t owner, const std::string& name) const {
    if (findByName(owner, name) != nullptr)
        throw Error(ErrorCode::SessionExists,
                    "a session named " + quoteForMessage(name) + " already exists");
    const auto owned = std::count_if(sessions_.begin(), sessions_.end(),
                                     [&](const auto& s) { return s->config().owner == owner; });
    if (static_cast<std::size_t>(owned) >= kMaxSessionsPerOwner)
        throw Error(ErrorCode::LimitExceeded, "uid " + std::to_string(owner) + " already has " +
                                                  std::to_string(kMaxSessionsPerOwner) +
                                                  " sessions; destroy some first");
}

SessionRegistry::Plan SessionRegistry::plan(const SessionRequest& request, uid_t owner) const {
    if (auto problem = sessionNameProblem(request.name))
        throw Error(ErrorCode::InvalidName,
                    "invalid session name " + quoteForMessage(request.name) + ": " + *problem);
    checkRoomFor(owner, request.name);

    SessionConfig config;
    config.name = request.name;
    config.owner = owner;
    config.mode = parseMode(request.mode);
    config.bufferOwnership = parseBufferOwnership(request.bufferOwnership);
    config.countEvents = request.countEvents.value_or(false);
    if (config.countEvents && config.mode == SessionMode::Snapshot)
        throw Error(ErrorCode::InvalidArgument,
                    "count-events needs a normal session: a snapshot session's consumer reads "
                    "nothing until a snapshot");
    const auto now = clock_();
    std::optional<std::string> outputPath = request.outputPath;
    config.relay = relayAddressOf(request.url, request.controlUrl, request.dataUrl);
    if (request.url && !config.relay) { // file://PATH
        if (outputPath)
            throw Error(ErrorCode::InvalidArgument,
                        "give either output-path or a file:// url, not both");
        outputPath = filePathOfUrl(*request.url);
    }
    if (config.mode == SessionMode::Live) {
        if (outputPath)
            throw Error(ErrorCode::InvalidArgument,
                        "a live session streams to a relay: give a net:// url (or none: " +
                            std::string(kDefaultLiveUrl) + "), not a local path");
        if (!config.relay)
            config.relay = parseNetUrl(kDefaultLiveUrl);
        config.liveTimerUs = request.liveTimerUs.value_or(kDefaultLiveTimerUs);
        if (config.liveTimerUs < kMinTimerUs || config.liveTimerUs > kMaxLiveTimerUs)
            throw Error(ErrorCode::InvalidArgument,
                        "live-timer must be a period from " + std::to_string(kMinTimerUs) +
                            " to " + std::to_string(kMaxLiveTimerUs) + " µs, not " +
                            std::to_string(config.liveTimerUs) +
                            " µs: a shorter period has the consumer wake for nothing");
    } else if (request.liveTimerUs) {
        throw Error(ErrorCode::InvalidArgument, "live-timer needs mode 'live'");
    }
    if (config.relay) {
        if (outputPath)
            throw Error(ErrorCode::InvalidArgument,
                        "a network session has no local output path: give either output-path "
                        "or a relay url, not both");
        // A snapshot session with a network output: each RecordSnapshot
        // goes to the relay (lttng create --snapshot --set-url).
        return Plan{std::move(config), now};
    }
    if (outputPath) {
        config.outputPath = checkedOutputPath(*outputPath);
    } else {
        config.outputPath = defaultOutputFolder(owner, request.name, now);
    }

    return Plan{std::move(config), now};
}

std::string SessionRegistry::defaultOutputFolder(uid_t owner, const std::string& name,
                                                 std::chrono::system_clock::time_point now) const {
    const auto home = home_(owner);
    if (!home || home->empty() || home->front() != '/')
        throw Error(ErrorCode::InvalidArgument,
                    "uid " + std::to_string(owner) +
                        " has no home folder for the default output path; pass output-path");
    return defaultOutputPath(*home, name, now);
}

std::string SessionRegistry::defaultOutputPathOf(uid_t owner, const std::string& name) const {
    if (auto problem = sessionNameProblem(name))
        throw Error(ErrorCode::InvalidName,
                    "invalid session name " + quoteForMessage(name) + ": " + *problem);
    return defaultOutputFolder(owner, name, clock_());
}

Session& SessionRegistry::add(Plan plan) {
    checkRoomFor(plan.config.owner, plan.config.name);
    sessions_.push_back(std::make_unique<Session>(SessionId::random(), std::move(plan.config),
                                                  plan.created, domains_, recorder_));
    return *sessions_.back();
}

Session& SessionRegistry::restore(const SessionId& id, SessionConfig config,
                                  std::chrono::system_clock::time_point created) {
    if (findById(id) != nullptr)
        throw Error(ErrorCode::SessionExists, "a session with id " + id.uuid() + " exists already");
    checkRoomFor(config.owner, config.name);
    sessions_.push_back(
        std::make_unique<Session>(id, std::move(config), created, domains_, recorder_));
    return *sessions_.back();
}

Session* SessionRegistry::findByName(uid_t owner, std::string_view name) const {
    for (const auto& s : sessions_)
        if (s->config().owner == owner && s->config().name == name)
            return s.get();
    return nullptr;
}

Session* SessionRegistry::findById(const SessionId& id) const {
    for (const auto& s : sessions_)
        if (s->id() == id)
            return s.get();
    return nullptr;
}

std::vector<Session*> SessionRegistry::visibleTo(uid_t viewer, bool seesAll) const {
    std::vector<Session*> out;
    for (const auto& s : sessions_)
        if (seesAll || s->config().owner == viewer)
            out.push_back(s.get());
    return out;
}

std::unique_ptr<Session> SessionRegistry::remove(const SessionId& id) {
    const auto it = std::find_if(sessions_.begin(), sessions_.end(),
                                 [&](const auto& s) { return s->id() == id; });
    if (it == sessions_.end())
        return nullptr;
    auto out = std::move(*it);
    sessions_.erase(it);
    return out;
}

std::optional<std::string> homeFromPasswd(uid_t uid) {
    long size = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buf(size > 0 ? static_cast<std::size_t>(size) : 16384);
    struct passwd pw {};
    struct passwd* result = nullptr;
    while (getpwuid_r(uid, &pw, buf.data(), buf.size(), &result) == ERANGE &&
           buf.size() < (1u << 20))
        buf.resize(buf.size() * 2);
    if (result == nullptr || pw.pw_dir == nullptr)
        return std::nullopt;
    // Accounts such as nobody name a folder that does not exist.
    struct stat st {};
    if (stat(pw.pw_dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return std::nullopt;
    return std::string(pw.pw_dir);
}

} // namespace tracectl
