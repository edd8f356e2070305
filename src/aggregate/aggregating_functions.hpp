// DTrace's aggregating functions: what each keeps per key and the value it reports.
// Sources: the Dynamic Tracing Guide, "Aggregations", and illumos uts/common/dtrace/dtrace.c
// (dtrace_aggregate_quantize, _lquantize, _stddev) for the bucket layouts and the sums;
// libdtrace dt_consume.c (dt_print_average, dt_stddev) for how avg and stddev are reported.
#pragma once

#include "aggregate/program.hpp"

#include <cstdint>
#include <vector>

namespace tracectl::aggregate {

__extension__ typedef unsigned __int128 Uint128;
__extension__ typedef __int128 Int128;

/// quantize(): 127 power-of-two buckets (DTRACE_QUANTIZE_NBUCKETS); bucket 63 is 0
/// (DTRACE_QUANTIZE_ZEROBUCKET), bucket 63 + 1 + k is 2^k (k = 0..62), bucket 63 - 1 - k
/// is -2^k.
inline constexpr int kQuantizeBuckets = 127;
inline constexpr int kQuantizeZeroBucket = 63;

/// The value a quantize bucket is labelled with (DTRACE_QUANTIZE_BUCKETVAL): the lowest
/// value it holds, except for bucket 0 which also holds every value below -2^62.
std::int64_t quantizeBucketValue(int bucket) noexcept;

/// The bucket of `value`, as dtrace_aggregate_quantize fills them: for value >= 0 the highest
/// bucket whose label is <= value (2^62 and above go to bucket 126); for value < 0 the lowest
/// bucket whose label is >= value (the row labelled -4 holds -7..-4; bucket 0 every value up
/// to -2^62).
int quantizeBucket(std::int64_t value) noexcept;

/// The lquantize bucket of `value`, 0 .. levels + 1: 0 for value < low, 1 + (value - low) /
/// step below low + levels * step, levels + 1 from there on.
std::int64_t lquantizeBucket(const LinearParameters& p, std::int64_t value) noexcept;

/// The lower bounds of llquantize's buckets for `p`: element 0 is factor^low (bucket 0
/// holds the values below it), element i (1 <= i < size - 1) the lowest value of bucket i,
/// the last factor^(high + 1) (the last bucket holds it and above). Per order of
/// magnitude m (low..high), min(steps, factor^(m+1)) steps of width factor^(m+1) / that
/// cover [factor^m, factor^(m+1)) (those below factor^m are left out, as DTrace does).
std::vector<std::int64_t> llquantizeBounds(const LogLinearParameters& p);

/// The llquantize bucket of `value` given llquantize_bounds(p).
std::size_t llquantizeBucket(const std::vector<std::int64_t>& bounds, std::int64_t value) noexcept;

/// stddev as DTrace reports it (dt_stddev): the integer square root of
/// sum(x^2) / n - (|sum(x) / n|)^2, each division truncating; 0 for n == 0. The sum is kept in
/// 128 bits, the sum of squares in 256 (high and low halves), so that neither overflows.
std::uint64_t dtraceStddev(std::uint64_t n, Int128 sum, Uint128 sumOfSquares,
                           Uint128 sumOfSquaresHigh = 0) noexcept;

/// What one aggregation keeps for one key.
class AggregationState {
public:
    AggregationState(Function function, const LinearParameters& linear,
                     const LogLinearParameters& logLinear = {});

    /// Feeds one value (ignored by count()). sum() wraps around as DTrace's 64-bit sum does;
    /// avg and stddev keep their sums wide enough not to (a constant's avg is the constant,
    /// its stddev 0).
    void add(std::int64_t value) noexcept { add(value, 1); }
    /// add(value) `weight` times at once (an in-kernel aggregation's row counts `weight`
    /// identical records): the same state, exactly, for every function.
    void add(std::int64_t value, std::uint64_t weight) noexcept;

    /// Adds what `other` (same function and layout) was fed, as if this state had been.
    void merge(const AggregationState& other) noexcept;

    Function function() const noexcept { return function_; }
    /// Times add() ran.
    std::uint64_t count() const noexcept { return count_; }
    /// The value DTrace prints: count, sum, min, max, avg (sum / count, truncated), stddev;
    /// for quantize and lquantize, the sum of the values the buckets stand for (DTrace
    /// sorts by it: dt_aggregate_quantizedsum), truncated to 64 bits.
    std::int64_t value() const noexcept;
    /// A key to sort entries by value ascending, as DTrace does (dt_aggregate_valcmp):
    /// avg by the exact average, quantize/lquantize by the sum of bucket value x count.
    long double sortValue() const noexcept;
    /// quantize: 127 counts; lquantize: levels + 2 counts; llquantize: bounds().size() + 1.
    const std::vector<std::int64_t>& buckets() const noexcept { return buckets_; }
    const LinearParameters& linear() const noexcept { return linear_; }
    /// llquantize: llquantize_bounds of its parameters (see there); else empty.
    const std::vector<std::int64_t>& bounds() const noexcept { return bounds_; }
    /// clear(): as if nothing had been added (the key stays).
    void clear() noexcept;

private:
    Function function_;
    LinearParameters linear_;
    std::uint64_t count_ = 0;
    std::int64_t value_ = 0; // sum, min or max
    Int128 wideSum_ = 0;     // avg, stddev
    Uint128 sumOfSquares_ = 0;
    Uint128 sumOfSquaresHigh_ = 0; // the carries out of sum_of_squares_
    std::vector<std::int64_t> buckets_;
    std::vector<std::int64_t> bounds_;
};

} // namespace tracectl::aggregate
