// Prints aggregations as dtrace(1) does at the end of a run (illumos libdtrace
// dt_consume.c: dt_print_aggs, dt_print_datum, dt_print_bytes, dt_print_quantize,
// dt_print_lquantize, dt_print_quantline; checked against dtrace-utils' test results
// test/unittest/aggs/*.r):
//
// - every aggregation with entries is preceded by an empty line; entries in
//   AggregationSet::sorted order; DTrace prints no aggregation names;
// - each key: a string as "  %-50s", an integer by the size of its D type
//   (BoundExpression::bytes): 8 bytes " %16lld", 4 " %8d", 2 " %5d", 1 " %3d", the
//   narrower ones as stored in that size (an 8-bit -2 prints 254; tst.signedkeys.r); a
//   stack() or ustack() key as dt_print_stack and dt_print_ustack print it: a newline,
//   then each frame (innermost first) on its own line, indented 14 columns (DTrace's
//   default stackindent), "module`function+0xOFFSET" (stack_key.hpp, the names the traces
//   told: AggregationSet::stackNames);
// - count, sum, min, max, avg: " %16lld" and a newline; stddev " %16llu";
// - quantize, lquantize: after the keys, "\n%16s %41s %-9s\n" ("value", the
//   "------------- Distribution -------------" ruler, "count"), one row per bucket from the
//   one before the first non-empty bucket to the one after the last ("%16lld " label, or
//   "%16s " with "< LOW" / ">= HIGH" for lquantize's overflow rows), "|", the bucket's share
//   of the entry's count as round(40 x count / total) '@' padded to 40 columns, " %-9lld",
//   then an empty line.
#pragma once

#include "aggregate/aggregation_set.hpp"

#include <ostream>

namespace tracectl::aggregate {

/// Every aggregation of the set with entries, as above.
void printText(std::ostream& out, const AggregationSet& aggregations);

/// Aggregation `a` of the set (nothing if it has no entries), as above; values divided by
/// its normalize() factor. llquantize rows: "< factor^low", each bucket's lowest value,
/// ">= factor^(high+1)".
void printAggregation(std::ostream& out, const AggregationSet& aggregations, std::size_t a);

/// A quantize, lquantize or llquantize entry's distribution (from the "value" ruler
/// line's leading newline to its last row), counts divided by `normal`.
void printDistribution(std::ostream& out, const AggregationState& state, std::int64_t normal = 1);

} // namespace tracectl::aggregate
