// tracectl enable-channel -u|-k NAME [-s S] [--subbuf-size SIZE] [--num-subbuf N]
// [--discard|--overwrite] [--switch-timer US] [--read-timer US]
#include "cli/kernel_domain.hpp"
#include "cli/trace_commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "event_verbs.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <memory>

namespace tracectl::cli {
namespace {

/// The enable-channel command line, as CLI11 fills it in.
struct EnableChannelLine {
    EnableChannelArgs args;
    DomainFlags domain;
    std::string session;
    std::uint64_t subbufSize = 0;
    std::uint64_t numSubbuf = 0;
    std::uint32_t switchTimer = 0;
    std::uint32_t readTimer = 0;
    bool discard = false;
    bool overwrite = false;
    CLI::Option* sessionOption = nullptr;
    CLI::Option* subbufSizeOption = nullptr;
    CLI::Option* numSubbufOption = nullptr;
    CLI::Option* switchTimerOption = nullptr;
    CLI::Option* readTimerOption = nullptr;
};

void checkEnableChannelLine(EnableChannelLine& cl) {
    cl.args.domain = chosenDomain(cl.domain);
    if (cl.sessionOption->count() > 0) {
        cl.args.session = cl.session;
    }
    if (cl.subbufSizeOption->count() > 0) {
        cl.args.subbufSize = cl.subbufSize;
    }
    if (cl.numSubbufOption->count() > 0) {
        cl.args.numSubbuf = cl.numSubbuf;
    }
    if (cl.switchTimerOption->count() > 0) {
        cl.args.switchTimerUs = cl.switchTimer;
    }
    if (cl.readTimerOption->count() > 0) {
        cl.args.readTimerUs = cl.readTimer;
    }
    // lttng-enable-channel(1)'s two modes: given both, the channel's would be a guess (lttng
    // takes the last one).
    if (cl.discard && cl.overwrite) {
        throw CLI::ValidationError("--discard",
                                   "excludes --overwrite: a channel has one buffer mode (discard: "
                                   "new events are dropped when the buffer is full; overwrite: "
                                   "the oldest sub-buffer is)");
    }
    if (cl.discard || cl.overwrite) {
        cl.args.overwrite = cl.overwrite;
    }
}

} // namespace

void addEnableChannelVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<EnableChannelLine>();
    auto* enableChannel =
        app.add_subcommand("enable-channel", "Add a UST (-u) or kernel (-k) channel to a session");
    addDomainFlags(*enableChannel, cl->domain);
    enableChannel->add_option("NAME", cl->args.name, "Channel name")->required();
    cl->sessionOption = enableChannel->add_option("-s,--session", cl->session, kCurrentSessionHelp);
    cl->subbufSizeOption = enableChannel->add_option(
        "--subbuf-size", cl->subbufSize,
        "Sub-buffer size in bytes, or with a K, M or G suffix or KiB, MiB, "
        "GiB (powers of 1024: 8M; power of two; default 512K, -k 1M)");
    acceptSizeInBytes(*cl->subbufSizeOption);
    cl->subbufSizeOption->type_name("SIZE");
    cl->numSubbufOption = enableChannel->add_option("--num-subbuf", cl->numSubbuf,
                                                    "Number of sub-buffers (power of two)");
    acceptWholeNumber(*cl->numSubbufOption);
    enableChannel->add_flag("--discard", cl->discard,
                            "Discard new events when the buffer is full (the default, but in a "
                            "snapshot session)");
    enableChannel->add_flag("--overwrite", cl->overwrite,
                            "Overwrite the oldest sub-buffer when full (flight recorder; the "
                            "default in a snapshot session)");
    cl->switchTimerOption = enableChannel->add_option(
        "--switch-timer", cl->switchTimer,
        "Switch timer period, microseconds: 0 (off, the default) or at least "
        "1000");
    acceptWholeNumber(*cl->switchTimerOption);
    cl->readTimerOption = enableChannel->add_option(
        "--read-timer", cl->readTimer, "Read timer period, microseconds: 0 (off) or at least 1000");
    acceptWholeNumber(*cl->readTimerOption);
    enableChannel->footer(
        "Give exactly one of -u and -k. Only before the session first starts. Channel names\n"
        "are unique per domain; a kernel channel's tracefs buffer holds sub-buffer size x\n"
        "count bytes per CPU.\n\nExample:\n"
        "  tracectl enable-channel -u big --subbuf-size 1M --num-subbuf 8\n"
        "  tracectl enable-channel -k kchan --subbuf-size=8M");

    verbs.add(*enableChannel, {.check = [cl] { checkEnableChannelLine(*cl); },
                               .run =
                                   [cl](BusClient& bus) {
                                       runEnableChannel(bus, cl->args, std::cout);
                                       return ExitStatus::Success;
                                   }});
}

} // namespace tracectl::cli
