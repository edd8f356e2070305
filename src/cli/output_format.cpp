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

constexpr auto kJsonErrors = nlohmann::json::error_handler_t::replace;

void appendPadded(std::string& out, std::string_view text, std::size_t width) {
    out += text;
    out.append(width - std::min(width, displayWidth(text)), ' ');
}

std::string dumpPretty(const nlohmann::json& value) {
    return value.dump(2, ' ', false, kJsonErrors) + "\n";
}

nlohmann::json toJsonObject(const SessionView& session) {
    auto object = nlohmann::json::object();
    for (const auto& [key, value] : session.properties) {
        object[key] = key == kChannelStatisticsProperty ? channelStatisticsReadable(value) : value;
    }
    return object;
}

constexpr std::array<std::string_view, 10> kWellKnownProperties{
    "Name",      "Id",        "State",           "Mode",        "Owner", "OutputPath",
    "OutputUrl", "LiveTimer", "BufferOwnership", "CreationTime"};

/// Left out of `show`'s lines because they do not apply to this session: OutputUrl of a
/// local session (""), LiveTimer of a session that is not live (0), OutputPath of a
/// network session ("" beside a non-empty OutputUrl).
bool notApplicable(const SessionView& session, std::string_view key) {
    const nlohmann::json& value = session.properties.at(std::string{key});
    if (key == "OutputUrl") {
        return value == "";
    }
    if (key == "LiveTimer") {
        return value == 0;
    }
    return key == "OutputPath" && value == "" && !session.outputUrl.empty();
}

/// Left out of `show`'s lines for a session that records in the kernel domain only: the UST
/// domain's empty Channels, Events and Contexts, and its RingBufferSize (the UST consumer's
/// ring buffers, 0 with no UST channel), beside the "Kernel domain" section that lists what
/// the session records.
bool emptyUstLineOfKernelSession(const SessionView& session, std::string_view key) {
    const auto kernel = session.properties.find("KernelChannels");
    const auto ust = session.properties.find("Channels");
    if (kernel == session.properties.end() || !kernel->second.is_array() ||
        kernel->second.empty() || ust == session.properties.end() || !ust->second.is_array() ||
        !ust->second.empty()) {
        return false;
    }
    const nlohmann::json& value = session.properties.at(std::string{key});
    if (key == "Channels" || key == "Events" || key == "Contexts") {
        return value.is_array() && value.empty();
    }
    return key == "RingBufferSize" && value == 0;
}

/// Shown in their own section, not as "Key: value" lines.
bool isStatisticsProperty(std::string_view key) {
    return key == kStatisticsProperty || key == kChannelStatisticsProperty;
}

/// "  [disabled: A, B]" naming the UST channels (Channels rows: their last
/// member `enabled` false) or event rules (Events rows: "CHANNEL/PATTERN",
/// and " (filter: EXPR)" when the rule has one, its 7th member) that are
/// disabled, as lttng-list(1) marks them; "" when none is.
std::string disabledNote(const std::string& key, const nlohmann::json& rows) {
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

std::string formatDetailValue(const std::string& key, const nlohmann::json& value,
                              const UserNameLookup& userName) {
    if (key == "Owner" && value.is_number_unsigned() &&
        value.get<std::uint64_t>() <= std::numeric_limits<std::uint32_t>::max()) {
        const auto uid = static_cast<std::uint32_t>(value.get<std::uint64_t>());
        const std::string name = formatOwner(uid, userName);
        const std::string number = std::to_string(uid);
        return name == number ? number : number + " (" + name + ")";
    }
    if (key == "CreationTime" && value.is_number_unsigned()) {
        return formatTimestamp(value.get<std::uint64_t>());
    }
    if (key == "LiveTimer" && value.is_number_unsigned()) {
        return std::to_string(value.get<std::uint64_t>()) + " us";
    }
    if ((key == "Channels" || key == "Events") && value.is_array()) {
        return formatPropertyValue(value) + disabledNote(key, value);
    }
    return formatPropertyValue(value);
}

} // namespace

std::string formatPropertyValue(const nlohmann::json& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return {};
    }
    return value.dump(-1, ' ', false, kJsonErrors);
}

std::string formatTimestamp(std::uint64_t usec) {
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

std::string formatOwner(std::uint32_t uid, const UserNameLookup& userName) {
    if (userName) {
        if (auto name = userName(uid); name && !name->empty()) {
            return *name;
        }
    }
    return std::to_string(uid);
}

std::string formatSessionTable(const std::vector<SessionView>& sessions,
                               const UserNameLookup& userName) {
    if (sessions.empty()) {
        return "No sessions.\n";
    }
    using Row = std::array<std::string, 7>;
    std::vector<Row> rows;
    rows.reserve(sessions.size() + 1);
    rows.push_back(Row{"NAME", "STATE", "MODE", "OWNER", "DISCARDED", "LOST", "OUTPUT"});
    for (const SessionView& session : sessions) {
        // "-": the daemon has no Statistics property (older than issue 14).
        const auto statistics = statisticsFromProperties(session.properties);
        rows.push_back(Row{session.name, session.state, session.mode,
                           formatOwner(session.owner, userName),
                           statistics ? std::to_string(statistics->totals.eventsDiscarded) : "-",
                           statistics ? std::to_string(statistics->totals.packetsLost) : "-",
                           outputLocation(session)});
    }
    std::array<std::size_t, 7> widths{};
    for (const Row& row : rows) {
        for (std::size_t column = 0; column < row.size(); ++column) {
            widths[column] = std::max(widths[column], displayWidth(row[column]));
        }
    }
    std::string out;
    for (const Row& row : rows) {
        for (std::size_t column = 0; column + 1 < row.size(); ++column) {
            appendPadded(out, row[column], widths[column] + 2);
        }
        out += row.back();
        out += '\n';
    }
    return out;
}

std::string formatSessionDetails(const SessionView& session, const UserNameLookup& userName) {
    std::vector<std::string> keys;
    for (std::string_view key : kWellKnownProperties) {
        if (session.properties.contains(std::string{key}) && !notApplicable(session, key)) {
            keys.emplace_back(key);
        }
    }
    for (const auto& entry : session.properties) {
        if (std::find(kWellKnownProperties.begin(), kWellKnownProperties.end(), entry.first) ==
                kWellKnownProperties.end() &&
            !isStatisticsProperty(entry.first) && !isKernelDomainProperty(entry.first) &&
            entry.first != "ProcessAttributeTrackers" &&
            !emptyUstLineOfKernelSession(session, entry.first)) {
            keys.push_back(entry.first);
        }
    }
    std::size_t width = 0;
    for (const std::string& key : keys) {
        width = std::max(width, displayWidth(key) + 1);
    }
    std::string out;
    for (const std::string& key : keys) {
        appendPadded(out, key + ":", width + 1);
        out += formatDetailValue(key, session.properties.at(key), userName);
        out += '\n';
    }
    if (const std::string kernel = formatKernelSection(session.properties); !kernel.empty()) {
        out += '\n';
        out += kernel;
    }
    if (const std::string tracking = formatTrackingSection(session.properties); !tracking.empty()) {
        out += '\n';
        out += tracking;
    }
    if (const auto statistics = statisticsFromProperties(session.properties)) {
        out += '\n';
        out += formatStatisticsSection(*statistics);
    }
    return out;
}

std::string formatSessionJson(const SessionView& session) {
    return dumpPretty(toJsonObject(session));
}

std::string formatSessionsJson(const std::vector<SessionView>& sessions) {
    auto array = nlohmann::json::array();
    std::transform(sessions.begin(), sessions.end(), std::back_inserter(array), toJsonObject);
    return dumpPretty(array);
}

std::string formatCreated(const SessionView& session) {
    if (session.outputUrl.empty()) {
        return "Session " + session.name + " created (id " + session.id + ", output " +
               session.outputPath + ")\n";
    }
    // As lttng create says it of a network or live session (which begins a live one with
    // "Live session": here "Session NAME created" whatever the mode, as for local ones).
    std::string out = "Session " + session.name + " created.\nTraces will be output to " +
                      session.outputUrl + "\n";
    if (session.liveTimerUs > 0) {
        out += "Live timer interval set to " + std::to_string(session.liveTimerUs) + " us\n";
    }
    return out;
}

std::string formatStarted(std::string_view name) {
    return "Tracing started for session " + std::string{name} + ".\n";
}

std::string formatStopped(std::string_view name) {
    return "Tracing stopped for session " + std::string{name} + ".\n";
}

std::string formatDestroyed(std::string_view name) {
    return "Session " + std::string{name} + " destroyed.\n";
}

std::string formatNothingDestroyed() {
    return "No sessions to destroy.\n";
}

} // namespace tracectl::cli
