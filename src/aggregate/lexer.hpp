// Tokens of a D program. Like DTrace's lexer (libdtrace dt_lex.l), it reads probe
// descriptions at the start of each clause (up to '/' or '{') and expressions inside
// predicates and clause bodies (after '{' up to the matching '}'). A first line starting
// with "#!" (an interpreter line: `#!/usr/bin/env -S tracectl dtrace -s`) is skipped.
#pragma once

#include "aggregate/program.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::aggregate {

struct Token {
    enum class Kind {
        Probe,       ///< a probe description: [A-Za-z0-9_:*?.-]+ (text)
        Aggregation, ///< '@' followed by an optional name (text: the name, maybe empty)
        Identifier,  ///< [A-Za-z_][A-Za-z0-9_]* (text)
        Integer,     ///< decimal, 0 octal, 0x hexadecimal or 'c', fits in int64 (value)
        String,      ///< "..." with C's escapes (text: the value)
        Punctuation, ///< text: one of C's operators and , ; / { } [ ] () ? :
        Directive,   ///< a line `#WORD ...` between clauses (text: after the '#')
        Macro,       ///< `$name` or `$N` (text: name or N, without '$')
        End,         ///< end of the program
    };
    Kind kind = Kind::End;
    std::string text;
    std::int64_t value = 0;
    Position at;
};

/// The tokens of `source`, ending with one Kind::end token. `/* */` and `//` comments and
/// white space separate tokens.
/// Throws ProgramError at the offending character: an unknown character, an unterminated
/// comment or string, an integer too large for 64 bits.
std::vector<Token> tokenize(std::string_view source);

} // namespace tracectl::aggregate
