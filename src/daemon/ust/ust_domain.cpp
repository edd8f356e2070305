#include "ust/ust_domain.hpp"

#include "ust/output_folder.hpp"
#include "ust/ust_tracer.hpp"

namespace tracectl {

DomainBackend::Done UstDomain::onLoop(Done f) {
    return [this, f = std::move(f)](std::optional<Error> e) { loop_.post([f, e] { f(e); }); };
}

DomainBackend::PathDone UstDomain::onLoop(PathDone f) {
    return [this, f = std::move(f)](std::optional<Error> e, std::string p) {
        loop_.post([f, e, p = std::move(p)] { f(e, p); });
    };
}

void UstDomain::start(SessionSnapshot s, Done done) {
    s.ownerGid = primaryGidOf(s.owner);
    tracer_.start(s, onLoop(std::move(done)));
}

void UstDomain::resume(SessionSnapshot s, bool active, Done done) {
    s.ownerGid = primaryGidOf(s.owner);
    tracer_.adopt(s, active, onLoop(std::move(done)));
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

void UstDomain::rotate(std::string id, PathDone started, PathDone completed) {
    tracer_.rotate(id, onLoop(std::move(started)), onLoop(std::move(completed)));
}

void UstDomain::clear(std::string id, Done done) {
    tracer_.clear(id, onLoop(std::move(done)));
}

void UstDomain::recordSnapshot(std::string id, uint64_t maxSize, PathDone done) {
    tracer_.recordSnapshot(id, maxSize, onLoop(std::move(done)));
}

void UstDomain::setRotationSchedule(std::string id, RotationSchedule schedule, PathDone started,
                                    PathDone completed, Done done) {
    tracer_.setRotationSchedule(id, schedule, onLoop(std::move(started)),
                                onLoop(std::move(completed)));
    onLoop(std::move(done))(std::nullopt);
}

} // namespace tracectl
