// The "ust" domain backend (session/domain_backend.hpp) over the UstTracer.
//
// Threads: called on the main loop, where the tracer runs too; every answer
// is posted to the loop, so that none comes from inside the call that was
// given it. It holds no session state of its own.
#pragma once

#include "common/event_loop.hpp"
#include "session/domain_backend.hpp"

namespace tracectl {

class UstTracer;

class UstDomain final : public DomainBackend {
public:
    /// `mainLoop` gets the answers; `tracer` runs on it. Both must outlive
    /// this object.
    UstDomain(EventLoop& mainLoop, UstTracer& tracer) : loop_(mainLoop), tracer_(tracer) {}

    std::string_view name() const noexcept override { return "ust"; }
    std::optional<Error> refuseStart(const SessionSnapshot& session) override;
    void start(SessionSnapshot session, Done done) override;
    void resume(SessionSnapshot session, bool active, Done done) override;
    void stop(std::string idHex, Done done) override;
    void destroy(std::string idHex, Done done) override;
    void enableEvents(std::string idHex, EventRule rule, bool tracesAllUsers, Done done) override;
    void setEventRulesEnabled(std::string idHex, std::vector<EventRule> rules, bool enabled,
                              Done done) override;
    void setChannelEnabled(std::string idHex, TracingDomain domain, std::string channel,
                           bool enabled, Done done) override;
    void setProcessTrackers(std::string idHex, ProcessTrackers trackers, bool tracesAllUsers,
                            Done done) override;

private:
    /// `f`, posted to the main loop.
    Done onLoop(Done f);

    EventLoop& loop_;
    UstTracer& tracer_;
};

} // namespace tracectl
