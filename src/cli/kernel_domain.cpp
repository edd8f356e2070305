#include "kernel_domain.hpp"

#include "error_report.hpp"
#include "kernel/lttng_kernel_names.hpp"
#include "userspace_probe_location.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fnmatch.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sdbus-c++/Error.h>
#include <tuple>

namespace tracectl::cli {

const char* domainName(Domain domain) noexcept {
    return domain == Domain::Kernel ? "kernel" : "ust";
}

const char* domainLabel(Domain domain) noexcept {
    return domain == Domain::Kernel ? "Kernel" : "UST";
}

void addDomainFlags(CLI::App& command, DomainFlags& flags) {
    flags.userspaceOption = command.add_flag("-u,--userspace", flags.userspace,
                                             "The user-space (UST) domain (this or -k)");
    flags.kernelOption = command.add_flag("-k,--kernel", flags.kernel,
                                          "The kernel domain (this or -u; needs the "
                                          "trace-kernel right and a usable tracefs)");
    flags.userspaceOption->excludes(flags.kernelOption);
}

Domain chosenDomain(const DomainFlags& flags) {
    if (flags.kernel) {
        return Domain::Kernel;
    }
    if (flags.userspace) {
        return Domain::Ust;
    }
    throw CLI::ValidationError("-u/-k",
                               "give the domain: -u (user space, LTTng-UST) or -k (kernel)");
}

std::vector<std::string> splitCommas(std::string_view text) {
    std::vector<std::string> items;
    std::string item;
    for (const char c : text) {
        if (c == ',') {
            if (!item.empty()) {
                items.push_back(item);
            }
            item.clear();
        } else {
            item += c;
        }
    }
    if (!item.empty()) {
        items.push_back(item);
    }
    return items;
}

namespace {

/// "a:b::c" -> {"a", "b", "", "c"} ($PATH; an empty item is the current folder).
std::vector<std::string> splitPathList(std::string_view text) {
    std::vector<std::string> items(1);
    for (const char c : text) {
        if (c == ':') {
            items.emplace_back();
        } else {
            items.back() += c;
        }
    }
    return items;
}

} // namespace

std::vector<KernelEventCall> kernelEventCalls(const std::string& patterns, bool patternGiven,
                                              bool all, bool syscall) {
    if (all && patternGiven) {
        throw CLI::ValidationError("PATTERN", "give event names or -a/--all, not both");
    }
    if (all) {
        return {KernelEventCall{"*", syscall}};
    }
    if (!patternGiven) {
        throw CLI::ValidationError("PATTERN", syscall ? "give system call names or -a/--all"
                                                      : "give event names or -a/--all");
    }
    std::vector<KernelEventCall> calls;
    for (std::string& name : splitCommas(patterns)) {
        const bool seen = std::any_of(calls.begin(), calls.end(),
                                      [&](const KernelEventCall& c) { return c.pattern == name; });
        if (!seen) {
            calls.push_back(KernelEventCall{std::move(name), syscall});
        }
    }
    if (calls.empty()) {
        throw CLI::ValidationError("PATTERN", "'" + patterns + "' names no event");
    }
    return calls;
}

std::string resolveUserspaceProbe(const std::string& location, const std::string& searchPath,
                                  const std::string& cwd) {
    std::string why;
    auto parsed = tracectl::parseUserspaceProbeLocation(location, why);
    if (!parsed) {
        throw CLI::ValidationError("--userspace-probe", "'" + location + "': " + why);
    }
    namespace fs = std::filesystem;
    if (parsed->path.find('/') == std::string::npos) {
        std::optional<std::string> found;
        for (const std::string& dir : splitPathList(searchPath)) {
            std::error_code ec;
            const fs::path candidate = fs::path(dir.empty() ? "." : dir) / parsed->path;
            if (fs::is_regular_file(candidate, ec)) {
                found = fs::absolute(candidate, ec).lexically_normal().string();
                break;
            }
        }
        if (!found) {
            throw CLI::ValidationError("--userspace-probe",
                                       "'" + parsed->path + "' is not found in $PATH");
        }
        parsed->path = *found;
    } else if (parsed->path.front() != '/') {
        parsed->path = (fs::path(cwd) / parsed->path).lexically_normal().string();
    } else {
        parsed->path = fs::path(parsed->path).lexically_normal().string();
    }
    return tracectl::formatUserspaceProbeLocation(*parsed);
}

void addEventSelection(CLI::App& command, EventSelectionFlags& flags) {
    addDomainFlags(command, flags.domain);
    flags.patternOption = command.add_option(
        "PATTERN", flags.pattern,
        "-u: event name provider:event, or a prefix ending in '*'. -k: tracefs names "
        "system:event with '*' anywhere (sched:*, net:net_dev_xmit, *), comma-separated; with "
        "--syscall, system call names (write,read) or '*'");
    command.add_flag(
        "-a,--all", flags.all,
        "Every event: pattern '*' (-k: every tracepoint; with --syscall, every system call)");
    command.add_flag("--syscall", flags.syscall,
                     "-k only: PATTERN names system calls (recorded as syscall_entry_NAME and "
                     "syscall_exit_NAME)");
}

EventSelection resolveEventSelection(const EventSelectionFlags& flags,
                                     const std::vector<const CLI::Option*>& ustOnly) {
    EventSelection selection;
    selection.domain = chosenDomain(flags.domain);
    const bool patternGiven = flags.patternOption != nullptr && flags.patternOption->count() > 0;
    if (selection.domain == Domain::Kernel) {
        for (const CLI::Option* option : ustOnly) {
            if (option != nullptr && option->count() > 0) {
                throw CLI::ValidationError(option->get_name(),
                                           "is for user-space events (-u) only: kernel events "
                                           "have no log level or exclusions");
            }
        }
        selection.kernelCalls =
            kernelEventCalls(flags.pattern, patternGiven, flags.all, flags.syscall);
        return selection;
    }
    if (flags.syscall) {
        throw CLI::ValidationError("--syscall", "is for kernel events (-k) only");
    }
    if (flags.all && patternGiven) {
        throw CLI::ValidationError("PATTERN", "give a PATTERN or -a/--all, not both");
    }
    if (!flags.all && !patternGiven) {
        throw CLI::ValidationError("PATTERN", "give a PATTERN or -a/--all");
    }
    selection.ustPattern = patternGiven ? flags.pattern : "*";
    return selection;
}

ExitStatus enableKernelEventCalls(const std::vector<KernelEventCall>& calls,
                                  const std::string& channel,
                                  const std::function<void(const KernelEventCall&)>& enable,
                                  std::ostream& out, std::ostream& err) {
    std::optional<ExitStatus> failed;
    for (const KernelEventCall& call : calls) {
        try {
            enable(call);
            out << (call.syscall ? "Kernel syscall " : "Kernel event ") << call.pattern
                << " enabled in channel " << channel << ".\n";
        } catch (const sdbus::Error& e) {
            out.flush(); // on a terminal, in the order they happened
            printErrorLine(err, call.pattern + ": " + e.getName() +
                                    (e.getMessage().empty() ? "" : ": " + e.getMessage()));
            const ExitStatus status = exitStatusForError(e.getName());
            failed = failed.value_or(status);
            if (status == ExitStatus::Unreachable) {
                break; // the others cannot get through either
            }
        }
    }
    return failed.value_or(ExitStatus::Success);
}

namespace {

void sortTracepoints(std::vector<KernelTracepoint>& tracepoints) {
    std::sort(tracepoints.begin(), tracepoints.end(),
              [](const KernelTracepoint& a, const KernelTracepoint& b) {
                  return std::tie(a.system, a.event) < std::tie(b.system, b.event);
              });
}

constexpr auto kJsonErrors = nlohmann::json::error_handler_t::replace;

/// `value` is an array of `size` elements.
bool isTuple(const nlohmann::json& value, std::size_t size) {
    return value.is_array() && value.size() == size;
}

const nlohmann::json* arrayProperty(const PropertyMap& properties, const std::string& key) {
    const auto it = properties.find(key);
    return it != properties.end() && it->second.is_array() && !it->second.empty() ? &it->second
                                                                                  : nullptr;
}

std::string channelLine(const nlohmann::json& channel) {
    // (name, sub-buffer size, count, overwrite, switch timer us, read timer us,
    // enabled); a daemon older than DisableChannel sends no `enabled`.
    const bool withEnabled = isTuple(channel, 7);
    if (!(withEnabled || isTuple(channel, 6)) || !channel[0].is_string() ||
        !channel[1].is_number_unsigned() || !channel[2].is_number_unsigned() ||
        !channel[3].is_boolean() || !channel[4].is_number_unsigned() ||
        !channel[5].is_number_unsigned() || (withEnabled && !channel[6].is_boolean())) {
        return {};
    }
    const bool disabled = withEnabled && !channel[6].get<bool>();
    const auto timer = [](const nlohmann::json& us) {
        const auto value = us.get<std::uint64_t>();
        return value == 0 ? std::string("off") : std::to_string(value) + " us";
    };
    return "    " + channel[0].get<std::string>() + "  subbuf " +
           std::to_string(channel[1].get<std::uint64_t>()) + " x " +
           std::to_string(channel[2].get<std::uint64_t>()) + ", " +
           (channel[3].get<bool>() ? "overwrite" : "discard") + ", switch timer " +
           timer(channel[4]) + ", read timer " + timer(channel[5]) +
           (disabled ? " [disabled]" : "") + "\n";
}

std::string eventLine(const nlohmann::json& rule) {
    // (channel, pattern, syscall, filter, enabled); `enabled` as in channel_line().
    const bool withEnabled = isTuple(rule, 5);
    if (!(withEnabled || isTuple(rule, 4)) || !rule[0].is_string() || !rule[1].is_string() ||
        !rule[2].is_boolean() || !rule[3].is_string() || (withEnabled && !rule[4].is_boolean())) {
        return {};
    }
    std::string line = "    " + rule[0].get<std::string>() + "  ";
    line +=
        rule[2].get<bool>() ? "syscall " + rule[1].get<std::string>() : rule[1].get<std::string>();
    if (const auto filter = rule[3].get<std::string>(); !filter.empty()) {
        line += "  filter: " + filter;
    }
    if (withEnabled && !rule[4].get<bool>()) {
        line += " [disabled]";
    }
    return line + "\n";
}

std::string contextLine(const nlohmann::json& context) {
    if (!isTuple(context, 2) || !context[0].is_string() || !context[1].is_string()) {
        return {};
    }
    return "    " + context[0].get<std::string>() + "  " + context[1].get<std::string>() + "\n";
}

/// "  TITLE:\n" and the lines of `key`'s entries, or "" when there are none.
std::string subsection(const PropertyMap& properties, const std::string& key,
                       std::string_view title, std::string (*line)(const nlohmann::json&)) {
    const nlohmann::json* entries = arrayProperty(properties, key);
    if (entries == nullptr) {
        return {};
    }
    std::string body;
    for (const auto& entry : *entries) {
        body += line(entry);
    }
    return body.empty() ? std::string{} : "  " + std::string{title} + ":\n" + body;
}

} // namespace

std::optional<std::string> lttngEventName(const KernelTracepoint& tracepoint) {
    if (tracepoint.system == "ip") {
        return std::nullopt;
    }
    return tracectl::kernel::lttngNaming(tracepoint.system, tracepoint.event).eventName;
}

std::vector<Domain> liveProbeDomains(std::string_view pattern,
                                     const std::vector<KernelTracepoint>& kernel) {
    const std::string glob(pattern);
    if (glob.rfind("ip:", 0) == 0) {
        return {Domain::Kernel};
    }
    const bool hasProvider = glob.find(':') != std::string::npos;
    const bool inKernel =
        std::any_of(kernel.begin(), kernel.end(), [&](const KernelTracepoint& tp) {
            if (hasProvider) {
                return fnmatch(glob.c_str(), (tp.system + ":" + tp.event).c_str(), 0) == 0;
            }
            const auto name = lttngEventName(tp);
            return name && fnmatch(glob.c_str(), name->c_str(), 0) == 0;
        });
    if (!inKernel) {
        // "system:event" of a tracefs system that has no such event names no probe at all
        // (an app's provider is not named after a kernel tracepoint system).
        const std::string system = hasProvider ? glob.substr(0, glob.find(':')) : "";
        if (!system.empty() && system.find_first_of("*?[") == std::string::npos &&
            std::any_of(kernel.begin(), kernel.end(),
                        [&](const KernelTracepoint& tp) { return tp.system == system; })) {
            return {};
        }
        return {Domain::Ust};
    }
    if (!hasProvider && glob.find_first_of("*?[") != std::string::npos) {
        return {Domain::Kernel, Domain::Ust};
    }
    return {Domain::Kernel};
}

std::string formatKernelTracepoints(std::vector<KernelTracepoint> tracepoints, bool fields) {
    if (tracepoints.empty()) {
        return "No kernel tracepoints.\n";
    }
    sortTracepoints(tracepoints);
    std::string out;
    for (const KernelTracepoint& tp : tracepoints) {
        out += tp.system + ":" + tp.event;
        if (const auto lttng = lttngEventName(tp); lttng && *lttng != tp.event) {
            out += " (" + *lttng + ")";
        }
        out += "\n";
        if (fields) {
            for (const auto& [name, type] : tp.fields) {
                out += "    " + type + " " + name + "\n";
            }
        }
    }
    return out;
}

std::string formatKernelTracepointsJson(std::vector<KernelTracepoint> tracepoints) {
    sortTracepoints(tracepoints);
    auto array = nlohmann::json::array();
    for (const KernelTracepoint& tp : tracepoints) {
        auto fields = nlohmann::json::array();
        for (const auto& [name, type] : tp.fields) {
            fields.push_back({{"name", name}, {"type", type}});
        }
        nlohmann::json entry = {{"system", tp.system}, {"event", tp.event}};
        if (const auto lttng = lttngEventName(tp)) {
            entry["lttng_name"] = *lttng;
        }
        entry["fields"] = std::move(fields);
        array.push_back(std::move(entry));
    }
    return array.dump(2, ' ', false, kJsonErrors) + "\n";
}

bool isKernelDomainProperty(std::string_view key) noexcept {
    return key == "KernelChannels" || key == "KernelEvents" || key == "KernelContexts";
}

std::string formatKernelSection(const PropertyMap& properties) {
    const std::string body = subsection(properties, "KernelChannels", "Channels", channelLine) +
                             subsection(properties, "KernelEvents", "Event rules", eventLine) +
                             subsection(properties, "KernelContexts", "Contexts", contextLine);
    return body.empty() ? std::string{} : "Kernel domain:\n" + body;
}

} // namespace tracectl::cli
