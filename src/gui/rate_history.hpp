// The last minute of one session's rates, for the rate graph: each Statistics sample the
// daemon announces becomes one point, the rate between it and the sample before (computed by
// cli::RateTracker, as the Events/s column is). No GTK, no bus: tested in
// tests/unit/gui_rate_history_test.cpp.
#pragma once

#include <cli/top_model.hpp>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::gui {

/// One point of a rate graph.
struct RatePoint {
    double secondsAgo; ///< 0 (now) to RateHistory::window_s (the left edge)
    double value;      ///< the rate, in RateHistory::unit() per second
    bool operator==(const RatePoint&) const = default;
};

class RateHistory {
public:
    /// How far back the graph reaches, in seconds.
    static constexpr double kWindowS = 60.0;

    /// Takes one sample of the session's counters (`sampled_at_us`: CLOCK_MONOTONIC µs, as
    /// Statistics' sampled-at). A sample earlier than the last (the daemon restarted) starts
    /// the history over.
    void add(const cli::Counters& counters, std::uint64_t sampledAtUs);

    /// What the points measure: "events/s" while every point has an event count (a session
    /// created with count-events), else "MB/s" (bytes written / 1,000,000 per second).
    std::string unit() const;

    /// The points of the last window_s seconds before `now_us` (CLOCK_MONOTONIC µs), oldest
    /// first. A session silent for longer than cli::RateTracker::stale_after_us wrote nothing
    /// (the daemon announces only changes): the graph then falls to 0 after its last point.
    std::vector<RatePoint> points(std::uint64_t nowUs) const;

private:
    struct Sample {
        std::uint64_t atUs;
        std::optional<double> eventsPerS;
        double bytesPerS;
    };
    cli::RateTracker tracker_;
    std::deque<Sample> samples_;
    std::uint64_t lastAtUs_ = 0;
};

} // namespace tracectl::gui
