// Code generation: a checked tree (filter_check.hpp) into the bytecode that
// lttng-tools 2.13 sends to lttng-ust 2.13, byte for byte as its generator
// lays it out (src/common/filter/filter-visitor-generate-bytecode.c and
// src/common/bytecode/bytecode.c).
#pragma once

#include "filter/filter_ast.hpp"

#include <cstdint>
#include <vector>

namespace tracectl::filter {

/// A compiled filter: the body of `struct lttng_ust_abi_filter_bytecode`.
/// `data` is the code, then from `relocOffset` on the relocation table: for
/// each field or context name, a u16 (host order) code offset of the
/// LOAD_FIELD_REF / GET_CONTEXT_REF / GET_SYMBOL instruction that names it,
/// then the name, NUL-terminated. `seqnum` is 0, as lttng-tools sends it
/// for event filters (the header's `len` is data.size()).
struct FilterBytecode {
    std::vector<std::uint8_t> data;
    std::uint32_t relocOffset = 0;
    std::uint64_t seqnum = 0;

    /// The header and body as `struct lttng_ust_abi_filter_bytecode`
    /// (lttng/ust-abi.h: u32 len, u32 reloc_offset, u64 seqnum, 32 zero
    /// bytes, data), in host byte order: what lttng_ust_ctl_set_filter takes.
    std::vector<std::uint8_t> ustAbiBytes() const;

    bool operator==(const FilterBytecode&) const = default;
};

/// Generates the bytecode of `root` (already passed through checkFilter).
/// The layout, postorder, no padding anywhere:
/// - integer: LOAD_S64 i64; float: LOAD_DOUBLE f64; string: LOAD_STRING
///   (LOAD_STAR_GLOB_STRING for a full glob pattern) then the bytes and NUL;
/// - field path without index: LOAD_FIELD_REF (payload) or GET_CONTEXT_REF
///   ($ctx, $app) with u16 0xFFFF, the name ("a.b", "$ctx.vpid",
///   "$app.prov:name") in the reloc table;
/// - field path with an index: GET_PAYLOAD_ROOT / GET_CONTEXT_ROOT /
///   GET_APP_CONTEXT_ROOT, then per element GET_SYMBOL (its name in the
///   reloc table) and GET_INDEX_U64 for `[n]`, then LOAD_FIELD;
/// - unary: operand, then UNARY_MINUS / UNARY_NOT / UNARY_BIT_NOT (unary
///   plus emits nothing); binary: left, right, the operator;
/// - `&&`/`||`: left, CAST_TO_S64 if it is a field (CAST_DOUBLE_TO_S64 if
///   floating), AND/OR with the u16 offset just past the right operand,
///   right, the same cast;
/// - RETURN at the end, then the reloc table.
/// Throws FilterError(0, "the filter's bytecode would be N bytes long ...,
/// over LTTng's limit of 65536 bytes ...") if the result would not fit
/// lttng's limit: header + data over LTTNG_FILTER_MAX_LEN (65536 bytes).
/// That is what bounds a chain of operators (`a == 1 || a == 2 || ...`),
/// which this walks with a loop however long it is.
FilterBytecode generateBytecode(const Node& root);

} // namespace tracectl::filter
