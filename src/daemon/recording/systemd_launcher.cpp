// ConsumerLauncher through systemd's D-Bus API, with sd-bus (libsystemd):
// sdbus-c++ 1.2 cannot speak to a manager's private peer-to-peer socket.
//
// One connection, attached to the loop. Every call is asynchronous
// (sd_bus_call_async, bounded by its reply timeout); a job's completion is
// its JobRemoved signal (Manager.Subscribe), bounded by a loop timer; a
// unit's end is its PropertiesChanged (or JobRemoved) once it is seen
// running. Nothing polls.
//
// Each call under way is an Op, owned by ops_ and found again by its id:
// its slots (unref'd: no callback) and timer die with it, so a launcher
// destroyed with calls under way calls nobody back.
#include "common/error.hpp"
#include "common/lifetime.hpp"
#include "common/log.hpp"
#include "consumer_launcher.hpp"
#include "systemd_bus.hpp"

#include <cstdlib>
#include <cstring>
#include <map>

namespace tracectl {

namespace {

/// How the manager sees a unit.
struct UnitState {
    bool gone = false;      ///< GetUnit failed: not loaded (collected)
    std::string active;     ///< Unit.ActiveState
    std::string result;     ///< Service.Result ("" if unreadable)
    int32_t exitStatus = 0; ///< Service.ExecMainStatus
    bool running() const {
        return active == "active" || active == "activating" || active == "deactivating" ||
               active == "reloading";
    }
    /// "ActiveState failed, Result exit-code, status 3", "its unit is gone".
    std::string describe() const {
        if (gone)
            return "its unit is gone";
        std::string s = "ActiveState " + (active.empty() ? std::string("unknown") : active);
        if (!result.empty())
            s += ", Result " + result;
        if (result == "exit-code")
            s += ", status " + std::to_string(exitStatus);
        return s;
    }
};

UnitState goneUnit() {
    UnitState s;
    s.gone = true;
    return s;
}

/// The system bus (sd-bus's default: $DBUS_SYSTEM_BUS_ADDRESS, else the
/// well-known socket).
std::string systemBusAddress() {
    const char* env = std::getenv("DBUS_SYSTEM_BUS_ADDRESS");
    return env != nullptr && *env != '\0' ? env : "unix:path=/run/dbus/system_bus_socket";
}

/// The error of a reply, "name: message".
std::string errorOf(sd_bus_message* m) {
    const sd_bus_error* e = sd_bus_message_get_error(m);
    if (e == nullptr)
        return "no error";
    return std::string(e->name) + (e->message != nullptr ? std::string(": ") + e->message : "");
}

class SystemdLauncher final : public ConsumerLauncher {
public:
    SystemdLauncher(EventLoop& loop, std::string address, LauncherTimeouts timeouts)
        : loop_(loop), address_(std::move(address)), timeouts_(timeouts) {
        if (const auto why = connect())
            throw Error(ErrorCode::Failed, *why);
    }

    ~SystemdLauncher() override {
        // Slots and timers first: nothing is called back.
        destroying_ = true;
        ops_.clear();
        dropConnection();
    }

    const char* kind() const noexcept override { return "systemd"; }

    void start(const ConsumerSpec& spec, UniqueFd stdinSocket, Done done) override {
        if (const auto why = ensureConnected())
            return later(std::move(done), Error(ErrorCode::Failed, *why));
        SdBusMessagePtr m;
        try {
            m = transientUnitCall(bus_.get(), spec, stdinSocket.get());
        } catch (const Error& e) {
            return later(std::move(done), e);
        }
        const std::string unit = spec.unitName;
        Op& op = newOp(unit);
        op.lost = [done](const std::string& why) { done(Error(ErrorCode::Failed, why)); };
        ++awaitingJobReplies_;
        send(op, m.get(), true, [this, id = op.id, unit, done](sd_bus_message* reply) {
            if (sd_bus_message_is_method_error(reply, nullptr)) {
                finish(id);
                // sd-bus's own on a timeout or a lost connection.
                const bool unanswered =
                    sd_bus_message_is_method_error(reply, SD_BUS_ERROR_NO_REPLY) > 0;
                return done(
                    Error(ErrorCode::Failed, (unanswered ? "no answer from the systemd manager to "
                                                           "StartTransientUnit for "
                                                         : "systemd refused to start ") +
                                                 unit + ": " + errorOf(reply)));
            }
            awaitJob(id, reply, "start", [this, id, unit, done](const std::string& result) {
                // Type=exec: "done" once execve() succeeded.
                if (result == "done") {
                    finish(id);
                    return done(std::nullopt);
                }
                readState(id, [this, id, unit, result, done](const UnitState& s) {
                    finish(id);
                    done(Error(ErrorCode::Failed,
                               unit + " did not start (" + s.describe() + "; job " + result + ")"));
                });
            });
        });
    }

    void stop(const ConsumerSpec& spec, Done done) override {
        if (!done)
            done = [](std::optional<Error>) {};
        if (const auto why = ensureConnected())
            return later(std::move(done), Error(ErrorCode::Failed, *why));
        const std::string unit = spec.unitName;
        sd_bus_message* raw = nullptr;
        if (const int r = sd_bus_message_new_method_call(
                bus_.get(), &raw, systemd::kService, systemd::kPath, systemd::kManager, "StopUnit");
            r < 0 || sd_bus_message_append(raw, "ss", unit.c_str(), "replace") < 0) {
            sd_bus_message_unref(raw);
            return later(std::move(done), Error(ErrorCode::Failed, "StopUnit: cannot build"));
        }
        SdBusMessagePtr m(raw);
        Op& op = newOp(unit);
        op.lost = [done](const std::string& why) { done(Error(ErrorCode::Failed, why)); };
        ++awaitingJobReplies_;
        send(op, m.get(), true, [this, id = op.id, unit, done](sd_bus_message* reply) {
            if (sd_bus_message_is_method_error(reply, nullptr)) {
                // NoSuchUnit: gone already, nothing to let go.
                log::debug("stopping " + unit + ": " + errorOf(reply));
                finish(id);
                return done(std::nullopt);
            }
            awaitJob(id, reply, "stop", [this, id, unit, done](const std::string&) {
                // Down, or failed: nobody reads its Result any more.
                resetFailed(unit);
                finish(id);
                done(std::nullopt);
            });
        });
    }

    void whenEnded(const ConsumerSpec& spec, std::chrono::milliseconds timeout,
                   Ended ended) override {
        if (const auto why = ensureConnected())
            return laterEnded(std::move(ended), "unknown: " + *why);
        const std::string unit = spec.unitName;
        Op& op = newOp(unit);
        const uint64_t id = op.id;
        op.lost = [ended](const std::string& why) { ended("unknown: " + why); };
        op.onUnitChanged = [this, id] { checkEnded(id); };
        // Matched before the state is read: no change falls in between.
        char* path = nullptr;
        if (sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit.c_str(), &path) >= 0) {
            sd_bus_slot* s = nullptr;
            if (sd_bus_match_signal_async(bus_.get(), &s, senderFilter(), path,
                                          "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                          &onPropertiesChanged, nullptr, &op) >= 0)
                op.match.reset(s);
            free(path);
        }
        op.ended = std::move(ended);
        op.deadline = loop_.addTimer(timeout, [this, id, spec] {
            auto done = take(id);
            if (!done)
                return;
            // Still running: whoever waited learns so, and it is stopped.
            auto waiter = std::move(done->ended);
            done.reset();
            waiter(std::nullopt);
            stop(spec, {});
        });
        checkEnded(id);
    }

private:
    struct Op {
        uint64_t id = 0;
        std::string unit;
        SdBusSlotPtr call;                             ///< the round trip under way
        std::function<void(sd_bus_message*)> onReply;  ///< its reply (or error)
        SdBusMessagePtr unsent;                        ///< waiting for the connection
        bool awaitsJobReply = false;                   ///< counted in awaitingJobReplies_
        SdBusSlotPtr match;                            ///< the unit's PropertiesChanged
        EventSourcePtr deadline;                       ///< the job's (or the end's) bound
        std::string job;                               ///< job path awaited, if any
        std::function<void(const std::string&)> onJob; ///< its JobRemoved result
        std::function<void(const std::string&)> lost;  ///< the manager went away
        std::function<void()> onUnitChanged;           ///< whenEnded(): look again
        Ended ended;                                   ///< whenEnded()'s caller
        bool reading = false, dirty = false;           ///< whenEnded(): a read under way
        SystemdLauncher* owner = nullptr;
    };

    /// Connects to the manager and attaches to the loop; the error, if not.
    std::optional<std::string> connect() {
        const std::string where = address_.empty() ? "on the system bus" : "at " + address_;
        const auto fail = [&](const char* what, int r) -> std::optional<std::string> {
            bus_.reset();
            return "the systemd manager " + where + " cannot be reached (" + what + ": " +
                   std::strerror(-r) + ")";
        };
        sd_bus* b = nullptr;
        int r = 0;
        if ((r = sd_bus_new(&b)) < 0)
            return fail("sd_bus_new", r);
        bus_.reset(b);
        // A manager's private socket is peer-to-peer (no Hello); a bus is
        // not. Connected: sd-bus says when the handshake is done.
        const std::string address = address_.empty() ? systemBusAddress() : address_;
        busClient_ = address.find("/systemd/private") == std::string::npos;
        if ((r = sd_bus_set_address(b, address.c_str())) < 0 ||
            (r = sd_bus_set_bus_client(b, busClient_)) < 0 ||
            (r = sd_bus_set_connected_signal(b, 1)) < 0)
            return fail("address", r);
        if ((r = sd_bus_start(b)) < 0)
            return fail("connecting", r);
        if ((r = sd_bus_attach_event(bus_.get(), loop_.get(), SD_EVENT_PRIORITY_NORMAL)) < 0)
            return fail("sd_bus_attach_event", r);
        sd_bus_slot* s = nullptr;
        if ((r = sd_bus_add_filter(bus_.get(), &s, &onLocal, this)) < 0)
            return fail("sd_bus_add_filter", r);
        disconnectedSlot_.reset(s);
        if ((r = sd_bus_match_signal_async(bus_.get(), &s, senderFilter(), systemd::kPath,
                                           systemd::kManager, "JobRemoved", &onJobRemoved, nullptr,
                                           this)) < 0)
            return fail("matching JobRemoved", r);
        jobRemovedSlot_.reset(s);
        // On the system bus the manager sends signals to subscribers only;
        // after the match, so that nothing is missed. No reply wanted.
        if ((r = sd_bus_call_method_async(bus_.get(), nullptr, systemd::kService, systemd::kPath,
                                          systemd::kManager, "Subscribe", nullptr, nullptr, "")) <
            0)
            return fail("Subscribe", r);
        connected_ = true;
        ready_ = false;
        // Bounded: a manager that accepts but never answers the handshake.
        connecting_ = loop_.addTimer(timeouts_.call, [this, where, ms = timeouts_.call.count()] {
            lose("the systemd manager " + where + " did not complete the connection within " +
                 std::to_string(ms) + " ms");
        });
        return std::nullopt;
    }

    /// Connects again once if the connection was lost; the error, if that fails.
    std::optional<std::string> ensureConnected() {
        if (connected_ && bus_ && sd_bus_is_open(bus_.get()) > 0)
            return std::nullopt;
        log::notice("reconnecting to the systemd manager");
        dropConnection();
        return connect();
    }

    /// Lets the connection go, outside of its own dispatch (deferred).
    void dropConnection() {
        connected_ = false;
        jobRemovedSlot_.reset();
        disconnectedSlot_.reset();
        if (!bus_)
            return;
        std::shared_ptr<sd_bus> old(bus_.release(), bus::BusClose{});
        if (destroying_)
            return; // freed now
        loop_.defer([old] {});
    }

    const char* senderFilter() const { return busClient_ ? systemd::kService : nullptr; }

    Op& newOp(const std::string& unit) {
        auto op = std::make_unique<Op>();
        op->id = nextId_++;
        op->unit = unit;
        op->owner = this;
        Op& ref = *op;
        ops_[ref.id] = std::move(op);
        return ref;
    }

    Op* find(uint64_t id) {
        const auto it = ops_.find(id);
        return it == ops_.end() ? nullptr : it->second.get();
    }

    /// Removes op `id` (its slots and timer are freed with it).
    std::unique_ptr<Op> take(uint64_t id) {
        const auto it = ops_.find(id);
        if (it == ops_.end())
            return nullptr;
        std::unique_ptr<Op> op = std::move(it->second);
        ops_.erase(it);
        if (!op->job.empty())
            jobs_.erase(op->job);
        if (op->awaitsJobReply)
            replyCame();
        return op;
    }
    void finish(uint64_t id) { take(id); }

    void replyCame() {
        if (awaitingJobReplies_ > 0 && --awaitingJobReplies_ == 0)
            earlyJobs_.clear(); // nobody could still claim them
    }

    /// Sends `m` for `op`; `onReply` gets the reply or the error (sd-bus
    /// makes one on timeout or disconnection).
    void send(Op& op, sd_bus_message* m, bool createsJob,
              std::function<void(sd_bus_message*)> onReply) {
        op.awaitsJobReply = createsJob;
        op.onReply = std::move(onReply);
        if (!ready_) {
            // sd-bus would block until the connection is up (it must know
            // whether fds may be sent): sent once it is (Connected).
            op.unsent.reset(sd_bus_message_ref(m));
            unsent_.push_back(op.id);
            return;
        }
        sendNow(op, m);
    }

    void sendNow(Op& op, sd_bus_message* m) {
        sd_bus_slot* s = nullptr;
        const int r = sd_bus_call_async(bus_.get(), &s, m, &onCallReply, &op,
                                        static_cast<uint64_t>(timeouts_.call.count()) * 1000);
        if (r < 0) {
            const std::string why =
                std::string("calling the systemd manager: ") + std::strerror(-r);
            const uint64_t id = op.id;
            later([this, id, why] {
                if (auto gone = take(id))
                    gone->lost(why);
            });
            return;
        }
        op.call.reset(s);
    }

    static int onCallReply(sd_bus_message* m, void* userdata, sd_bus_error*) {
        auto& op = *static_cast<Op*>(userdata);
        // The slot stays valid until this returns (sd-bus holds it).
        SdBusSlotPtr slot = std::move(op.call);
        auto handler = std::move(op.onReply);
        // Counted until its handler claimed any JobRemoved that came first.
        const bool counted = std::exchange(op.awaitsJobReply, false);
        SystemdLauncher& self = *op.owner;
        handler(m); // may free op
        if (counted)
            self.replyCame();
        return 0;
    }

    /// A job was created (the reply `reply` names it): `onJob` gets its
    /// JobRemoved result, or the op fails at the job deadline.
    void awaitJob(uint64_t id, sd_bus_message* reply, const char* what,
                  std::function<void(const std::string&)> onJob) {
        Op* op = find(id);
        const char* job = nullptr;
        if (op == nullptr)
            return;
        if (sd_bus_message_read(reply, "o", &job) < 0) {
            auto gone = take(id);
            return gone->lost("the systemd manager's reply names no job");
        }
        if (const auto early = earlyJobs_.find(job); early != earlyJobs_.end()) {
            const std::string result = early->second;
            earlyJobs_.erase(early);
            return onJob(result);
        }
        op->job = job;
        op->onJob = std::move(onJob);
        jobs_[op->job] = id;
        op->deadline = loop_.addTimer(timeouts_.job, [this, id, what = std::string(what),
                                                      ms = timeouts_.job.count()] {
            if (auto gone = take(id))
                gone->lost("the systemd manager did not finish the " + what + " job of " +
                           gone->unit + " within " + std::to_string(ms) + " ms (no JobRemoved)");
        });
    }

    static int onJobRemoved(sd_bus_message* m, void* userdata, sd_bus_error*) {
        auto& self = *static_cast<SystemdLauncher*>(userdata);
        uint32_t jobId = 0;
        const char* job = nullptr;
        const char* unit = nullptr;
        const char* result = nullptr;
        if (sd_bus_message_read(m, "uoss", &jobId, &job, &unit, &result) < 0)
            return 0;
        if (const auto it = self.jobs_.find(job); it != self.jobs_.end()) {
            if (Op* op = self.find(it->second)) {
                op->deadline.reset();
                op->job.clear();
                self.jobs_.erase(it);
                auto onJob = std::move(op->onJob);
                onJob(result);
            }
        } else if (self.awaitingJobReplies_ > 0) {
            // Before the reply naming it: kept for that reply.
            self.earlyJobs_[job] = result;
        }
        // whenEnded(): a job of the unit ended (its stop, say): look again.
        std::vector<uint64_t> watching;
        for (const auto& [id, op] : self.ops_)
            if (op->onUnitChanged && op->unit == unit)
                watching.push_back(id);
        for (const uint64_t id : watching)
            if (Op* op = self.find(id))
                op->onUnitChanged();
        return 0;
    }

    static int onPropertiesChanged(sd_bus_message*, void* userdata, sd_bus_error*) {
        auto& op = *static_cast<Op*>(userdata);
        if (op.onUnitChanged)
            op.onUnitChanged();
        return 0;
    }

    /// The local signals: Connected (sd_bus_set_connected_signal(3)) sends
    /// what waited for it; Disconnected fails what is under way.
    static int onLocal(sd_bus_message* m, void* userdata, sd_bus_error*) {
        auto& self = *static_cast<SystemdLauncher*>(userdata);
        if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Connected") > 0) {
            self.ready_ = true;
            self.connecting_.reset();
            for (const uint64_t id : std::exchange(self.unsent_, {}))
                if (Op* op = self.find(id); op != nullptr && op->unsent) {
                    SdBusMessagePtr unsent = std::move(op->unsent);
                    self.sendNow(*op, unsent.get());
                }
            return 0;
        }
        if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected") <= 0)
            return 0;
        self.lose("the connection to the systemd manager was lost");
        return 0;
    }

    /// Fails everything under way; the next start() connects again.
    void lose(const std::string& why) {
        SystemdLauncher& self = *this;
        log::warning(why);
        self.connected_ = false;
        self.ready_ = false;
        self.unsent_.clear();
        self.connecting_.reset();
        // Calls awaiting a reply had theirs (an error) from sd-bus already;
        // the rest fail now.
        std::vector<uint64_t> ids;
        for (const auto& [id, op] : self.ops_)
            ids.push_back(id);
        for (const uint64_t id : ids)
            if (auto op = self.take(id))
                op->lost(why);
        self.earlyJobs_.clear();
        self.awaitingJobReplies_ = 0;
        // Nothing more from that connection (freed once out of its dispatch).
        self.dropConnection();
    }

    /// Reads the unit's ActiveState, Result and ExecMainStatus for op `id`.
    void readState(uint64_t id, std::function<void(const UnitState&)> then) {
        Op* op = find(id);
        if (op == nullptr)
            return;
        sd_bus_message* raw = nullptr;
        if (sd_bus_message_new_method_call(bus_.get(), &raw, systemd::kService, systemd::kPath,
                                           systemd::kManager, "GetUnit") < 0 ||
            sd_bus_message_append(raw, "s", op->unit.c_str()) < 0) {
            sd_bus_message_unref(raw);
            return then(goneUnit());
        }
        SdBusMessagePtr m(raw);
        send(*op, m.get(), false, [this, id, then](sd_bus_message* reply) {
            const char* path = nullptr;
            if (sd_bus_message_is_method_error(reply, nullptr) ||
                sd_bus_message_read(reply, "o", &path) < 0)
                return then(goneUnit());
            auto state = std::make_shared<UnitState>();
            readProperty(id, path, systemd::kUnit, "ActiveState",
                         [=, this, p = std::string(path)](sd_bus_message* activeReply) {
                             const char* active = nullptr;
                             if (activeReply != nullptr &&
                                 sd_bus_message_read(activeReply, "v", "s", &active) >= 0)
                                 state->active = active;
                             readResult(id, p, state, then);
                         });
        });
    }

    /// readState()'s second half: Service.Result and ExecMainStatus.
    void readResult(uint64_t id, const std::string& path, std::shared_ptr<UnitState> state,
                    std::function<void(const UnitState&)> then) {
        readProperty(
            id, path, systemd::kServiceIface, "Result", [=, this](sd_bus_message* resultReply) {
                const char* result = nullptr;
                if (resultReply != nullptr &&
                    sd_bus_message_read(resultReply, "v", "s", &result) >= 0)
                    state->result = result;
                readProperty(id, path, systemd::kServiceIface, "ExecMainStatus",
                             [state, then](sd_bus_message* statusReply) {
                                 int32_t status = 0;
                                 if (statusReply != nullptr &&
                                     sd_bus_message_read(statusReply, "v", "i", &status) >= 0)
                                     state->exitStatus = status;
                                 then(*state);
                             });
            });
    }

    /// Properties.Get; `then` gets the reply, or nullptr on an error.
    void readProperty(uint64_t id, const std::string& path, const char* iface, const char* name,
                      std::function<void(sd_bus_message*)> then) {
        Op* op = find(id);
        if (op == nullptr)
            return;
        sd_bus_message* raw = nullptr;
        if (sd_bus_message_new_method_call(bus_.get(), &raw, systemd::kService, path.c_str(),
                                           "org.freedesktop.DBus.Properties", "Get") < 0 ||
            sd_bus_message_append(raw, "ss", iface, name) < 0) {
            sd_bus_message_unref(raw);
            return then(nullptr);
        }
        SdBusMessagePtr m(raw);
        send(*op, m.get(), false, [then](sd_bus_message* reply) {
            then(sd_bus_message_is_method_error(reply, nullptr) ? nullptr : reply);
        });
    }

    /// whenEnded(): reads the unit's state; done once it is down.
    void checkEnded(uint64_t id) {
        Op* op = find(id);
        if (op == nullptr)
            return;
        if (op->reading) {
            op->dirty = true; // read again once this read is answered
            return;
        }
        op->reading = true;
        readState(id, [this, id](const UnitState& s) {
            Op* live = find(id);
            if (live == nullptr)
                return;
            live->reading = false;
            if (s.running()) {
                // Changed while it was read: read again; else its
                // PropertiesChanged or JobRemoved comes.
                if (std::exchange(live->dirty, false))
                    checkEnded(id);
                return;
            }
            auto done = take(id);
            // A failed unit is kept (CollectMode=inactive) so that its
            // Result can be read: now it may go.
            if (s.active == "failed")
                resetFailed(done->unit);
            auto ended = std::move(done->ended);
            done.reset();
            ended(s.describe());
        });
    }

    /// ResetFailedUnit, no reply wanted.
    void resetFailed(const std::string& unit) {
        if (!connected_)
            return;
        if (const int r = sd_bus_call_method_async(
                bus_.get(), nullptr, systemd::kService, systemd::kPath, systemd::kManager,
                "ResetFailedUnit", nullptr, nullptr, "s", unit.c_str());
            r < 0)
            log::debug("ResetFailedUnit " + unit + ": " + std::strerror(-r));
    }

    /// Calls `f` from the loop, unless the launcher is gone by then.
    void later(std::function<void()> f) { loop_.defer(lifetime_.guard(std::move(f))); }
    void later(Done done, std::optional<Error> e) {
        if (done)
            later([done = std::move(done), e = std::move(e)] { done(e); });
    }
    void laterEnded(Ended ended, std::string reason) {
        later([ended = std::move(ended), reason = std::move(reason)] { ended(reason); });
    }

    EventLoop& loop_;
    const std::string address_;
    const LauncherTimeouts timeouts_;
    SdBusPtr bus_;
    bool busClient_ = true;
    bool connected_ = false;
    bool ready_ = false;           ///< Connected came: sends go out at once
    EventSourcePtr connecting_;    ///< the bound of the handshake
    std::vector<uint64_t> unsent_; ///< ops whose message waits for Connected
    bool destroying_ = false;
    SdBusSlotPtr disconnectedSlot_;
    SdBusSlotPtr jobRemovedSlot_;
    uint64_t nextId_ = 1;
    std::map<uint64_t, std::unique_ptr<Op>> ops_;
    std::map<std::string, uint64_t> jobs_;         ///< job path -> op awaiting its JobRemoved
    std::map<std::string, std::string> earlyJobs_; ///< job path -> result, before its reply
    int awaitingJobReplies_ = 0; ///< StartTransientUnit/StopUnit replies not yet in
    Lifetime lifetime_;          ///< last: gone first
};

} // namespace

std::unique_ptr<ConsumerLauncher> makeSystemdLauncher(EventLoop& loop, const std::string& address,
                                                      LauncherTimeouts timeouts) {
    return std::make_unique<SystemdLauncher>(loop, address, timeouts);
}

} // namespace tracectl
