// Our own implementation of the checks lttng-ust 2.13 makes on filter
// bytecode before it runs it (src/lib/lttng-ust/lttng-ust-comm.c
// handle_bytecode_recv, lttng-bytecode.c link_bytecode / apply_reloc,
// lttng-bytecode-validator.c lttng_bytecode_validate_load and
// lttng_bytecode_validate), so that nothing an application would refuse is
// ever sent to one.
#pragma once

#include "filter/filter_bytecode.hpp"

#include <optional>
#include <string>

namespace tracectl::filter {

/// Why lttng-ust 2.13 would refuse `bytecode`, or nullopt if it accepts it.
/// Checked, in this order:
/// - size: `len` at most LTTNG_UST_ABI_FILTER_BYTECODE_MAX_LEN (65536),
///   reloc_offset within it, some code before it;
/// - every instruction of the code part: a known opcode, its operand inside
///   the code, a string operand NUL-terminated inside it, a GET_SYMBOL
///   operand naming a NUL-terminated string of the reloc table; only the
///   generic instructions lttng-tools emits are accepted (lttng-ust refuses
///   the arithmetic ones and the linked field references as input; the
///   specialized forms it would accept are refused here too, being never
///   produced by a session daemon);
/// - the reloc table: whole entries, each naming (by a u16 offset) the start
///   of a LOAD_FIELD_REF, GET_CONTEXT_REF or GET_SYMBOL instruction, with a
///   non-empty NUL-terminated name (contexts: "$ctx." or "$app." first);
///   every LOAD_FIELD_REF and GET_CONTEXT_REF named by one;
/// - the validator's abstract execution, from the first instruction: at
///   most 10 stack entries (INTERPRETER_STACK_LEN), no pop of an empty
///   stack, operand types as lttng-ust's vstack checks them after
///   relocation and before specialization (field values are of unknown
///   type here; literals are known; generic unary +/- give an unknown type,
///   bitwise operators a u64, comparisons and casts an s64), AND/OR on an
///   s64/u64 value, jumping forward only, to an instruction start whose
///   stack matches (merge points), ending with RETURN on a returnable value
///   with no merge point left over.
std::optional<std::string> bytecodeProblem(const FilterBytecode& bytecode);

} // namespace tracectl::filter
