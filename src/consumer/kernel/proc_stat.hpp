// Reading /proc/<pid>/stat and /proc/<pid>/status (proc(5)) without
// allocation per read: what ProcfsProcessInfo and the statedump need.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tracectl::consumer::kernel {

/// PF_KTHREAD in /proc/<pid>/stat field 9 (flags): a kernel thread.
inline constexpr std::uint64_t kPfKthread = 0x00200000;

/// The /proc/<pid>/stat fields we use (proc(5) numbering).
struct ProcStat {
    std::int32_t pid = 0;        ///< field 1 (the thread's id in task/ dirs)
    std::array<char, 16> comm{}; ///< field 2, without the parentheses, NUL padded
    char state = '?';            ///< field 3: R, S, D, Z, X, T, t, I, ...
    std::int32_t ppid = 0;       ///< field 4
    std::uint64_t flags = 0;     ///< field 9 (PF_* bits)
    std::int32_t priority = 0;   ///< field 18: task_prio(), lttng's prio context
    std::int32_t processor = 0;  ///< field 39: CPU last run on
};

/// Parses one stat line. comm may hold spaces and ')': it ends at the last
/// ')'. Empty when a field is missing or not a number. Lines from kernels
/// older than field 39 leave processor 0.
std::optional<ProcStat> parseProcStat(std::string_view line) noexcept;

/// The `Tgid:` value of a /proc/<pid>/status text, or empty.
std::optional<std::int32_t> parseTgid(std::string_view status) noexcept;

/// The `NSpid:` values of a /proc/<pid>/status text (the id in each pid
/// namespace, the initial one first), at most out.size() of them, into
/// `out`. Returns how many were stored: 0 when the line is missing or its
/// first value is not a number (values after a malformed one are not read).
std::size_t parseNsPids(std::string_view status, std::span<std::int32_t> out) noexcept;

/// Reads up to buffer.size() bytes of the file at `path` (a NUL-terminated
/// path). Returns the text read, or empty with errno set (ENOENT for a
/// vanished process, EACCES, ...).
std::optional<std::string_view> readSmallFile(const char* path, std::span<char> buffer) noexcept;

} // namespace tracectl::consumer::kernel
