// The checks lttng-tools 2.13 makes between parsing and code generation
// (src/common/filter/): the type rules of its IR generation
// (filter-visitor-generate-ir.c), string validation (ir-validate-string),
// star-glob normalization (ir-normalize-glob-patterns), glob validation
// (ir-validate-globbing) and the string comparator rule
// (ir-check-binary-comparator). Its binary-op nesting pass refuses nothing
// in 2.13 and has no counterpart here.
#pragma once

#include "filter/filter_ast.hpp"

namespace tracectl::filter {

/// Checks `root` in place and sets every node's `type` (and each string
/// literal's `stringKind`, its text normalized: consecutive unescaped stars
/// of a glob pattern become one). Throws FilterError, at the operator's or
/// literal's column, for:
/// - `* / % + -` between operands: "binary operation '%' not supported"
///   (lttng-tools 2.13 refuses them; lttng-ust has no such instructions);
/// - a unary operator on a string literal;
/// - a comparison between a string literal and a numeric or floating one;
/// - a string literal operand of `&&`/`||`, or a string or floating one of
///   `<< >> & | ^`;
/// - a string literal compared with anything but `==`/`!=`;
/// - two globbing patterns compared, or a pattern with other than `==`/`!=`;
/// - a backslash in a string literal not followed by `*` or `\`;
/// - a whole expression that is a string or a floating constant.
void checkFilter(Node& root);

} // namespace tracectl::filter
