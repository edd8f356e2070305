// ConsumerLauncher through systemd's D-Bus API, with sd-bus (libsystemd):
// sdbus-c++ 1.2 cannot speak to a manager's private peer-to-peer socket.
#include "common/error.hpp"
#include "common/log.hpp"
#include "consumer_launcher.hpp"

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <pwd.h>
#include <systemd/sd-bus.h>
#include <thread>
#include <vector>

namespace tracectl {

namespace {

/// The login name of `uid` (getpwuid_r(3)), if it has one.
std::optional<std::string> userNameOf(uid_t uid) {
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* found = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    return std::string(found->pw_name);
}

struct BusUnref {
    void operator()(sd_bus* b) const noexcept { sd_bus_flush_close_unref(b); }
};
struct MessageUnref {
    void operator()(sd_bus_message* m) const noexcept { sd_bus_message_unref(m); }
};
using BusPtr = std::unique_ptr<sd_bus, BusUnref>;
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

/// sd_bus_error with RAII.
struct BusError {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    ~BusError() { sd_bus_error_free(&e); }
    std::string text(int r) const {
        return e.message != nullptr ? std::string(e.name) + ": " + e.message : std::strerror(-r);
    }
};

void check(int r, const char* what) {
    if (r < 0)
        throw Error(ErrorCode::Failed, std::string(what) + ": " + std::strerror(-r));
}

constexpr const char* kSystemd = "org.freedesktop.systemd1";
constexpr const char* kSystemdPath = "/org/freedesktop/systemd1";
constexpr const char* kManagerIface = "org.freedesktop.systemd1.Manager";
constexpr uint64_t kCallTimeoutUs = 10'000'000;

class SystemdLauncher final : public ConsumerLauncher {
public:
    explicit SystemdLauncher(const std::string& address) {
        sd_bus* b = nullptr;
        if (address.empty()) {
            check(sd_bus_open_system(&b), "connecting to the system bus");
            bus_.reset(b);
            return;
        }
        check(sd_bus_new(&b), "sd_bus_new");
        bus_.reset(b);
        check(sd_bus_set_address(b, address.c_str()), "systemd address");
        // A manager's private socket is peer-to-peer (no Hello); a bus is not.
        check(sd_bus_set_bus_client(b, address.find("/systemd/private") == std::string::npos),
              "sd_bus_set_bus_client");
        check(sd_bus_start(b), ("connecting to the systemd manager at " + address).c_str());
    }

    const char* kind() const noexcept override { return "systemd"; }

    void start(const ConsumerSpec& spec, UniqueFd stdinSocket) override {
        sd_bus_message* raw = nullptr;
        check(sd_bus_message_new_method_call(bus_.get(), &raw, kSystemd, kSystemdPath,
                                             kManagerIface, "StartTransientUnit"),
              "StartTransientUnit");
        MessagePtr m(raw);
        check(sd_bus_message_append(m.get(), "ss", spec.unitName.c_str(), "fail"), "append");
        check(sd_bus_message_open_container(m.get(), 'a', "(sv)"), "append");
        // By name when it has one: systemd then gives the unit the user's
        // supplementary groups too (getgrouplist(3) of that name), so the
        // consumer may write where the owner may through a group.
        const std::string uid = userNameOf(spec.uid).value_or(std::to_string(spec.uid));
        const std::string gid = std::to_string(spec.gid);
        const std::string description = "tracectl consumer (" + spec.unitName + ")";
        check(sd_bus_message_append(
                  m.get(), "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s",
                  description.c_str(), "Type", "s", "exec", "User", "s", uid.c_str(), "Group", "s",
                  gid.c_str(), "StandardInputFileDescriptor", "h", stdinSocket.get(),
                  "StandardOutput", "s", "journal", "StandardError", "s", "journal", "CollectMode",
                  "s", "inactive", "NoNewPrivileges", "b", 1, "ProtectSystem", "s", "strict",
                  "PrivateNetwork", "b", 1, "ReadWritePaths", "as", 1, spec.outputDir.c_str()),
              "append properties");
        // Exit status 3 is the consumer's "the daemon went away" (it drained
        // and closed everything first, tracectl-consumerd(8)): not a failure
        // for systemd to keep the unit loaded for.
        check(sd_bus_message_append(m.get(), "(sv)", "SuccessExitStatus", "(aiai)", 1, 3, 0),
              "append SuccessExitStatus");
        // Every stream holds fds (shm, wakeup, its file and index): a per-PID
        // session of many apps needs far more than the default soft 1024.
        check(sd_bus_message_append(m.get(), "(sv)(sv)", "LimitNOFILE", "t", uint64_t{65536},
                                    "LimitNOFILESoft", "t", uint64_t{65536}),
              "append LimitNOFILE");
        if (spec.memoryMax != 0)
            check(sd_bus_message_append(m.get(), "(sv)", "MemoryMax", "t", spec.memoryMax),
                  "append MemoryMax");
        // ExecStart: a(sasb) = [(path, argv, ignore-failure)].
        check(sd_bus_message_open_container(m.get(), 'r', "sv"), "append");
        check(sd_bus_message_append(m.get(), "s", "ExecStart"), "append");
        check(sd_bus_message_open_container(m.get(), 'v', "a(sasb)"), "append");
        check(sd_bus_message_open_container(m.get(), 'a', "(sasb)"), "append");
        check(sd_bus_message_open_container(m.get(), 'r', "sasb"), "append");
        check(sd_bus_message_append(m.get(), "s", spec.binary.c_str()), "append");
        check(sd_bus_message_open_container(m.get(), 'a', "s"), "append");
        check(sd_bus_message_append(m.get(), "s", spec.binary.c_str()), "append");
        for (const auto& a : spec.args)
            check(sd_bus_message_append(m.get(), "s", a.c_str()), "append");
        check(sd_bus_message_close_container(m.get()), "append"); // as
        check(sd_bus_message_append(m.get(), "b", 0), "append");
        for (int i = 0; i < 5; ++i) // (sasb), a(sasb), v, (sv), a(sv)
            check(sd_bus_message_close_container(m.get()), "append");
        check(sd_bus_message_append(m.get(), "a(sa(sv))", 0), "append");

        BusError error;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call(bus_.get(), m.get(), kCallTimeoutUs, &error.e, &reply);
        MessagePtr replyPtr(reply);
        if (r < 0)
            throw Error(ErrorCode::Failed,
                        "systemd refused to start " + spec.unitName + ": " + error.text(r));
        // Type=exec: "active" only once execve() succeeded.
        // The job runs asynchronously: wait (bounded) until the unit runs.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        std::string state;
        while (std::chrono::steady_clock::now() < deadline) {
            state = activeState(spec.unitName);
            if (state == "active")
                return;
            // The unit exists once StartTransientUnit returned; gone again
            // means it failed and was collected (CollectMode=).
            // "inactive" is also the state before the start job runs.
            if (state == "failed" || state.empty())
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        throw Error(ErrorCode::Failed, spec.unitName + " did not start (ActiveState " +
                                           (state.empty() ? "unknown" : state) + ")");
    }

    void stop(const ConsumerSpec& spec) override {
        BusError error;
        sd_bus_message* reply = nullptr;
        const int r =
            sd_bus_call_method(bus_.get(), kSystemd, kSystemdPath, kManagerIface, "StopUnit",
                               &error.e, &reply, "ss", spec.unitName.c_str(), "replace");
        sd_bus_message_unref(reply);
        if (r < 0)
            log::debug("stopping " + spec.unitName + ": " + error.text(r));
        // StopUnit only queues the job: once the unit is down (bounded: its
        // stop timeout is systemd's), if it failed, nobody reads its Result
        // any more. On the launcher executor: blocking is fine there.
        (void)waitStopped(spec, std::chrono::milliseconds(5000));
        resetFailed(spec.unitName);
    }

    void resetFailed(const std::string& unit) {
        BusError error;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call_method(bus_.get(), kSystemd, kSystemdPath, kManagerIface,
                                         "ResetFailedUnit", &error.e, &reply, "s", unit.c_str());
        sd_bus_message_unref(reply);
        if (r < 0)
            log::debug("ResetFailedUnit " + unit + ": " + error.text(r));
    }

    bool running(const ConsumerSpec& spec) override {
        const std::string s = activeState(spec.unitName);
        return s == "active" || s == "activating" || s == "reloading" || s == "deactivating";
    }

    std::string stopReason(const ConsumerSpec& spec) override {
        const std::string path = unitPath(spec.unitName);
        const std::string state =
            path.empty() ? ""
                         : stringProperty(path, "org.freedesktop.systemd1.Unit", "ActiveState");
        if (state.empty())
            return "its unit is gone";
        // org.freedesktop.systemd1(5): Service.Result is "success", "exit-code",
        // "signal", "core-dump", "timeout", ...
        const std::string result =
            stringProperty(path, "org.freedesktop.systemd1.Service", "Result");
        // A failed unit is kept (CollectMode=inactive) so that its Result can
        // be read: now it may go.
        if (state == "failed")
            resetFailed(spec.unitName);
        return "ActiveState " + state + (result.empty() ? "" : ", Result " + result);
    }

private:
    /// The unit's object path, or "" if the manager does not know it (collected).
    std::string unitPath(const std::string& unit) {
        BusError error;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call_method(bus_.get(), kSystemd, kSystemdPath, kManagerIface,
                                         "GetUnit", &error.e, &reply, "s", unit.c_str());
        MessagePtr replyPtr(reply);
        const char* path = nullptr;
        if (r < 0 || sd_bus_message_read(reply, "o", &path) < 0)
            return "";
        return path;
    }

    /// A string property of the unit at `path`, or "" if it cannot be read.
    std::string stringProperty(const std::string& path, const char* iface, const char* name) {
        char* value = nullptr;
        BusError error;
        if (sd_bus_get_property_string(bus_.get(), kSystemd, path.c_str(), iface, name, &error.e,
                                       &value) < 0)
            return "";
        std::string out = value;
        free(value);
        return out;
    }

    /// The unit's ActiveState, or "" if the manager does not know it (collected).
    std::string activeState(const std::string& unit) {
        const std::string path = unitPath(unit);
        return path.empty() ? ""
                            : stringProperty(path, "org.freedesktop.systemd1.Unit", "ActiveState");
    }

    BusPtr bus_;
};

} // namespace

std::unique_ptr<ConsumerLauncher> makeSystemdLauncher(const std::string& address) {
    return std::make_unique<SystemdLauncher>(address);
}

} // namespace tracectl
