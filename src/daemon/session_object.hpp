// The org.tracectl.Tracing1.Session object of one session
// (/org/tracectl/Tracing1/session/<id>): validates calls, checks the
// caller, drives the domain Session, announces property changes.
#pragma once

#include "session.hpp"
#include "session_adaptor.h"
#include "tracing_backend.hpp"

#include <functional>
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
    /// `session` must outlive this object.
    SessionObject(sdbus::IConnection& bus, Session& session, TracingBackend& backend,
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

private:
    void Start(sdbus::Result<>&& result) override;
    void Stop(sdbus::Result<>&& result) override;
    void Destroy(sdbus::Result<>&& result) override;
    void Rotate(sdbus::Result<std::string>&& result,
                std::map<std::string, sdbus::Variant> options) override;
    void SetRotationSchedule(sdbus::Result<>&& result,
                             std::map<std::string, sdbus::Variant> options) override;
    void RecordSnapshot(sdbus::Result<std::string>&& result,
                        std::map<std::string, sdbus::Variant> options) override;
    /// A rotation (asked for or scheduled) began / ended: State, signals.
    void rotationStarted();
    void rotationEnded(const std::optional<Error>& error, const std::string& path);
    /// What the app thread needs of this session.
    SessionSnapshot snapshot() const;
    /// Throws WrongState for a snapshot session (no chunk to rotate).
    void refuseInSnapshotMode(const char* member) const;
    /// Throws WrongState while a Start/Stop/Destroy is in flight.
    void checkIdle(const char* member) const;
    void AddChannel(const std::string& domain, const std::string& name,
                    const std::map<std::string, sdbus::Variant>& options) override;
    void EnableEvents(sdbus::Result<>&& result, std::string domain, std::string channel,
                      std::string pattern, std::map<std::string, sdbus::Variant> options) override;
    void AddContext(const std::string& domain, const std::string& channel,
                    const std::string& type) override;

    std::string Id() override;
    std::string Name() override;
    uint32_t Owner() override;
    std::string State() override;
    std::string ErrorReason() override;
    std::vector<sdbus::Struct<std::string, std::string>> Contexts() override;
    std::string Mode() override;
    std::string OutputPath() override;
    std::string BufferOwnership() override;
    uint64_t CreationTime() override;
    std::vector<sdbus::Struct<std::string, uint64_t, uint64_t, bool, uint32_t, uint32_t>>
    Channels() override;
    std::vector<
        sdbus::Struct<std::string, std::string, std::string, int32_t, std::vector<std::string>>>
    Events() override;

    /// Throws AccessDenied unless the caller owns the session or is root,
    /// and UnknownObject once retired.
    void checkCaller(const char* member);

    Session& session_;
    TracingBackend& backend_;
    DestroyHandler onDestroy_;
    bool busy_ = false; ///< a Start/Stop/Destroy awaits the app thread
    bool retired_ = false;
    bool rotating_ = false; ///< a Rotate began and has not completed: State "rotating"
};

} // namespace tracectl
