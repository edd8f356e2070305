// The org.tracectl.Tracing1.Session object of one session
// (/org/tracectl/Tracing1/session/<id>): validates calls, checks the
// caller, drives the domain Session, announces changes to the peers that
// may see the session. Served through the ObjectSubtree the ManagerObject
// registers for every session.
#pragma once

#include "auth/call_options.hpp"
#include "bus/bus_services.hpp"
#include "bus/method_reply.hpp"
#include "bus/object_vtable.hpp"
#include "objects/tracing_backend.hpp"
#include "session/session.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <span>

namespace tracectl {

/// Object path of a session: kManagerPath + "/session/" + 32 hex digits.
std::string sessionObjectPath(const SessionId& id);
/// The parent of every session object: kManagerPath + "/session".
std::string sessionPathPrefix();

inline constexpr const char* kSessionInterface = "org.tracectl.Tracing1.Session";

class SessionObject final {
public:
    /// Called when a client destroys the session; must unlink and free this
    /// object only after the current call returns (see EventLoop::defer()).
    using DestroyHandler = std::function<void(const SessionId&)>;
    using Pending = std::shared_ptr<bus::MethodReply>;

    /// Announces the object (InterfacesAdded) to the peers that may see
    /// it. `session` and `services` must outlive this object. Every method
    /// is authorized with services.authority (auth/access_policy.hpp).
    SessionObject(bus::BusServices& services, Session& session, TracingBackend& backend,
                  DestroyHandler onDestroy);
    /// Announces the removal (InterfacesRemoved) unless already done.
    ~SessionObject();
    SessionObject(const SessionObject&) = delete;
    SessionObject& operator=(const SessionObject&) = delete;

    /// Emits InterfacesRemoved; later calls get UnknownObject until the
    /// object is freed.
    void retire();
    /// The session's consumer died, stopped answering or refused a request:
    /// state "error" (announced), reason logged.
    void fail(const std::string& reason);
    /// The tracer's count of the bytes the session's ring buffers take now
    /// (RingBufferSize); announced if it changed.
    void setRingBufferSize(uint64_t bytes);

    /// May `caller` see this session (list it, read its properties, get
    /// its signals)? Root, the owner, and callers whose manage-all-sessions
    /// grant is cached. Never asks polkit.
    bool visibleTo(const auth::Caller& caller) const;
    uid_t owner() const noexcept { return session_.config().owner; }
    std::string path() const { return sessionObjectPath(session_.id()); }

    /// The methods and signals of the Session interface (no START/END);
    /// userdata: the SessionObject. With kProperties, the whole interface
    /// (bus::buildVtable<SessionObject>).
    static std::span<const sd_bus_vtable> members();
    static const bus::Property<SessionObject> kProperties[14];

private:
    static int onStart(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onStop(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onDestroy(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onAddChannel(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onEnableEvents(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onAddContext(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onRotate(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onSetRotationSchedule(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onRecordSnapshot(sd_bus_message* m, void* userdata, sd_bus_error* error);

    void AddChannel(const Pending& pending, std::string domain, std::string name,
                    auth::CallOptions options);
    void EnableEvents(const Pending& pending, std::string domain, std::string channel,
                      std::string pattern, auth::CallOptions options);
    void AddContext(const Pending& pending, std::string domain, std::string channel,
                    std::string type, const auth::CallOptions& options);
    void SetRotationSchedule(const Pending& pending, auth::CallOptions options);
    void RecordSnapshot(const Pending& pending, auth::CallOptions options);

    void doStart(const Pending& pending);
    void doStop(const Pending& pending);
    void doDestroy(const Pending& pending);
    void doRotate(const Pending& pending);
    void doSetRotationSchedule(const Pending& pending, const RotationSchedule& schedule);
    void doRecordSnapshot(const Pending& pending, uint64_t maxSize);
    /// A rotation (asked for or scheduled) began / ended: State, signals.
    void rotationStarted();
    void rotationEnded(const std::optional<Error>& error, const std::string& path);
    void doEnableEvents(const Pending& pending, std::string domain, std::string channel,
                        std::string pattern, auth::CallOptions options);

    /// For a method whose only option is "interactive": reads it, then
    /// authorizes (trace-own or manage-all-sessions) and runs `work`.
    void authorizeWithOnlyInteractive(const char* member, const Pending& pending,
                                      const auth::CallOptions& options,
                                      void (SessionObject::*work)(const Pending&));
    /// Authorizes the call `pending` answers: trace-own on the caller's own
    /// session, manage-all-sessions on another's, and `extra` too if set
    /// (trace-kernel); then runs `next` on the loop, unless the session went
    /// away meanwhile (UnknownObject). A denial, or an error thrown by
    /// `next`, answers `pending`.
    void authorize(const char* member, bool interactive, std::optional<auth::Action> extra,
                   const Pending& pending, std::function<void(const auth::Caller&)> next);
    /// Runs `work`; if it throws, answers `pending` with the error and
    /// returns false.
    static bool guarded(const char* member, const Pending& pending,
                        const std::function<void()>& work);
    /// What the app thread needs of this session.
    SessionSnapshot snapshot() const;
    /// Throws WrongState for a snapshot session (no chunk to rotate).
    void refuseInSnapshotMode(const char* member) const;
    /// Throws WrongState while a Start/Stop/Destroy is in flight, or a
    /// snapshot unless `evenDuringSnapshot` (Destroy: accepted in every
    /// state; the snapshot then fails, saying the session was destroyed).
    void checkIdle(const char* member, bool evenDuringSnapshot = false) const;

    /// Sends `member` with `body` from this object to the peers that may see it.
    void signal(const char* interface, const char* member, const bus::SignalSender::Body& body);
    /// PropertiesChanged with the new values of `names`.
    void propertiesChanged(const std::vector<std::string>& names);

    std::string state() const;

    bus::BusServices& services_;
    Session& session_;
    TracingBackend& backend_;
    DestroyHandler onDestroy_;
    /// Expires with this object: answers arriving later see it gone.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    bool busy_ = false;           ///< a Start/Stop/Destroy awaits the tracer
    bool snapshotting_ = false;   ///< a RecordSnapshot awaits the tracer
    bool destroying_ = false;     ///< a Destroy awaits the tracer
    uint64_t ringBufferSize_ = 0; ///< RingBufferSize
    bool retired_ = false;
    bool rotating_ = false; ///< a Rotate began and has not completed: State "rotating"
};

} // namespace tracectl
