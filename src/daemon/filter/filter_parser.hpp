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

/// Greatest height of the tree (operators above a leaf) that the parser
/// accepts, so that no later pass recurses without bound. A chain such as
/// `a == 1 || a == 2 || ...` is one level per operator.
inline constexpr std::size_t kMaxFilterDepth = 1000;

/// Deepest nesting of parentheses and unary operators accepted (each level
/// costs the recursive-descent parser a dozen stack frames). Either limit is
/// far above what lttng-ust can run: its interpreter stack holds 10 values.
inline constexpr std::size_t kMaxFilterNesting = 256;

/// Parses `expression` into a tree. Throws FilterError with the column for a
/// syntax error ("syntax error: unexpected ...", as bison's "syntax error"),
/// a lexical error (filter_lexer.hpp), an index that is not an integer
/// constant ("Expecting constant index in array expression"), more than one
/// index on one path element, `$ctx`/`$app` without a following name, an
/// unknown `$` root, or a tree deeper than kMaxFilterDepth or kMaxFilterNesting. The tree is not
/// type-checked: see checkFilter().
NodePtr parseFilter(std::string_view expression);

} // namespace tracectl::filter
