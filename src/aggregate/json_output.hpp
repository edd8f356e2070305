// The aggregations as JSON (`tracectl aggregate --json`): the data print_text shows, in the
// same order.
//
//   {"aggregations": [{"name": "NAME" (without '@'; "" for '@'),
//                      "function": "count"|"sum"|"avg"|"min"|"max"|"stddev"|"quantize"|"lquantize",
//                      "entries": [{"keys": [integer or string, ...],
//                                   "value": integer}]}],   (not quantize, lquantize)
//    "errors": records whose clause stopped at a division by zero}
//
// quantize and lquantize entries have, instead of "value", "count" (records) and
// "buckets": the non-empty buckets, ascending, each {"lower": L, "upper": U, "count": N}
// holding the values L..U inclusive; lquantize's "< low" row has "lower": null and its
// ">= high" row "upper": null; quantize's first bucket starts at INT64_MIN and its last
// ends at INT64_MAX. lquantize aggregations also carry "low", "high", "step".
#pragma once

#include "aggregate/aggregation_set.hpp"

#include <nlohmann/json.hpp>

namespace tracectl::aggregate {

nlohmann::json to_json(const AggregationSet& aggregations);

/// `json` as --json prints it (indented by 2). Strings that are not valid UTF-8 (a key read
/// from a process name or a string literal with "\xff") have each invalid byte replaced by
/// U+FFFD rather than failing the whole output.
std::string jsonText(const nlohmann::json& json);

} // namespace tracectl::aggregate
