// The aggregation key stack([N]) and ustack([N]) make (DTrace's stack and ustack records):
// the raw addresses, in a string, so that equal stacks are one key; named only when the
// aggregation is printed (text_output.hpp, json_output.hpp), by what the traces told of
// symbols and mappings (symbols/stack_names.hpp).
//
// Layout: 'K' then the addresses, or 'U', the process id (4 bytes), then the addresses;
// each address 8 bytes, native endian, innermost frame first.
#pragma once

#include "symbols/stack_names.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::aggregate {

struct StackKey {
    bool user = false;
    std::int32_t pid = 0; ///< user stacks only
    std::vector<std::uint64_t> frames;
};

/// The key of a stack: `addresses` (the callstack_* field as the reader gives it: 8-byte
/// addresses) up to the first 0 and at most `limit` frames; with `caller` (a process's
/// function entry: the return address at the top of its stack, which ftrace's frame
/// pointer walk does not see yet), that address as the second frame.
std::string stackKey(bool user, std::int32_t pid, std::string_view addresses, std::size_t limit,
                     std::optional<std::uint64_t> caller = std::nullopt);

/// The stack in a key made by stackKey, or nullopt for another string.
std::optional<StackKey> parseStackKey(std::string_view key);

/// Each frame's text as dtrace(1) prints it (StackNames::dtraceText).
std::vector<std::string> stackFrames(const StackKey& stack, symbols::StackNames& names);

/// DTrace's default stackindent (_dtrace_stkindent): the frames' indentation, in columns.
inline constexpr int kStackIndent = 14;

/// The stack as dtrace(1) prints a stack record (dt_print_stack, dt_print_ustack), as
/// an aggregation key or as the action stack(): a newline, then each frame on a line
/// of its own, indented kStackIndent columns, innermost first.
std::string stackText(const StackKey& stack, symbols::StackNames& names);

} // namespace tracectl::aggregate
