#include "rate_history.hpp"

#include <algorithm>

namespace tracectl::gui {
namespace {

constexpr std::uint64_t window_us = static_cast<std::uint64_t>(RateHistory::window_s * 1e6);

double seconds_between(std::uint64_t earlier_us, std::uint64_t later_us) {
    return later_us > earlier_us ? static_cast<double>(later_us - earlier_us) / 1e6 : 0.0;
}

} // namespace

void RateHistory::add(const cli::Counters& counters, std::uint64_t sampled_at_us) {
    if (sampled_at_us == 0) {
        return; // never sampled
    }
    if (sampled_at_us < last_at_us_) {
        samples_.clear(); // a restarted daemon's clock series
        tracker_ = cli::RateTracker{};
    }
    tracker_.add(counters, sampled_at_us);
    last_at_us_ = sampled_at_us;
    const auto [events, bytes] = tracker_.rates(0);
    if (!bytes) {
        return; // the first sample: no rate yet
    }
    if (!samples_.empty() && samples_.back().at_us == sampled_at_us) {
        samples_.pop_back(); // the same sample announced again, maybe with newer figures
    }
    samples_.push_back(Sample{sampled_at_us, events, *bytes});
    while (!samples_.empty() && samples_.front().at_us + window_us < sampled_at_us) {
        samples_.pop_front();
    }
}

std::string RateHistory::unit() const {
    const bool counted = !samples_.empty() &&
                         std::all_of(samples_.begin(), samples_.end(),
                                     [](const Sample& s) { return s.events_per_s.has_value(); });
    return counted ? "events/s" : "MB/s";
}

std::vector<RatePoint> RateHistory::points(std::uint64_t now_us) const {
    const bool events = unit() == "events/s";
    std::vector<RatePoint> out;
    out.reserve(samples_.size() + 2);
    for (const Sample& sample : samples_) {
        const double ago = seconds_between(sample.at_us, now_us);
        if (ago <= window_s) {
            out.push_back(RatePoint{ago, events ? *sample.events_per_s : sample.bytes_per_s / 1e6});
        }
    }
    if (!samples_.empty() && now_us > last_at_us_ &&
        now_us - last_at_us_ > cli::RateTracker::stale_after_us) {
        // Nothing announced since: nothing written. Down to 0 one announcement later.
        const double silent_from = seconds_between(last_at_us_ + 1'000'000, now_us);
        if (silent_from <= window_s) {
            out.push_back(RatePoint{silent_from, 0.0});
        }
        out.push_back(RatePoint{0.0, 0.0});
    }
    return out;
}

} // namespace tracectl::gui
