#include "ust/ust_domain.hpp"

#include "ust/ust_tracer.hpp"

namespace tracectl {

DomainBackend::Done UstDomain::onLoop(Done f) {
    return [this, f = std::move(f)](std::optional<Error> e) { loop_.post([f, e] { f(e); }); };
}

std::optional<Error> UstDomain::refuseStart(const SessionSnapshot& s) {
    return tracer_.refuseStart(s);
}

void UstDomain::start(SessionSnapshot s, Done done) {
    tracer_.start(s, onLoop(std::move(done)));
}

void UstDomain::resume(SessionSnapshot s, bool active, Done done) {
    tracer_.resume(s, active, onLoop(std::move(done)));
}

void UstDomain::stop(std::string id, Done done) {
    tracer_.stop(id, onLoop(std::move(done)));
}

void UstDomain::destroy(std::string id, Done done) {
    tracer_.destroy(id, onLoop(std::move(done)));
}

void UstDomain::enableEvents(std::string id, EventRule rule, bool tracesAllUsers, Done done) {
    if (rule.domain != TracingDomain::Ust)
        return onLoop(std::move(done))(std::nullopt); // another domain's
    if (tracesAllUsers)
        tracer_.traceAllUsers(id);
    tracer_.enableEvents(id, rule, onLoop(std::move(done))); // once every app traced took it
}

void UstDomain::setEventRulesEnabled(std::string id, std::vector<EventRule> rules, bool enabled,
                                     Done done) {
    std::erase_if(rules, [](const EventRule& r) { return r.domain != TracingDomain::Ust; });
    if (rules.empty())
        return onLoop(std::move(done))(std::nullopt); // another domain's
    tracer_.setRulesEnabled(id, rules, enabled, onLoop(std::move(done)));
}

void UstDomain::setChannelEnabled(std::string id, TracingDomain domain, std::string channel,
                                  bool enabled, Done done) {
    if (domain != TracingDomain::Ust)
        return onLoop(std::move(done))(std::nullopt);
    tracer_.setChannelEnabled(id, channel, enabled, onLoop(std::move(done)));
}

void UstDomain::setProcessTrackers(std::string id, ProcessTrackers trackers, bool tracesAllUsers,
                                   Done done) {
    tracer_.setProcessTrackers(id, trackers, tracesAllUsers, onLoop(std::move(done)));
}

} // namespace tracectl
