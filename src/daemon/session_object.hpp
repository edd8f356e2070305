// The org.tracectl.Tracing1.Session object of one session
// (/org/tracectl/Tracing1/session/<id>): validates calls, checks the
// caller, drives the domain Session, announces property changes.
#pragma once

#include "auth/call_options.hpp"
#include "auth/polkit_authority.hpp"
#include "auth/read_call_tracker.hpp"
#include "session.hpp"
#include "session_adaptor.h"
#include "tracing_backend.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <sdbus-c++/sdbus-c++.h>

namespace tracectl {

/// Object path of a session: kManagerPath + "/session/" + 32 hex digits.
std::string sessionObjectPath(const SessionId& id);

class SessionObject final
    : public sdbus::AdaptorInterfaces<org::tracectl::Tracing1::Session_adaptor,
                                      sdbus::Properties_adaptor, sdbus::ManagedObject_adaptor> {
public:
    /// Called when a client destroys the session; must unlink and free this
    /// object only after the current call returns (see EventLoop::defer()).
    using DestroyHandler = std::function<void(const SessionId&)>;

    /// Registers the object on `bus` and announces it (InterfacesAdded).
    /// `session` and `authority` must outlive this object. Every method is
    /// authorized with `authority` (auth/access_policy.hpp).
    SessionObject(sdbus::IConnection& bus, Session& session, TracingBackend& backend,
                  auth::PolkitAuthority& authority, const auth::ReadCallTracker& readers,
                  DestroyHandler onDestroy);
    /// Announces the removal (InterfacesRemoved) unless already done, and
    /// unregisters the object.
    ~SessionObject();
    SessionObject(const SessionObject&) = delete;
    SessionObject& operator=(const SessionObject&) = delete;

    /// Emits InterfacesRemoved; later calls get UnknownObject until the
    /// object is freed.
    void retire();
    /// The session's consumer died: state "error" (announced), reason logged.
    void fail(const std::string& reason);

    /// May the sender of the message being handled read this object's
    /// properties? Only checked for Properties.Get/GetAll calls (not for
    /// the daemon's own PropertiesChanged announcements): the owner, root,
    /// and callers with a cached manage-all-sessions grant may.
    bool readableByCurrentCaller() const;

private:
    using Pending = std::shared_ptr<sdbus::Result<>>;
    void Start(sdbus::Result<>&& result, std::map<std::string, sdbus::Variant> options) override;
    void Stop(sdbus::Result<>&& result, std::map<std::string, sdbus::Variant> options) override;
    void Destroy(sdbus::Result<>&& result, std::map<std::string, sdbus::Variant> options) override;
    void AddChannel(sdbus::Result<>&& result, std::string domain, std::string name,
                    std::map<std::string, sdbus::Variant> options) override;
    void EnableEvents(sdbus::Result<>&& result, std::string domain, std::string channel,
                      std::string pattern, std::map<std::string, sdbus::Variant> options) override;
    void AddContext(sdbus::Result<>&& result, std::string domain, std::string channel,
                    std::string type, std::map<std::string, sdbus::Variant> options) override;
    void Rotate(sdbus::Result<std::string>&& result,
                std::map<std::string, sdbus::Variant> options) override;
    void SetRotationSchedule(sdbus::Result<>&& result,
                             std::map<std::string, sdbus::Variant> options) override;

    void doStart(const Pending& pending);
    void doStop(const Pending& pending);
    void doDestroy(const Pending& pending);
    void doRotate(const std::shared_ptr<sdbus::Result<std::string>>& pending);
    void doSetRotationSchedule(const Pending& pending, const RotationSchedule& schedule);
    void doRecordSnapshot(const std::shared_ptr<sdbus::Result<std::string>>& pending,
                          uint64_t maxSize);
    void RecordSnapshot(sdbus::Result<std::string>&& result,
                        std::map<std::string, sdbus::Variant> options) override;
    /// A rotation (asked for or scheduled) began / ended: State, signals.
    void rotationStarted();
    void rotationEnded(const std::optional<Error>& error, const std::string& path);
    /// `caller` held trace-all-users (or not): then the rule goes to the app thread.
    void doEnableEvents(const Pending& pending, std::string domain, std::string channel,
                        std::string pattern, std::map<std::string, sdbus::Variant> options);

    /// Authorizes the call being handled: trace-own on the caller's own
    /// session, manage-all-sessions on another's, and `extra` too if set
    /// (trace-kernel); then runs `next` on the loop, unless the session went
    /// away meanwhile (UnknownObject). A denial, or an sdbus::Error thrown by
    /// `next`, answers `pending`.
    /// For a method whose only option is "interactive": reads it, then
    /// authorizes (trace-own or manage-all-sessions) and runs `work`.
    template <typename... R>
    void authorizeWithOnlyInteractive(
        const char* member, sdbus::Result<R...>&& result, const auth::CallOptions& options,
        void (SessionObject::*work)(const std::shared_ptr<sdbus::Result<R...>>&));
    /// `P`: a shared_ptr to the sdbus::Result of the call.
    template <typename P>
    void authorize(const char* member, bool interactive, std::optional<auth::Action> extra,
                   P pending, std::function<void(const auth::Caller&)> next);
    /// Runs `work`; if it throws, answers `pending` with the error and
    /// returns false.
    template <typename P>
    static bool guarded(const char* member, const P& pending, const std::function<void()>& work);
    /// What the app thread needs of this session.
    SessionSnapshot snapshot() const;
    /// Throws WrongState for a snapshot session (no chunk to rotate).
    void refuseInSnapshotMode(const char* member) const;
    /// Throws WrongState while a Start/Stop/Destroy is in flight.
    void checkIdle(const char* member) const;
    /// Throws AccessDenied from a property getter if readableByCurrentCaller() is false.
    void checkReader() const;

    std::string Id() override;
    std::string Name() override;
    uint32_t Owner() override;
    std::string State() override;
    std::string ErrorReason() override;
    std::vector<sdbus::Struct<std::string, std::string>> Contexts() override;
    bool TracesAllUsers() override;
    std::string Mode() override;
    std::string OutputPath() override;
    std::string BufferOwnership() override;
    uint64_t CreationTime() override;
    std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t>>
    Channels() override;
    std::vector<
        sdbus::Struct<std::string, std::string, std::string, int32_t, std::vector<std::string>>>
    Events() override;

    Session& session_;
    TracingBackend& backend_;
    auth::PolkitAuthority& authority_;
    const auth::ReadCallTracker& readers_;
    DestroyHandler onDestroy_;
    /// Expires with this object: answers arriving later see it gone.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    bool busy_ = false; ///< a Start/Stop/Destroy awaits the app thread
    bool retired_ = false;
    bool rotating_ = false; ///< a Rotate began and has not completed: State "rotating"
};

} // namespace tracectl
