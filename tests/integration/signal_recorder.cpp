#include "signal_recorder.hpp"

#include "daemon_hello.hpp"

#include <map>

namespace tracectl::test {

namespace {

std::string describe(const sdbus::Variant& v) {
    if (v.containsValueOfType<std::string>())
        return v.get<std::string>();
    if (v.containsValueOfType<uint32_t>())
        return std::to_string(v.get<uint32_t>());
    if (v.containsValueOfType<uint64_t>())
        return std::to_string(v.get<uint64_t>());
    if (v.containsValueOfType<bool>())
        return v.get<bool>() ? "true" : "false";
    return "<" + v.peekValueType() + ">";
}

} // namespace

SignalRecorder::SignalRecorder() : bus_(sdbus::createSystemBusConnection()) {
    match_ = bus_->addMatch(
        "type='signal',sender='org.tracectl.Tracing1',path_namespace='/org/tracectl/Tracing1'",
        [this](sdbus::Message& msg) { onSignal(msg); });
    bus_->enterEventLoopAsync();
    // tracectld sends signals only to connections that have called it: call
    // it once (which also orders the call after our AddMatch at the bus, so
    // the match is installed before anyone acts).
    helloDaemon(*bus_);
}

SignalRecorder::~SignalRecorder() {
    bus_->leaveEventLoop();
}

void SignalRecorder::onSignal(sdbus::Message& msg) {
    const std::string member = msg.getMemberName();
    std::vector<std::string> lines;
    if (member == "InterfacesAdded") {
        sdbus::ObjectPath path;
        std::map<std::string, std::map<std::string, sdbus::Variant>> ifaces;
        msg >> path >> ifaces;
        for (const auto& [iface, props] : ifaces)
            if (iface.rfind("org.freedesktop.DBus.", 0) != 0)
                lines.push_back("InterfacesAdded " + std::string(path) + " " + iface);
    } else if (member == "InterfacesRemoved") {
        sdbus::ObjectPath path;
        std::vector<std::string> ifaces;
        msg >> path >> ifaces;
        for (const auto& iface : ifaces)
            if (iface.rfind("org.freedesktop.DBus.", 0) != 0)
                lines.push_back("InterfacesRemoved " + std::string(path) + " " + iface);
    } else if (member == "PropertiesChanged") {
        std::string iface;
        std::map<std::string, sdbus::Variant> changed;
        std::vector<std::string> invalidated;
        msg >> iface >> changed >> invalidated;
        for (const auto& [name, value] : changed)
            lines.push_back("PropertiesChanged " + msg.getPath() + " " + name + "=" +
                            describe(value));
    } else if (member == "RotationCompleted" || member == "RotationFailed" ||
               member == "SnapshotRecorded") {
        std::string archive;
        msg >> archive;
        lines.push_back(member + " " + msg.getPath() + " " + archive);
    } else {
        lines.push_back(member + " " + msg.getPath());
    }
    std::lock_guard lock(mutex_);
    lines_.insert(lines_.end(), lines.begin(), lines.end());
    changed_.notify_all();
}

std::vector<std::string> SignalRecorder::waitFor(std::size_t count,
                                                 std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return lines_.size() >= count; });
    return lines_;
}

bool SignalRecorder::waitUntil(const std::function<bool(const std::vector<std::string>&)>& holds,
                               std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return holds(lines_); });
}

} // namespace tracectl::test
