#include "output_format.hpp"

#include "kernel_domain.hpp"
#include "session_statistics.hpp"
#include "statistics_format.hpp"
#include "text_table.hpp"
#include "track_options.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <iterator>
#include <limits>

namespace tracectl::cli {
namespace {

constexpr auto json_errors = nlohmann::json::error_handler_t::replace;

void append_padded(std::string& out, std::string_view text, std::size_t width) {
    out += text;
    out.append(width - std::min(width, display_width(text)), ' ');
}

std::string dump_pretty(const nlohmann::json& value) {
    return value.dump(2, ' ', false, json_errors) + "\n";
}

nlohmann::json to_json_object(const SessionView& session) {
    auto object = nlohmann::json::object();
    for (const auto& [key, value] : session.properties) {
        object[key] =
            key == channel_statistics_property ? channel_statistics_readable(value) : value;
    }
    return object;
}

constexpr std::array<std::string_view, 10> well_known_properties{
    "Name",      "Id",        "State",           "Mode",        "Owner", "OutputPath",
    "OutputUrl", "LiveTimer", "BufferOwnership", "CreationTime"};

/// Left out of `show`'s lines because they do not apply to this session: OutputUrl of a
/// local session (""), LiveTimer of a session that is not live (0), OutputPath of a
/// network session ("" beside a non-empty OutputUrl).
bool not_applicable(const SessionView& session, std::string_view key) {
    const nlohmann::json& value = session.properties.at(std::string{key});
    if (key == "OutputUrl") {
        return value == "";
    }
    if (key == "LiveTimer") {
        return value == 0;
    }
    return key == "OutputPath" && value == "" && !session.output_url.empty();
}

/// Shown in their own section, not as "Key: value" lines.
bool is_statistics_property(std::string_view key) {
    return key == statistics_property || key == channel_statistics_property;
}

/// "  [disabled: A, B]" naming the UST channels (Channels rows: their last
/// member `enabled` false) or event rules (Events rows: "CHANNEL/PATTERN",
/// and " (filter: EXPR)" when the rule has one, its 7th member) that are
/// disabled, as lttng-list(1) marks them; "" when none is.
std::string disabled_note(const std::string& key, const nlohmann::json& rows) {
    const bool channels = key == "Channels";
    const std::size_t enabled = channels ? 6 : 5;
    std::string names;
    for (const auto& row : rows) {
        if (!row.is_array() || row.size() != 7 || !row[enabled].is_boolean() ||
            row[enabled].get<bool>() || !row[0].is_string() ||
            (!channels && (!row[1].is_string() || !row[6].is_string()))) {
            continue;
        }
        names += (names.empty() ? "" : ", ") + row[0].get<std::string>();
        if (!channels) {
            names += "/" + row[1].get<std::string>();
            if (const std::string filter = row[6].get<std::string>(); !filter.empty()) {
                names += " (filter: " + filter + ")";
            }
        }
    }
    return names.empty() ? std::string{} : "  [disabled: " + names + "]";
}

std::string format_detail_value(const std::string& key, const nlohmann::json& value,
                                const UserNameLookup& user_name) {
    if (key == "Owner" && value.is_number_unsigned() &&
        value.get<std::uint64_t>() <= std::numeric_limits<std::uint32_t>::max()) {
        const auto uid = static_cast<std::uint32_t>(value.get<std::uint64_t>());
        const std::string name = format_owner(uid, user_name);
        const std::string number = std::to_string(uid);
        return name == number ? number : number + " (" + name + ")";
    }
    if (key == "CreationTime" && value.is_number_unsigned()) {
        return format_timestamp(value.get<std::uint64_t>());
    }
    if (key == "LiveTimer" && value.is_number_unsigned()) {
        return std::to_string(value.get<std::uint64_t>()) + " us";
    }
    if ((key == "Channels" || key == "Events") && value.is_array()) {
        return format_property_value(value) + disabled_note(key, value);
    }
    return format_property_value(value);
}

} // namespace

std::string format_property_value(const nlohmann::json& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return {};
    }
    return value.dump(-1, ' ', false, json_errors);
}

std::string format_timestamp(std::uint64_t usec) {
    const auto seconds = static_cast<std::time_t>(usec / 1'000'000U);
    std::tm local{};
    if (localtime_r(&seconds, &local) == nullptr) {
        return std::to_string(usec);
    }
    std::array<char, 64> text{};
    const std::size_t length =
        std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S %Z", &local);
    return length == 0 ? std::to_string(usec) : std::string{text.data(), length};
}

std::string format_owner(std::uint32_t uid, const UserNameLookup& user_name) {
    if (user_name) {
        if (auto name = user_name(uid); name && !name->empty()) {
            return *name;
        }
    }
    return std::to_string(uid);
}

std::string format_session_table(const std::vector<SessionView>& sessions,
                                 const UserNameLookup& user_name) {
    if (sessions.empty()) {
        return "No sessions.\n";
    }
    using Row = std::array<std::string, 7>;
    std::vector<Row> rows;
    rows.reserve(sessions.size() + 1);
    rows.push_back(Row{"NAME", "STATE", "MODE", "OWNER", "DISCARDED", "LOST", "OUTPUT"});
    for (const SessionView& session : sessions) {
        // "-": the daemon has no Statistics property (older than issue 14).
        const auto statistics = statistics_from_properties(session.properties);
        rows.push_back(Row{session.name, session.state, session.mode,
                           format_owner(session.owner, user_name),
                           statistics ? std::to_string(statistics->totals.events_discarded) : "-",
                           statistics ? std::to_string(statistics->totals.packets_lost) : "-",
                           output_location(session)});
    }
    std::array<std::size_t, 7> widths{};
    for (const Row& row : rows) {
        for (std::size_t column = 0; column < row.size(); ++column) {
            widths[column] = std::max(widths[column], display_width(row[column]));
        }
    }
    std::string out;
    for (const Row& row : rows) {
        for (std::size_t column = 0; column + 1 < row.size(); ++column) {
            append_padded(out, row[column], widths[column] + 2);
        }
        out += row.back();
        out += '\n';
    }
    return out;
}

std::string format_session_details(const SessionView& session, const UserNameLookup& user_name) {
    std::vector<std::string> keys;
    for (std::string_view key : well_known_properties) {
        if (session.properties.contains(std::string{key}) && !not_applicable(session, key)) {
            keys.emplace_back(key);
        }
    }
    for (const auto& entry : session.properties) {
        if (std::find(well_known_properties.begin(), well_known_properties.end(), entry.first) ==
                well_known_properties.end() &&
            !is_statistics_property(entry.first) && !is_kernel_domain_property(entry.first) &&
            entry.first != "ProcessAttributeTrackers") {
            keys.push_back(entry.first);
        }
    }
    std::size_t width = 0;
    for (const std::string& key : keys) {
        width = std::max(width, display_width(key) + 1);
    }
    std::string out;
    for (const std::string& key : keys) {
        append_padded(out, key + ":", width + 1);
        out += format_detail_value(key, session.properties.at(key), user_name);
        out += '\n';
    }
    if (const std::string kernel = format_kernel_section(session.properties); !kernel.empty()) {
        out += '\n';
        out += kernel;
    }
    if (const std::string tracking = format_tracking_section(session.properties);
        !tracking.empty()) {
        out += '\n';
        out += tracking;
    }
    if (const auto statistics = statistics_from_properties(session.properties)) {
        out += '\n';
        out += format_statistics_section(*statistics);
    }
    return out;
}

std::string format_session_json(const SessionView& session) {
    return dump_pretty(to_json_object(session));
}

std::string format_sessions_json(const std::vector<SessionView>& sessions) {
    auto array = nlohmann::json::array();
    std::transform(sessions.begin(), sessions.end(), std::back_inserter(array), to_json_object);
    return dump_pretty(array);
}

std::string format_created(const SessionView& session) {
    if (session.output_url.empty()) {
        return "Session " + session.name + " created (id " + session.id + ", output " +
               session.output_path + ")\n";
    }
    // As lttng create says it of a network or live session (which begins a live one with
    // "Live session": here "Session NAME created" whatever the mode, as for local ones).
    std::string out = "Session " + session.name + " created.\nTraces will be output to " +
                      session.output_url + "\n";
    if (session.live_timer_us > 0) {
        out += "Live timer interval set to " + std::to_string(session.live_timer_us) + " us\n";
    }
    return out;
}

std::string format_started(std::string_view name) {
    return "Tracing started for session " + std::string{name} + ".\n";
}

std::string format_stopped(std::string_view name) {
    return "Tracing stopped for session " + std::string{name} + ".\n";
}

std::string format_destroyed(std::string_view name) {
    return "Session " + std::string{name} + " destroyed.\n";
}

std::string format_nothing_destroyed() {
    return "No sessions to destroy.\n";
}

} // namespace tracectl::cli
