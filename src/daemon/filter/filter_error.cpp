#include "filter/filter_error.hpp"

#include <utility>

namespace tracectl::filter {

namespace {

std::string describe(std::size_t column, const std::string& reason) {
    if (column == 0)
        return "Invalid filter expression: " + reason;
    return "Invalid filter expression at column " + std::to_string(column) + ": " + reason;
}

} // namespace

FilterError::FilterError(std::size_t column, std::string reason)
    : std::runtime_error(describe(column, reason)), column_(column), reason_(std::move(reason)) {}

} // namespace tracectl::filter
