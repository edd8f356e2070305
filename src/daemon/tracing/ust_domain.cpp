#include "tracing/ust_domain.hpp"

#include "apps/ust_app_thread.hpp"
#include "tracing/output_folder.hpp"
#include "tracing/ust_tracer.hpp"

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
    thread_->submit(
        [this, s = std::move(s), done = onLoop(std::move(done))] { tracer_.start(s, done); });
}

void UstDomain::stop(std::string id, Done done) {
    thread_->submit(
        [this, id = std::move(id), done = onLoop(std::move(done))] { tracer_.stop(id, done); });
}

void UstDomain::destroy(std::string id, Done done) {
    thread_->submit(
        [this, id = std::move(id), done = onLoop(std::move(done))] { tracer_.destroy(id, done); });
}

void UstDomain::enableEvents(std::string id, EventRule rule, bool tracesAllUsers, Done done) {
    thread_->submit([this, id = std::move(id), rule = std::move(rule), tracesAllUsers,
                     done = onLoop(std::move(done))] {
        if (tracesAllUsers)
            tracer_.traceAllUsers(id);
        tracer_.enableEvents(id, rule, done); // once every app traced took it
    });
}

void UstDomain::rotate(std::string id, PathDone started, PathDone completed) {
    thread_->submit(
        [this, id = std::move(id), started = onLoop(std::move(started)),
         completed = onLoop(std::move(completed))] { tracer_.rotate(id, started, completed); });
}

void UstDomain::recordSnapshot(std::string id, uint64_t maxSize, PathDone done) {
    thread_->submit([this, id = std::move(id), maxSize, done = onLoop(std::move(done))] {
        tracer_.recordSnapshot(id, maxSize, done);
    });
}

void UstDomain::setRotationSchedule(std::string id, RotationSchedule schedule, PathDone started,
                                    PathDone completed, Done done) {
    thread_->submit([this, id = std::move(id), schedule, s = onLoop(std::move(started)),
                     c = onLoop(std::move(completed)), done = onLoop(std::move(done))] {
        tracer_.setRotationSchedule(id, schedule, s, c);
        done(std::nullopt);
    });
}

} // namespace tracectl
