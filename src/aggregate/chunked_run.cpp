#include "aggregate/chunked_run.hpp"

#include "aggregate/ip_aggregation.hpp"
#include "aggregate/json_output.hpp"
#include "aggregate/trace_reader.hpp"

namespace tracectl::aggregate {

ChunkedRun::ChunkedRun(const Program& program, const RunOptions& options, std::ostream& out,
                       bool json)
    : program_(program), out_(out), json_(json), interpreter_(program, options, out) {
    interpreter_.print_aggregations_at_end = !json;
}

void ChunkedRun::begin(std::int64_t timestamp) {
    interpreter_.begin(timestamp);
}

bool ChunkedRun::feed(const std::vector<std::string>& traces) {
    if (interpreter_.exit_status()) {
        return false;
    }
    if (!traces.empty()) {
        read_ = true;
        ReadStatistics s;
        if (program_.needs_order()) {
            s = read_traces_in_order(traces, interpreter_.binder(), interpreter_);
        } else {
            interpreter_.begin();
            if (!interpreter_.exit_status()) {
                s = read_traces(traces, program_, interpreter_.binder(),
                                interpreter_.aggregations());
            }
        }
        ReadStatistics& total = result_.statistics;
        total.event_records += s.event_records;
        total.matched_records += s.matched_records;
        total.event_classes += s.event_classes;
        total.discarded_events += s.discarded_events;
        total.discarded_exact = total.discarded_exact && s.discarded_exact;
    }
    out_.flush();
    return !interpreter_.exit_status();
}

bool ChunkedRun::feed_ip_rows(const std::vector<std::pair<tracectl_ip_record, std::uint64_t>>& rows,
                              std::uint64_t dropped, std::int64_t timestamp) {
    if (interpreter_.exit_status()) {
        return false;
    }
    read_ = true;
    IpRowFeeder feeder(interpreter_);
    ReadStatistics& total = result_.statistics;
    total.event_classes += 2;
    total.discarded_events += dropped;
    for (const auto& [record, count] : rows) {
        total.event_records += count;
        total.matched_records += count; // a row is of the plan's probes
        if (!feeder.feed(record, count, timestamp)) {
            break;
        }
    }
    out_.flush();
    return !interpreter_.exit_status();
}

bool ChunkedRun::advance_to(std::int64_t timestamp) {
    const bool going = interpreter_.advance(timestamp);
    out_.flush();
    return going;
}

ProgramRun ChunkedRun::finish(std::string* aggregations_json) {
    if (!read_) {
        interpreter_.begin();
        interpreter_.binder().check_references(); // BEGIN and END's fields, at least
    }
    interpreter_.end();
    if (read_) {
        result_.unmatched_probes = interpreter_.binder().unmatched_probes();
    }
    result_.errors = interpreter_.errors();
    result_.exit_status = interpreter_.exit_status();
    if (json_ && aggregations_json != nullptr) {
        nlohmann::json document = to_json(interpreter_.aggregations());
        document["discarded"] = result_.statistics.discarded_events;
        *aggregations_json = json_text(document);
    }
    return result_;
}

} // namespace tracectl::aggregate
