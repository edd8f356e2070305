// The command lines of `tracectl disable-event` and `tracectl
// disable-channel` (lttng-disable-event(1), lttng-disable-channel(1)):
// their options and the checks after parsing. What they do over D-Bus:
// disable_commands.hpp.
#pragma once

#include "cli11_fwd.hpp"
#include "kernel_domain.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tracectl::cli {

/// `tracectl disable-event -u|-k [-s S] [-c C] (PATTERN[,PATTERN...] | -a)`.
struct DisableEventArgs {
    Domain domain = Domain::Ust;
    std::optional<std::string> session; ///< default: resolve_session()
    std::string channel;                ///< "" = channel0
    bool syscall = false;               ///< -k --syscall: the patterns name system calls
    /// One DisableEvents call each; {""} with -a (every rule of the channel).
    std::vector<std::string> patterns;
};

/// `tracectl disable-channel -u|-k [-s S] NAME[,NAME...]`.
struct DisableChannelArgs {
    Domain domain = Domain::Ust;
    std::optional<std::string> session;
    std::vector<std::string> names; ///< one DisableChannel call each
};

/// The two subcommands, as CLI11 fills them in.
struct DisableCommandLine {
    CLI::App* disableEvent = nullptr;
    CLI::App* disableChannel = nullptr;
    DomainFlags deDomain, dcDomain;
    std::string deSession, dcSession;
    std::string dePatterns, dcNames;
    bool deAll = false;
    CLI::Option* deChannel = nullptr;
    DisableEventArgs event;
    DisableChannelArgs channel;
};

/// Adds `disable-event` and `disable-channel` to `app`, filling `cl`.
void addDisableCommands(CLI::App& app, DisableCommandLine& cl);
/// After parsing: fills cl.event / cl.channel for the one given. Throws
/// CLI::ValidationError (a usage error): no domain, neither or both of
/// PATTERN and -a, no name.
void finishDisableCommands(DisableCommandLine& cl);
} // namespace tracectl::cli
