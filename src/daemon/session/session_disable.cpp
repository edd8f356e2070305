// Session: disabling and re-enabling event rules and channels while the
// session lives (Session.DisableEvents, Session.DisableChannel, and the
// EnableEvents/AddChannel that turn them back on). Semantics of LTTng 2.13:
// lttng-disable-event(1), lttng-disable-channel(1), lttng-tools
// src/bin/lttng-sessiond/event.c (event_ust_disable_tracepoint: a disabled
// event counts as found) and channel.c (channel_ust_disable: disabling a
// disabled channel succeeds).
#include "common/error.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "session/session.hpp"

#include <algorithm>
#include <memory>

namespace tracectl {

namespace {

SessionChange eventsOf(TracingDomain d) {
    return d == TracingDomain::Kernel ? SessionChange::KernelEvents : SessionChange::Events;
}

SessionChange channelsOfChange(TracingDomain d) {
    return d == TracingDomain::Kernel ? SessionChange::KernelChannels : SessionChange::Channels;
}

} // namespace

void Session::checkMayToggle(const char* member) const {
    if (state_ == SessionState::Error)
        throw Error(ErrorCode::WrongState, std::string(member) + ": " + failedText());
    // A Start in flight takes a snapshot of the rules: a change meanwhile
    // would reach the domains in an order they cannot tell.
    checkIdle(member, true);
}

const ChannelConfig* Session::findChannel(TracingDomain domain, const std::string& name) const {
    const auto& list = domain == TracingDomain::Kernel ? kernelChannels_ : channels_;
    for (const auto& c : list)
        if (c.name == name)
            return &c;
    return nullptr;
}

ChannelConfig& Session::channelNamed(TracingDomain domain, const std::string& name) {
    for (ChannelConfig& c : channelsOf(domain))
        if (c.name == name)
            return c;
    throw Error(ErrorCode::InvalidArgument, "session '" + config_.name + "' has no " +
                                                std::string(toString(domain)) + " channel named '" +
                                                name + "'");
}

void Session::setRulesEnabled(TracingDomain domain, const std::vector<std::size_t>& which,
                              bool enabled, Done done) {
    auto& rules = domain == TracingDomain::Kernel ? kernelRules_ : rules_;
    std::vector<EventRule> changed;
    for (const std::size_t i : which) {
        rules[i].enabled = enabled;
        changed.push_back(rules[i]);
    }
    notify({eventsOf(domain)});
    Join all(domains_.size(), std::move(done));
    for (DomainBackend* d : domains_)
        d->setEventRulesEnabled(id_.hex(), changed, enabled, all.add());
}

void Session::disableEvents(TracingDomain domain, const std::string& channelName,
                            const std::string& pattern, Done done) {
    checkMayToggle("DisableEvents");
    const std::string channel =
        channelName.empty() ? std::string(kDefaultChannelName) : channelName;
    channelNamed(domain, channel); // throws unless there is one
    const auto& rules = domain == TracingDomain::Kernel ? kernelRules_ : rules_;
    std::vector<std::size_t> matched;
    std::vector<std::size_t> toChange;
    for (std::size_t i = 0; i < rules.size(); ++i)
        if (rules[i].channel == channel && (pattern.empty() || rules[i].pattern == pattern)) {
            matched.push_back(i);
            if (rules[i].enabled)
                toChange.push_back(i);
        }
    if (matched.empty())
        throw Error(ErrorCode::NoSuchEventRule,
                    pattern.empty()
                        ? std::string(toString(domain)) + " channel '" + channel +
                              "' of session '" + config_.name + "' has no event rule"
                        : "no event rule '" + pattern + "' in " + std::string(toString(domain)) +
                              " channel '" + channel + "' of session '" + config_.name + "'");
    log::info("session '" + config_.name + "': events '" + (pattern.empty() ? "*all*" : pattern) +
                  "' of channel '" + channel + "' disabled",
              id_.uuid());
    if (toChange.empty())
        return done(std::nullopt); // disabled already: nothing to do (as LTTng)
    setRulesEnabled(domain, toChange, false, std::move(done));
}

void Session::disableChannel(TracingDomain domain, const std::string& name, Done done) {
    checkMayToggle("DisableChannel");
    ChannelConfig* const it = &channelNamed(domain, name);
    if (!it->enabled)
        return done(std::nullopt);
    it->enabled = false;
    notify({channelsOfChange(domain)});
    log::info("session '" + config_.name + "': " + std::string(toString(domain)) + " channel '" +
                  name + "' disabled",
              id_.uuid());
    Join all(domains_.size(), std::move(done));
    for (DomainBackend* d : domains_)
        d->setChannelEnabled(id_.hex(), domain, name, false, all.add());
}

void Session::reenableChannel(TracingDomain domain, const std::string& name,
                              const std::optional<ChannelConfig>& attributes, Done done) {
    checkMayToggle("AddChannel");
    ChannelConfig* const it = &channelNamed(domain, name);
    if (it->enabled)
        throw Error(ErrorCode::InvalidArgument, "session '" + config_.name + "' already has a " +
                                                    std::string(toString(domain)) +
                                                    " channel named '" + name + "'");
    if (attributes && !sameChannelAttributes(*attributes, *it))
        throw Error(ErrorCode::InvalidArgument,
                    std::string(toString(domain)) + " channel '" + name +
                        "' is disabled: it can be re-enabled with its own attributes only "
                        "(give none, or the same)");
    it->enabled = true;
    notify({channelsOfChange(domain)});
    log::info("session '" + config_.name + "': " + std::string(toString(domain)) + " channel '" +
                  name + "' re-enabled",
              id_.uuid());
    Join all(domains_.size(), std::move(done));
    for (DomainBackend* d : domains_)
        d->setChannelEnabled(id_.hex(), domain, name, true, all.add());
}

} // namespace tracectl
