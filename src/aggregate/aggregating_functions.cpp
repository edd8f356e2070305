#include "aggregate/aggregating_functions.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace tracectl::aggregate {

std::int64_t quantize_bucket_value(int bucket) noexcept {
    if (bucket < quantize_zero_bucket) {
        return -(std::int64_t{1} << (quantize_zero_bucket - 1 - bucket));
    }
    if (bucket == quantize_zero_bucket) {
        return 0;
    }
    return std::int64_t{1} << (bucket - quantize_zero_bucket - 1);
}

int quantize_bucket(std::int64_t value) noexcept {
    if (value == 0) {
        return quantize_zero_bucket;
    }
    if (value > 0) {
        // floor(log2(value)) is 0..62.
        return quantize_zero_bucket + 1 +
               (63 - std::countl_zero(static_cast<std::uint64_t>(value)));
    }
    // As illumos' dtrace_aggregate_quantize: the first bucket, from -2^62 up, whose label
    // -2^k is >= value, i.e. the greatest k with 2^k <= |value|: floor(log2(|value|)) (the
    // row labelled -4 holds -7..-4).
    const std::uint64_t magnitude = 0 - static_cast<std::uint64_t>(value);
    const int k = std::bit_width(magnitude) - 1; // floor(log2(magnitude)); 63 for INT64_MIN
    const int bucket = quantize_zero_bucket - 1 - k;
    return bucket < 0 ? 0 : bucket;
}

std::int64_t lquantize_bucket(const LinearParameters& p, std::int64_t value) noexcept {
    if (value < p.low) {
        return 0;
    }
    // Both are at most 2^32 apart from int32 bounds... value may be huge: compare unsigned.
    const std::uint64_t offset =
        static_cast<std::uint64_t>(value) - static_cast<std::uint64_t>(p.low);
    const std::uint64_t level = offset / static_cast<std::uint64_t>(p.step);
    const auto levels = static_cast<std::uint64_t>(p.levels());
    return level < levels ? static_cast<std::int64_t>(level) + 1
                          : static_cast<std::int64_t>(levels) + 1;
}

namespace {

std::uint64_t isqrt(uint128 n) noexcept {
    // The largest r with r * r <= n; n < 2^128, so r < 2^64.
    std::uint64_t r = 0;
    for (int bit = 63; bit >= 0; --bit) {
        const std::uint64_t candidate = r | (std::uint64_t{1} << bit);
        if (static_cast<uint128>(candidate) * candidate <= n) {
            r = candidate;
        }
    }
    return r;
}

/// (high:low) / n for a 256-bit dividend whose quotient fits in 128 bits.
uint128 divide_256(uint128 high, uint128 low, std::uint64_t n) noexcept {
    const std::uint64_t limbs[4] = {
        static_cast<std::uint64_t>(high >> 64), static_cast<std::uint64_t>(high),
        static_cast<std::uint64_t>(low >> 64), static_cast<std::uint64_t>(low)};
    uint128 remainder = 0;
    uint128 quotient = 0;
    for (const std::uint64_t limb : limbs) {
        const uint128 current = (remainder << 64) | limb;
        quotient = (quotient << 64) | static_cast<std::uint64_t>(current / n);
        remainder = current % n;
    }
    return quotient;
}

} // namespace

std::uint64_t dtrace_stddev(std::uint64_t n, int128 sum, uint128 sum_of_squares,
                            uint128 sum_of_squares_high) noexcept {
    if (n == 0) {
        return 0;
    }
    const uint128 average_of_squares = divide_256(sum_of_squares_high, sum_of_squares, n);
    const int128 average = sum / static_cast<int128>(n); // within int64: an average of int64s
    const std::uint64_t magnitude =
        average < 0 ? static_cast<std::uint64_t>(-average) : static_cast<std::uint64_t>(average);
    const uint128 square_of_average = static_cast<uint128>(magnitude) * magnitude;
    // dt_subtract_128 wraps; with integer truncation the difference is still >= 0 in
    // practice, but wrap the same way rather than trap.
    return isqrt(average_of_squares - square_of_average);
}

std::vector<std::int64_t> llquantize_bounds(const LogLinearParameters& p) {
    std::int64_t power = 1; // factor^m
    for (std::int64_t m = 0; m < p.low; ++m) {
        power *= p.factor;
    }
    std::vector<std::int64_t> bounds{power};
    for (std::int64_t m = p.low; m <= p.high; ++m) {
        const std::int64_t next = power * p.factor; // the parser checked it fits
        const std::int64_t steps = std::min(p.steps, next);
        const std::int64_t width = next / steps;
        for (std::int64_t value = power + width; value < next; value += width) {
            bounds.push_back(value);
        }
        bounds.push_back(next);
        power = next;
    }
    return bounds;
}

std::size_t llquantize_bucket(const std::vector<std::int64_t>& bounds,
                              std::int64_t value) noexcept {
    return static_cast<std::size_t>(std::upper_bound(bounds.begin(), bounds.end(), value) -
                                    bounds.begin());
}

AggregationState::AggregationState(Function function, const LinearParameters& linear,
                                   const LogLinearParameters& log_linear)
    : function_(function), linear_(linear) {
    if (function == Function::llquantize) {
        bounds_ = llquantize_bounds(log_linear);
        buckets_.assign(bounds_.size() + 1, 0);
    }
    if (function == Function::min) {
        value_ = std::numeric_limits<std::int64_t>::max();
    } else if (function == Function::max) {
        value_ = std::numeric_limits<std::int64_t>::min();
    } else if (function == Function::quantize) {
        buckets_.assign(quantize_buckets, 0);
    } else if (function == Function::lquantize) {
        buckets_.assign(static_cast<std::size_t>(linear.levels()) + 2, 0);
    }
}

void AggregationState::add(std::int64_t value, std::uint64_t weight) noexcept {
    if (weight == 0) {
        return;
    }
    count_ += weight;
    const auto times = static_cast<std::int64_t>(weight);
    switch (function_) {
    case Function::count:
        break;
    case Function::sum: // wraps around as `weight` 64-bit additions do
        value_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(value_) +
                                           static_cast<std::uint64_t>(value) * weight);
        break;
    case Function::avg:
        wide_sum_ += static_cast<int128>(value) * static_cast<int128>(weight);
        break;
    case Function::stddev: {
        wide_sum_ += static_cast<int128>(value) * static_cast<int128>(weight);
        const std::uint64_t magnitude =
            value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
        const uint128 square = static_cast<uint128>(magnitude) * magnitude;
        // square * weight, up to 190 bits: the low 64 bits of square times weight, plus
        // the high 64 bits times weight shifted by 64.
        const uint128 low_part = static_cast<uint128>(static_cast<std::uint64_t>(square)) * weight;
        const uint128 high_part =
            static_cast<uint128>(static_cast<std::uint64_t>(square >> 64)) * weight;
        const uint128 low = low_part + (high_part << 64);
        uint128 high = (high_part >> 64) + (low < low_part ? 1 : 0);
        sum_of_squares_ += low;
        high += sum_of_squares_ < low ? 1 : 0;
        sum_of_squares_high_ += high;
        break;
    }
    case Function::min:
        value_ = value < value_ ? value : value_;
        break;
    case Function::max:
        value_ = value > value_ ? value : value_;
        break;
    case Function::quantize:
        buckets_[static_cast<std::size_t>(quantize_bucket(value))] += times;
        break;
    case Function::lquantize:
        buckets_[static_cast<std::size_t>(lquantize_bucket(linear_, value))] += times;
        break;
    case Function::llquantize:
        buckets_[llquantize_bucket(bounds_, value)] += times;
        break;
    }
}

void AggregationState::clear() noexcept {
    AggregationState empty(function_, linear_);
    count_ = 0;
    value_ = empty.value_;
    wide_sum_ = 0;
    sum_of_squares_ = 0;
    sum_of_squares_high_ = 0;
    std::fill(buckets_.begin(), buckets_.end(), 0);
}

void AggregationState::merge(const AggregationState& other) noexcept {
    if (other.count_ == 0) {
        return;
    }
    count_ += other.count_;
    switch (function_) {
    case Function::min:
        value_ = other.value_ < value_ ? other.value_ : value_;
        break;
    case Function::max:
        value_ = other.value_ > value_ ? other.value_ : value_;
        break;
    default:
        value_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(value_) +
                                           static_cast<std::uint64_t>(other.value_));
    }
    wide_sum_ += other.wide_sum_;
    sum_of_squares_ += other.sum_of_squares_;
    sum_of_squares_high_ +=
        other.sum_of_squares_high_ + (sum_of_squares_ < other.sum_of_squares_ ? 1 : 0);
    for (std::size_t i = 0; i < buckets_.size() && i < other.buckets_.size(); ++i) {
        buckets_[i] += other.buckets_[i];
    }
}

namespace {

/// The value an lquantize bucket stands for in DTrace's sort (dt_aggregate_lquantizedsum):
/// the "< low" row counts as low - 1, the others as their label.
long double lquantize_bucket_value(const LinearParameters& p, std::size_t bucket) {
    if (bucket == 0) {
        return static_cast<long double>(p.low - 1);
    }
    return static_cast<long double>(p.low) +
           static_cast<long double>(bucket - 1) * static_cast<long double>(p.step);
}

} // namespace

std::int64_t AggregationState::value() const noexcept {
    switch (function_) {
    case Function::count:
        return static_cast<std::int64_t>(count_);
    case Function::sum:
    case Function::min:
    case Function::max:
        return value_;
    case Function::avg:
        return count_ == 0 ? 0 : static_cast<std::int64_t>(wide_sum_ / static_cast<int128>(count_));
    case Function::stddev:
        return static_cast<std::int64_t>(
            dtrace_stddev(count_, wide_sum_, sum_of_squares_, sum_of_squares_high_));
    case Function::quantize:
    case Function::lquantize:
    case Function::llquantize:
        return static_cast<std::int64_t>(sort_value());
    }
    return 0;
}

long double AggregationState::sort_value() const noexcept {
    switch (function_) {
    case Function::avg:
        return count_ == 0 ? 0.0L
                           : static_cast<long double>(wide_sum_) / static_cast<long double>(count_);
    case Function::quantize: {
        long double total = 0;
        for (int i = 0; i < quantize_buckets; ++i) {
            total += static_cast<long double>(quantize_bucket_value(i)) *
                     static_cast<long double>(buckets_[static_cast<std::size_t>(i)]);
        }
        return total;
    }
    case Function::lquantize: {
        long double total = 0;
        for (std::size_t i = 0; i < buckets_.size(); ++i) {
            total += lquantize_bucket_value(linear_, i) * static_cast<long double>(buckets_[i]);
        }
        return total;
    }
    case Function::llquantize: {
        long double total = 0;
        for (std::size_t i = 1; i < buckets_.size(); ++i) {
            total +=
                static_cast<long double>(bounds_[i - 1]) * static_cast<long double>(buckets_[i]);
        }
        return total;
    }
    default:
        return static_cast<long double>(value());
    }
}

} // namespace tracectl::aggregate
