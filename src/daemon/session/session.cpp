#include "session/session.hpp"

#include "common/error.hpp"
#include "session/context_type.hpp"

#include <algorithm>

namespace tracectl {

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
    return m == SessionMode::Snapshot ? "snapshot" : "normal";
}

std::string_view toString(BufferOwnership b) noexcept {
    return b == BufferOwnership::PerPid ? "per-pid" : "per-uid";
}

void Session::fail(std::string reason) {
    state_ = SessionState::Error;
    errorReason_ = std::move(reason);
}

void Session::start() {
    if (state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState,
                    "session '" + config_.name + "' failed (" + errorReason_ + "); destroy it");
    if (state_ == SessionState::Active)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is already active");
    state_ = SessionState::Active;
    everStarted_ = true;
}

void Session::stop() {
    if (state_ != SessionState::Active)
        throw Error(ErrorCode::WrongState, "session '" + config_.name + "' is not active (state " +
                                               std::string(toString(state_)) + ")");
    state_ = SessionState::Stopped;
}

} // namespace tracectl

namespace tracectl {

void Session::addChannel(ChannelConfig channel) {
    if (everStarted_)
        throw Error(ErrorCode::WrongState, "channels can only be added before session '" +
                                               config_.name + "' first starts");
    checkChannelConfig(channel);
    if (config_.mode == SessionMode::Snapshot && !channel.overwrite)
        throw Error(ErrorCode::InvalidArgument,
                    "the channels of a snapshot session must be in overwrite mode");
    for (const auto& c : channels_)
        if (c.name == channel.name)
            throw Error(ErrorCode::InvalidArgument, "session '" + config_.name +
                                                        "' already has a channel named '" +
                                                        channel.name + "'");
    if (channels_.size() >= kMaxChannels)
        throw Error(ErrorCode::LimitExceeded,
                    "a session has at most " + std::to_string(kMaxChannels) + " channels");
    channels_.push_back(std::move(channel));
}

bool Session::enableEvents(EventRule rule) {
    if (state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState,
                    "session '" + config_.name + "' failed (" + errorReason_ + "); destroy it");
    checkEventRule(rule);
    if (rule.channel.empty())
        rule.channel = kDefaultChannelName;
    // LTTng refuses a rule it has already (LTTNG_ERR_UST_EVENT_ENABLED):
    // the same rule twice would be listed, and sent to every app, twice.
    for (const auto& r : rules_)
        if (sameEventRule(r, rule))
            throw Error(ErrorCode::EventRuleExists, "session '" + config_.name +
                                                        "' already has the event rule " +
                                                        describeEventRule(rule));
    if (rules_.size() >= kMaxEventRules)
        throw Error(ErrorCode::LimitExceeded,
                    "a session has at most " + std::to_string(kMaxEventRules) + " event rules");
    bool createdDefault = false;
    const bool exists = std::any_of(channels_.begin(), channels_.end(),
                                    [&](const ChannelConfig& c) { return c.name == rule.channel; });
    if (!exists) {
        if (rule.channel != kDefaultChannelName || !channels_.empty())
            throw Error(ErrorCode::InvalidArgument, "session '" + config_.name +
                                                        "' has no channel named '" + rule.channel +
                                                        "'");
        if (everStarted_)
            throw Error(ErrorCode::WrongState,
                        "session '" + config_.name +
                            "' has no channel, and channel0 can only be made before its first "
                            "start");
        ChannelConfig c;
        c.name = std::string(kDefaultChannelName);
        c.overwrite = config_.mode == SessionMode::Snapshot;
        addChannel(std::move(c));
        createdDefault = true;
    }
    rules_.push_back(std::move(rule));
    return createdDefault;
}

} // namespace tracectl

namespace tracectl {

bool Session::addContext(const std::string& channel, const std::string& type) {
    if (everStarted_)
        throw Error(ErrorCode::WrongState, "context fields can only be added before session '" +
                                               config_.name + "' first starts");
    if (!ustContextType(type)) {
        std::string known;
        for (const auto n : contextTypeNames())
            known += (known.empty() ? "" : ", ") + std::string(n);
        throw Error(ErrorCode::InvalidArgument,
                    "unknown context type '" + type + "' (known: " + known + ")");
    }
    std::vector<ChannelConfig*> targets;
    for (auto& c : channels_)
        if (channel.empty() || c.name == channel)
            targets.push_back(&c);
    bool createdDefault = false;
    if (targets.empty()) {
        if (!channel.empty() && (channel != kDefaultChannelName || !channels_.empty()))
            throw Error(ErrorCode::InvalidArgument,
                        "session '" + config_.name + "' has no channel named '" + channel + "'");
        ChannelConfig c;
        c.name = std::string(kDefaultChannelName);
        c.overwrite = config_.mode == SessionMode::Snapshot;
        addChannel(std::move(c));
        createdDefault = true;
        targets.push_back(&channels_.back());
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
    return createdDefault;
}

} // namespace tracectl
