#include "statistics_format.hpp"

#include "quantities.hpp"
#include "text_table.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace tracectl::cli {

std::string formatStatisticsSection(const SessionStatistics& statistics) {
    const Counters& totals = statistics.totals;
    const std::array<std::pair<std::string_view, std::string>, 5> lines{{
        {"Events recorded:", totals.eventsRecorded ? std::to_string(*totals.eventsRecorded)
                                                   : std::string("not counted")},
        {"Events discarded:", std::to_string(totals.eventsDiscarded)},
        {"Packets lost:", std::to_string(totals.packetsLost)},
        {"Bytes written:", formatSize(totals.bytesWritten)},
        {"Current chunk:", formatSize(totals.chunkBytes)},
    }};
    std::string out =
        statistics.sampledAtUs == 0 ? "Statistics (not sampled yet):\n" : "Statistics:\n";
    for (const auto& [label, value] : lines) {
        out += "  ";
        out += label;
        out.append(19 - label.size(), ' ');
        out += value;
        out += '\n';
    }
    if (totals.appsRefused != 0) {
        out += "  Apps refused:      " + std::to_string(totals.appsRefused) +
               " (the consumer had no file descriptors for their buffers)\n";
    }
    if (statistics.channels.empty()) {
        return out;
    }
    std::vector<TableRow> rows{{"DOMAIN", "CHANNEL", "RECORDED", "DISCARDED", "LOST", "WRITTEN"}};
    for (const ChannelCounters& channel : statistics.channels) {
        const Counters& c = channel.counters;
        rows.push_back({channel.domain, channel.channel,
                        c.eventsRecorded ? std::to_string(*c.eventsRecorded) : "-",
                        std::to_string(c.eventsDiscarded), std::to_string(c.packetsLost),
                        formatSize(c.bytesWritten)});
    }
    for (const std::string& line : formatTable(rows, {2, 3, 4, 5})) {
        out += "  " + line + '\n';
    }
    return out;
}

} // namespace tracectl::cli
