// The "ust" domain backend (session/domain_backend.hpp): hands each call to
// the UstTracer on the app thread, and its answers back to the main loop.
//
// Threads: called on the main loop; the tracer runs every call on the app
// thread (UstAppThread::submit), in the order made; every answer is posted
// back to the main loop. It holds no session state of its own.
#pragma once

#include "common/event_loop.hpp"
#include "session/domain_backend.hpp"

namespace tracectl {

class UstAppThread;
class UstTracer;

class UstDomain final : public DomainBackend {
public:
    /// `mainLoop` gets the answers; `tracer` runs on the app thread. Both
    /// must outlive this object.
    UstDomain(EventLoop& mainLoop, UstTracer& tracer) : loop_(mainLoop), tracer_(tracer) {}
    /// The app thread the tracer runs on; set before the first call.
    void setThread(UstAppThread* thread) noexcept { thread_ = thread; }

    std::string_view name() const noexcept override { return "ust"; }
    void start(SessionSnapshot session, Done done) override;
    void stop(std::string idHex, Done done) override;
    void destroy(std::string idHex, Done done) override;
    void enableEvents(std::string idHex, EventRule rule, bool tracesAllUsers, Done done) override;
    void rotate(std::string idHex, PathDone started, PathDone completed) override;
    void recordSnapshot(std::string idHex, uint64_t maxSize, PathDone done) override;
    void setRotationSchedule(std::string idHex, RotationSchedule schedule, PathDone started,
                             PathDone completed, Done done) override;

private:
    /// `f`, called on the app thread, runs on the main loop.
    Done onLoop(Done f);
    PathDone onLoop(PathDone f);

    EventLoop& loop_;
    UstTracer& tracer_;
    UstAppThread* thread_ = nullptr;
};

} // namespace tracectl
