// The tracing subcommands of tracectl: enable-event, enable-channel,
// add-context (-u or -k), list-apps, list-tracepoints -k and view
// (lttng-enable-event(1), lttng-enable-channel(1), lttng-add-context(1),
// lttng-list(1) -u and -k, lttng-view(1)).
#pragma once

#include "bus_client.hpp"
#include "exit_status.hpp"
#include "kernel_domain.hpp"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::cli {

/// `tracectl enable-event -u PATTERN [-s S] [-c C] [--loglevel L | --loglevel-only L]
/// [--exclude E,...] [--filter EXPR]`, or
/// `tracectl enable-event -k (PATTERN[,PATTERN...] | -a) [--syscall] [-s S] [-c C]
/// [--filter EXPR]`.
struct EnableEventArgs {
    Domain domain = Domain::Ust;
    std::string pattern;                      ///< ust: the one pattern
    std::vector<KernelEventCall> kernelCalls; ///< kernel: one EnableEvents call each
    std::optional<std::string> session;       ///< default: resolve_session()
    std::string channel;                      ///< "" = channel0 (made on first enable)
    std::optional<std::string> loglevel;
    bool loglevelOnly = false;
    std::vector<std::string> exclusions;
    std::optional<std::string> filter; ///< LTTng filter expression
    /// kernel: --userspace-probe's location, its path made absolute
    /// (resolve_userspace_probe()); "" for tracepoints and system calls.
    std::string userspaceProbe;
};

/// `tracectl enable-channel -u NAME [-s S] [--subbuf-size B] [--num-subbuf N]
/// [--discard|--overwrite] [--switch-timer US] [--read-timer US]`.
struct EnableChannelArgs {
    Domain domain = Domain::Ust;
    std::string name;
    std::optional<std::string> session;
    std::optional<std::uint64_t> subbufSize;
    std::optional<std::uint64_t> numSubbuf;
    /// --overwrite: true, --discard: false; neither: nullopt, the session's default mode
    /// (overwrite in a snapshot session, else discard; lttng-enable-channel(1)).
    std::optional<bool> overwrite;
    std::optional<std::uint32_t> switchTimerUs;
    std::optional<std::uint32_t> readTimerUs;
};

/// `tracectl add-context -u|-k -t TYPE [-t TYPE...] [-s S] [-c C]`.
struct AddContextArgs {
    Domain domain = Domain::Ust;
    std::vector<std::string> types;     ///< lttng-add-context(1) names: vpid, vtid, procname, ...
    std::optional<std::string> session; ///< default: resolve_session()
    std::string channel;                ///< "" = every channel (channel0 if there is none)
};

/// The object path of session `name`; without a name, of the current session
/// (BusClient::current_session(), set by create and set-session), or when
/// none is kept, of the caller's only session. Throws sdbus::Error
/// (NoSuchSession) when the current session no longer exists, or there is no
/// current session and the caller has none or more than one.
std::string resolveSession(BusClient& bus, const std::optional<std::string>& name);

/// Kernel: makes every call of `args.kernel_calls` even when one fails; each
/// failure is reported on `err` ("tracectl: PATTERN: ERROR: message") and the
/// status of the first failure returned. UST: one call; a failure throws.
ExitStatus runEnableEvent(BusClient& bus, const EnableEventArgs& args, std::ostream& out,
                          std::ostream& err);
void runEnableChannel(BusClient& bus, const EnableChannelArgs& args, std::ostream& out);
/// Adds each type in turn, skipping those recorded already (so a command
/// refused half-way can be run again once corrected); stops at the first
/// the daemon refuses (sdbus::Error).
void runAddContext(BusClient& bus, const AddContextArgs& args, std::ostream& out);

/// Prints the registered apps the caller may see: pid, uid, bitness, name, and
/// with `tracepoints` each app's tracepoints with their log levels; or JSON.
void runListApps(BusClient& bus, bool tracepoints, bool json, std::ostream& out);

/// `tracectl list-tracepoints -k [--fields] [--json]`: Manager.ListTracepoints("kernel"),
/// printed by format_kernel_tracepoints() or format_kernel_tracepoints_json().
void runListKernelTracepoints(BusClient& bus, bool fields, bool json, std::ostream& out);

/// The session's output folder, for `tracectl view` (which runs babeltrace2 on it). Throws
/// std::runtime_error(remote_trace_note()) for a network session: no folder here.
std::string sessionOutput(BusClient& bus, const std::optional<std::string>& name);

} // namespace tracectl::cli
