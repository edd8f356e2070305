#include "aggregate/aggregating_functions.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace tracectl::aggregate {

std::int64_t quantizeBucketValue(int bucket) noexcept {
    if (bucket < kQuantizeZeroBucket) {
        return -(std::int64_t{1} << (kQuantizeZeroBucket - 1 - bucket));
    }
    if (bucket == kQuantizeZeroBucket) {
        return 0;
    }
    return std::int64_t{1} << (bucket - kQuantizeZeroBucket - 1);
}

int quantizeBucket(std::int64_t value) noexcept {
    if (value == 0) {
        return kQuantizeZeroBucket;
    }
    if (value > 0) {
        // floor(log2(value)) is 0..62.
        return kQuantizeZeroBucket + 1 + (63 - std::countl_zero(static_cast<std::uint64_t>(value)));
    }
    // As illumos' dtrace_aggregate_quantize: the first bucket, from -2^62 up, whose label
    // -2^k is >= value, i.e. the greatest k with 2^k <= |value|: floor(log2(|value|)) (the
    // row labelled -4 holds -7..-4).
    const std::uint64_t magnitude = 0 - static_cast<std::uint64_t>(value);
    const int k = std::bit_width(magnitude) - 1; // floor(log2(magnitude)); 63 for INT64_MIN
    const int bucket = kQuantizeZeroBucket - 1 - k;
    return bucket < 0 ? 0 : bucket;
}

std::int64_t lquantizeBucket(const LinearParameters& p, std::int64_t value) noexcept {
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

std::uint64_t isqrt(Uint128 n) noexcept {
    // The largest r with r * r <= n; n < 2^128, so r < 2^64.
    std::uint64_t r = 0;
    for (int bit = 63; bit >= 0; --bit) {
        const std::uint64_t candidate = r | (std::uint64_t{1} << bit);
        if (static_cast<Uint128>(candidate) * candidate <= n) {
            r = candidate;
        }
    }
    return r;
}

/// (high:low) / n for a 256-bit dividend whose quotient fits in 128 bits.
Uint128 divide256(Uint128 high, Uint128 low, std::uint64_t n) noexcept {
    const std::uint64_t limbs[4] = {
        static_cast<std::uint64_t>(high >> 64), static_cast<std::uint64_t>(high),
        static_cast<std::uint64_t>(low >> 64), static_cast<std::uint64_t>(low)};
    Uint128 remainder = 0;
    Uint128 quotient = 0;
    for (const std::uint64_t limb : limbs) {
        const Uint128 current = (remainder << 64) | limb;
        quotient = (quotient << 64) | static_cast<std::uint64_t>(current / n);
        remainder = current % n;
    }
    return quotient;
}

} // namespace

std::uint64_t dtraceStddev(std::uint64_t n, Int128 sum, Uint128 sumOfSquares,
                           Uint128 sumOfSquaresHigh) noexcept {
    if (n == 0) {
        return 0;
    }
    const Uint128 averageOfSquares = divide256(sumOfSquaresHigh, sumOfSquares, n);
    const Int128 average = sum / static_cast<Int128>(n); // within int64: an average of int64s
    const std::uint64_t magnitude =
        average < 0 ? static_cast<std::uint64_t>(-average) : static_cast<std::uint64_t>(average);
    const Uint128 squareOfAverage = static_cast<Uint128>(magnitude) * magnitude;
    // dt_subtract_128 wraps; with integer truncation the difference is still >= 0 in
    // practice, but wrap the same way rather than trap.
    return isqrt(averageOfSquares - squareOfAverage);
}

std::vector<std::int64_t> llquantizeBounds(const LogLinearParameters& p) {
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

std::size_t llquantizeBucket(const std::vector<std::int64_t>& bounds, std::int64_t value) noexcept {
    return static_cast<std::size_t>(std::upper_bound(bounds.begin(), bounds.end(), value) -
                                    bounds.begin());
}

AggregationState::AggregationState(Function function, const LinearParameters& linear,
                                   const LogLinearParameters& logLinear)
    : function_(function), linear_(linear) {
    if (function == Function::Llquantize) {
        bounds_ = llquantizeBounds(logLinear);
        buckets_.assign(bounds_.size() + 1, 0);
    }
    if (function == Function::Min) {
        value_ = std::numeric_limits<std::int64_t>::max();
    } else if (function == Function::Max) {
        value_ = std::numeric_limits<std::int64_t>::min();
    } else if (function == Function::Quantize) {
        buckets_.assign(kQuantizeBuckets, 0);
    } else if (function == Function::Lquantize) {
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
    case Function::Count:
        break;
    case Function::Sum: // wraps around as `weight` 64-bit additions do
        value_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(value_) +
                                           static_cast<std::uint64_t>(value) * weight);
        break;
    case Function::Avg:
        wideSum_ += static_cast<Int128>(value) * static_cast<Int128>(weight);
        break;
    case Function::Stddev: {
        wideSum_ += static_cast<Int128>(value) * static_cast<Int128>(weight);
        const std::uint64_t magnitude =
            value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
        const Uint128 square = static_cast<Uint128>(magnitude) * magnitude;
        // square * weight, up to 190 bits: the low 64 bits of square times weight, plus
        // the high 64 bits times weight shifted by 64.
        const Uint128 lowPart = static_cast<Uint128>(static_cast<std::uint64_t>(square)) * weight;
        const Uint128 highPart =
            static_cast<Uint128>(static_cast<std::uint64_t>(square >> 64)) * weight;
        const Uint128 low = lowPart + (highPart << 64);
        Uint128 high = (highPart >> 64) + (low < lowPart ? 1 : 0);
        sumOfSquares_ += low;
        high += sumOfSquares_ < low ? 1 : 0;
        sumOfSquaresHigh_ += high;
        break;
    }
    case Function::Min:
        value_ = value < value_ ? value : value_;
        break;
    case Function::Max:
        value_ = value > value_ ? value : value_;
        break;
    case Function::Quantize:
        buckets_[static_cast<std::size_t>(quantizeBucket(value))] += times;
        break;
    case Function::Lquantize:
        buckets_[static_cast<std::size_t>(lquantizeBucket(linear_, value))] += times;
        break;
    case Function::Llquantize:
        buckets_[llquantizeBucket(bounds_, value)] += times;
        break;
    }
}

void AggregationState::clear() noexcept {
    AggregationState empty(function_, linear_);
    count_ = 0;
    value_ = empty.value_;
    wideSum_ = 0;
    sumOfSquares_ = 0;
    sumOfSquaresHigh_ = 0;
    std::fill(buckets_.begin(), buckets_.end(), 0);
}

void AggregationState::merge(const AggregationState& other) noexcept {
    if (other.count_ == 0) {
        return;
    }
    count_ += other.count_;
    switch (function_) {
    case Function::Min:
        value_ = other.value_ < value_ ? other.value_ : value_;
        break;
    case Function::Max:
        value_ = other.value_ > value_ ? other.value_ : value_;
        break;
    default:
        value_ = static_cast<std::int64_t>(static_cast<std::uint64_t>(value_) +
                                           static_cast<std::uint64_t>(other.value_));
    }
    wideSum_ += other.wideSum_;
    sumOfSquares_ += other.sumOfSquares_;
    sumOfSquaresHigh_ += other.sumOfSquaresHigh_ + (sumOfSquares_ < other.sumOfSquares_ ? 1 : 0);
    for (std::size_t i = 0; i < buckets_.size() && i < other.buckets_.size(); ++i) {
        buckets_[i] += other.buckets_[i];
    }
}

namespace {

/// The value an lquantize bucket stands for in DTrace's sort (dt_aggregate_lquantizedsum):
/// the "< low" row counts as low - 1, the others as their label.
long double lquantizeBucketValue(const LinearParameters& p, std::size_t bucket) {
    if (bucket == 0) {
        return static_cast<long double>(p.low - 1);
    }
    return static_cast<long double>(p.low) +
           static_cast<long double>(bucket - 1) * static_cast<long double>(p.step);
}

} // namespace

std::int64_t AggregationState::value() const noexcept {
    switch (function_) {
    case Function::Count:
        return static_cast<std::int64_t>(count_);
    case Function::Sum:
    case Function::Min:
    case Function::Max:
        return value_;
    case Function::Avg:
        return count_ == 0 ? 0 : static_cast<std::int64_t>(wideSum_ / static_cast<Int128>(count_));
    case Function::Stddev:
        return static_cast<std::int64_t>(
            dtraceStddev(count_, wideSum_, sumOfSquares_, sumOfSquaresHigh_));
    case Function::Quantize:
    case Function::Lquantize:
    case Function::Llquantize:
        return static_cast<std::int64_t>(sortValue());
    }
    return 0;
}

long double AggregationState::sortValue() const noexcept {
    switch (function_) {
    case Function::Avg:
        return count_ == 0 ? 0.0L
                           : static_cast<long double>(wideSum_) / static_cast<long double>(count_);
    case Function::Quantize: {
        long double total = 0;
        for (int i = 0; i < kQuantizeBuckets; ++i) {
            total += static_cast<long double>(quantizeBucketValue(i)) *
                     static_cast<long double>(buckets_[static_cast<std::size_t>(i)]);
        }
        return total;
    }
    case Function::Lquantize: {
        long double total = 0;
        for (std::size_t i = 0; i < buckets_.size(); ++i) {
            total += lquantizeBucketValue(linear_, i) * static_cast<long double>(buckets_[i]);
        }
        return total;
    }
    case Function::Llquantize: {
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
