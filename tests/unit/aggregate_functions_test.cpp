// DTrace's aggregating functions: quantize's power-of-two buckets (including the negative
// ones and 0), lquantize's linear buckets and overflow rows, avg and stddev as DTrace
// reports them (integers), min/max/sum/count.
#include "aggregate/aggregating_functions.hpp"

#include <gtest/gtest.h>
#include <limits>

namespace tracectl::aggregate {
namespace {

constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

/// DTrace's definition (illumos dtrace_aggregate_quantize): for a negative value, the first
/// bucket whose label is >= the value; otherwise the bucket before the first whose label is
/// above the value, the last bucket if none is.
int reference_bucket(std::int64_t value) {
    if (value < 0) {
        for (int i = 0; i < quantize_zero_bucket; ++i) {
            if (value <= quantize_bucket_value(i)) {
                return i;
            }
        }
    }
    for (int i = quantize_zero_bucket + 1; i < quantize_buckets; ++i) {
        if (value < quantize_bucket_value(i)) {
            return i - 1;
        }
    }
    return quantize_buckets - 1;
}

TEST(AggregateQuantize, BucketLabels) {
    EXPECT_EQ(quantize_bucket_value(quantize_zero_bucket), 0);
    EXPECT_EQ(quantize_bucket_value(quantize_zero_bucket + 1), 1);
    EXPECT_EQ(quantize_bucket_value(quantize_zero_bucket + 2), 2);
    EXPECT_EQ(quantize_bucket_value(quantize_zero_bucket - 1), -1);
    EXPECT_EQ(quantize_bucket_value(quantize_zero_bucket - 2), -2);
    EXPECT_EQ(quantize_bucket_value(126), std::int64_t{1} << 62);
    EXPECT_EQ(quantize_bucket_value(0), -(std::int64_t{1} << 62));
}

TEST(AggregateQuantize, SmallValues) {
    EXPECT_EQ(quantize_bucket(0), 63);
    EXPECT_EQ(quantize_bucket(1), 64);
    EXPECT_EQ(quantize_bucket(2), 65);
    EXPECT_EQ(quantize_bucket(3), 65);
    EXPECT_EQ(quantize_bucket(4), 66);
    // As DTrace: a negative value goes to the first row whose label is >= it, so the row
    // labelled -4 holds -7..-4.
    EXPECT_EQ(quantize_bucket(-1), 62); // -1
    EXPECT_EQ(quantize_bucket(-2), 61); // -2
    EXPECT_EQ(quantize_bucket(-3), 61); // -2
    EXPECT_EQ(quantize_bucket(-4), 60); // -4
    EXPECT_EQ(quantize_bucket(-5), 60); // -4
    EXPECT_EQ(quantize_bucket(-7), 60); // -4
    EXPECT_EQ(quantize_bucket(-8), 59); // -8
    EXPECT_EQ(quantize_bucket(-9), 59); // -8
}

TEST(AggregateQuantize, HugeValues) {
    EXPECT_EQ(quantize_bucket(int64_max), 126);
    EXPECT_EQ(quantize_bucket(std::int64_t{1} << 62), 126);
    EXPECT_EQ(quantize_bucket((std::int64_t{1} << 62) - 1), 125);
    EXPECT_EQ(quantize_bucket(int64_min), 0);
    EXPECT_EQ(quantize_bucket(-(std::int64_t{1} << 62)), 0);
    EXPECT_EQ(quantize_bucket(-(std::int64_t{1} << 62) - 1), 0);
    EXPECT_EQ(quantize_bucket(-(std::int64_t{1} << 62) + 1), 1);
    EXPECT_EQ(quantize_bucket(-(std::int64_t{1} << 61)), 1);
    EXPECT_EQ(quantize_bucket(-(std::int64_t{1} << 61) - 1), 1);
    EXPECT_EQ(quantize_bucket(-(std::int64_t{1} << 61) + 1), 2);
}

TEST(AggregateQuantize, MatchesDTraceDefinitionAroundEveryPowerOfTwo) {
    for (int k = 0; k < 63; ++k) {
        const std::int64_t p = std::int64_t{1} << k;
        for (const std::int64_t v : {p - 1, p, p + 1, -p - 1, -p, -p + 1}) {
            EXPECT_EQ(quantize_bucket(v), reference_bucket(v)) << v;
        }
    }
}

TEST(AggregateLquantize, Edges) {
    const LinearParameters p{0, 10, 2}; // levels 5: [0,2) [2,4) ... [8,10), >= 10
    EXPECT_EQ(p.levels(), 5);
    EXPECT_EQ(lquantize_bucket(p, -1), 0);
    EXPECT_EQ(lquantize_bucket(p, int64_min), 0);
    EXPECT_EQ(lquantize_bucket(p, 0), 1);
    EXPECT_EQ(lquantize_bucket(p, 1), 1);
    EXPECT_EQ(lquantize_bucket(p, 2), 2);
    EXPECT_EQ(lquantize_bucket(p, 9), 5);
    EXPECT_EQ(lquantize_bucket(p, 10), 6);
    EXPECT_EQ(lquantize_bucket(p, int64_max), 6);
}

TEST(AggregateLquantize, HighNotAMultipleOfStep) {
    const LinearParameters p{-10, 5, 4}; // levels 3: [-10,-6) [-6,-2) [-2,2), >= 2
    EXPECT_EQ(p.levels(), 3);
    EXPECT_EQ(lquantize_bucket(p, -11), 0);
    EXPECT_EQ(lquantize_bucket(p, -10), 1);
    EXPECT_EQ(lquantize_bucket(p, -7), 1);
    EXPECT_EQ(lquantize_bucket(p, -6), 2);
    EXPECT_EQ(lquantize_bucket(p, 1), 3);
    EXPECT_EQ(lquantize_bucket(p, 2), 4); // below high (5) but past the last full step
    EXPECT_EQ(lquantize_bucket(p, 4), 4);
}

TEST(AggregateFunctions, CountSumMinMaxAvg) {
    AggregationState count(Function::count, {});
    AggregationState sum(Function::sum, {});
    AggregationState min(Function::min, {});
    AggregationState max(Function::max, {});
    AggregationState avg(Function::avg, {});
    for (const std::int64_t v : {5, -3, 10, 1}) {
        for (AggregationState* s : {&count, &sum, &min, &max, &avg}) {
            s->add(v);
        }
    }
    EXPECT_EQ(count.value(), 4);
    EXPECT_EQ(sum.value(), 13);
    EXPECT_EQ(min.value(), -3);
    EXPECT_EQ(max.value(), 10);
    EXPECT_EQ(avg.value(), 3); // 13 / 4 truncated, as dt_print_average
    EXPECT_DOUBLE_EQ(static_cast<double>(avg.sort_value()), 3.25);
    AggregationState negative(Function::avg, {});
    negative.add(-7);
    negative.add(0);
    EXPECT_EQ(negative.value(), -3); // truncation towards zero
}

TEST(AggregateFunctions, Stddev) {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population standard deviation 2.
    AggregationState s(Function::stddev, {});
    for (const std::int64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) {
        s.add(v);
    }
    EXPECT_EQ(s.value(), 2);
    // 1, 2: sum(x^2)/n = 5/2 = 2, (sum/n)^2 = 1, sqrt(1) = 1 (DTrace's integer steps).
    AggregationState t(Function::stddev, {});
    t.add(1);
    t.add(2);
    EXPECT_EQ(t.value(), 1);
    // Negative values square like positive ones; 10 and 20: sqrt(250 - 225) = 5.
    AggregationState u(Function::stddev, {});
    u.add(-10);
    u.add(-20);
    EXPECT_EQ(u.value(), 5);
    EXPECT_EQ(dtrace_stddev(0, 0, 0), 0u);
    // Squares beyond 64 bits: 2^40 and -2^40: mean 0, sqrt(2^80) = 2^40.
    AggregationState big(Function::stddev, {});
    big.add(std::int64_t{1} << 40);
    big.add(-(std::int64_t{1} << 40));
    EXPECT_EQ(big.value(), std::int64_t{1} << 40);
}

TEST(AggregateFunctions, QuantizeAndLquantizeCounts) {
    AggregationState q(Function::quantize, {});
    for (const std::int64_t v : std::initializer_list<std::int64_t>{0, 1, 2, 3, -1, int64_max}) {
        q.add(v);
    }
    EXPECT_EQ(q.buckets().size(), 127u);
    EXPECT_EQ(q.buckets()[63], 1);
    EXPECT_EQ(q.buckets()[64], 1);
    EXPECT_EQ(q.buckets()[65], 2);
    EXPECT_EQ(q.buckets()[62], 1);
    EXPECT_EQ(q.buckets()[126], 1);
    EXPECT_EQ(q.count(), 6u);
    AggregationState l(Function::lquantize, {0, 10, 5});
    for (const std::int64_t v : {-1, 0, 4, 5, 10, 11}) {
        l.add(v);
    }
    EXPECT_EQ(l.buckets(), (std::vector<std::int64_t>{1, 2, 1, 2}));
}

TEST(AggregateFunctions, AvgAndStddevDoNotOverflow) {
    // avg(INT64_MAX) over 1482 records gave -1, stddev of a constant was not 0: their sums
    // are kept wider than 64 bits.
    for (const std::int64_t v : {int64_max, int64_min, std::int64_t{3}, std::int64_t{-7}}) {
        AggregationState avg(Function::avg, {});
        AggregationState stddev(Function::stddev, {});
        AggregationState merged(Function::stddev, {});
        for (int i = 0; i < 1482; ++i) {
            avg.add(v);
            stddev.add(v);
            AggregationState one(Function::stddev, {});
            one.add(v);
            merged.merge(one);
        }
        EXPECT_EQ(avg.value(), v);
        EXPECT_EQ(stddev.value(), 0) << v;
        EXPECT_EQ(merged.value(), 0) << v;
    }
    // INT64_MAX and INT64_MIN alternately: mean -1/2 truncated to 0, stddev just under 2^63.
    AggregationState spread(Function::stddev, {});
    AggregationState mean(Function::avg, {});
    for (int i = 0; i < 1000; ++i) {
        spread.add(int64_max);
        spread.add(int64_min);
        mean.add(int64_max);
        mean.add(int64_min);
    }
    EXPECT_EQ(mean.value(), 0);
    EXPECT_EQ(spread.value(), int64_max); // isqrt(2^126 - 2^63)
}

TEST(AggregateFunctions, SumWrapsAround) {
    AggregationState s(Function::sum, {});
    s.add(int64_max);
    s.add(1);
    EXPECT_EQ(s.value(), int64_min);
}

} // namespace
} // namespace tracectl::aggregate

namespace tracectl::aggregate {
namespace {

TEST(AggregateFunctions, MergeIsLikeFeedingOneState) {
    const std::vector<std::int64_t> first{5, -3, 1 << 20};
    const std::vector<std::int64_t> second{7, 0, -90};
    for (const Function f :
         {Function::count, Function::sum, Function::avg, Function::min, Function::max,
          Function::stddev, Function::quantize, Function::lquantize}) {
        const LinearParameters p{-50, 50, 10};
        AggregationState all(f, p);
        AggregationState a(f, p);
        AggregationState b(f, p);
        AggregationState empty(f, p);
        for (const std::int64_t v : first) {
            all.add(v);
            a.add(v);
        }
        for (const std::int64_t v : second) {
            all.add(v);
            b.add(v);
        }
        a.merge(b);
        a.merge(empty);
        EXPECT_EQ(a.value(), all.value()) << function_name(f);
        EXPECT_EQ(a.count(), all.count()) << function_name(f);
        EXPECT_EQ(a.buckets(), all.buckets()) << function_name(f);
    }
}

} // namespace
} // namespace tracectl::aggregate
