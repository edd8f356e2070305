#include "filter/filter_compiler.hpp"

#include "filter/bytecode_ops.hpp"
#include "filter/bytecode_validator.hpp"
#include "filter/filter_check.hpp"
#include "filter/filter_parser.hpp"

#include <string>

namespace tracectl::filter {

FilterBytecode compileFilter(std::string_view expression) {
    if (expression.empty())
        throw FilterError(0, "the filter expression is empty");
    if (expression.size() >= kFilterMaxLen)
        throw FilterError(0, "the filter expression is " + std::to_string(expression.size()) +
                                 " bytes long; it must be shorter than " +
                                 std::to_string(kFilterMaxLen));
    NodePtr root = parseFilter(expression);
    checkFilter(*root);
    FilterBytecode bytecode = generateBytecode(*root);
    if (auto problem = bytecodeProblem(bytecode))
        throw FilterError(0, "lttng-ust would refuse the filter's bytecode: " + *problem);
    return bytecode;
}

} // namespace tracectl::filter
