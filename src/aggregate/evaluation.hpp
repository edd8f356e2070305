// Running a bound program on one event record: evaluate the predicate, then each
// statement's keys and argument, and feed the aggregations. D's integer semantics: 64-bit
// two's complement arithmetic that wraps; comparisons and && || ! give 0 or 1; strings
// compare with strcmp. Division or modulo by zero stops the clause for this record and is
// counted in AggregationSet::errors (DTrace reports such "errors" and goes on).
#pragma once

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/runtime.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace tracectl::aggregate {

/// A field's or an expression's value: `integer` or `string` per its ValueType. A string
/// views the event record's (or the program's) memory: valid while the record is.
struct Value {
    std::int64_t integer = 0;
    std::string_view string;
};

/// The value of `e`, with the record's fields in `slots` (BoundEventClass::slots order) and
/// the program's variables in `runtime` (null when `e` uses no variable or subroutine).
/// Returns false on a run-time error: division or modulo by zero, inet_ntop() of an
/// unknown address family. A string value is cut to runtime->strsize - 1 bytes (to
/// default_strsize - 1 without a runtime), as DTrace bounds every string to strsize.
bool evaluate(const BoundExpression& e, const Value* slots, Value& result,
              Runtime* runtime = nullptr);

/// The stack a stack([N]) or ustack([N]) call `stack` (Subroutine::Stack, Ustack) reads in
/// the record whose fields are `slots`, as a key (stack_key.hpp: parseStackKey reads it).
std::string stackKeyOf(const BoundExpression& stack, const Value* slots);

/// Runs an aggregate statement: its keys, its argument, then feeds the aggregation
/// (`weight` times: AggregationState::add). Returns false on a run-time error (nothing is
/// fed).
bool aggregate(const BoundStatement& statement, const Value* slots, AggregationSet& aggregations,
               Runtime* runtime = nullptr, std::uint64_t weight = 1);

/// Runs an assign statement. Returns false on a run-time error (nothing is assigned).
bool assign(const BoundStatement& statement, const Value* slots, Runtime& runtime);

/// Runs every clause of `bound` (aggregate statements only) on the record whose fields
/// are `slots`.
void execute(const BoundEventClass& bound, const Value* slots, AggregationSet& aggregations);

} // namespace tracectl::aggregate
