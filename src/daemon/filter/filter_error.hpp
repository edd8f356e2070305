// The one error the filter compiler throws: an expression LTTng 2.13 would
// refuse, or bytecode that lttng-ust 2.13 would refuse, with the place.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tracectl::filter {

/// A refused filter expression. what() reads "Invalid filter expression at
/// column C: REASON" (or "Invalid filter expression: REASON" when the reason
/// concerns the whole expression, column() == 0). Columns count bytes from 1.
class FilterError : public std::runtime_error {
public:
    FilterError(std::size_t column, std::string reason);

    /// 1-based byte column of the offending token, 0 for the whole expression.
    std::size_t column() const noexcept { return column_; }
    /// The reason alone, without the prefix and the column.
    const std::string& reason() const noexcept { return reason_; }

private:
    std::size_t column_;
    std::string reason_;
};

} // namespace tracectl::filter
