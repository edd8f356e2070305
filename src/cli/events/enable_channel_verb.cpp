// tracectl enable-channel -u|-k NAME [-s S] [--subbuf-size SIZE] [--num-subbuf N]
// [--overwrite] [--switch-timer US] [--read-timer US]
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
    std::uint64_t subbuf_size = 0;
    std::uint64_t num_subbuf = 0;
    std::uint32_t switch_timer = 0;
    std::uint32_t read_timer = 0;
    CLI::Option* session_option = nullptr;
    CLI::Option* subbuf_size_option = nullptr;
    CLI::Option* num_subbuf_option = nullptr;
    CLI::Option* switch_timer_option = nullptr;
    CLI::Option* read_timer_option = nullptr;
};

void check_enable_channel_line(EnableChannelLine& cl) {
    cl.args.domain = chosen_domain(cl.domain);
    if (cl.session_option->count() > 0) {
        cl.args.session = cl.session;
    }
    if (cl.subbuf_size_option->count() > 0) {
        cl.args.subbuf_size = cl.subbuf_size;
    }
    if (cl.num_subbuf_option->count() > 0) {
        cl.args.num_subbuf = cl.num_subbuf;
    }
    if (cl.switch_timer_option->count() > 0) {
        cl.args.switch_timer_us = cl.switch_timer;
    }
    if (cl.read_timer_option->count() > 0) {
        cl.args.read_timer_us = cl.read_timer;
    }
}

} // namespace

void add_enable_channel_verb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<EnableChannelLine>();
    auto* enable_channel =
        app.add_subcommand("enable-channel", "Add a UST (-u) or kernel (-k) channel to a session");
    add_domain_flags(*enable_channel, cl->domain);
    enable_channel->add_option("NAME", cl->args.name, "Channel name")->required();
    cl->session_option =
        enable_channel->add_option("-s,--session", cl->session, current_session_help);
    cl->subbuf_size_option = enable_channel->add_option(
        "--subbuf-size", cl->subbuf_size,
        "Sub-buffer size in bytes, or with a K, M or G suffix or KiB, MiB, "
        "GiB (powers of 1024: 8M; power of two; default 512K, -k 1M)");
    accept_size_in_bytes(*cl->subbuf_size_option);
    cl->subbuf_size_option->type_name("SIZE");
    cl->num_subbuf_option = enable_channel->add_option("--num-subbuf", cl->num_subbuf,
                                                       "Number of sub-buffers (power of two)");
    accept_whole_number(*cl->num_subbuf_option);
    enable_channel->add_flag("--overwrite", cl->args.overwrite,
                             "Overwrite the oldest sub-buffer when full (flight recorder)");
    cl->switch_timer_option = enable_channel->add_option(
        "--switch-timer", cl->switch_timer,
        "Switch timer period, microseconds: 0 (off, the default) or at least "
        "1000");
    accept_whole_number(*cl->switch_timer_option);
    cl->read_timer_option =
        enable_channel->add_option("--read-timer", cl->read_timer,
                                   "Read timer period, microseconds: 0 (off) or at least 1000");
    accept_whole_number(*cl->read_timer_option);
    enable_channel->footer(
        "Give exactly one of -u and -k. Only before the session first starts. Channel names\n"
        "are unique per domain; a kernel channel's tracefs buffer holds sub-buffer size x\n"
        "count bytes per CPU.\n\nExample:\n"
        "  tracectl enable-channel -u big --subbuf-size 1M --num-subbuf 8\n"
        "  tracectl enable-channel -k kchan --subbuf-size=8M");

    verbs.add(*enable_channel, {.check = [cl] { check_enable_channel_line(*cl); },
                                .run =
                                    [cl](BusClient& bus) {
                                        run_enable_channel(bus, cl->args, std::cout);
                                        return ExitStatus::success;
                                    }});
}

} // namespace tracectl::cli
