#include "aggregate/program.hpp"

namespace tracectl::aggregate {

ProgramError::ProgramError(Position at, const std::string& message)
    : std::runtime_error(std::to_string(at.line) + ":" + std::to_string(at.column) + ": " +
                         message),
      at_(at), message_(message) {}

const char* operator_text(Operator op) noexcept {
    switch (op) {
    case Operator::add:
        return "+";
    case Operator::subtract:
        return "-";
    case Operator::multiply:
        return "*";
    case Operator::divide:
        return "/";
    case Operator::modulo:
        return "%";
    case Operator::equal:
        return "==";
    case Operator::not_equal:
        return "!=";
    case Operator::less:
        return "<";
    case Operator::less_equal:
        return "<=";
    case Operator::greater:
        return ">";
    case Operator::greater_equal:
        return ">=";
    case Operator::logical_and:
        return "&&";
    case Operator::logical_or:
        return "||";
    case Operator::logical_not:
        return "!";
    case Operator::negate:
        return "-";
    }
    return "?";
}

const char* function_name(Function function) noexcept {
    switch (function) {
    case Function::count:
        return "count";
    case Function::sum:
        return "sum";
    case Function::avg:
        return "avg";
    case Function::min:
        return "min";
    case Function::max:
        return "max";
    case Function::stddev:
        return "stddev";
    case Function::quantize:
        return "quantize";
    case Function::lquantize:
        return "lquantize";
    }
    return "?";
}

} // namespace tracectl::aggregate
