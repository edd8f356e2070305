#include "aggregate/chunked_run.hpp"

#include "aggregate/ip_aggregation.hpp"
#include "aggregate/json_output.hpp"
#include "aggregate/trace_reader.hpp"

namespace tracectl::aggregate {

ChunkedRun::ChunkedRun(const Program& program, const RunOptions& options, std::ostream& out,
                       bool json)
    : program_(program), out_(out), json_(json), interpreter_(program, options, out) {
    interpreter_.printAggregationsAtEnd = !json;
}

void ChunkedRun::begin(std::int64_t timestamp) {
    interpreter_.begin(timestamp);
}

bool ChunkedRun::feed(const std::vector<std::string>& traces) {
    if (interpreter_.exitStatus()) {
        return false;
    }
    if (!traces.empty()) {
        read_ = true;
        ReadStatistics s;
        if (program_.needsOrder()) {
            s = readTracesInOrder(traces, interpreter_.binder(), interpreter_);
        } else {
            interpreter_.begin();
            if (!interpreter_.exitStatus()) {
                s = readTraces(traces, program_, interpreter_.binder(),
                               interpreter_.aggregations());
            }
        }
        ReadStatistics& total = result_.statistics;
        total.eventRecords += s.eventRecords;
        total.matchedRecords += s.matchedRecords;
        total.eventClasses += s.eventClasses;
        total.discardedEvents += s.discardedEvents;
        total.discardedExact = total.discardedExact && s.discardedExact;
    }
    out_.flush();
    return !interpreter_.exitStatus();
}

bool ChunkedRun::feedIpRows(const std::vector<std::pair<tracectl_ip_record, std::uint64_t>>& rows,
                            std::uint64_t dropped, std::int64_t timestamp) {
    if (interpreter_.exitStatus()) {
        return false;
    }
    read_ = true;
    IpRowFeeder feeder(interpreter_);
    ReadStatistics& total = result_.statistics;
    total.eventClasses += 2;
    total.discardedEvents += dropped;
    for (const auto& [record, count] : rows) {
        total.eventRecords += count;
        total.matchedRecords += count; // a row is of the plan's probes
        if (!feeder.feed(record, count, timestamp)) {
            break;
        }
    }
    out_.flush();
    return !interpreter_.exitStatus();
}

bool ChunkedRun::advanceTo(std::int64_t timestamp) {
    const bool going = interpreter_.advance(timestamp);
    out_.flush();
    return going;
}

ProgramRun ChunkedRun::finish(std::string* aggregationsJson) {
    if (!read_) {
        interpreter_.begin();
        interpreter_.binder().checkReferences(); // BEGIN and END's fields, at least
    }
    interpreter_.end();
    if (read_) {
        result_.unmatchedProbes = interpreter_.binder().unmatchedProbes();
    }
    result_.errors = interpreter_.errors();
    result_.exitStatus = interpreter_.exitStatus();
    if (json_ && aggregationsJson != nullptr) {
        nlohmann::json document = to_json(interpreter_.aggregations());
        document["discarded"] = result_.statistics.discardedEvents;
        *aggregationsJson = jsonText(document);
    }
    return result_;
}

} // namespace tracectl::aggregate
