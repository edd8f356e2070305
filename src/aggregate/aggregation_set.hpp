// The aggregations of a running program: per aggregation, a table from key (a tuple of
// integers and strings) to its aggregating function's state. Entries come out sorted as
// DTrace prints them (libdtrace dt_aggregate.c, dtrace_aggregate_walk_sorted with
// dt_aggregate_varvalcmp): by value ascending, ties by key ascending (integers
// numerically, strings by strcmp, tuple members left to right).
#pragma once

#include "aggregate/aggregating_functions.hpp"
#include "aggregate/program.hpp"
#include "symbols/stack_names.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace tracectl::aggregate {

using KeyValue = std::variant<std::int64_t, std::string>;
using Key = std::vector<KeyValue>;

struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept;
};

class AggregationSet {
public:
    explicit AggregationSet(const Program& program);
    // Moving keeps the tables' nodes (and so unkeyed_state's pointers); copying would not.
    AggregationSet(const AggregationSet&) = delete;
    AggregationSet& operator=(const AggregationSet&) = delete;
    AggregationSet(AggregationSet&&) = default;
    AggregationSet& operator=(AggregationSet&&) = default;

    /// The state of `aggregation` (index in Program::aggregations) for `key`, created empty.
    /// `keyBytes` (the keys' D type sizes, BoundStatement::keyBytes) is remembered from
    /// the aggregation's first entry, for printing.
    AggregationState& state(std::size_t aggregation, Key&& key,
                            const std::vector<std::uint8_t>& keyBytes = {});

    /// state(aggregation, {}): the state of an aggregation without keys, without a lookup.
    AggregationState& unkeyedState(std::size_t aggregation) {
        AggregationState*& s = unkeyed_[aggregation];
        if (s == nullptr) {
            s = &state(aggregation, Key{});
        }
        return *s;
    }

    /// The size in bytes of each key of `aggregation` (empty if unknown: 8).
    const std::vector<std::uint8_t>& keyBytes(std::size_t aggregation) const {
        return keyBytes_[aggregation];
    }

    struct Entry {
        const Key* key;
        const AggregationState* state;
    };
    /// The entries of `aggregation`, in DTrace's printing order.
    std::vector<Entry> sorted(std::size_t aggregation) const;

    /// Adds every entry of `other` (of the same program) to this set, and its errors.
    void merge(AggregationSet&& other);

    /// clear(@a): every entry of `aggregation` back to empty; the keys stay.
    void clear(std::size_t aggregation);
    /// trunc(@a[, n]): keeps the n entries printed last (the largest values) when n > 0,
    /// the -n printed first when n < 0; none without n.
    void truncate(std::size_t aggregation, std::optional<std::int64_t> keep);

    /// How sorted() orders entries: DTrace's options aggsortkey (by key first) and
    /// aggsortrev (reversed).
    struct Order {
        bool byKey = false;
        bool reverse = false;
    };
    Order order;
    /// What the traces read so far told of kernel symbols and process mappings, to name
    /// stack() and ustack() keys when printed (trace_reader.hpp learns it; shared by
    /// the sets a parallel read merges into this one).
    std::shared_ptr<symbols::StackNames> stackNames = std::make_shared<symbols::StackNames>();
    /// normalize(@a, n) per aggregation: values are printed divided by it (1: as is).
    std::vector<std::int64_t> normal;

    const std::vector<AggregationDeclaration>& declarations() const noexcept {
        return declarations_;
    }

    /// Records whose clause stopped at a run-time error (division by zero), as DTrace
    /// counts "errors" per probe.
    std::uint64_t errors = 0;

private:
    std::vector<AggregationDeclaration> declarations_;
    std::vector<std::unordered_map<Key, AggregationState, KeyHash>> tables_;
    std::vector<std::vector<std::uint8_t>> keyBytes_;
    std::vector<AggregationState*> unkeyed_; // into tables_ (unordered_map nodes are stable)
};

/// Key order: tuple members left to right; an integer before a string.
bool keyLess(const Key& a, const Key& b) noexcept;

} // namespace tracectl::aggregate
