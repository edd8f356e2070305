// DTrace's aggregating functions: quantize's power-of-two buckets (including the negative
// ones and 0), lquantize's linear buckets and overflow rows, avg and stddev as DTrace
// reports them (integers), min/max/sum/count.
#include "aggregate/aggregating_functions.hpp"

#include <gtest/gtest.h>
#include <limits>

namespace tracectl::aggregate {
namespace {

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

/// DTrace's definition (illumos dtrace_aggregate_quantize): for a negative value, the first
/// bucket whose label is >= the value; otherwise the bucket before the first whose label is
/// above the value, the last bucket if none is.
int referenceBucket(std::int64_t value) {
    if (value < 0) {
        for (int i = 0; i < kQuantizeZeroBucket; ++i) {
            if (value <= quantizeBucketValue(i)) {
                return i;
            }
        }
    }
    for (int i = kQuantizeZeroBucket + 1; i < kQuantizeBuckets; ++i) {
        if (value < quantizeBucketValue(i)) {
            return i - 1;
        }
    }
    return kQuantizeBuckets - 1;
}

TEST(AggregateQuantize, BucketLabels) {
    EXPECT_EQ(quantizeBucketValue(kQuantizeZeroBucket), 0);
    EXPECT_EQ(quantizeBucketValue(kQuantizeZeroBucket + 1), 1);
    EXPECT_EQ(quantizeBucketValue(kQuantizeZeroBucket + 2), 2);
    EXPECT_EQ(quantizeBucketValue(kQuantizeZeroBucket - 1), -1);
    EXPECT_EQ(quantizeBucketValue(kQuantizeZeroBucket - 2), -2);
    EXPECT_EQ(quantizeBucketValue(126), std::int64_t{1} << 62);
    EXPECT_EQ(quantizeBucketValue(0), -(std::int64_t{1} << 62));
}

TEST(AggregateQuantize, SmallValues) {
    EXPECT_EQ(quantizeBucket(0), 63);
    EXPECT_EQ(quantizeBucket(1), 64);
    EXPECT_EQ(quantizeBucket(2), 65);
    EXPECT_EQ(quantizeBucket(3), 65);
    EXPECT_EQ(quantizeBucket(4), 66);
    // As DTrace: a negative value goes to the first row whose label is >= it, so the row
    // labelled -4 holds -7..-4.
    EXPECT_EQ(quantizeBucket(-1), 62); // -1
    EXPECT_EQ(quantizeBucket(-2), 61); // -2
    EXPECT_EQ(quantizeBucket(-3), 61); // -2
    EXPECT_EQ(quantizeBucket(-4), 60); // -4
    EXPECT_EQ(quantizeBucket(-5), 60); // -4
    EXPECT_EQ(quantizeBucket(-7), 60); // -4
    EXPECT_EQ(quantizeBucket(-8), 59); // -8
    EXPECT_EQ(quantizeBucket(-9), 59); // -8
}

TEST(AggregateQuantize, HugeValues) {
    EXPECT_EQ(quantizeBucket(kInt64Max), 126);
    EXPECT_EQ(quantizeBucket(std::int64_t{1} << 62), 126);
    EXPECT_EQ(quantizeBucket((std::int64_t{1} << 62) - 1), 125);
    EXPECT_EQ(quantizeBucket(kInt64Min), 0);
    EXPECT_EQ(quantizeBucket(-(std::int64_t{1} << 62)), 0);
    EXPECT_EQ(quantizeBucket(-(std::int64_t{1} << 62) - 1), 0);
    EXPECT_EQ(quantizeBucket(-(std::int64_t{1} << 62) + 1), 1);
    EXPECT_EQ(quantizeBucket(-(std::int64_t{1} << 61)), 1);
    EXPECT_EQ(quantizeBucket(-(std::int64_t{1} << 61) - 1), 1);
    EXPECT_EQ(quantizeBucket(-(std::int64_t{1} << 61) + 1), 2);
}

TEST(AggregateQuantize, MatchesDTraceDefinitionAroundEveryPowerOfTwo) {
    for (int k = 0; k < 63; ++k) {
        const std::int64_t p = std::int64_t{1} << k;
        for (const std::int64_t v : {p - 1, p, p + 1, -p - 1, -p, -p + 1}) {
            EXPECT_EQ(quantizeBucket(v), referenceBucket(v)) << v;
        }
    }
}

TEST(AggregateLquantize, Edges) {
    const LinearParameters p{0, 10, 2}; // levels 5: [0,2) [2,4) ... [8,10), >= 10
    EXPECT_EQ(p.levels(), 5);
    EXPECT_EQ(lquantizeBucket(p, -1), 0);
    EXPECT_EQ(lquantizeBucket(p, kInt64Min), 0);
    EXPECT_EQ(lquantizeBucket(p, 0), 1);
    EXPECT_EQ(lquantizeBucket(p, 1), 1);
    EXPECT_EQ(lquantizeBucket(p, 2), 2);
    EXPECT_EQ(lquantizeBucket(p, 9), 5);
    EXPECT_EQ(lquantizeBucket(p, 10), 6);
    EXPECT_EQ(lquantizeBucket(p, kInt64Max), 6);
}

TEST(AggregateLquantize, HighNotAMultipleOfStep) {
    const LinearParameters p{-10, 5, 4}; // levels 3: [-10,-6) [-6,-2) [-2,2), >= 2
    EXPECT_EQ(p.levels(), 3);
    EXPECT_EQ(lquantizeBucket(p, -11), 0);
    EXPECT_EQ(lquantizeBucket(p, -10), 1);
    EXPECT_EQ(lquantizeBucket(p, -7), 1);
    EXPECT_EQ(lquantizeBucket(p, -6), 2);
    EXPECT_EQ(lquantizeBucket(p, 1), 3);
    EXPECT_EQ(lquantizeBucket(p, 2), 4); // below high (5) but past the last full step
    EXPECT_EQ(lquantizeBucket(p, 4), 4);
}

TEST(AggregateFunctions, CountSumMinMaxAvg) {
    AggregationState count(Function::Count, {});
    AggregationState sum(Function::Sum, {});
    AggregationState min(Function::Min, {});
    AggregationState max(Function::Max, {});
    AggregationState avg(Function::Avg, {});
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
    EXPECT_DOUBLE_EQ(static_cast<double>(avg.sortValue()), 3.25);
    AggregationState negative(Function::Avg, {});
    negative.add(-7);
    negative.add(0);
    EXPECT_EQ(negative.value(), -3); // truncation towards zero
}

TEST(AggregateFunctions, Stddev) {
    // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population standard deviation 2.
    AggregationState s(Function::Stddev, {});
    for (const std::int64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) {
        s.add(v);
    }
    EXPECT_EQ(s.value(), 2);
    // 1, 2: sum(x^2)/n = 5/2 = 2, (sum/n)^2 = 1, sqrt(1) = 1 (DTrace's integer steps).
    AggregationState t(Function::Stddev, {});
    t.add(1);
    t.add(2);
    EXPECT_EQ(t.value(), 1);
    // Negative values square like positive ones; 10 and 20: sqrt(250 - 225) = 5.
    AggregationState u(Function::Stddev, {});
    u.add(-10);
    u.add(-20);
    EXPECT_EQ(u.value(), 5);
    EXPECT_EQ(dtraceStddev(0, 0, 0), 0u);
    // Squares beyond 64 bits: 2^40 and -2^40: mean 0, sqrt(2^80) = 2^40.
    AggregationState big(Function::Stddev, {});
    big.add(std::int64_t{1} << 40);
    big.add(-(std::int64_t{1} << 40));
    EXPECT_EQ(big.value(), std::int64_t{1} << 40);
}

TEST(AggregateFunctions, QuantizeAndLquantizeCounts) {
    AggregationState q(Function::Quantize, {});
    for (const std::int64_t v : std::initializer_list<std::int64_t>{0, 1, 2, 3, -1, kInt64Max}) {
        q.add(v);
    }
    EXPECT_EQ(q.buckets().size(), 127u);
    EXPECT_EQ(q.buckets()[63], 1);
    EXPECT_EQ(q.buckets()[64], 1);
    EXPECT_EQ(q.buckets()[65], 2);
    EXPECT_EQ(q.buckets()[62], 1);
    EXPECT_EQ(q.buckets()[126], 1);
    EXPECT_EQ(q.count(), 6u);
    AggregationState l(Function::Lquantize, {0, 10, 5});
    for (const std::int64_t v : {-1, 0, 4, 5, 10, 11}) {
        l.add(v);
    }
    EXPECT_EQ(l.buckets(), (std::vector<std::int64_t>{1, 2, 1, 2}));
}

TEST(AggregateFunctions, AvgAndStddevDoNotOverflow) {
    // avg(INT64_MAX) over 1482 records gave -1, stddev of a constant was not 0: their sums
    // are kept wider than 64 bits.
    for (const std::int64_t v : {kInt64Max, kInt64Min, std::int64_t{3}, std::int64_t{-7}}) {
        AggregationState avg(Function::Avg, {});
        AggregationState stddev(Function::Stddev, {});
        AggregationState merged(Function::Stddev, {});
        for (int i = 0; i < 1482; ++i) {
            avg.add(v);
            stddev.add(v);
            AggregationState one(Function::Stddev, {});
            one.add(v);
            merged.merge(one);
        }
        EXPECT_EQ(avg.value(), v);
        EXPECT_EQ(stddev.value(), 0) << v;
        EXPECT_EQ(merged.value(), 0) << v;
    }
    // INT64_MAX and INT64_MIN alternately: mean -1/2 truncated to 0, stddev just under 2^63.
    AggregationState spread(Function::Stddev, {});
    AggregationState mean(Function::Avg, {});
    for (int i = 0; i < 1000; ++i) {
        spread.add(kInt64Max);
        spread.add(kInt64Min);
        mean.add(kInt64Max);
        mean.add(kInt64Min);
    }
    EXPECT_EQ(mean.value(), 0);
    EXPECT_EQ(spread.value(), kInt64Max); // isqrt(2^126 - 2^63)
}

TEST(AggregateFunctions, SumWrapsAround) {
    AggregationState s(Function::Sum, {});
    s.add(kInt64Max);
    s.add(1);
    EXPECT_EQ(s.value(), kInt64Min);
}

} // namespace
} // namespace tracectl::aggregate

namespace tracectl::aggregate {
namespace {

TEST(AggregateFunctions, MergeIsLikeFeedingOneState) {
    const std::vector<std::int64_t> first{5, -3, 1 << 20};
    const std::vector<std::int64_t> second{7, 0, -90};
    for (const Function f :
         {Function::Count, Function::Sum, Function::Avg, Function::Min, Function::Max,
          Function::Stddev, Function::Quantize, Function::Lquantize}) {
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
        EXPECT_EQ(a.value(), all.value()) << functionName(f);
        EXPECT_EQ(a.count(), all.count()) << functionName(f);
        EXPECT_EQ(a.buckets(), all.buckets()) << functionName(f);
    }
}

} // namespace
} // namespace tracectl::aggregate
