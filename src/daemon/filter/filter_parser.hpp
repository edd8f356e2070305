// LTTng 2.13's filter grammar (lttng-tools src/common/filter/filter-parser.y),
// by recursive descent, with the yacc grammar's precedence and left
// associativity. From loosest to tightest:
//   ||   &&   == !=   < > <= >=   |   ^   &   << >>   + -   * / %
//   unary + - ! ~   primary: constant, string, ( expression ), field path
// (note: unlike C, the relational and equality operators bind looser than
// the bitwise ones, so `a & 1 == 0` is `(a & 1) == 0`). A field path is
// IDENT or $GLOBAL, then optional [INDEX], then any number of .IDENT or
// ->IDENT with their own [INDEX].
#pragma once

#include "filter/filter_ast.hpp"

#include <cstddef>
#include <string_view>

namespace tracectl::filter {

/// Deepest nesting of parentheses and unary operators accepted: the depth
/// of the expression as the parser nests (each level costs the
/// recursive-descent parser, and each pass over the tree, a dozen stack
/// frames at most), far above what lttng-ust can run (its interpreter stack
/// holds 10 values). A chain of left-associative binary operators
/// (`a == 1 || a == 2 || ...`, `a & 1 & 2 ...`) is not nesting, whatever
/// its length: every pass walks it with a loop (leftChain(),
/// filter_ast.hpp). Its length is bounded by the size of its bytecode,
/// which generateBytecode() refuses over lttng's 65536 bytes.
inline constexpr std::size_t kMaxFilterNesting = 256;

/// Parses `expression` into a tree. Throws FilterError with the column for a
/// syntax error ("syntax error: unexpected ...", as bison's "syntax error"),
/// a lexical error (filter_lexer.hpp), an index that is not an integer
/// constant ("Expecting constant index in array expression"), more than one
/// index on one path element, `$ctx`/`$app` without a following name, an
/// unknown `$` root, or more than kMaxFilterNesting nested parentheses and
/// unary operators ("expression nested too deeply"). The tree is not
/// type-checked: see checkFilter().
NodePtr parseFilter(std::string_view expression);

} // namespace tracectl::filter
