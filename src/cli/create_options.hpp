// The options tracectl sends with Manager.CreateSession, built from the command line.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace tracectl::cli {

/// One CreateSession option value: sent as a D-Bus "s", "t" or "b" variant.
using CreateOptionValue = std::variant<std::string, std::uint64_t, bool>;

/// CreateSession's a{sv} options, by key.
using CreateOptions = std::map<std::string, CreateOptionValue>;

/// The live timer `tracectl create --live` gives without a value: 1000000 µs, lttng-tools'
/// DEFAULT_LTTNG_LIVE_TIMER.
inline constexpr std::uint64_t kDefaultLiveTimerUs = 1'000'000;

/// The largest live timer, µs: lttng-relayd's protocol carries it in 32 bits, and lttng
/// create refuses more.
inline constexpr std::uint64_t kMaxLiveTimerUs = 4'294'967'295;

/// Where a session's trace goes, as `tracectl create` was told (lttng-create(1)'s names).
/// URLs are passed to the daemon as typed: it parses them (Error.InvalidArgument).
struct NetworkOutput {
    std::optional<std::string> url;           ///< -U/--set-url URL ("url")
    std::optional<std::string> ctrlUrl;       ///< -C/--ctrl-url URL ("control-url")
    std::optional<std::string> dataUrl;       ///< -D/--data-url URL ("data-url")
    std::optional<std::uint64_t> liveTimerUs; ///< --live[=US]: mode "live", "live-timer"

    /// True when the session does not write to a local folder the client chooses: a URL is
    /// given or it is live (a live session without URL streams to net://127.0.0.1).
    bool streams() const noexcept { return url || ctrlUrl || liveTimerUs; }
};

/// Which of create's output options were given (not their values).
struct CreateOutputFlags {
    bool output = false;   ///< -o/--output
    bool url = false;      ///< -U/--set-url
    bool ctrlUrl = false;  ///< -C/--ctrl-url
    bool dataUrl = false;  ///< -D/--data-url
    bool live = false;     ///< --live
    bool snapshot = false; ///< --snapshot
};

/// A usage error of the command line: the option it is about ("--ctrl-url") and what is wrong.
struct UsageProblem {
    std::string option;
    std::string message;
};

/// The first combination of create's output options lttng create refuses too, or nullopt:
/// -C without -D or -D without -C; -U with -C/-D; -o with -U, -C/-D or --live; --live with
/// --snapshot. (A snapshot session with a URL is the daemon's to accept or refuse.)
std::optional<UsageProblem> checkCreateOutput(const CreateOutputFlags& given);

/// The live timer of `--live[=US]` from its value as typed: "" (no value) is
/// default_live_timer_us; otherwise plain decimal digits from 1 to max_live_timer_us.
/// Returns nullopt for anything else ("0", "-1", "1s", "x", too big).
std::optional<std::uint64_t> parseLiveTimer(std::string_view text);

/// `dir` as an absolute, lexically normalized path ("." and ".." resolved without touching
/// the file system, no trailing "/"); a relative `dir` is taken relative to `cwd` (which must
/// be absolute). An empty `dir` stays empty, for the daemon to reject.
std::string absoluteOutputPath(std::string_view dir, const std::filesystem::path& cwd);

/// The name lttng create gives a session created without one: "auto-YYYYmmdd-HHMMSS" in local
/// time (lttng-create(1); lttng-tools DEFAULT_SESSION_NAME "auto").
std::string autoSessionName(std::time_t now);

/// Where lttng create writes such a session by default: `home`/lttng-traces/`name`, with no
/// second date (lttng-create(1): "$LTTNG_HOME/lttng-traces/auto-YYYYmmdd-HHMMSS").
std::string autoSessionOutput(const std::filesystem::path& home, std::string_view name);

/// The CreateSession options: "output-path" (s) when an output folder is given (passed as
/// is: make it absolute first), "mode" (s) "snapshot" when `snapshot` or "live" when
/// `network.live_timer_us`, then "live-timer" (t, µs); "buffer-ownership" (s) = `buffers`
/// ("per-uid" or "per-pid", the daemon checks) when given; "url" (s), "control-url" and
/// "data-url" (s) as given in `network`. Keys left out take the daemon's defaults. Checks
/// nothing: check_create_output() first.
CreateOptions createSessionOptions(const std::optional<std::string>& outputPath, bool snapshot,
                                   const std::optional<std::string>& buffers = std::nullopt,
                                   const NetworkOutput& network = {});

} // namespace tracectl::cli
