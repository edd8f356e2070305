#include "aggregate/text_output.hpp"

#include "aggregate/stack_key.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace tracectl::aggregate {

namespace {

/// printf into a string (the formats are DTrace's, see text_output.hpp).
__attribute__((format(printf, 1, 2))) std::string format(const char* pattern, ...) {
    std::va_list args;
    va_start(args, pattern);
    std::va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, pattern, args);
    va_end(args);
    std::string result;
    if (n > 0) {
        result.resize(static_cast<std::size_t>(n) + 1);
        std::vsnprintf(result.data(), result.size(), pattern, again);
        result.resize(static_cast<std::size_t>(n));
    }
    va_end(again);
    return result;
}

void printKey(std::ostream& out, const Key& key, const std::vector<std::uint8_t>& bytes,
              symbols::StackNames& names) {
    for (std::size_t i = 0; i < key.size(); ++i) {
        const KeyValue& v = key[i];
        const auto stack =
            i < bytes.size() && bytes[i] == 0 && std::holds_alternative<std::string>(v)
                ? parseStackKey(std::get<std::string>(v))
                : std::nullopt;
        if (stack) {
            out << stackText(*stack, names);
        } else if (std::holds_alternative<std::int64_t>(v)) {
            // dt_print_datum: by the key's size, the narrower ones as stored (unsigned
            // bytes and shorts, an int for 4 bytes).
            const std::int64_t n = std::get<std::int64_t>(v);
            const auto u = static_cast<std::uint64_t>(n);
            switch (i < bytes.size() ? bytes[i] : 8) {
            case 1:
                out << format(" %3d", static_cast<int>(static_cast<std::uint8_t>(u)));
                break;
            case 2:
                out << format(" %5d", static_cast<int>(static_cast<std::uint16_t>(u)));
                break;
            case 4:
                out << format(" %8d", static_cast<int>(static_cast<std::int32_t>(
                                          static_cast<std::uint32_t>(u))));
                break;
            default:
                out << format(" %16" PRId64, n);
            }
        } else {
            out << format("  %-50s", std::get<std::string>(v).c_str());
        }
    }
}

void printBar(std::ostream& out, std::int64_t count, long double total) {
    static const std::string ats(40, '@');
    static const std::string spaces(40, ' ');
    std::size_t depth = 0;
    if (total > 0) {
        depth = static_cast<std::size_t>((static_cast<long double>(count) * 40) / total + 0.5L);
    }
    depth = depth > 40 ? 40 : depth;
    out << '|' << ats.substr(0, depth) << spaces.substr(0, 40 - depth)
        << format(" %-9" PRId64 "\n", count);
}

/// The rows to print: from the bucket before the first non-empty one to the one after the
/// last; `none_first`..`none_last` when all are empty.
std::pair<std::size_t, std::size_t> shownRange(const std::vector<std::int64_t>& buckets,
                                               std::size_t noneFirst, std::size_t noneLast) {
    std::size_t first = 0;
    while (first < buckets.size() && buckets[first] == 0) {
        ++first;
    }
    if (first == buckets.size()) {
        return {noneFirst, noneLast};
    }
    std::size_t last = buckets.size() - 1;
    while (last > 0 && buckets[last] == 0) {
        --last;
    }
    return {first > 0 ? first - 1 : 0, last + 1 < buckets.size() ? last + 1 : last};
}

} // namespace

void printDistribution(std::ostream& out, const AggregationState& state, std::int64_t normal) {
    std::vector<std::int64_t> buckets = state.buckets();
    if (normal > 1) {
        for (auto& b : buckets) {
            b /= normal;
        }
    }
    const Function function = state.function();
    const bool linear = function == Function::Lquantize || function == Function::Llquantize;
    const auto [first, last] =
        linear ? shownRange(buckets, 0, 2)
               : shownRange(buckets, kQuantizeZeroBucket - 1, kQuantizeZeroBucket + 1);
    long double total = 0;
    for (std::size_t i = first; i <= last; ++i) {
        total += static_cast<long double>(buckets[i]);
    }
    out << format("\n%16s %41s %-9s\n", "value", "------------- Distribution -------------",
                  "count");
    const LinearParameters& p = state.linear();
    const auto& bounds = state.bounds();
    for (std::size_t i = first; i <= last; ++i) {
        if (!linear) {
            out << format("%16" PRId64 " ", quantizeBucketValue(static_cast<int>(i)));
        } else if (function == Function::Llquantize) {
            if (i == 0) {
                out << format("%16s ", ("< " + std::to_string(bounds.front())).c_str());
            } else if (i == buckets.size() - 1) {
                out << format("%16s ", (">= " + std::to_string(bounds.back())).c_str());
            } else {
                out << format("%16" PRId64 " ", bounds[i - 1]);
            }
        } else if (i == 0) {
            out << format("%16s ", ("< " + std::to_string(p.low)).c_str());
        } else if (i == buckets.size() - 1) {
            out << format("%16s ", (">= " + std::to_string(p.low + p.levels() * p.step)).c_str());
        } else {
            out << format("%16" PRId64 " ", p.low + static_cast<std::int64_t>(i - 1) * p.step);
        }
        printBar(out, buckets[i], total);
    }
}

void printAggregation(std::ostream& out, const AggregationSet& aggregations, std::size_t a) {
    const auto entries = aggregations.sorted(a);
    if (entries.empty()) {
        return;
    }
    const std::int64_t normal = aggregations.normal.empty() ? 1 : aggregations.normal[a];
    out << '\n';
    for (const auto& entry : entries) {
        printKey(out, *entry.key, aggregations.keyBytes(a), *aggregations.stackNames);
        switch (entry.state->function()) {
        case Function::Quantize:
        case Function::Lquantize:
        case Function::Llquantize:
            printDistribution(out, *entry.state, normal);
            out << '\n';
            break;
        case Function::Stddev:
            out << format(" %16" PRIu64 "\n", static_cast<std::uint64_t>(entry.state->value()) /
                                                  static_cast<std::uint64_t>(normal));
            break;
        default:
            out << format(" %16" PRId64 "\n", entry.state->value() / normal);
        }
    }
}

void printText(std::ostream& out, const AggregationSet& aggregations) {
    for (std::size_t a = 0; a < aggregations.declarations().size(); ++a) {
        printAggregation(out, aggregations, a);
    }
}

} // namespace tracectl::aggregate
