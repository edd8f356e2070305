#include "trace_commands.hpp"

#include "session_view.hpp"
#include "variant_json.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sdbus-c++/Error.h>
#include <stdexcept>

namespace tracectl::cli {

namespace {

constexpr const char* no_such_session = "org.tracectl.Tracing1.Error.NoSuchSession";

/// lttng-ust(3) log level names, index = level.
constexpr std::array<const char*, 15> level_names{
    "TRACE_EMERG",          "TRACE_ALERT",         "TRACE_CRIT",         "TRACE_ERR",
    "TRACE_WARNING",        "TRACE_NOTICE",        "TRACE_INFO",         "TRACE_DEBUG_SYSTEM",
    "TRACE_DEBUG_PROGRAM",  "TRACE_DEBUG_PROCESS", "TRACE_DEBUG_MODULE", "TRACE_DEBUG_UNIT",
    "TRACE_DEBUG_FUNCTION", "TRACE_DEBUG_LINE",    "TRACE_DEBUG"};

std::string level_name(std::int32_t level) {
    return level >= 0 && level < static_cast<std::int32_t>(level_names.size())
               ? level_names[static_cast<std::size_t>(level)]
               : std::to_string(level);
}

} // namespace

std::string resolve_session(BusClient& bus, const std::optional<std::string>& name) {
    if (name) {
        return bus.get_session(*name);
    }
    if (const auto current = bus.current_session().read()) {
        try {
            return bus.get_session(*current);
        } catch (const sdbus::Error& e) {
            if (e.getName() != no_such_session) {
                throw;
            }
            throw sdbus::Error(no_such_session,
                               "the current session '" + *current +
                                   "' does not exist any more; name a session, or choose one "
                                   "with 'tracectl set-session NAME'");
        }
    }
    const uid_t self = geteuid();
    std::vector<std::string> own;
    for (const std::string& path : bus.list_sessions()) {
        if (session_view_from_properties(path, bus.session_properties(path)).owner == self) {
            own.push_back(path);
        }
    }
    if (own.size() != 1) {
        throw sdbus::Error(no_such_session,
                           own.empty() ? "you have no session; create one first"
                                       : "you have several sessions and no current session; "
                                         "name one, or choose one with 'tracectl set-session "
                                         "NAME'");
    }
    return own.front();
}

ExitStatus run_enable_event(BusClient& bus, const EnableEventArgs& args, std::ostream& out,
                            std::ostream& err) {
    const std::string path = resolve_session(bus, args.session);
    const std::string channel = args.channel.empty() ? "channel0" : args.channel;
    if (args.domain == Domain::ust) {
        bus.enable_events(path, args.channel, args.pattern, args.loglevel, args.loglevel_only,
                          args.exclusions, args.filter);
        out << "UST event " << args.pattern << " enabled in channel " << channel << ".\n";
        return ExitStatus::success;
    }
    if (args.kernel_calls.size() == 1) {
        // One name: failures are reported as any other command's.
        const KernelEventCall& call = args.kernel_calls.front();
        bus.enable_kernel_events(path, args.channel, call.pattern, call.syscall, args.filter,
                                 args.userspace_probe);
        out << (call.syscall ? "Kernel syscall " : "Kernel event ") << call.pattern
            << " enabled in channel " << channel << ".\n";
        return ExitStatus::success;
    }
    return enable_kernel_event_calls(
        args.kernel_calls, channel,
        [&](const KernelEventCall& call) {
            bus.enable_kernel_events(path, args.channel, call.pattern, call.syscall, args.filter,
                                     args.userspace_probe);
        },
        out, err);
}

void run_enable_channel(BusClient& bus, const EnableChannelArgs& args, std::ostream& out) {
    const std::string path = resolve_session(bus, args.session);
    std::map<std::string, std::uint64_t> sizes;
    if (args.subbuf_size) {
        sizes["subbuf-size"] = *args.subbuf_size;
    }
    if (args.num_subbuf) {
        sizes["subbuf-count"] = *args.num_subbuf;
    }
    std::map<std::string, std::uint32_t> timers;
    if (args.switch_timer_us) {
        timers["switch-timer"] = *args.switch_timer_us;
    }
    if (args.read_timer_us) {
        timers["read-timer"] = *args.read_timer_us;
    }
    bus.add_channel(args.domain, path, args.name, sizes, args.overwrite, timers);
    out << domain_label(args.domain) << " channel " << args.name << " enabled.\n";
}

void run_add_context(BusClient& bus, const AddContextArgs& args, std::ostream& out) {
    const std::string path = resolve_session(bus, args.session);
    // Types already recorded are skipped, so that the same command can be
    // run again after one of its types was refused half-way.
    const PropertyMap props = bus.session_properties(path);
    const auto recorded = [&](const std::string& type) {
        const auto it = props.find(args.domain == Domain::kernel ? "KernelContexts" : "Contexts");
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
            out << domain_label(args.domain) << " context " << type << " is recorded already.\n";
            continue;
        }
        bus.add_context(args.domain, path, args.channel, type);
        out << domain_label(args.domain) << " context " << type << " added to "
            << (args.channel.empty() ? std::string("every channel") : "channel " + args.channel)
            << ".\n";
    }
}

void run_list_apps(BusClient& bus, bool tracepoints, bool json, std::ostream& out) {
    nlohmann::json all = nlohmann::json::array();
    for (const std::string& path : bus.list_applications()) {
        PropertyMap props;
        try {
            props = bus.application_properties(path);
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
                for (const auto& [provider, event, level] : bus.list_tracepoints(path)) {
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
                    << level_name(tp["loglevel"].get<std::int32_t>()) << ")\n";
            }
        }
    }
}

void run_list_kernel_tracepoints(BusClient& bus, bool fields, bool json, std::ostream& out) {
    std::vector<KernelTracepoint> tracepoints = bus.list_kernel_tracepoints();
    out << (json ? format_kernel_tracepoints_json(std::move(tracepoints))
                 : format_kernel_tracepoints(std::move(tracepoints), fields));
}

std::string session_output(BusClient& bus, const std::optional<std::string>& name) {
    const std::string path = resolve_session(bus, name);
    const SessionView view = session_view_from_properties(path, bus.session_properties(path));
    if (const auto note = remote_trace_note(view)) {
        throw std::runtime_error(*note);
    }
    return view.output_path;
}

} // namespace tracectl::cli
