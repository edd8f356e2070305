// The variables of a running D program (Dynamic Tracing Guide, "Variables"): global scalars
// and associative arrays, `this->` clause-local variables (zeroed before each probe
// firing), `self->` thread-local variables and associative arrays keyed by the event
// record's tid. A variable never assigned reads as 0 or ""; assigning 0 (or "") to an
// associative array's element or a thread-local variable frees it, as DTrace does with
// its dynamic variables. Strings
// made by subroutines while a probe fires live in `scratch` until the firing ends. Every
// string is at most `strsize` bytes with its terminating NUL, as in DTrace (option strsize).
#pragma once

#include "aggregate/aggregation_set.hpp"
#include "aggregate/program.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tracectl::aggregate {

/// A variable's value (an integer or a string, as its type says).
struct StoredValue {
    std::int64_t integer = 0;
    std::string string;
    bool empty() const noexcept { return integer == 0 && string.empty(); }
};

/// DTrace's default strsize: a string holds at most 255 bytes and its NUL.
inline constexpr std::size_t kDefaultStrsize = 256;

struct Runtime {
    explicit Runtime(const Program& program)
        : scalars(program.variables.size()), arrays(program.variables.size()),
          threads(program.variables.size()) {}

    std::vector<StoredValue> scalars; ///< global scalars and this-> variables, by index
    /// Associative arrays by index: global ones by their keys, thread-local ones
    /// (self->name[keys]) by the tid, then their keys.
    std::vector<std::unordered_map<Key, StoredValue, KeyHash>> arrays;
    /// self-> scalars, by tid.
    std::vector<std::unordered_map<std::int64_t, StoredValue>> threads;
    std::int64_t tid = 0;                  ///< the tid of the record being run (self->)
    std::deque<std::string> scratch;       ///< strings made during the current firing
    std::vector<std::size_t> locals;       ///< indices of this-> variables (zeroed per firing)
    std::size_t strsize = kDefaultStrsize; ///< option strsize: strings keep strsize - 1 bytes

    /// Keeps `s` until the end of the firing; returns a view of it.
    std::string_view keep(std::string s) { return scratch.emplace_back(std::move(s)); }

    /// Ends a probe firing: frees scratch strings, zeroes this-> variables.
    void endFiring() {
        scratch.clear();
        for (const std::size_t i : locals) {
            scalars[i] = StoredValue{};
        }
    }
};

} // namespace tracectl::aggregate
