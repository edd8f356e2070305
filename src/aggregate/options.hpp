// DTrace's options (dtrace(1) -x NAME[=VALUE], `#pragma D option NAME[=VALUE]`), as far as
// they mean something for a program run over recorded events. quiet, aggsortkey,
// aggsortrev and defaultargs change what is printed or parsed; strsize bounds every string
// (at most strsize bytes with its NUL, default 256, as DTrace); switchrate sets how often a
// live run hands its records to the program (switch_period_ns); aggrate and bufsize are
// checked and accepted (their values are for a live consumer's buffers, which a recorded
// trace has not); destructive is refused.
#pragma once

#include "aggregate/program.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tracectl::aggregate {

struct RunOptions {
    bool quiet = false;       ///< quiet: only what printf/printa/trace print, no headers
    bool aggsortkey = false;  ///< sort aggregations by key, then value
    bool aggsortrev = false;  ///< reverse the sort
    bool defaultargs = false; ///< unset $N macro arguments are 0 or ""
    std::string switchrate;   ///< as given ("1hz", "10ms"), checked
    std::string aggrate;
    std::string bufsize;
    std::size_t strsize = 256; ///< strsize: a string's bytes with its NUL (1 to 1m)
};

/// The largest strsize taken (1m): a program's strings stay within memory.
inline constexpr std::size_t kLargestStrsize = std::size_t{1} << 20;

/// Applies `settings` in order to `options`. Values are read as libdtrace reads them, N
/// as strtoull(3) with base 0 (decimal, 0x hexadecimal, 0 octal): a rate (dt_opt_rate) is
/// N per second (N alone or Nhz) or a period, N with ns, nsec, us, usec, ms, msec, s, sec,
/// m, min, h, hour, d or day (any case); a size (dt_optval_parse) is N bytes or N with one
/// of k, m, g, t (any case, powers of 1024); strsize is a size from 1 to 1m. Throws
/// ProgramError at the setting: an unknown option, a value where none is taken or a
/// malformed one (the message says what is taken), and `destructive` ("destructive
/// actions are not available: tracectl dtrace never acts on the traced system").
void applyOptions(const std::vector<OptionSetting>& settings, RunOptions& options);

/// The switch rate's period in ns: how often a live run hands what was recorded to the
/// program (dtrace(1M) -x switchrate: the rate at which the principal buffers are
/// switched and consumed, default 1hz; the Dynamic Tracing Guide, "Options and Tunables").
/// `options.switchrate` as apply_options took it: a rate (Nhz, or N alone: N per second)
/// or a period (N with ns, us, ms, s, m, h or d and their long spellings). Empty: 1 s.
/// Held between 10 ms (also for 0, "as often as possible") and 1 day.
std::int64_t switchPeriodNs(const RunOptions& options);

/// "NAME" or "NAME=VALUE" from the command line (-x), at position 0:0.
OptionSetting optionFromText(const std::string& text);

} // namespace tracectl::aggregate
