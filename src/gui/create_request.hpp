// What the create-session dialog asks for, and the Manager.CreateSession options it becomes.
// No GTK: tested in tests/unit/gui_create_request_test.cpp. The daemon checks every value.
#pragma once

#include <map>
#include <sdbus-c++/Types.h>
#include <string>

namespace tracectl::gui {

/// The dialog's fields, as typed and chosen.
struct CreateRequest {
    std::string name;                        ///< the session name, as typed
    std::string outputFolder;                ///< "" = the daemon's default folder
    std::string relayUrl;                    ///< "" = a local session; else "url" (net://...)
    std::string mode = "normal";             ///< "normal", "snapshot" or "live"
    std::string bufferOwnership = "per-uid"; ///< "per-uid" or "per-pid"
    bool countEvents = true;                 ///< the Events/s column needs the daemon's count

    bool operator==(const CreateRequest&) const = default;
};

/// The options a{sv} of Manager.CreateSession for `request`: "mode" (s) and
/// "buffer-ownership" (s) always; "output-path" (s) and "url" (s) when not empty;
/// "count-events" (b) true only when asked. Values are passed as typed: the daemon validates
/// and words the errors.
std::map<std::string, sdbus::Variant> createOptions(const CreateRequest& request);

} // namespace tracectl::gui
