// The filter bytecode's instruction set, as lttng-tools 2.13 defines it
// (src/common/bytecode/bytecode.h, enum bytecode_op) and lttng-ust 2.13
// interprets it (src/lib/lttng-ust/bytecode.h, same values). Every
// instruction is a one-byte opcode followed by its operand, unaligned, in
// host byte order:
//   LOAD_FIELD_REF, GET_CONTEXT_REF   u16 field offset (0xFFFF until linked)
//   LOAD_S64                          i64           (struct literal_numeric)
//   LOAD_DOUBLE                       double        (struct literal_double)
//   LOAD_STRING, LOAD_STAR_GLOB_STRING  NUL-terminated bytes
//   AND, OR                           u16 skip offset, absolute from the start
//   GET_SYMBOL                        u16 offset of the name in the reloc table
//   GET_INDEX_U16 / _U64              u16 / u64 index
//   everything else                   no operand
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracectl::filter {

enum class Op : std::uint8_t {
    Unknown = 0,
    Return = 1,
    Mul = 2,
    Div = 3,
    Mod = 4,
    Plus = 5,
    Minus = 6,
    BitRshift = 7,
    BitLshift = 8,
    BitAnd = 9,
    BitOr = 10,
    BitXor = 11,
    Eq = 12,
    Ne = 13,
    Gt = 14,
    Lt = 15,
    Ge = 16,
    Le = 17,
    EqString = 18,    // 18-47: typed comparators (string, s64, double, mixed),
    LeS64Double = 47, // produced by lttng-ust's specializer only
    UnaryPlus = 48,
    UnaryMinus = 49,
    UnaryNot = 50,
    UnaryPlusS64 = 51, // 51-56: typed unary operators, specializer only
    UnaryNotDouble = 56,
    And = 57,
    Or = 58,
    LoadFieldRef = 59,
    LoadFieldRefString = 60, // 60-63: linked field references
    LoadFieldRefDouble = 63,
    LoadString = 64,
    LoadS64 = 65,
    LoadDouble = 66,
    CastToS64 = 67,
    CastDoubleToS64 = 68,
    CastNop = 69,
    GetContextRef = 70,
    GetContextRefString = 71, // 71-73: linked context references
    GetContextRefDouble = 73,
    LoadFieldRefUserString = 74,
    LoadFieldRefUserSequence = 75,
    LoadStarGlobString = 76,
    EqStarGlobString = 77,
    NeStarGlobString = 78,
    GetContextRoot = 79,
    GetAppContextRoot = 80,
    GetPayloadRoot = 81,
    GetSymbol = 82,
    GetSymbolField = 83,
    GetIndexU16 = 84,
    GetIndexU64 = 85,
    LoadField = 86,
    LoadFieldS8 = 87, // 87-97: typed field loads, specializer only
    LoadFieldDouble = 97,
    UnaryBitNot = 98,
    ReturnS64 = 99,
};

/// Number of opcodes (NR_BYTECODE_OPS): any byte at or above is unknown.
inline constexpr std::uint8_t kOpCount = 100;

/// lttng-tools' LTTNG_FILTER_MAX_LEN (src/common/sessiond-comm/sessiond-comm.h):
/// an expression must be shorter, and header + bytecode must not exceed it.
inline constexpr std::size_t kFilterMaxLen = 65536;

/// lttng-ust's LTTNG_UST_ABI_FILTER_BYTECODE_MAX_LEN (lttng/ust-abi.h): the
/// largest `len` (code + reloc table) an application accepts.
inline constexpr std::size_t kUstBytecodeMaxLen = 65536;

/// sizeof(struct lttng_ust_abi_filter_bytecode) (and lttng-tools' struct
/// lttng_bytecode): u32 len, u32 reloc_offset, u64 seqnum, 32 bytes padding.
inline constexpr std::size_t kBytecodeHeaderSize = 48;

/// lttng-ust's INTERPRETER_STACK_LEN (src/lib/lttng-ust/lttng-bytecode.h):
/// the validator's virtual stack holds at most this many values.
inline constexpr std::size_t kInterpreterStackLen = 10;

} // namespace tracectl::filter
