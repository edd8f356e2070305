#include "statistics_format.hpp"

#include "quantities.hpp"
#include "text_table.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace tracectl::cli {

std::string format_statistics_section(const SessionStatistics& statistics) {
    const Counters& totals = statistics.totals;
    const std::array<std::pair<std::string_view, std::string>, 5> lines{{
        {"Events recorded:", totals.events_recorded ? std::to_string(*totals.events_recorded)
                                                    : std::string("not counted")},
        {"Events discarded:", std::to_string(totals.events_discarded)},
        {"Packets lost:", std::to_string(totals.packets_lost)},
        {"Bytes written:", format_size(totals.bytes_written)},
        {"Current chunk:", format_size(totals.chunk_bytes)},
    }};
    std::string out =
        statistics.sampled_at_us == 0 ? "Statistics (not sampled yet):\n" : "Statistics:\n";
    for (const auto& [label, value] : lines) {
        out += "  ";
        out += label;
        out.append(19 - label.size(), ' ');
        out += value;
        out += '\n';
    }
    if (totals.apps_refused != 0) {
        out += "  Apps refused:      " + std::to_string(totals.apps_refused) +
               " (the consumer had no file descriptors for their buffers)\n";
    }
    if (statistics.channels.empty()) {
        return out;
    }
    std::vector<TableRow> rows{{"DOMAIN", "CHANNEL", "RECORDED", "DISCARDED", "LOST", "WRITTEN"}};
    for (const ChannelCounters& channel : statistics.channels) {
        const Counters& c = channel.counters;
        rows.push_back({channel.domain, channel.channel,
                        c.events_recorded ? std::to_string(*c.events_recorded) : "-",
                        std::to_string(c.events_discarded), std::to_string(c.packets_lost),
                        format_size(c.bytes_written)});
    }
    for (const std::string& line : format_table(rows, {2, 3, 4, 5})) {
        out += "  " + line + '\n';
    }
    return out;
}

} // namespace tracectl::cli
