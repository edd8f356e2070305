#include "rate_history.hpp"

#include <algorithm>

namespace tracectl::gui {
namespace {

constexpr std::uint64_t kWindowUs = static_cast<std::uint64_t>(RateHistory::kWindowS * 1e6);

double secondsBetween(std::uint64_t earlierUs, std::uint64_t laterUs) {
    return laterUs > earlierUs ? static_cast<double>(laterUs - earlierUs) / 1e6 : 0.0;
}

} // namespace

void RateHistory::add(const cli::Counters& counters, std::uint64_t sampledAtUs) {
    if (sampledAtUs == 0) {
        return; // never sampled
    }
    if (sampledAtUs < lastAtUs_) {
        samples_.clear(); // a restarted daemon's clock series
        tracker_ = cli::RateTracker{};
    }
    tracker_.add(counters, sampledAtUs);
    lastAtUs_ = sampledAtUs;
    const auto [events, bytes] = tracker_.rates(0);
    if (!bytes) {
        return; // the first sample: no rate yet
    }
    if (!samples_.empty() && samples_.back().atUs == sampledAtUs) {
        samples_.pop_back(); // the same sample announced again, maybe with newer figures
    }
    samples_.push_back(Sample{sampledAtUs, events, *bytes});
    while (!samples_.empty() && samples_.front().atUs + kWindowUs < sampledAtUs) {
        samples_.pop_front();
    }
}

std::string RateHistory::unit() const {
    const bool counted =
        !samples_.empty() && std::all_of(samples_.begin(), samples_.end(),
                                         [](const Sample& s) { return s.eventsPerS.has_value(); });
    return counted ? "events/s" : "MB/s";
}

std::vector<RatePoint> RateHistory::points(std::uint64_t nowUs) const {
    const bool events = unit() == "events/s";
    std::vector<RatePoint> out;
    out.reserve(samples_.size() + 2);
    for (const Sample& sample : samples_) {
        const double ago = secondsBetween(sample.atUs, nowUs);
        if (ago <= kWindowS) {
            out.push_back(RatePoint{ago, events ? *sample.eventsPerS : sample.bytesPerS / 1e6});
        }
    }
    if (!samples_.empty() && nowUs > lastAtUs_ &&
        nowUs - lastAtUs_ > cli::RateTracker::kStaleAfterUs) {
        // Nothing announced since: nothing written. Down to 0 one announcement later.
        const double silentFrom = secondsBetween(lastAtUs_ + 1'000'000, nowUs);
        if (silentFrom <= kWindowS) {
            out.push_back(RatePoint{silentFrom, 0.0});
        }
        out.push_back(RatePoint{0.0, 0.0});
    }
    return out;
}

} // namespace tracectl::gui
