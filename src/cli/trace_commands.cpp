#include "trace_commands.hpp"

#include "error_report.hpp"
#include "exit_status.hpp"
#include "kernel_domain.hpp"
#include "session_view.hpp"
#include "variant_json.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sdbus-c++/Error.h>
#include <stdexcept>

namespace tracectl::cli {

namespace {

constexpr const char* kNoSuchSession = "org.tracectl.Tracing1.Error.NoSuchSession";

/// lttng-ust(3) log level names, index = level.
constexpr std::array<const char*, 15> kLevelNames{
    "TRACE_EMERG",          "TRACE_ALERT",         "TRACE_CRIT",         "TRACE_ERR",
    "TRACE_WARNING",        "TRACE_NOTICE",        "TRACE_INFO",         "TRACE_DEBUG_SYSTEM",
    "TRACE_DEBUG_PROGRAM",  "TRACE_DEBUG_PROCESS", "TRACE_DEBUG_MODULE", "TRACE_DEBUG_UNIT",
    "TRACE_DEBUG_FUNCTION", "TRACE_DEBUG_LINE",    "TRACE_DEBUG"};

std::string levelName(std::int32_t level) {
    return level >= 0 && level < static_cast<std::int32_t>(kLevelNames.size())
               ? kLevelNames[static_cast<std::size_t>(level)]
               : std::to_string(level);
}

} // namespace

std::string resolveSession(BusClient& bus, const std::optional<std::string>& name) {
    if (name) {
        return bus.getSession(*name);
    }
    if (const auto current = bus.currentSession().read()) {
        try {
            return bus.getSession(*current);
        } catch (const sdbus::Error& e) {
            if (e.getName() != kNoSuchSession) {
                throw;
            }
            throw sdbus::Error(kNoSuchSession,
                               "the current session '" + *current +
                                   "' does not exist any more; name a session, or choose one "
                                   "with 'tracectl set-session NAME'");
        }
    }
    const uid_t self = geteuid();
    std::vector<std::string> own;
    for (const std::string& path : bus.listSessions()) {
        if (sessionViewFromProperties(path, bus.sessionProperties(path)).owner == self) {
            own.push_back(path);
        }
    }
    if (own.size() != 1) {
        throw sdbus::Error(kNoSuchSession,
                           own.empty() ? "you have no session; create one first"
                                       : "you have several sessions and no current session; "
                                         "name one, or choose one with 'tracectl set-session "
                                         "NAME'");
    }
    return own.front();
}

ExitStatus runEnableEvent(BusClient& bus, const EnableEventArgs& args, std::ostream& out,
                          std::ostream& err) {
    const std::string path = resolveSession(bus, args.session);
    const std::string channel = args.channel.empty() ? "channel0" : args.channel;
    if (args.domain == Domain::Ust) {
        // Each comma-separated name is its own rule, as lttng enable-event -u
        // makes them (and as -k does).
        const std::vector<std::string> patterns = splitCommas(args.pattern);
        std::optional<ExitStatus> failed;
        for (const std::string& pattern : patterns) {
            try {
                bus.enableEvents(path, args.channel, pattern, args.loglevel, args.loglevelOnly,
                                 args.exclusions, args.filter);
                out << "UST event " << pattern << " enabled in channel " << channel << ".\n";
            } catch (const sdbus::Error& e) {
                if (patterns.size() == 1)
                    throw; // one name: reported as any other command's failure
                out.flush();
                printErrorLine(err, pattern + ": " + e.getName() +
                                        (e.getMessage().empty() ? "" : ": " + e.getMessage()));
                failed = failed.value_or(exitStatusForError(e.getName()));
            }
        }
        return failed.value_or(ExitStatus::Success);
    }
    if (args.kernelCalls.size() == 1) {
        // One name: failures are reported as any other command's.
        const KernelEventCall& call = args.kernelCalls.front();
        bus.enableKernelEvents(path, args.channel, call.pattern, call.syscall, args.filter,
                               args.userspaceProbe);
        out << (call.syscall ? "Kernel syscall " : "Kernel event ") << call.pattern
            << " enabled in channel " << channel << ".\n";
        return ExitStatus::Success;
    }
    return enableKernelEventCalls(
        args.kernelCalls, channel,
        [&](const KernelEventCall& call) {
            bus.enableKernelEvents(path, args.channel, call.pattern, call.syscall, args.filter,
                                   args.userspaceProbe);
        },
        out, err);
}

void runEnableChannel(BusClient& bus, const EnableChannelArgs& args, std::ostream& out) {
    const std::string path = resolveSession(bus, args.session);
    std::map<std::string, std::uint64_t> sizes;
    if (args.subbufSize) {
        sizes["subbuf-size"] = *args.subbufSize;
    }
    if (args.numSubbuf) {
        sizes["subbuf-count"] = *args.numSubbuf;
    }
    std::map<std::string, std::uint32_t> timers;
    if (args.switchTimerUs) {
        timers["switch-timer"] = *args.switchTimerUs;
    }
    if (args.readTimerUs) {
        timers["read-timer"] = *args.readTimerUs;
    }
    bus.addChannel(args.domain, path, args.name, sizes, args.overwrite, timers);
    out << domainLabel(args.domain) << " channel " << args.name << " enabled.\n";
}

void runAddContext(BusClient& bus, const AddContextArgs& args, std::ostream& out) {
    const std::string path = resolveSession(bus, args.session);
    // Types already recorded are skipped, so that the same command can be
    // run again after one of its types was refused half-way.
    const PropertyMap props = bus.sessionProperties(path);
    const auto recorded = [&](const std::string& type) {
        const auto it = props.find(args.domain == Domain::Kernel ? "KernelContexts" : "Contexts");
        if (it == props.end() || !it->second.is_array()) {
            return false;
        }
        for (const auto& pair : it->second) {
            if (pair.is_array() && pair.size() == 2 && pair[1] == type &&
                (args.channel.empty() || pair[0] == args.channel)) {
                return true;
            }
        }
        return false;
    };
    for (const std::string& type : args.types) {
        if (recorded(type)) {
            out << domainLabel(args.domain) << " context " << type << " is recorded already.\n";
            continue;
        }
        bus.addContext(args.domain, path, args.channel, type);
        out << domainLabel(args.domain) << " context " << type << " added to "
            << (args.channel.empty() ? std::string("every channel") : "channel " + args.channel)
            << ".\n";
    }
}

void runListApps(BusClient& bus, bool tracepoints, bool json, std::ostream& out) {
    nlohmann::json all = nlohmann::json::array();
    for (const std::string& path : bus.listApplications()) {
        PropertyMap props;
        try {
            props = bus.applicationProperties(path);
        } catch (const sdbus::Error&) {
            continue; // exited meanwhile
        }
        nlohmann::json app = nlohmann::json::object();
        for (const auto& [key, value] : props) {
            app[key] = value;
        }
        if (tracepoints) {
            app["Tracepoints"] = nlohmann::json::array();
            try {
                for (const auto& [provider, event, level] : bus.listTracepoints(path)) {
                    app["Tracepoints"].push_back(
                        {{"provider", provider}, {"event", event}, {"loglevel", level}});
                }
            } catch (const sdbus::Error&) {
                // exited meanwhile: listed without tracepoints
            }
        }
        all.push_back(std::move(app));
    }
    if (json) {
        out << all.dump(2) << '\n';
        return;
    }
    if (all.empty()) {
        out << "No applications.\n";
        return;
    }
    for (const auto& app : all) {
        out << app.value("Pid", 0u) << "  uid " << app.value("Uid", 0u) << "  "
            << app.value("Bitness", 0u) << "-bit  " << app.value("Name", std::string())
            << "  lttng-ust " << app.value("TracerVersion", std::string()) << '\n';
        if (tracepoints && app.contains("Tracepoints")) {
            for (const auto& tp : app["Tracepoints"]) {
                out << "    " << tp["provider"].get<std::string>() << ':'
                    << tp["event"].get<std::string>() << " ("
                    << levelName(tp["loglevel"].get<std::int32_t>()) << ")\n";
            }
        }
    }
}

void runListKernelTracepoints(BusClient& bus, bool fields, bool json, std::ostream& out) {
    std::vector<KernelTracepoint> tracepoints = bus.listKernelTracepoints();
    out << (json ? formatKernelTracepointsJson(std::move(tracepoints))
                 : formatKernelTracepoints(std::move(tracepoints), fields));
}

std::string sessionOutput(BusClient& bus, const std::optional<std::string>& name) {
    const std::string path = resolveSession(bus, name);
    const SessionView view = sessionViewFromProperties(path, bus.sessionProperties(path));
    if (const auto note = remoteTraceNote(view)) {
        throw std::runtime_error(*note);
    }
    return view.outputPath;
}

} // namespace tracectl::cli
