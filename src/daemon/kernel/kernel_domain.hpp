// The "kernel" domain backend (session/domain_backend.hpp): kernel
// tracepoints and system calls through tracefs (ftrace), recorded by the
// session's consumer (its recording's: recording/recordings.hpp) into
// `<output>/kernel/` in lttng-modules' layout, on CLOCK_MONOTONIC ("mono")
// like LTTng-UST, so that the two domains merge into one timeline.
//
// Per session: one tracefs instance per kernel channel
// (kernel/session_instances.hpp). At the first Start the instances are
// made, the events enabled (tracing still off), the per-CPU trace_pipe_raw
// fds opened, then the consumer gets the kernel metadata channel and one
// data channel per kernel channel with its fds (CreateKernelChannel), the
// event conversions and the metadata, and tracing goes on. Stop turns
// tracing off, then has the consumer read every buffer to its end
// (FlushChannel). Rotation and snapshots are the recording's: its Rotate
// and RecordSnapshot cover every channel of the consumer, the kernel's
// included. Destroy has the consumer close the kernel
// channels (their fds), then removes the instances. Every instance made is
// written down first (kernel/instance_ledger.hpp): a daemon that starts
// after a crash removes those its predecessor left, and never another
// daemon's; with them the session's userspace probes (uprobe_events group
// tracectl_<id>: session_instances.hpp).
//
// Threads: called on the main loop, answers there. Every tracefs access
// (blocking: mkdir of an instance allocates its buffers) runs on the
// executor "tc-tracefs", one job at a time, with the session's
// SessionInstances, which nothing else touches; results are posted back.
// The steps of one session run one after the other (a queue per session),
// in the order they were asked for.
#pragma once

#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "common/lifetime.hpp"
#include "kernel/instance_ledger.hpp"
#include "kernel/kernel_support.hpp"
#include "recording/recording_domain.hpp"
#include "recording/recordings.hpp"
#include "session/domain_backend.hpp"
#include "session/session_statistics.hpp"

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracectl {

namespace kernel {
class SessionInstances;
class Tracefs;
class TracepointCatalog;
} // namespace kernel

class KernelDomain final : public DomainBackend, public KernelSupport, public RecordingDomain {
public:
    /// `loop` gets every answer; `recordings` holds each session's
    /// consumer (outliving this). Finds tracefs now (mounting it if needed) and
    /// removes the instances an earlier daemon left: blocking, at daemon
    /// start only.
    /// `ledger`: where the instances made are written down (the instance's
    /// run directory; empty: nowhere, and nothing is cleaned at start).
    /// `keptForTakeover(idHex)`: whether session `idHex`'s consumer was kept
    /// across a restart (ConsumerFdStore::has()): its instances, still
    /// recording, are left for resume() to take over, not removed; call
    /// releaseUnclaimed() once the sessions were restored.
    KernelDomain(EventLoop& loop, Recordings& recordings, std::filesystem::path ledger,
                 std::function<bool(const std::string& idHex)> keptForTakeover = nullptr);
    ~KernelDomain() override;
    KernelDomain(const KernelDomain&) = delete;
    KernelDomain& operator=(const KernelDomain&) = delete;

    /// At daemon exit, once the consumers' connections are closed (they
    /// drain and exit, closing the fds they hold): removes every instance,
    /// waiting up to a few seconds for the fds to go. Those still held stay
    /// in the ledger for the next start. Call once, after the loop ran.
    void shutdown();
    /// The instances left for a takeover that no resume() claimed (their
    /// session was not taken over) are removed as any an earlier daemon
    /// left. Call once, after the sessions were restored.
    void releaseUnclaimed();

    // KernelSupport
    std::optional<std::string> unavailableReason() override { return unavailable_; }
    void listTracepoints(TracepointsDone done) override;

    // DomainBackend
    std::string_view name() const noexcept override { return "kernel"; }
    void start(SessionSnapshot session, Done done) override;
    /// A restarted daemon takes the session over: once its consumer has
    /// archived what the previous daemon recorded (the consumer closed
    /// that daemon's channels), the session's instances, still there with
    /// what their buffers hold, get new channels in the next chunk, and
    /// tracing goes on if `active`. Instances missing are made anew.
    void resume(SessionSnapshot session, bool active, Done done) override;
    void stop(std::string idHex, Done done) override;
    void destroy(std::string idHex, Done done) override;
    void enableEvents(std::string idHex, EventRule rule, bool tracesAllUsers, Done done) override;
    /// In the session's queue of steps: SessionInstances::setRulesEnabled().
    void setEventRulesEnabled(std::string idHex, std::vector<EventRule> rules, bool enabled,
                              Done done) override;
    /// In the session's queue of steps: SessionInstances::setChannelEnabled().
    void setChannelEnabled(std::string idHex, TracingDomain domain, std::string channel,
                           bool enabled, Done done) override;
    /// Only trackers that admit every process: Session refuses the kernel
    /// ones (tracefs cannot filter by uid or gid); InvalidArgument otherwise.
    void setProcessTrackers(std::string idHex, ProcessTrackers trackers, bool tracesAllUsers,
                            Done done) override;

    // RecordingDomain: the kernel's metadata is whole at each step, so a
    // chunk may close at any time; a failed recording takes the instances.
    void beforeChunkCloses(const std::string& idHex, Ready ready) override;
    void afterChunkBoundary(const std::string& idHex) override;
    void recordingFailed(const std::string& idHex, const std::string& why) override;

private:
    struct Traced;
    /// One step of a session: run it, call `finished` once it is over.
    using Step = std::function<void(std::function<void()> finished)>;
    /// Queues `step` for `t`; runs it at once if none runs.
    void enqueue(Traced& t, Step step);
    void runNext(const std::string& idHex);
    Traced* find(const std::string& idHex, std::uint64_t serial);
    /// `job` on the executor with the shared catalog and tracefs, then
    /// `then(error)` on the loop.
    void onExecutor(std::function<void(kernel::Tracefs&, kernel::TracepointCatalog&)> job,
                    std::function<void(std::optional<Error>)> then);
    /// In `idHex`'s queue of steps, `job` on the executor with the
    /// session's instances (nothing if the session has none yet: its next
    /// start's snapshot carries the change), then `done` on the loop.
    void onSessionInstances(
        const std::string& idHex,
        std::function<void(kernel::SessionInstances&, kernel::TracepointCatalog&)> job, Done done);
    /// The first start's work: instances, then the consumer's channels.
    void prepare(Traced& t, std::function<void(std::optional<Error>)> done);
    /// prepare()'s second half, once the session's clock offset is known.
    void prepareInstances(Traced& t, std::int64_t clockOffset,
                          std::function<void(std::optional<Error>)> done);
    /// Tracing on or off in every instance of `t`.
    void setTracing(Traced& t, bool on, std::function<void(std::optional<Error>)> done);
    /// Removes `t`'s instances (on the executor); a removal that fails
    /// (the consumer still holds fds) is retried every second for a while.
    /// `tried` (if given) once the first attempt is over.
    void removeInstances(std::shared_ptr<kernel::SessionInstances> instances, int attemptsLeft,
                         std::function<void()> tried = nullptr);
    /// The consumer is gone or going: nothing of `idHex` reads any more.
    void consumerGone(const std::string& idHex);
    /// Tries the instances an earlier daemon left (staleLeft_) again in a
    /// second, up to `attemptsLeft` times.
    void retryStale(int attemptsLeft);
    /// Crosses instance base name `name` out of the ledger (executor only).
    void forgetInstance(const std::string& name);
    /// Removes the left-over instances of base name `name` (executor, or the
    /// constructor); true, and crossed out, once none is left. `quiet`: a
    /// failure is logged at debug level (a retry).
    bool removeLeftOver(const kernel::Tracefs& fs, const std::string& name, bool quiet = false);
    /// SessionInstances::checkRule() on the executor, `done` on the loop.
    void checkRule(const EventRule& rule, Done done);

    EventLoop& loop_;
    Recordings& recordings_;
    std::optional<std::string> unavailable_;
    /// Touched by executor jobs only (one at a time: one thread).
    std::unique_ptr<kernel::Tracefs> tracefs_;
    std::unique_ptr<kernel::TracepointCatalog> catalog_;
    std::optional<std::vector<KernelTracepointInfo>> listed_; ///< the loop's cache
    std::map<std::string, std::unique_ptr<Traced>> sessions_;
    std::uint64_t nextSerial_ = 1;
    std::vector<std::string> staleLeft_; ///< instances of an earlier daemon not removed yet
    /// Instances of sessions whose consumer was kept (the constructor's
    /// keptForTakeover), until resume() claims them or releaseUnclaimed().
    std::vector<std::string> heldForTakeover_;
    /// `name` (an instance base name) joins staleLeft_, retried from now.
    void removeLater(const std::string& name);
    kernel::InstanceLedger ledger_; ///< used by executor jobs (and the constructor)
    EventSourcePtr staleTimer_;
    Executor executor_{1, "tc-tracefs"}; // its jobs end before the rest goes
    /// Last (gone first, before the executor's jobs end): answers and
    /// outcomes that come back once the domain is gone do nothing.
    Lifetime lifetime_;
};

} // namespace tracectl
