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

const char* domain_name(Domain domain) noexcept {
    return domain == Domain::kernel ? "kernel" : "ust";
}

const char* domain_label(Domain domain) noexcept {
    return domain == Domain::kernel ? "Kernel" : "UST";
}

void add_domain_flags(CLI::App& command, DomainFlags& flags) {
    flags.userspace_option = command.add_flag("-u,--userspace", flags.userspace,
                                              "The user-space (UST) domain (this or -k)");
    flags.kernel_option = command.add_flag("-k,--kernel", flags.kernel,
                                           "The kernel domain (this or -u; needs the "
                                           "trace-kernel right and a usable tracefs)");
    flags.userspace_option->excludes(flags.kernel_option);
}

Domain chosen_domain(const DomainFlags& flags) {
    if (flags.kernel) {
        return Domain::kernel;
    }
    if (flags.userspace) {
        return Domain::ust;
    }
    throw CLI::ValidationError("-u/-k",
                               "give the domain: -u (user space, LTTng-UST) or -k (kernel)");
}

std::vector<std::string> split_commas(std::string_view text) {
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
std::vector<std::string> split_path_list(std::string_view text) {
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

std::vector<KernelEventCall> kernel_event_calls(const std::string& patterns, bool pattern_given,
                                                bool all, bool syscall) {
    if (all && pattern_given) {
        throw CLI::ValidationError("PATTERN", "give event names or -a/--all, not both");
    }
    if (all) {
        return {KernelEventCall{"*", syscall}};
    }
    if (!pattern_given) {
        throw CLI::ValidationError("PATTERN", syscall ? "give system call names or -a/--all"
                                                      : "give event names or -a/--all");
    }
    std::vector<KernelEventCall> calls;
    for (std::string& name : split_commas(patterns)) {
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

std::string resolve_userspace_probe(const std::string& location, const std::string& search_path,
                                    const std::string& cwd) {
    std::string why;
    auto parsed = tracectl::parseUserspaceProbeLocation(location, why);
    if (!parsed) {
        throw CLI::ValidationError("--userspace-probe", "'" + location + "': " + why);
    }
    namespace fs = std::filesystem;
    if (parsed->path.find('/') == std::string::npos) {
        std::optional<std::string> found;
        for (const std::string& dir : split_path_list(search_path)) {
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

void add_event_selection(CLI::App& command, EventSelectionFlags& flags) {
    add_domain_flags(command, flags.domain);
    flags.pattern_option = command.add_option(
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

EventSelection resolve_event_selection(const EventSelectionFlags& flags,
                                       const std::vector<const CLI::Option*>& ust_only) {
    EventSelection selection;
    selection.domain = chosen_domain(flags.domain);
    const bool pattern_given = flags.pattern_option != nullptr && flags.pattern_option->count() > 0;
    if (selection.domain == Domain::kernel) {
        for (const CLI::Option* option : ust_only) {
            if (option != nullptr && option->count() > 0) {
                throw CLI::ValidationError(option->get_name(),
                                           "is for user-space events (-u) only: kernel events "
                                           "have no log level or exclusions");
            }
        }
        selection.kernel_calls =
            kernel_event_calls(flags.pattern, pattern_given, flags.all, flags.syscall);
        return selection;
    }
    if (flags.syscall) {
        throw CLI::ValidationError("--syscall", "is for kernel events (-k) only");
    }
    if (flags.all && pattern_given) {
        throw CLI::ValidationError("PATTERN", "give a PATTERN or -a/--all, not both");
    }
    if (!flags.all && !pattern_given) {
        throw CLI::ValidationError("PATTERN", "give a PATTERN or -a/--all");
    }
    selection.ust_pattern = pattern_given ? flags.pattern : "*";
    return selection;
}

ExitStatus enable_kernel_event_calls(const std::vector<KernelEventCall>& calls,
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
            print_error_line(err, call.pattern + ": " + e.getName() +
                                      (e.getMessage().empty() ? "" : ": " + e.getMessage()));
            const ExitStatus status = exit_status_for_error(e.getName());
            failed = failed.value_or(status);
            if (status == ExitStatus::unreachable) {
                break; // the others cannot get through either
            }
        }
    }
    return failed.value_or(ExitStatus::success);
}

namespace {

void sort_tracepoints(std::vector<KernelTracepoint>& tracepoints) {
    std::sort(tracepoints.begin(), tracepoints.end(),
              [](const KernelTracepoint& a, const KernelTracepoint& b) {
                  return std::tie(a.system, a.event) < std::tie(b.system, b.event);
              });
}

constexpr auto json_errors = nlohmann::json::error_handler_t::replace;

/// `value` is an array of `size` elements.
bool is_tuple(const nlohmann::json& value, std::size_t size) {
    return value.is_array() && value.size() == size;
}

const nlohmann::json* array_property(const PropertyMap& properties, const std::string& key) {
    const auto it = properties.find(key);
    return it != properties.end() && it->second.is_array() && !it->second.empty() ? &it->second
                                                                                  : nullptr;
}

std::string channel_line(const nlohmann::json& channel) {
    // (name, sub-buffer size, count, overwrite, switch timer us, read timer us,
    // enabled); a daemon older than DisableChannel sends no `enabled`.
    const bool with_enabled = is_tuple(channel, 7);
    if (!(with_enabled || is_tuple(channel, 6)) || !channel[0].is_string() ||
        !channel[1].is_number_unsigned() || !channel[2].is_number_unsigned() ||
        !channel[3].is_boolean() || !channel[4].is_number_unsigned() ||
        !channel[5].is_number_unsigned() || (with_enabled && !channel[6].is_boolean())) {
        return {};
    }
    const bool disabled = with_enabled && !channel[6].get<bool>();
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

std::string event_line(const nlohmann::json& rule) {
    // (channel, pattern, syscall, filter, enabled); `enabled` as in channel_line().
    const bool with_enabled = is_tuple(rule, 5);
    if (!(with_enabled || is_tuple(rule, 4)) || !rule[0].is_string() || !rule[1].is_string() ||
        !rule[2].is_boolean() || !rule[3].is_string() || (with_enabled && !rule[4].is_boolean())) {
        return {};
    }
    std::string line = "    " + rule[0].get<std::string>() + "  ";
    line +=
        rule[2].get<bool>() ? "syscall " + rule[1].get<std::string>() : rule[1].get<std::string>();
    if (const auto filter = rule[3].get<std::string>(); !filter.empty()) {
        line += "  filter: " + filter;
    }
    if (with_enabled && !rule[4].get<bool>()) {
        line += " [disabled]";
    }
    return line + "\n";
}

std::string context_line(const nlohmann::json& context) {
    if (!is_tuple(context, 2) || !context[0].is_string() || !context[1].is_string()) {
        return {};
    }
    return "    " + context[0].get<std::string>() + "  " + context[1].get<std::string>() + "\n";
}

/// "  TITLE:\n" and the lines of `key`'s entries, or "" when there are none.
std::string subsection(const PropertyMap& properties, const std::string& key,
                       std::string_view title, std::string (*line)(const nlohmann::json&)) {
    const nlohmann::json* entries = array_property(properties, key);
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

std::optional<std::string> lttng_event_name(const KernelTracepoint& tracepoint) {
    if (tracepoint.system == "ip") {
        return std::nullopt;
    }
    return tracectl::kernel::lttngNaming(tracepoint.system, tracepoint.event).eventName;
}

std::vector<Domain> live_probe_domains(std::string_view pattern,
                                       const std::vector<KernelTracepoint>& kernel) {
    const std::string glob(pattern);
    if (glob.rfind("ip:", 0) == 0) {
        return {Domain::kernel};
    }
    const bool has_provider = glob.find(':') != std::string::npos;
    const bool in_kernel =
        std::any_of(kernel.begin(), kernel.end(), [&](const KernelTracepoint& tp) {
            if (has_provider) {
                return fnmatch(glob.c_str(), (tp.system + ":" + tp.event).c_str(), 0) == 0;
            }
            const auto name = lttng_event_name(tp);
            return name && fnmatch(glob.c_str(), name->c_str(), 0) == 0;
        });
    if (!in_kernel) {
        // "system:event" of a tracefs system that has no such event names no probe at all
        // (an app's provider is not named after a kernel tracepoint system).
        const std::string system = has_provider ? glob.substr(0, glob.find(':')) : "";
        if (!system.empty() && system.find_first_of("*?[") == std::string::npos &&
            std::any_of(kernel.begin(), kernel.end(),
                        [&](const KernelTracepoint& tp) { return tp.system == system; })) {
            return {};
        }
        return {Domain::ust};
    }
    if (!has_provider && glob.find_first_of("*?[") != std::string::npos) {
        return {Domain::kernel, Domain::ust};
    }
    return {Domain::kernel};
}

std::string format_kernel_tracepoints(std::vector<KernelTracepoint> tracepoints, bool fields) {
    if (tracepoints.empty()) {
        return "No kernel tracepoints.\n";
    }
    sort_tracepoints(tracepoints);
    std::string out;
    for (const KernelTracepoint& tp : tracepoints) {
        out += tp.system + ":" + tp.event;
        if (const auto lttng = lttng_event_name(tp); lttng && *lttng != tp.event) {
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

std::string format_kernel_tracepoints_json(std::vector<KernelTracepoint> tracepoints) {
    sort_tracepoints(tracepoints);
    auto array = nlohmann::json::array();
    for (const KernelTracepoint& tp : tracepoints) {
        auto fields = nlohmann::json::array();
        for (const auto& [name, type] : tp.fields) {
            fields.push_back({{"name", name}, {"type", type}});
        }
        nlohmann::json entry = {{"system", tp.system}, {"event", tp.event}};
        if (const auto lttng = lttng_event_name(tp)) {
            entry["lttng_name"] = *lttng;
        }
        entry["fields"] = std::move(fields);
        array.push_back(std::move(entry));
    }
    return array.dump(2, ' ', false, json_errors) + "\n";
}

bool is_kernel_domain_property(std::string_view key) noexcept {
    return key == "KernelChannels" || key == "KernelEvents" || key == "KernelContexts";
}

std::string format_kernel_section(const PropertyMap& properties) {
    const std::string body = subsection(properties, "KernelChannels", "Channels", channel_line) +
                             subsection(properties, "KernelEvents", "Event rules", event_line) +
                             subsection(properties, "KernelContexts", "Contexts", context_line);
    return body.empty() ? std::string{} : "Kernel domain:\n" + body;
}

} // namespace tracectl::cli
