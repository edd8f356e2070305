// The filter compiler's entry point: an LTTng 2.13 filter expression (what
// `lttng enable-event --filter EXPR` takes) into lttng-ust 2.13 filter
// bytecode, refused with a FilterError wherever lttng-tools 2.13 refuses it
// or lttng-ust 2.13 would refuse the bytecode.
#pragma once

#include "filter/filter_bytecode.hpp"
#include "filter/filter_error.hpp"

#include <string_view>

namespace tracectl::filter {

/// Compiles `expression`: length check (empty, or 65536 bytes or more, as
/// lttng-ctl's LTTNG_FILTER_MAX_LEN check, refused), tokenize, parse
/// (filter_parser.hpp), checkFilter (filter_check.hpp), generateBytecode
/// (filter_bytecode.hpp), then bytecodeProblem (bytecode_validator.hpp):
/// bytecode lttng-ust would refuse (e.g. more than 10 values on its stack)
/// is refused here. Throws FilterError; nothing else but std::bad_alloc.
FilterBytecode compileFilter(std::string_view expression);

} // namespace tracectl::filter
