// tracectld: the tracing session daemon. Wires the bus connection, the
// session registry, the D-Bus objects, the app registration, the sessions'
// recordings and the two domains (the UST tracer, the kernel domain) to the
// main loop (this thread's sd-event loop, which owns all their state), and
// starts the notify thread, which answers the apps' metadata registrations.
// Every other thread runs blocking calls and owns nothing but its job:
// - the app strands "tc-apps" (ust_tracer.hpp, app_strands.hpp) and one
//   worker per registering app's version query (ust_app_registrar.hpp);
// - "tc-objects", "tc-foldermake" and "tc-relay" (recordings.hpp);
// - "tc-foldercheck" and "tc-relayprobe" (manager_object.hpp);
// - "tc-tracefs" (kernel_domain.hpp) and "tc-ipagg" (ip_aggregations.hpp).
#include "apps/app_socket.hpp"
#include "apps/ust_app_registrar.hpp"
#include "auth/polkit_authority.hpp"
#include "auth/visibility_gate.hpp"
#include "bus/bus_call.hpp"
#include "common/cli_parse.hpp"
#include "common/event_loop.hpp"
#include "common/log.hpp"
#include "common/log_options.hpp"
#include "config.h"
#include "kernel/kernel_domain.hpp"
#include "objects/application_directory.hpp"
#include "objects/bus_services.hpp"
#include "objects/manager_object.hpp"
#include "recording/recordings.hpp"
#include "restart/consumer_fd_store.hpp"
#include "service/instance_lock.hpp"
#include "service/service_manager.hpp"
#include "session/session_registry.hpp"
#include "ust/notify_thread.hpp"
#include "ust/ust_domain.hpp"
#include "ust/ust_tracer.hpp"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

namespace {

/// Exit statuses, in the spirit of sysexits(3) / systemd.exec(5).
/// 0, 1 and 2 are the command-line contract of tracectl::parseAndRun.
enum Exit : int {
    ExitOk = tracectl::kCommandLineOk,
    ExitFailure = tracectl::kCommandLineFailure, // runtime failure (bus lost, ...)
    ExitUsage = tracectl::kCommandLineUsage,     // bad command line
    ExitNameTaken = 3,                           // another daemon owns the bus name
    ExitLocked = 4, // another tracectld holds this instance's lock file
};

struct Options {
    bool user = false;
    std::string busAddress;
    tracectl::log::Options log;
    std::string lttngHome;
    std::string appSocket;
    std::string waitShm;
    std::string spawner = "systemd";
    std::string systemdAddress;
    uint64_t consumerMemoryMax = 0;
    std::string autoLoadDir;
    bool noAutoLoad = false;
    std::string stateDir;
};

/// tracectl-consumerd: $TRACECTL_CONSUMERD, else the installed one.
std::string consumerBinary() {
    const char* env = std::getenv("TRACECTL_CONSUMERD");
    return env != nullptr && *env != '\0' ? env : TRACECTL_CONSUMERD_PATH;
}

/// Where apps connect: the system instance's global endpoints, or the
/// per-user ones of $LTTNG_HOME (else $HOME) for --user or --lttng-home.
tracectl::AppEndpoints appEndpoints(const Options& o) {
    using tracectl::AppEndpoints;
    AppEndpoints e = AppEndpoints::system();
    if (!o.lttngHome.empty()) {
        e = AppEndpoints::user(o.lttngHome, geteuid());
    } else if (o.user) {
        const char* home = std::getenv("LTTNG_HOME");
        if (home == nullptr || *home == '\0')
            home = std::getenv("HOME");
        e = AppEndpoints::user(home != nullptr ? home : "/", geteuid());
    }
    if (!o.appSocket.empty())
        e.socketPath = o.appSocket;
    if (!o.waitShm.empty())
        e.waitShm = o.waitShm;
    return e;
}

/// The instance's run directory (its lock file lives there): /run/lttng for
/// the system instance, $LTTNG_HOME/.lttng (else $HOME/.lttng) per user.
std::string runDirectory(const Options& o) {
    if (!o.lttngHome.empty())
        return o.lttngHome + "/.lttng";
    if (o.user) {
        const char* home = std::getenv("LTTNG_HOME");
        if (home == nullptr || *home == '\0')
            home = std::getenv("HOME");
        return std::string(home != nullptr ? home : "") + "/.lttng";
    }
    return "/run/lttng";
}

/// The session files loaded at start: --auto-load-dir, else LTTng's
/// folders (lttng-sessiond(8)): /etc/lttng/sessions/auto for the system
/// instance, $LTTNG_HOME/.lttng/sessions/auto (else $HOME/...) per user.
std::string autoLoadDirectory(const Options& o) {
    if (!o.autoLoadDir.empty())
        return o.autoLoadDir;
    if (!o.lttngHome.empty() || o.user)
        return runDirectory(o) + "/sessions/auto";
    return "/etc/lttng/sessions/auto";
}

/// Where each session's state is kept across restarts (restart/session_store.hpp):
/// --state-dir, else $RUNTIME_DIRECTORY/sessions (the unit's
/// RuntimeDirectory=), else <run directory>/tracectld-sessions.
std::string stateDirectory(const Options& o) {
    if (!o.stateDir.empty())
        return o.stateDir;
    if (const char* runtime = std::getenv("RUNTIME_DIRECTORY"); runtime != nullptr && *runtime) {
        const std::string first(runtime, std::strcspn(runtime, ":"));
        return first + "/sessions";
    }
    return runDirectory(o) + "/tracectld-sessions";
}

/// D-Bus address escaping (bytes outside [-0-9A-Za-z_/.] become %XX).
std::string escapeAddressValue(const std::string& s) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '/' || c == '.') {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xF];
        }
    }
    return out;
}

/// The systemd manager consumers are started with: --systemd-address, else
/// for --user the user manager's private socket ($XDG_RUNTIME_DIR/systemd/
/// private), else "" (systemd on the system bus).
std::string systemdAddress(const Options& o) {
    if (!o.systemdAddress.empty() || !o.user)
        return o.systemdAddress;
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    if (runtime == nullptr || *runtime == '\0')
        return o.systemdAddress;
    return "unix:path=" + escapeAddressValue(std::string(runtime) + "/systemd/private");
}

/// Ends the loop with ExitFailure, logged, once the bus connection is lost
/// (sd-bus then dispatches org.freedesktop.DBus.Local.Disconnected).
int onBusMessage(sd_bus_message* m, void* userdata, sd_bus_error*) {
    if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected") > 0) {
        tracectl::log::error("lost the connection to the bus; exiting (sessions are dropped, "
                             "what they wrote stays on disk)");
        static_cast<tracectl::EventLoop*>(userdata)->exit(ExitFailure);
    }
    return 0;
}

/// The bus tracectld serves: --bus-address, else the session bus for
/// --user, else the system bus ($DBUS_SYSTEM_BUS_ADDRESS if set). Throws
/// std::system_error.
tracectl::bus::BusPtr connect(const Options& o) {
    using tracectl::bus::check;
    sd_bus* raw = nullptr;
    if (o.busAddress.empty()) {
        check(o.user ? sd_bus_open_user(&raw) : sd_bus_open_system(&raw), "sd_bus_open");
        return tracectl::bus::BusPtr(raw);
    }
    check(sd_bus_new(&raw), "sd_bus_new");
    tracectl::bus::BusPtr bus(raw);
    check(sd_bus_set_address(raw, o.busAddress.c_str()), "sd_bus_set_address");
    check(sd_bus_set_bus_client(raw, 1), "sd_bus_set_bus_client");
    check(sd_bus_start(raw), "sd_bus_start");
    return bus;
}

int run(const Options& o) {
    using namespace tracectl;
    log::init("tracectld", log::targetOf(o.log), log::levelOf(o.log));

    EventLoop loop;
    // A log reader that went away must not kill the daemon.
    std::signal(SIGPIPE, SIG_IGN);
    loop.onSignals({SIGTERM, SIGINT, SIGHUP}, [&](int sig) {
        if (sig == SIGHUP) {
            log::info("received SIGHUP; there is no configuration to reload, ignored");
            return;
        }
        log::info(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + ", exiting");
        loop.exit(ExitOk);
    });

    // One daemon per run directory, decided before anything else is touched.
    InstanceLock::Busy busy;
    std::optional<InstanceLock> lock;
    try {
        lock = InstanceLock::tryAcquire(InstanceLock::pathIn(runDirectory(o)), busy);
    } catch (const std::exception& e) {
        log::error(std::string("cannot take the instance lock: ") + e.what());
        return ExitFailure;
    }
    if (!lock) {
        log::error("another tracectld already runs for this instance" +
                   (busy.holder ? " (pid " + std::to_string(*busy.holder) + ")" : std::string()) +
                   ": it holds the lock " + busy.path + "; not starting a second one");
        return ExitLocked;
    }
    ActivationSockets passed;
    try {
        passed = takeActivationSockets();
    } catch (const std::exception& e) {
        log::error(std::string("cannot take the sockets passed by systemd: ") + e.what());
        return ExitFailure;
    }

    bus::BusPtr bus;
    try {
        bus = connect(o);
        bus::check(sd_bus_attach_event(bus.get(), loop.get(), SD_EVENT_PRIORITY_NORMAL),
                   "sd_bus_attach_event");
    } catch (const std::exception& e) {
        log::error("cannot connect to the " +
                   std::string(o.busAddress.empty() ? (o.user ? "session" : "system") : "given") +
                   " bus: " + e.what());
        return ExitFailure;
    }
    RecordingConfig recordingConfig;
    recordingConfig.consumerBinary = consumerBinary();
    recordingConfig.useSystemd = o.spawner == "systemd";
    recordingConfig.systemdAddress = systemdAddress(o);
    recordingConfig.daemonVersion = TRACECTL_VERSION;
    recordingConfig.consumerMemoryMax = o.consumerMemoryMax;
    // The consumer connections a previous daemon kept (RESTARTS in
    // tracectld(8)), and where this one keeps its own.
    ConsumerFdStore fdStore(std::move(passed.consumerConnections));
    recordingConfig.fdStore = &fdStore;
    // Each session's recording (its consumer, chunks, rotations,
    // snapshots); the domains add their channels to it.
    Recordings recordings(recordingConfig);
    TracerConfig tracerConfig;
    tracerConfig.consumerMemoryMax = o.consumerMemoryMax;
    UstTracer tracer(tracerConfig, recordings);
    UstDomain ust(loop, tracer);
    // The instances of sessions whose consumer was kept are taken over
    // with them (KernelDomain::resume()), not removed.
    KernelDomain kernel(loop, recordings, runDirectory(o) + "/kernel-instances",
                        [&fdStore](const std::string& idHex) { return fdStore.has(idHex); });
    recordings.addDomain(kernel);
    recordings.addDomain(tracer);
    SessionRegistry registry(homeFromPasswd, std::chrono::system_clock::now, {&kernel, &ust},
                             &recordings);
    bus::SlotPtr disconnectWatch;
    {
        sd_bus_slot* slot = nullptr;
        if (const int r = sd_bus_add_filter(bus.get(), &slot, &onBusMessage, &loop); r < 0) {
            log::error(std::string("cannot watch the bus connection: ") + std::strerror(-r));
            return ExitFailure;
        }
        disconnectWatch.reset(slot);
    }
    bus::PeerDirectory peers(bus.get());
    bus::SignalSender signals(bus.get(), peers);
    auth::PolkitAuthority authority(bus.get(),
                                    o.user ? std::optional<uid_t>(geteuid()) : std::nullopt);
    peers.onPeerGone([&authority](const std::string& name) { authority.forget(name); });
    bus::BusServices services{bus.get(), peers, signals, authority, &kernel};
    ApplicationDirectory apps(services, loop);
    // Before the manager, which writes to it until it goes.
    const SessionStore store(stateDirectory(o));
    ManagerObject manager(services, registry, apps, loop);
    bus::VisibilityGate visibilityGate(bus.get(), peers, authority);

    if (const int r = sd_bus_request_name(bus.get(), kBusName, 0); r < 0) {
        log::error(std::string("cannot own ") + kBusName +
                   " (is another tracectld running?): " + std::strerror(-r));
        return ExitNameTaken;
    }
    const AppEndpoints endpoints = appEndpoints(o);
    const bool socketActivated = static_cast<bool>(passed.appSocket);
    UniqueFd appListener = std::move(passed.appSocket);
    try {
        if (!appListener)
            appListener = listenForApps(endpoints.socketPath);
    } catch (const std::exception& e) {
        log::error(std::string("cannot listen for LTTng-UST applications: ") + e.what());
        return ExitFailure;
    }
    NotifyThread notify(
        [&tracer](UstApp& app) { return tracer.handleNotify(app); },
        [&loop, &tracer](pid_t pid) { loop.post([&tracer, pid] { tracer.onAppGone(pid); }); });
    UstAppRegistrar registrar(
        loop, std::move(appListener),
        [&loop, &apps](std::shared_ptr<UstApp> app) {
            loop.post([&apps, app = std::move(app)]() mutable { apps.add(std::move(app)); });
        },
        [&notify, &tracer](const std::shared_ptr<UstApp>& app, std::function<void()> ready) {
            notify.watch(app);
            tracer.onAppRegistered(app, std::move(ready));
        });
    tracer.boundExchanges(&registrar.deadlines());
    // A consumer that dies, stops answering or refuses something puts its
    // session in state error, with its unit's ActiveState/Result as the
    // reason. Before the D-Bus loop runs: no session exists until then.
    const auto watch = [&registrar](int fd, std::function<void()> onHangUp, uint32_t events) {
        return registrar.watchHangUp(fd, std::move(onHangUp), events);
    };
    tracer.attach(loop, watch);
    recordings.attach(loop, watch,
                      [&loop, &manager](const std::string& id, const std::string& why) {
                          loop.post([&manager, id, why] { manager.sessionFailed(id, why); });
                      });
    recordings.onStatistics([&manager](const std::string& id, const std::string& domain,
                                       const DomainStatistics& statistics) {
        // Told on the main loop already, where the manager lives.
        manager.sessionStatistics(id, domain, statistics);
    });
    tracer.onBufferSize([&loop, &manager](const std::string& id, uint64_t bytes) {
        loop.post([&manager, id, bytes] { manager.sessionBufferSize(id, bytes); });
    });
    apps.setCommandRunner(
        [&tracer](pid_t pid, std::function<void()> job) { tracer.withApp(pid, std::move(job)); });
    // Apps already waiting for a session daemon come now.
    WaitShm wakeUp(endpoints.waitShm);
    // Sessions of the daemon before this one first, then the session files.
    // The tracefs instances no takeover claimed go once every takeover
    // answered (the kernel domain's resume() comes after its session's
    // recording was taken over).
    manager.keepStateIn(store, &fdStore, [&kernel] { kernel.releaseUnclaimed(); });
    for (const std::string& id : fdStore.dropUntaken())
        log::notice("restart: no session " + id + " to take over the consumer connection " +
                    "systemd kept for it; closed (its consumer drains its buffers and exits)");
    if (!o.noAutoLoad)
        manager.autoLoad(autoLoadDirectory(o), geteuid());
    log::notice(std::string("tracectld ") + TRACECTL_VERSION + " ready, serving " + kBusName +
                "; LTTng-UST apps connect to " + endpoints.socketPath +
                (socketActivated ? " (socket passed by systemd)" : ""));
    notifyReady(std::string("Serving ") + kBusName + "; LTTng-UST apps connect to " +
                endpoints.socketPath);
    const int code = loop.run();
    notifyStopping("Shutting down");
    // Announce the objects' removal while the name is still ours.
    manager.retireAll();
    apps.clear();
    // The consumers' connections close first (each drains and exits,
    // closing the kernel buffers' fds it holds), so that the kernel
    // domain's instances can go.
    tracer.dropAll();
    recordings.dropAll();
    kernel.shutdown();
    // Fails only if the bus is gone already: nothing to release then.
    sd_bus_release_name(bus.get(), kBusName);
    return code;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"tracectld - tracing session daemon: LTTng-UST sessions as D-Bus objects",
                 "tracectld"};
    app.set_version_flag("--version", std::string("tracectld ") + TRACECTL_VERSION);
    auto* user = app.add_flag(
        "--user", o.user, "Serve the session bus (per-user instance) instead of the system bus");
    app.add_option("--bus-address", o.busAddress,
                   "Serve the bus at this D-Bus address (e.g. unix:path=/run/x/bus)")
        ->excludes(user);
    app.add_option("--lttng-home", o.lttngHome,
                   "Serve the per-user app endpoints of this LTTNG_HOME folder "
                   "(DIR/.lttng/lttng-ust-sock-8, /lttng-ust-wait-8-<euid>)")
        ->type_name("DIR");
    app.add_option("--app-socket", o.appSocket,
                   "Listen for LTTng-UST apps at this path (default: /run/lttng/lttng-ust-sock-8; "
                   "with --user, $LTTNG_HOME/.lttng/lttng-ust-sock-8)")
        ->type_name("PATH");
    app.add_option("--wait-shm", o.waitShm,
                   "Name of the wake-up shared memory page apps wait on (default: "
                   "/lttng-ust-wait-8; per-user: /lttng-ust-wait-8-<euid>)")
        ->type_name("NAME");
    app.add_option("--spawner", o.spawner,
                   "How session consumers start: systemd (a transient service per session) or "
                   "direct (fork/exec, where no systemd manager answers)")
        ->check(CLI::IsMember({"systemd", "direct"}));
    app.add_option("--systemd-address", o.systemdAddress,
                   "D-Bus address of the systemd manager to start consumers with (default: "
                   "$TRACECTL_SYSTEMD_ADDRESS, else with --user the user manager "
                   "$XDG_RUNTIME_DIR/systemd/private, else systemd on the system bus)")
        ->type_name("ADDR")
        ->envname("TRACECTL_SYSTEMD_ADDRESS");
    app.add_option("--consumer-memory-max", o.consumerMemoryMax,
                   "MemoryMax= of every session's consumer unit (bytes, or with a K, M, G or T "
                   "suffix, 1024-based; default: none). A session whose ring buffers would need "
                   "more is refused at Start, and a consumer killed for lack of memory puts its "
                   "session in state error saying so")
        ->type_name("SIZE")
        ->transform(CLI::AsSizeValue(false))
        ->check(CLI::Validator(
            [](std::string& v) -> std::string {
                // After the size transform: a byte count.
                char* end = nullptr;
                errno = 0;
                const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
                if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0 ||
                    (n != 0 && n < (1ull << 20)) || n > (1ull << 50))
                    return "must be 0 (no limit) or from 1M to 1P";
                return {};
            },
            "0 or 1M..1P"))
        ->envname("TRACECTL_CONSUMER_MEMORY_MAX");
    auto* autoLoadDir =
        app.add_option(
               "--auto-load-dir", o.autoLoadDir,
               "Load the LTTng session files (*.lttng) of this folder at start (default: "
               "/etc/lttng/sessions/auto; per user $LTTNG_HOME/.lttng/sessions/auto). Each file "
               "must be owned by root or by the daemon's user")
            ->type_name("DIR");
    app.add_flag("--no-auto-load", o.noAutoLoad, "Load no session file at start")
        ->excludes(autoLoadDir);
    app.add_option("--state-dir", o.stateDir,
                   "Keep each session's state in this folder, and bring the sessions found there "
                   "back at start (default: $RUNTIME_DIRECTORY/sessions under systemd, else "
                   "/run/lttng/tracectld-sessions; per user $LTTNG_HOME/.lttng/tracectld-sessions)")
        ->type_name("DIR");
    tracectl::log::addOptions(app, o.log);
    app.footer("The system bus is the one $DBUS_SYSTEM_BUS_ADDRESS names, if set.\n"
               "Exit status: 0 clean exit (SIGTERM/SIGINT), 1 failure, 2 usage error,\n"
               "3 the bus name is owned by someone else, 4 another tracectld holds the\n"
               "instance's lock (/run/lttng/tracectld.lock; per user $LTTNG_HOME/.lttng/\n"
               "tracectld.lock). See tracectld(8).");
    return tracectl::parseAndRun(app, argc, argv, [&] { return run(o); });
}
