#include "aggregate/json_output.hpp"

#include "aggregate/stack_key.hpp"

#include <limits>

namespace tracectl::aggregate {

namespace {

nlohmann::json bucketsJson(const AggregationState& state) {
    nlohmann::json buckets = nlohmann::json::array();
    const auto& counts = state.buckets();
    const bool linear = state.function() == Function::Lquantize;
    const LinearParameters& p = state.linear();
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (counts[i] == 0) {
            continue;
        }
        nlohmann::json lower;
        nlohmann::json upper;
        if (state.function() == Function::Llquantize) {
            const auto& bounds = state.bounds();
            if (i > 0) {
                lower = bounds[i - 1];
            }
            if (i < bounds.size()) {
                upper = bounds[i] - 1;
            }
        } else if (linear) {
            if (i > 0) {
                lower = p.low + static_cast<std::int64_t>(i - 1) * p.step;
            }
            if (i + 1 < counts.size()) {
                upper = p.low + static_cast<std::int64_t>(i) * p.step - 1;
            }
        } else {
            // A negative row labelled -2^k holds -2^(k+1)+1 .. -2^k (as DTrace fills it), the
            // others 2^k .. 2^(k+1)-1, and 0 holds 0.
            const int b = static_cast<int>(i);
            if (b < kQuantizeZeroBucket) {
                lower = b == 0 ? std::numeric_limits<std::int64_t>::min()
                               : quantizeBucketValue(b - 1) + 1;
                upper = quantizeBucketValue(b);
            } else {
                lower = quantizeBucketValue(b);
                upper = b + 1 == kQuantizeBuckets ? std::numeric_limits<std::int64_t>::max()
                                                  : quantizeBucketValue(b + 1) - 1;
            }
        }
        buckets.push_back({{"lower", lower}, {"upper", upper}, {"count", counts[i]}});
    }
    return buckets;
}

} // namespace

nlohmann::json to_json(const AggregationSet& aggregations) {
    nlohmann::json list = nlohmann::json::array();
    const auto& declarations = aggregations.declarations();
    for (std::size_t a = 0; a < declarations.size(); ++a) {
        const auto& d = declarations[a];
        nlohmann::json entries = nlohmann::json::array();
        for (const auto& entry : aggregations.sorted(a)) {
            nlohmann::json keys = nlohmann::json::array();
            const auto& keyBytes = aggregations.keyBytes(a);
            for (std::size_t k = 0; k < entry.key->size(); ++k) {
                const KeyValue& v = (*entry.key)[k];
                const auto stack = k < keyBytes.size() && keyBytes[k] == 0 &&
                                           std::holds_alternative<std::string>(v)
                                       ? parseStackKey(std::get<std::string>(v))
                                       : std::nullopt;
                if (stack) { // stack(), ustack(): its frames' names, innermost first
                    keys.push_back(stackFrames(*stack, *aggregations.stackNames));
                } else if (std::holds_alternative<std::int64_t>(v)) {
                    keys.push_back(std::get<std::int64_t>(v));
                } else {
                    keys.push_back(std::get<std::string>(v));
                }
            }
            nlohmann::json e = {{"keys", keys}};
            if (d.function == Function::Quantize || d.function == Function::Lquantize ||
                d.function == Function::Llquantize) {
                e["count"] = entry.state->count();
                e["buckets"] = bucketsJson(*entry.state);
            } else if (d.function == Function::Stddev) {
                e["value"] = static_cast<std::uint64_t>(entry.state->value());
            } else {
                e["value"] = entry.state->value();
            }
            entries.push_back(std::move(e));
        }
        nlohmann::json aggregation = {
            {"name", d.name}, {"function", functionName(d.function)}, {"entries", entries}};
        if (d.function == Function::Lquantize) {
            aggregation["low"] = d.linear.low;
            aggregation["high"] = d.linear.high;
            aggregation["step"] = d.linear.step;
        }
        if (d.function == Function::Llquantize) {
            aggregation["factor"] = d.logLinear.factor;
            aggregation["low"] = d.logLinear.low;
            aggregation["high"] = d.logLinear.high;
            aggregation["steps"] = d.logLinear.steps;
        }
        list.push_back(std::move(aggregation));
    }
    return {{"aggregations", list}, {"errors", aggregations.errors}};
}

std::string jsonText(const nlohmann::json& json) {
    return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace tracectl::aggregate
