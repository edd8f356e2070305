// The answer to one D-Bus method call, given once, now or later: tracectld's
// methods authorize with polkit and wait for the tracer before they
// answer, so every handler keeps one of these (in a shared_ptr) until then.
#pragma once

#include "bus/sd_bus_handles.hpp"

#include <functional>
#include <sdbus-c++/Error.h>
#include <string>
#include <vector>

namespace tracectl::bus {

class MethodReply {
public:
    /// Keeps a reference to `call`, the method call message to answer.
    explicit MethodReply(sd_bus_message* call);
    /// A call never answered is answered with org.freedesktop.DBus.Error.Failed
    /// (and logged), so no client waits for its timeout.
    ~MethodReply();
    MethodReply(const MethodReply&) = delete;
    MethodReply& operator=(const MethodReply&) = delete;

    /// Replies with no value.
    void returnResults();
    /// Replies with one string (s).
    void returnResults(const std::string& value);
    /// Replies with one object path (o).
    void returnObjectPath(const std::string& path);
    /// Replies with an array of object paths (ao).
    void returnObjectPaths(const std::vector<std::string>& paths);
    /// Replies with what `append` appends to the reply (sd_bus_message_append(3)
    /// calls matching the method's out signature); an exception from it
    /// answers Error.Failed instead.
    void returnWith(const std::function<void(sd_bus_message*)>& append);
    /// Replies with the error `e` (its name and message).
    void returnError(const sdbus::Error& e);

    bool answered() const noexcept { return answered_; }
    /// Did the caller set ALLOW_INTERACTIVE_AUTHORIZATION on the call (the
    /// D-Bus message flag; busctl sets it by default)?
    bool allowsInteractiveAuthorization() const noexcept {
        return sd_bus_message_get_allow_interactive_authorization(call_.get()) > 0;
    }
    /// The call being answered.
    sd_bus_message* call() const noexcept { return call_.get(); }

private:
    MessagePtr call_;
    bool answered_ = false;
};

} // namespace tracectl::bus
