// Where a kernel stream's UserString steps (kernel_records.hpp) get their
// strings: the system call argument strings the system-call string program
// copied from user memory (kernel/user_string_table.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace tracectl::consumer::kernel {

/// One string argument of one ftrace syscalls:sys_enter_<name> record.
struct UserStringQuery {
    std::int32_t tid = 0;        ///< the record's common_pid
    std::int32_t nr = 0;         ///< the record's system call number
    std::uint8_t arg = 0;        ///< the argument's index (0..5)
    std::uint64_t pointer = 0;   ///< the argument's value (the user address)
    std::uint64_t timestamp = 0; ///< the record's time (CLOCK_MONOTONIC, ns)
};

class UserStringSource {
public:
    virtual ~UserStringSource() = default;
    /// The string copied for that call (without NUL), taken: no later
    /// query gets it again. Empty when there is none (counted by the
    /// source). The view is valid until the source gets its next string.
    virtual std::string_view take(const UserStringQuery& query) noexcept = 0;
};

} // namespace tracectl::consumer::kernel
