// The tokens of LTTng 2.13's filter language, as its flex scanner cuts them
// (lttng-tools src/common/filter/filter-lexer.l): C-like integer constants
// (decimal, 0x hexadecimal, 0 octal, with u/l suffixes), floating constants
// (decimal and hexadecimal, f/l suffixes), "..." and '...' literals (L prefix
// allowed; escape sequences refused), identifiers (letters, digits, '_', ':'
// and \uXXXX / \UXXXXXXXX), $-prefixed global identifiers, operators,
// /* */ and // comments, and blanks (space, tab, newline only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::filter {

enum class TokenKind {
    Integer,          // value in `integer`
    Float,            // value in `floating`
    String,           // contents in `text`, raw (a "\*" stays two bytes)
    Identifier,       // text as written
    GlobalIdentifier, // "$ctx", "$app", ... with the '$'
    LBracket,
    RBracket,
    LParen,
    RParen,
    Dot,
    Arrow,
    Star,
    Plus,
    Minus,
    Percent,
    Slash,
    ShiftLeft,
    ShiftRight,
    Equal,
    NotEqual,
    LessEqual,
    GreaterEqual,
    Less,
    Greater,
    LogicalAnd,
    LogicalOr,
    Not,
    BitAnd,
    BitXor,
    BitOr,
    BitNot,
    End,
};

struct Token {
    TokenKind kind = TokenKind::End;
    std::size_t column = 0; // 1-based byte column of the first byte
    std::string text;       // as written (strings: the contents)
    std::uint64_t integer = 0;
    double floating = 0;
};

/// Cuts `expression` into tokens, ending with one TokenKind::End (its column
/// one past the last byte). Throws FilterError (with the column) for what
/// LTTng's scanner or parser refuses at this level: a character outside the
/// language (including NUL, '\r', non-ASCII outside literals), the tokens the
/// grammar never accepts ('{', '}', ':=', ';', '...', '=', ','), an escape
/// sequence in a literal ("escape sequences not supported yet"), an
/// unterminated literal, an integer that does not fit in 64 bits, a
/// floating constant out of double's range, a malformed number.
std::vector<Token> tokenize(std::string_view expression);

/// How a token kind is shown in messages ("'&&'", "identifier", ...).
std::string describeToken(const Token& token);

} // namespace tracectl::filter
