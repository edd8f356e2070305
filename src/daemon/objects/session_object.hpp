// The org.tracectl.Tracing1.Session object of one session
// (/org/tracectl/Tracing1/session/<id>): a view of the Session (the state
// machine, session/session.hpp). It reads the calls' arguments, checks the
// caller with polkit, hands the call to the Session and answers with its
// outcome; its properties are read from the Session, and the Session's
// change notifications become PropertiesChanged and signals for the peers
// that may see it. Served through the ObjectSubtree the ManagerObject
// registers for every session. Main loop only.
#pragma once

#include "auth/call_options.hpp"
#include "bus/change_throttle.hpp"
#include "bus/method_reply.hpp"
#include "bus/object_vtable.hpp"
#include "common/lifetime.hpp"
#include "objects/bus_services.hpp"
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

class SessionObject final : private SessionListener {
public:
    /// Called when a client destroys the session; must unlink and free this
    /// object only after the current call returns (see EventLoop::defer()).
    using DestroyHandler = std::function<void(const SessionId&)>;
    using Pending = std::shared_ptr<bus::MethodReply>;

    /// Announces the object (InterfacesAdded) to the peers that may see
    /// it, and listens to `session`. `session` and `services` must outlive
    /// this object. Every method is authorized with services.authority
    /// (auth/access_policy.hpp).
    SessionObject(bus::BusServices& services, Session& session, DestroyHandler onDestroy);
    /// `f` is called after each change a restarted daemon would need
    /// (everything but Statistics and RingBufferSize): the manager saves
    /// the session's state then.
    void onPersistentChange(std::function<void()> f) { persist_ = std::move(f); }
    /// Announces the removal (InterfacesRemoved) unless already done.
    ~SessionObject();
    SessionObject(const SessionObject&) = delete;
    SessionObject& operator=(const SessionObject&) = delete;

    /// Emits InterfacesRemoved; later calls get UnknownObject until the
    /// object is freed.
    void retire();
    /// The session this object shows.
    Session& session() noexcept { return session_; }

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
    static const bus::Property<SessionObject> kProperties[23];

private:
    static int onStart(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onStop(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onDestroy(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onAddChannel(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onEnableEvents(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onAddContext(sd_bus_message* m, void* userdata, sd_bus_error* error);
    // session_object_disable.cpp
    static int onDisableEvents(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onDisableChannel(sd_bus_message* m, void* userdata, sd_bus_error* error);
    // session_tracking_methods.cpp: TrackProcessAttribute, UntrackProcessAttribute.
    static int onTrackProcessAttribute(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onUntrackProcessAttribute(sd_bus_message* m, void* userdata, sd_bus_error* error);
    /// Both methods: `track` says which. Reads (domain, attribute, values,
    /// options {all b, interactive b}), authorizes as EnableEvents does
    /// (trace-own / manage-all-sessions, trace-kernel for "kernel"; when
    /// the owner tracks, whether it holds trace-all-users is asked
    /// without interaction, as EnableEvents does), then changes the Session.
    void changeTracker(bool track, const Pending& pending, std::string domain,
                       std::string attribute, std::vector<uint32_t> values,
                       auth::CallOptions options);
    /// The ProcessAttributeTrackers property: a(ssbau).
    static void appendTrackers(sd_bus_message* m, const ProcessTrackers& trackers);
    static int onRotate(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onClear(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onSaveConfiguration(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onSetRotationSchedule(sd_bus_message* m, void* userdata, sd_bus_error* error);
    static int onRecordSnapshot(sd_bus_message* m, void* userdata, sd_bus_error* error);

    void addChannel(const Pending& pending, std::string domain, std::string name,
                    auth::CallOptions options);
    void enableEvents(const Pending& pending, std::string domain, std::string channel,
                      std::string pattern, auth::CallOptions options);
    void addContext(const Pending& pending, std::string domain, std::string channel,
                    std::string type, const auth::CallOptions& options);
    /// Session.DisableEvents / DisableChannel: authorized as EnableEvents
    /// (trace-own or manage-all-sessions, and trace-kernel for "kernel"),
    /// answered once the domains applied it.
    void disableEvents(const Pending& pending, std::string domain, std::string channel,
                       std::string pattern, const auth::CallOptions& options);
    void disableChannel(const Pending& pending, std::string domain, std::string channel,
                        const auth::CallOptions& options);
    void setRotationSchedule(const Pending& pending, auth::CallOptions options);
    void recordSnapshot(const Pending& pending, auth::CallOptions options);

    /// Session.Start: authorized as the others (trace-own or
    /// manage-all-sessions), plus trace-kernel when the session has kernel
    /// channels.
    void start(const Pending& pending, const auth::CallOptions& options);
    void doStart(const Pending& pending);
    void doStop(const Pending& pending);
    void doDestroy(const Pending& pending);
    void doRotate(const Pending& pending);
    void doClear(const Pending& pending);
    /// SaveConfiguration: the session as LTTng's session XML, and the
    /// warnings for what that cannot hold (save_load/session_description_of.hpp).
    void doSaveConfiguration(const Pending& pending);
    void doRecordSnapshot(const Pending& pending, uint64_t maxSize);
    /// Throws Error(KernelUnavailable) for the kernel domain where it cannot run.
    void checkKernelAvailable(TracingDomain d) const;
    /// A userspace probe's file is opened and resolved for `caller`
    /// (kernel/userspace_probe_target.hpp) before the session gets the rule.
    void doEnableEvents(const Pending& pending, const auth::Caller& caller, std::string domain,
                        std::string channel, std::string pattern, auth::CallOptions options);

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
    /// A Done that answers `pending`: nothing more, or the error (and
    /// UnknownObject if this object went away meanwhile).
    Session::Done answer(const Pending& pending);
    /// Answers `pending` as calls to a destroyed session are answered
    /// (UnknownObject, "the session was destroyed").
    static void answerDestroyed(const Pending& pending);

    // SessionListener
    void changed(const std::vector<SessionChange>& what) override;
    void rotationEnded(const std::optional<Error>& error, const std::string& path) override;
    void snapshotRecorded(const std::string& path) override;

    /// Sends `member` with `body` from this object to the peers that may see it.
    void signal(const char* interface, const char* member, const bus::SignalSender::Body& body);
    /// PropertiesChanged with the new values of `names`.
    void propertiesChanged(const std::vector<std::string>& names);

    bus::BusServices& services_;
    Session& session_;
    DestroyHandler onDestroy_;
    std::function<void()> persist_;
    bool retired_ = false;
    /// Statistics and ChannelStatistics are told at most once a second.
    bus::ChangeThrottle statisticsChanged_;
    /// Last (gone first): answers arriving once this object is gone do
    /// nothing, or say "the session was destroyed".
    Lifetime lifetime_;
};

} // namespace tracectl
