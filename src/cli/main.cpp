// tracectl: the command-line client of tracectld. This file only wires the command line
// (CLI11) to the commands (commands.hpp) and turns failures into exit statuses.

#include "aggregate_command.hpp"
#include "bus_client.hpp"
#include "clear_command.hpp"
#include "commands.hpp"
#include "config.h"
#include "create_options.hpp"
#include "disable_commands.hpp"
#include "dtrace_options.hpp"
#include "error_report.hpp"
#include "exit_status.hpp"
#include "kernel_domain.hpp"
#include "quantities.hpp"
#include "rotation_schedule_commands.hpp"
#include "session_file_commands.hpp"
#include "session_selection.hpp"
#include "top_command.hpp"
#include "trace_commands.hpp"
#include "track_commands.hpp"
#include "utf8.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

using namespace tracectl::cli;

/// NAME, -a/--all and -g/--glob PATTERN of start, stop and destroy
/// (session_selection.hpp), as CLI11 fills them in.
struct SessionSpecOptions {
    std::string name;
    bool all = false;
    std::string glob;
    CLI::Option* name_option = nullptr;
    CLI::Option* glob_option = nullptr;

    SessionSpec spec() const {
        SessionSpec out;
        if (name_option->count() > 0) {
            out.name = name;
        }
        out.all = all;
        if (glob_option->count() > 0) {
            out.glob = glob;
        }
        return out;
    }
};

/// Everything the command line can say, filled in by CLI11.
struct CommandLine {
    bool system_bus = false; // the default anyway
    bool user_bus = false;
    bool interactive = false;
    std::string bus_address;
    CreateArgs create;
    std::string create_output;
    std::string create_url;      ///< -U/--set-url
    std::string create_ctrl_url; ///< -C/--ctrl-url
    std::string create_data_url; ///< -D/--data-url
    std::string create_live;     ///< --live[=US] as typed ("" when given no value)
    ListArgs list;
    ShowArgs show;
    SessionSpecOptions start;
    SessionSpecOptions stop;
    SessionSpecOptions destroy;
    std::string set_session_name;
    bool status_json = false;
    bool list_ust = false;
    bool list_kernel = false;
    EnableEventArgs enable_event;
    std::string ee_session;
    std::string ee_loglevel;
    std::string ee_loglevel_only;
    std::string ee_exclude;
    std::string ee_userspace_probe;
    EventSelectionFlags ee_selection;
    EnableChannelArgs enable_channel;
    std::string ec_session;
    DomainFlags ec_domain;
    std::uint64_t ec_subbuf_size = 0;
    std::uint64_t ec_num_subbuf = 0;
    std::uint32_t ec_switch_timer = 0;
    std::uint32_t ec_read_timer = 0;
    AddContextArgs add_context;
    std::string ac_session;
    DomainFlags ac_domain;
    DomainFlags lt_domain;
    bool lt_fields = false;
    bool lt_json = false;
    bool apps_tracepoints = false;
    bool apps_json = false;
    std::string view_session;
    std::string rotate_name;
    bool rotate_wait = false;
    bool rotate_no_wait = false;
    std::string view_viewer;
    std::string er_name;
    std::string er_timer;
    std::uint64_t er_size_bytes = 0;
    std::vector<std::string> snapshot_words; ///< [record] [NAME]
    std::string snapshot_name;
    std::string snapshot_session;
    bool snapshot_named = false;
    std::uint64_t snapshot_max_bytes = 0;
    RotationTriggers er_triggers;
    std::string dr_name;
    bool dr_timer = false;
    bool dr_size = false;
    DtraceCommandLine dtrace;    ///< tracectl dtrace
    DtraceCommandLine aggregate; ///< tracectl aggregate: the same command
    ClearArgs clear;
    std::string clear_name;
    SaveArgs save;
    std::string save_name;
    std::string save_output;
    LoadArgs load;
    std::string load_name;
    std::string load_input;
    std::string load_override_name;
    std::string load_override_url;
    DisableCommandLine disable; // disable-event, disable-channel
    TrackCommandLine track;
};

/// Adds [NAME | -a/--all | -g/--glob PATTERN] to `command`, which acts on
/// the sessions they select; `verb` ("Start") begins each description.
void add_session_spec(CLI::App& command, SessionSpecOptions& options, const std::string& verb) {
    options.name_option =
        command.add_option("NAME", options.name,
                           "Name of the session (default: the current session, see 'tracectl "
                           "set-session')");
    auto* all = command.add_flag("-a,--all", options.all,
                                 verb + " every session you own (even as root, only yours)");
    options.glob_option =
        command
            .add_option("-g,--glob", options.glob,
                        verb + " every session you own whose name matches PATTERN (a shell "
                               "glob: *, ?, [...])")
            ->type_name("PATTERN");
    options.name_option->excludes(all)->excludes(options.glob_option);
    all->excludes(options.glob_option);
}

/// Accepts only plain decimal digits that fit in 64 bits: CLI11 alone would
/// wrap "-1" around and clamp what is too big.
CLI::Validator whole_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::uint64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, value);
            if (text.empty() || ec != std::errc{} || ptr != end) {
                return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
            }
            return {};
        },
        "UINT");
}

/// A size in bytes as lttng(1) takes one (parse_size(): 8M, 64K, 1G, 4096,
/// 0x1000), turned into its decimal byte count for the option's variable;
/// parse_size()'s sentence when it is no size.
CLI::Validator size_in_bytes() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            const SizeParse size = parse_size(text);
            if (!size.bytes) {
                return size.error;
            }
            text = std::to_string(*size.bytes);
            return {};
        },
        ""); // the options' type_name says SIZE
}

/// `list` (items separated by ", ") as lines of at most 80 columns, each
/// indented by two spaces, for a --help footer.
std::string wrapped_list(std::string_view list) {
    std::string out = "  ";
    std::size_t column = 2;
    while (!list.empty()) {
        const std::size_t comma = list.find(", ");
        const std::string_view item =
            list.substr(0, comma == std::string_view::npos ? comma : comma + 1);
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 2);
        if (column > 2 && column + 1 + item.size() > 80) {
            out += "\n  ";
            column = 2;
        } else if (column > 2) {
            out += ' ';
            ++column;
        }
        out += item;
        column += item.size();
    }
    return out;
}

/// `text` split at runs of spaces (lttng view --viewer splits its VIEWER so).
std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : text) {
        if (c == ' ') {
            if (!word.empty()) {
                words.push_back(std::move(word));
                word.clear();
            }
        } else {
            word += c;
        }
    }
    if (!word.empty()) {
        words.push_back(std::move(word));
    }
    return words;
}

/// `value` if `option` was given, else nullopt.
std::optional<std::string> optional_name(const CLI::Option* option, const std::string& value) {
    return option->count() > 0 ? std::optional<std::string>(value) : std::nullopt;
}

/// The session a verb names by its NAME argument or by -s/--session (LTTng's
/// spelling, bound to the same value), or nullopt if by neither.
std::optional<std::string> optional_session(const CLI::Option* name, const CLI::Option* session,
                                            const std::string& value) {
    return name->count() + session->count() > 0 ? std::optional<std::string>(value) : std::nullopt;
}

/// How a command's session option or argument defaults (resolve_session()).
constexpr const char* current_session_help =
    "Session (default: the current session, else your only session)";

/// The `tracectl --help` hint to put after a usage error.
std::string help_hint(const CLI::App& app) {
    const auto selected = app.get_subcommands();
    return selected.empty() ? "see 'tracectl --help'"
                            : "see 'tracectl " + selected.front()->get_name() + " --help'";
}

ExitStatus run(int argc, char** argv) {
    CommandLine cl;
    CLI::App app{"Control tracing sessions of the tracectld daemon over D-Bus.", "tracectl"};
    app.set_version_flag("--version", std::string{"tracectl "} + TRACECTL_VERSION,
                         "Print the version of tracectl and exit");
    app.footer(std::string{exit_status_help});
    app.require_subcommand(1);
    app.fallthrough(); // global options are accepted after the subcommand too

    auto* system_bus = app.add_flag("--system", cl.system_bus,
                                    "Use the system bus (the default; honours "
                                    "DBUS_SYSTEM_BUS_ADDRESS)");
    auto* user_bus =
        app.add_flag("--user", cl.user_bus, "Use your session bus (a `tracectld --user`)");
    auto* bus_address = app.add_option("--bus-address", cl.bus_address,
                                       "Use the bus at ADDR, a D-Bus address such as "
                                       "unix:path=/run/tracectl/bus")
                            ->type_name("ADDR");
    system_bus->excludes(user_bus)->excludes(bus_address);
    user_bus->excludes(bus_address);
    app.add_flag("--interactive", cl.interactive,
                 "Let polkit ask for a password (through your authentication agent) when a "
                 "command needs a right you do not hold yet; without it such a command fails "
                 "with InteractiveAuthorizationRequired");

    auto* create = app.add_subcommand("create", "Create a tracing session");
    create->add_option("NAME", cl.create.name,
                       "Name of the session (unique among yours; default, as lttng create: "
                       "auto-YYYYmmdd-HHMMSS, written to ~/lttng-traces/auto-YYYYmmdd-HHMMSS)");
    auto* create_output =
        create
            ->add_option("-o,--output", cl.create_output,
                         "Folder the trace is written to (default: ~/lttng-traces/NAME-DATE); "
                         "a relative DIR is taken relative to the current folder")
            ->type_name("DIR");
    create->add_flag("--snapshot", cl.create.snapshot,
                     "Snapshot mode (flight recorder): channels overwrite, nothing is written "
                     "until 'tracectl snapshot NAME'");
    create
        ->add_option("--buffers", cl.create.buffers,
                     "Buffer ownership: per-uid (one buffer set per user, the default) or "
                     "per-pid (one per application, written under ust/pid/)")
        ->check(CLI::IsMember({"per-uid", "per-pid"}))
        ->type_name("per-uid|per-pid");
    create->add_flag("--count-events", cl.create.count_events,
                     "Count the event records the consumer writes (events recorded, in show, "
                     "list and top); costs the consumer CPU at millions of events per second. "
                     "Not with --snapshot");
    auto* create_url =
        create
            ->add_option("-U,--set-url", cl.create_url,
                         "Stream the trace to the lttng-relayd at URL, "
                         "net://HOST[:CTRL_PORT[:DATA_PORT]] (net6:// for IPv6; HOST may be "
                         "[IPv6]; ports 5342 and 5343 by default); file:///DIR is --output DIR")
            ->type_name("URL");
    auto* create_ctrl_url =
        create
            ->add_option("-C,--ctrl-url", cl.create_ctrl_url,
                         "The relay's control address, tcp://HOST:PORT (tcp6:// for IPv6); "
                         "needs --data-url")
            ->type_name("URL");
    auto* create_data_url =
        create
            ->add_option("-D,--data-url", cl.create_data_url,
                         "The relay's data address, tcp://HOST:PORT; needs --ctrl-url")
            ->type_name("URL");
    auto* create_live =
        create
            ->add_option(
                "--live", cl.create_live,
                "Live session: streams to the relay (default net://127.0.0.1) and flushes "
                "every US microseconds (at least 1000; default 1000000) for lttng-live viewers "
                "(babeltrace2 --input-format=lttng-live). Not with --snapshot or --output")
            ->expected(0, 1)
            ->type_name("[=US]");
    create->footer(
        "Creates a session owned by you, in state \"created\"; tracing begins with\n"
        "'tracectl start NAME'. With --set-url, or --ctrl-url and --data-url, the trace\n"
        "goes to an lttng-relayd (2.11 or later) instead of a folder, as lttng create\n"
        "sends it; the relay must answer at create time (else RelayUnavailable).\n\n"
        "Example:\n  tracectl create web-latency --output ./traces/web-latency\n"
        "  tracectl create web --set-url net://relay.example.com\n"
        "  tracectl create web --live=500000 --set-url net://[::1]\n"
        "  babeltrace2 --input-format=lttng-live net://localhost/host/$(hostname)/web");

    auto* list = app.add_subcommand("list", "List your tracing sessions");
    auto* list_name =
        list->add_option("NAME", cl.show.name,
                         "Show this session instead, as 'tracectl show NAME' (lttng list NAME)");
    auto* list_ust = list->add_flag("-u,--userspace", cl.list_ust,
                                    "List the registered apps and their tracepoints instead, as "
                                    "'tracectl list-apps --tracepoints' (lttng list -u)");
    auto* list_kernel = list->add_flag("-k,--kernel", cl.list_kernel,
                                       "List the kernel's tracepoints instead, as 'tracectl "
                                       "list-tracepoints -k' (lttng list -k)");
    list_name->excludes(list_ust)->excludes(list_kernel);
    list_ust->excludes(list_kernel);
    list->add_flag("--json", cl.list.json, "Print a JSON array with every property");
    list->footer("Lists the sessions you may see, oldest first: name, state, mode, owner,\n"
                 "events discarded, packets lost and output folder; a session that discarded\n"
                 "events or lost packets gets a warning line on standard error.\n"
                 "NAME, -u and -k do what lttng list does with them.\n\n"
                 "Example:\n  tracectl list\n  tracectl list --json\n  tracectl list -u");

    auto* version = app.add_subcommand(
        "version", "Print the versions of tracectl and of the daemon (as lttng version)");
    version->footer("Prints tracectl's version, then the version of the tracectld answering on\n"
                    "the bus (the Manager's Version property); if none answers, says so and\n"
                    "exits with status 3.\n\nExample:\n  tracectl version --user");

    auto* show = app.add_subcommand("show", "Show every property of a session");
    show->add_option("NAME", cl.show.name, "Name of the session")->required();
    show->add_flag("--json", cl.show.json, "Print a JSON object with every property");
    show->footer("Prints every property of the session (D-Bus interface\n"
                 "org.tracectl.Tracing1.Session), one per line, then its statistics: events\n"
                 "recorded and discarded, packets lost, bytes written, in total and per\n"
                 "channel. A session with kernel channels, event rules or contexts gets a\n"
                 "\"Kernel domain\" section listing them (syscall rules as 'syscall NAME').\n"
                 "When events were discarded or packets lost, a warning line follows\n"
                 "on standard error.\n\n"
                 "Example:\n  tracectl show web-latency");

    auto* top = app.add_subcommand("top", "Watch your sessions' event rates and losses live");
    top->footer("A live view, refreshed every second, of the sessions you may see (those of\n"
                "'tracectl list'): per session and per channel, events recorded per second,\n"
                "megabytes (10^6 bytes) written per second, events discarded and packets lost\n"
                "so far, and the session's state. Rates need two samples: '-' until then.\n"
                "Follows the daemon's PropertiesChanged signals; sessions created or destroyed\n"
                "meanwhile come and go. q (or Ctrl-C) quits. Needs a terminal: without one it\n"
                "exits with status 2.\n\n"
                "Example:\n  tracectl top\n  tracectl top --user");

    auto* start = app.add_subcommand("start", "Start tracing in a session, or several");
    add_session_spec(*start, cl.start, "Start");
    start->footer("Starts recording; allowed when the session is \"created\" or \"stopped\".\n"
                  "With --all or --glob (as lttng start in LTTng 2.14), a session already active\n"
                  "is a warning and each failure is reported while the others go on.\n\n"
                  "Example:\n  tracectl start web-latency\n  tracectl start --glob 'web-*'");

    auto* stop = app.add_subcommand("stop", "Stop tracing in a session, or several");
    add_session_spec(*stop, cl.stop, "Stop");
    stop->footer("Stops recording; allowed when the session is \"active\". What was recorded\n"
                 "stays in the output folder. With --all or --glob, a session not active is a\n"
                 "warning and each failure is reported while the others go on.\n\n"
                 "Example:\n  tracectl stop web-latency\n  tracectl stop --all");

    auto* destroy = app.add_subcommand("destroy", "Destroy a session, or several");
    add_session_spec(*destroy, cl.destroy, "Destroy");
    destroy->footer("Stops tracing if needed and removes the session; without NAME, --all or\n"
                    "--glob, the current session. The trace files stay on disk. Destroying the\n"
                    "current session leaves no current session.\n\n"
                    "Example:\n  tracectl destroy web-latency\n  tracectl destroy --all");

    auto* set_session =
        app.add_subcommand("set-session", "Make a session the current one (as lttng set-session)");
    set_session->add_option("NAME", cl.set_session_name, "Name of one of your sessions")
        ->required();
    set_session->footer(
        "Commands given no session act on the current session: 'tracectl create' sets it,\n"
        "and so does this command. It is kept per user and per bus in\n"
        "$XDG_RUNTIME_DIR/tracectl/current-session.BUS (gone at logout). Without a current\n"
        "session, commands fall back to your only session, if you have exactly one.\n\n"
        "Example:\n  tracectl set-session web-latency");

    auto* status_command =
        app.add_subcommand("status", "Show the current session (as lttng status)");
    status_command->add_flag("--json", cl.status_json, "Print a JSON object with every property");
    status_command->footer(
        "Prints the current session's name, then every property and statistic as\n"
        "'tracectl show' does.\n\n"
        "Example:\n  tracectl status");

    auto* rotate = app.add_subcommand("rotate", "Archive the current trace chunk of a session");
    auto* rotate_name = rotate->add_option("NAME", cl.rotate_name, current_session_help);
    auto* rotate_wait = rotate->add_flag("--wait", cl.rotate_wait,
                                         "Return once the archive is complete (RotationCompleted), "
                                         "showing progress on standard error meanwhile");
    rotate
        ->add_flag("-n,--no-wait", cl.rotate_no_wait,
                   "Return once the rotation has begun (the default; as lttng rotate --no-wait)")
        ->excludes(rotate_wait);
    rotate->footer("Closes the current trace chunk and goes on in a new one; the closed chunk\n"
                   "becomes a complete trace in OUTPUT/archives/BEGIN-END-INDEX/, whose path is\n"
                   "printed. Allowed once the session has started (active or stopped).\n\n"
                   "Example:\n  tracectl rotate web-latency --wait");

    auto* clear = app.add_subcommand(
        "clear", "Delete what a session recorded so far; tracing goes on (as lttng clear)");
    auto* clear_name = clear->add_option("NAME", cl.clear_name, current_session_help);
    auto* clear_all = clear->add_flag("--all", cl.clear.all,
                                      "Clear every session you own (even as root, only yours)");
    clear_name->excludes(clear_all);
    clear->footer("Deletes the session's current trace chunk (a snapshot session: its buffers'\n"
                  "content) and goes on tracing into a new one; archives of earlier rotations\n"
                  "stay. Without NAME or --all, the current session. Refused while a rotation\n"
                  "is under way. Progress\n"
                  "goes to standard error if it takes more than a second.\n\n"
                  "Example:\n  tracectl clear web-latency\n  tracectl clear --all");

    auto* save = app.add_subcommand("save", "Save sessions to LTTng session files (as lttng save)");
    auto* save_name = save->add_option("NAME", cl.save_name, current_session_help);
    auto* save_all =
        save->add_flag("-a,--all", cl.save.all, "Save every session you own (even as root)");
    save_name->excludes(save_all);
    auto* save_output = save->add_option("-o,--output-path", cl.save_output,
                                         "Folder to write NAME.lttng in (default: "
                                         "$LTTNG_HOME/.lttng/sessions, else "
                                         "$HOME/.lttng/sessions)")
                            ->type_name("DIR");
    save->add_flag("-f,--force", cl.save.force, "Overwrite an existing NAME.lttng");
    save->footer(
        "Writes LTTng 2.13's session XML, which lttng load and tracectl load read.\n"
        "What LTTng's files cannot hold is named in a warning on standard error.\n"
        "Without NAME or --all, the current session.\n\n"
        "Example:\n  tracectl save web-latency\n  tracectl save --all -o /etc/lttng/sessions/auto");

    auto* load =
        app.add_subcommand("load", "Make sessions from LTTng session files (as lttng load)");
    auto* load_name = load->add_option("NAME", cl.load_name,
                                       "Load only the session of this name (default: every one)");
    auto* load_all = load->add_flag("-a,--all", cl.load.all, "Load every session (the default)");
    load_name->excludes(load_all);
    auto* load_input = load->add_option("-i,--input-path", cl.load_input,
                                        "A session file, or a folder of *.lttng files (default: "
                                        "$LTTNG_HOME/.lttng/sessions, else $HOME/.lttng/sessions, "
                                        "then /etc/lttng/sessions)")
                           ->type_name("PATH");
    auto* load_override_name = load->add_option("--override-name", cl.load_override_name,
                                                "Load session NAME under this name instead")
                                   ->type_name("NEWNAME")
                                   ->needs(load_name);
    auto* load_override_url =
        load->add_option("--override-url", cl.load_override_url,
                         "Write (file:///PATH) or stream (net://HOST) the loaded sessions there "
                         "instead of the files' outputs, as create --set-url")
            ->type_name("URL");
    load->footer("Reads LTTng 2.13's session XML (lttng save writes it); the sessions are\n"
                 "yours, and each file loads whole or not at all. A session saved while\n"
                 "active starts. What tracectl lacks is left out and named in a warning.\n\n"
                 "Example:\n  tracectl load web-latency\n  tracectl load -i ~/saved/web.lttng");

    auto* snapshot = app.add_subcommand(
        "snapshot", "Record a snapshot of a snapshot session's buffers (as lttng snapshot record)");
    snapshot
        ->add_option("NAME", cl.snapshot_words,
                     "Name of the session (default: the current session, else your only "
                     "session), after an optional 'record' as lttng snapshot record takes it")
        ->expected(0, 2)
        ->type_name("");
    auto* snapshot_session = snapshot->add_option("-s,--session", cl.snapshot_session,
                                                  "The session, as lttng snapshot record -s");
    snapshot
        ->add_option("-m,--max-size", cl.snapshot_max_bytes,
                     "At most SIZE bytes of events (100M, 64K, 1G, 8MiB, 4096: K, M, G and "
                     "KiB, MiB, GiB are powers of 1024), keeping the newest sub-buffers of "
                     "every stream; no bound by default (or 0)")
        ->transform(size_in_bytes())
        ->type_name("SIZE");
    snapshot->footer("Writes the current content of every buffer of a session created with\n"
                     "'tracectl create --snapshot' (active or stopped) as a complete trace in\n"
                     "OUTPUT/snapshot-1-YYYYmmdd-HHMMSS-N/ and prints that folder. LTTng's\n"
                     "'snapshot record [-s NAME] [-m SIZE]' is accepted as it is written.\n\n"
                     "Example:\n  tracectl snapshot flight --max-size 8M\n"
                     "  tracectl snapshot record -s flight -m 8M");

    auto* enable_rotation =
        app.add_subcommand("enable-rotation", "Rotate a session on a period and/or a size");
    auto* er_name = enable_rotation->add_option("NAME", cl.er_name, current_session_help);
    auto* er_session =
        enable_rotation
            ->add_option("-s,--session", cl.er_name, "The session, as lttng enable-rotation -s")
            ->excludes(er_name);
    auto* er_timer = enable_rotation
                         ->add_option("--timer", cl.er_timer,
                                      "Rotate every PERIOD while active (10s, 500ms, 2m, 1h; "
                                      "at least 10ms); 0 turns it off")
                         ->type_name("PERIOD");
    auto* er_size =
        enable_rotation
            ->add_option("--size", cl.er_size_bytes,
                         "Rotate once the current chunk holds SIZE bytes (100M, 4K, 1G, 8MiB: K, "
                         "M, G and KiB, MiB, GiB are powers of 1024); 0 turns it off")
            ->transform(size_in_bytes())
            ->type_name("SIZE");
    enable_rotation->footer(
        "Sets the timer trigger, the size trigger or both of the session's automatic\n"
        "rotations (as lttng enable-rotation: a trigger not given is kept), then prints\n"
        "the schedule in force. Not for snapshot sessions.\n\n"
        "Example:\n  tracectl enable-rotation web-latency --timer 10s --size 100M");

    auto* disable_rotation = app.add_subcommand(
        "disable-rotation", "Stop rotating a session on its period and/or its size");
    auto* dr_name = disable_rotation->add_option("NAME", cl.dr_name, current_session_help);
    auto* dr_session =
        disable_rotation
            ->add_option("-s,--session", cl.dr_name, "The session, as lttng disable-rotation -s")
            ->excludes(dr_name);
    disable_rotation->add_flag("--timer", cl.dr_timer, "Remove the timer trigger");
    disable_rotation->add_flag("--size", cl.dr_size, "Remove the size trigger");
    disable_rotation->footer(
        "Removes the given triggers of the session's automatic rotations (as lttng\n"
        "disable-rotation), keeping the other; a trigger that is not set is refused\n"
        "(InvalidArgument, exit status 1). Give --timer, --size or both.\n\n"
        "Example:\n  tracectl disable-rotation web-latency --timer");

    auto* enable_event = app.add_subcommand(
        "enable-event", "Record events of LTTng-UST apps (-u) or of the kernel (-k)");
    add_event_selection(*enable_event, cl.ee_selection);
    auto* ee_session =
        enable_event->add_option("-s,--session", cl.ee_session, current_session_help);
    enable_event->add_option("-c,--channel", cl.enable_event.channel,
                             "Channel (default: channel0, made on first use)");
    auto* ee_level = enable_event->add_option("--loglevel", cl.ee_loglevel,
                                              "Record this log level or a more severe one "
                                              "(TRACE_WARNING, info, ...); -u only");
    auto* ee_only = enable_event->add_option("--loglevel-only", cl.ee_loglevel_only,
                                             "Record exactly this log level; -u only");
    ee_level->excludes(ee_only);
    auto* ee_exclude = enable_event->add_option("-x,--exclude", cl.ee_exclude,
                                                "Comma-separated event names to leave out; -u "
                                                "only");
    enable_event->add_option("-f,--filter", cl.enable_event.filter,
                             "Record only the events for which this LTTng filter expression is "
                             "true, e.g. 'intfield > 3 && $ctx.procname == \"foo*\"' (-k: the "
                             "daemon translates it into a tracefs filter, e.g. 'prev_tid == 0')");
    auto* ee_uprobe = enable_event->add_option(
        "--userspace-probe", cl.ee_userspace_probe,
        "-k only: a userspace probe named PATTERN (one name) at [elf:]PATH:SYMBOL (a "
        "function's entry), [elf:]PATH:SYMBOL%return (its return, with the return value) or "
        "sdt:PATH:PROVIDER:PROBE (a USDT probe, with its arguments)");
    enable_event->footer(
        "Give exactly one of -u and -k. A rule the session has already (same channel,\n"
        "pattern, log level, exclusions and filter) is refused with\n"
        "org.tracectl.Tracing1.Error.EventRuleExists (exit status 1). A filter expression\n"
        "LTTng 2.13 refuses is refused with a message naming the column.\n"
        "With -k, each comma-separated name is its own rule (one EnableEvents call each);\n"
        "those refused are reported and the others enabled. A -k name without a system\n"
        "is ftrace's (softirq_entry) or lttng-modules' (irq_softirq_entry,\n"
        "kmem_mm_page_alloc), globs included; an event named both ways is recorded once.\n"
        "lttng_statedump_* names ask for the statedump in the channel (the first kernel\n"
        "channel has it when no rule names them; see tracectl(1) for the events written).\n"
        "The kernel domain needs the org.tracectl.Tracing1.trace-kernel right\n"
        "('tracectl list-tracepoints -k' lists the tracepoints).\n\n"
        "Example:\n  tracectl enable-event -u 'my_provider:*' --loglevel TRACE_INFO\n"
        "  tracectl enable-event -k 'sched:*,net:net_dev_xmit'\n"
        "  tracectl enable-event -k sched_switch,irq_softirq_entry,lttng_statedump_process_state\n"
        "  tracectl enable-event -k sched:sched_switch --filter 'prev_tid != 0'\n"
        "  tracectl enable-event -k --syscall openat,close\n"
        "  tracectl enable-event -k --syscall -a");

    auto* enable_channel =
        app.add_subcommand("enable-channel", "Add a UST (-u) or kernel (-k) channel to a session");
    add_domain_flags(*enable_channel, cl.ec_domain);
    enable_channel->add_option("NAME", cl.enable_channel.name, "Channel name")->required();
    auto* ec_session =
        enable_channel->add_option("-s,--session", cl.ec_session, current_session_help);
    auto* ec_size =
        enable_channel
            ->add_option("--subbuf-size", cl.ec_subbuf_size,
                         "Sub-buffer size in bytes, or with a K, M or G suffix or KiB, MiB, "
                         "GiB (powers of 1024: 8M; power of two; default 512K, -k 1M)")
            ->transform(size_in_bytes())
            ->type_name("SIZE");
    auto* ec_num =
        enable_channel
            ->add_option("--num-subbuf", cl.ec_num_subbuf, "Number of sub-buffers (power of two)")
            ->check(whole_number());
    enable_channel->add_flag("--overwrite", cl.enable_channel.overwrite,
                             "Overwrite the oldest sub-buffer when full (flight recorder)");
    auto* ec_switch =
        enable_channel
            ->add_option("--switch-timer", cl.ec_switch_timer,
                         "Switch timer period, microseconds: 0 (off, the default) or at least "
                         "1000")
            ->check(whole_number());
    auto* ec_read = enable_channel
                        ->add_option("--read-timer", cl.ec_read_timer,
                                     "Read timer period, microseconds: 0 (off) or at least 1000")
                        ->check(whole_number());
    enable_channel->footer(
        "Give exactly one of -u and -k. Only before the session first starts. Channel names\n"
        "are unique per domain; a kernel channel's tracefs buffer holds sub-buffer size x\n"
        "count bytes per CPU.\n\nExample:\n"
        "  tracectl enable-channel -u big --subbuf-size 1M --num-subbuf 8\n"
        "  tracectl enable-channel -k kchan --subbuf-size=8M");

    add_disable_commands(app, cl.disable);

    auto* add_context =
        app.add_subcommand("add-context", "Record context fields with every event of a channel");
    add_domain_flags(*add_context, cl.ac_domain);
    add_context
        ->add_option(
            "-t,--type", cl.add_context.types,
            "Context type, repeatable or comma-separated. -u: " + std::string{ust_context_types} +
                ". -k: " + std::string{kernel_context_types})
        ->required()
        ->delimiter(',');
    auto* ac_session = add_context->add_option("-s,--session", cl.ac_session, current_session_help);
    add_context->add_option("-c,--channel", cl.add_context.channel,
                            "Channel (default: every channel; channel0 if there is none)");
    add_context->footer("Give exactly one of -u and -k. Only before the session first starts.\n\n"
                        "User-space (-u) types:\n" +
                        wrapped_list(ust_context_types) + "\nKernel (-k) types:\n" +
                        wrapped_list(kernel_context_types) +
                        "\n\nExample:\n"
                        "  tracectl add-context -u -t vpid -t procname\n"
                        "  tracectl add-context -k -t tid,pid,procname,prio,cpu_id");

    add_track_commands(app, cl.track);

    auto* list_apps = app.add_subcommand("list-apps", "List the registered LTTng-UST apps");
    list_apps->add_flag("-t,--tracepoints", cl.apps_tracepoints,
                        "Also list each app's tracepoints");
    list_apps->add_flag("--json", cl.apps_json, "Print a JSON array");
    list_apps->footer("Lists the apps you may see (yours; root sees all).\n\nExample:\n"
                      "  tracectl list-apps --tracepoints");

    auto* list_tracepoints =
        app.add_subcommand("list-tracepoints", "List the kernel's tracepoints (-k)");
    add_domain_flags(*list_tracepoints, cl.lt_domain);
    cl.lt_domain.userspace_option->description(
        "Refused: UST tracepoints belong to each app (tracectl list-apps --tracepoints)");
    cl.lt_domain.kernel_option->description("The kernel domain; required");
    list_tracepoints->add_flag("--fields", cl.lt_fields,
                               "Also list each tracepoint's fields, as 'TYPE NAME'");
    list_tracepoints->add_flag(
        "--json", cl.lt_json,
        "Print a JSON array of {system, event, lttng_name, fields: [{name, type}]}");
    list_tracepoints->footer(
        "Lists every tracefs tracepoint as system:event, sorted (Manager.ListTracepoints),\n"
        "then lttng-modules' name of it where that is another: irq:softirq_entry\n"
        "(irq_softirq_entry), the event's name in the trace, which enable-event -k takes\n"
        "too. Also lists the ip provider's probes and lttng-modules' statedump events.\n"
        "Needs the org.tracectl.Tracing1.trace-kernel right and a usable tracefs\n"
        "(org.tracectl.Tracing1.Error.KernelUnavailable otherwise, exit status 1).\n"
        "UST tracepoints belong to each app: tracectl list-apps --tracepoints.\n\n"
        "Example:\n  tracectl list-tracepoints -k\n"
        "  tracectl list-tracepoints -k --fields\n  tracectl list-tracepoints -k --json");

    auto* view = app.add_subcommand("view", "Print a session's trace with babeltrace2");
    auto* view_name = view->add_option("NAME", cl.view_session, current_session_help);
    auto* view_viewer =
        view->add_option("-e,--viewer", cl.view_viewer,
                         "Run VIEWER instead of babeltrace2 (split at spaces, the trace folder "
                         "appended), as lttng view --viewer")
            ->type_name("VIEWER");
    view->footer("Runs babeltrace2 on the session's output folder; stop the session first\n"
                 "for a complete trace.\n\nExample:\n  tracectl view web-latency\n"
                 "  tracectl view web-latency -e babeltrace");

    auto* dtrace = add_dtrace_command(app, "dtrace", cl.dtrace);
    auto* aggregate = add_dtrace_command(app, "aggregate", cl.aggregate);

    try {
        app.parse(argc, argv);
        if (dtrace->parsed()) {
            finish_dtrace_command_line(cl.dtrace);
        }
        if (aggregate->parsed()) {
            finish_dtrace_command_line(cl.aggregate);
        }
        if (bus_address->count() > 0 && cl.bus_address.empty()) {
            throw CLI::ValidationError("--bus-address", "needs a D-Bus address");
        }
        if (create_output->count() > 0 && cl.create_output.empty()) {
            throw CLI::ValidationError("--output", "needs a folder");
        }
        if (create->parsed()) {
            const CreateOutputFlags given{
                create_output->count() > 0,   create_url->count() > 0,
                create_ctrl_url->count() > 0, create_data_url->count() > 0,
                create_live->count() > 0,     cl.create.snapshot};
            if (const auto problem = check_create_output(given)) {
                throw CLI::ValidationError(problem->option, problem->message);
            }
            cl.create.network.url = optional_name(create_url, cl.create_url);
            cl.create.network.ctrl_url = optional_name(create_ctrl_url, cl.create_ctrl_url);
            cl.create.network.data_url = optional_name(create_data_url, cl.create_data_url);
            if (create_live->count() > 0) {
                cl.create.network.live_timer_us = parse_live_timer(cl.create_live);
                if (!cl.create.network.live_timer_us) {
                    throw CLI::ValidationError(
                        "--live", "'" + cl.create_live +
                                      "' is not a live timer in microseconds (1000 to 4294967295); "
                                      "give NAME before --live, or write --live=US");
                }
            }
            for (const std::string* url :
                 {&cl.create_url, &cl.create_ctrl_url, &cl.create_data_url}) {
                if (!is_valid_utf8(*url)) {
                    throw CLI::ValidationError("URL", "a URL must be valid UTF-8");
                }
            }
        }
        if (snapshot->parsed()) {
            std::vector<std::string> words = cl.snapshot_words;
            if (!words.empty() && words.front() == "record") {
                words.erase(words.begin()); // lttng snapshot record [SESSION]
            }
            if (words.size() > 1 || (words.size() == 1 && snapshot_session->count() > 0)) {
                throw CLI::ValidationError("snapshot", "give the session once: NAME or -s NAME");
            }
            if (words.size() == 1) {
                cl.snapshot_name = words.front();
            } else if (snapshot_session->count() > 0) {
                cl.snapshot_name = cl.snapshot_session;
            }
            cl.snapshot_named = !words.empty() || snapshot_session->count() > 0;
        }
        if (enable_rotation->parsed()) {
            if (er_timer->count() == 0 && er_size->count() == 0) {
                throw CLI::ValidationError("enable-rotation", "give --timer, --size or both");
            }
            const auto timer = er_timer->count() > 0 ? parse_duration_us(cl.er_timer) : 0;
            if (!timer) {
                throw CLI::ValidationError("--timer",
                                           "'" + cl.er_timer + "' is not a period (e.g. 10s)");
            }
            if (er_timer->count() > 0) {
                cl.er_triggers.timer_us = *timer;
            }
            if (er_size->count() > 0) {
                cl.er_triggers.size_bytes = cl.er_size_bytes;
            }
        }
        for (const SessionSpecOptions* spec : {&cl.start, &cl.stop, &cl.destroy}) {
            if (spec->glob_option->count() > 0 && spec->glob.empty()) {
                throw CLI::ValidationError("--glob", "needs a PATTERN");
            }
        }
        if (disable_rotation->parsed() && !cl.dr_timer && !cl.dr_size) {
            throw CLI::ValidationError("disable-rotation", "give --timer, --size or both");
        }
        if (enable_event->parsed()) {
            EventSelection selection =
                resolve_event_selection(cl.ee_selection, {ee_level, ee_only, ee_exclude});
            cl.enable_event.domain = selection.domain;
            cl.enable_event.pattern = std::move(selection.ust_pattern);
            cl.enable_event.kernel_calls = std::move(selection.kernel_calls);
            if (ee_uprobe->count() > 0) {
                if (selection.domain != Domain::kernel) {
                    throw CLI::ValidationError("--userspace-probe",
                                               "is for kernel events (-k) only, as in LTTng");
                }
                if (cl.ee_selection.all || cl.ee_selection.syscall ||
                    cl.enable_event.kernel_calls.size() != 1) {
                    throw CLI::ValidationError("--userspace-probe",
                                               "takes one event name (the probe's), without "
                                               "-a or --syscall");
                }
                const char* search = std::getenv("PATH");
                std::error_code ec;
                const std::string cwd = std::filesystem::current_path(ec).string();
                cl.enable_event.userspace_probe = resolve_userspace_probe(
                    cl.ee_userspace_probe, search != nullptr ? search : "", cwd);
            }
        }
        if (enable_channel->parsed()) {
            cl.enable_channel.domain = chosen_domain(cl.ec_domain);
        }
        if (add_context->parsed()) {
            cl.add_context.domain = chosen_domain(cl.ac_domain);
        }
        finish_disable_commands(cl.disable);
        resolve_track_commands(cl.track);
        if (list_tracepoints->parsed() && chosen_domain(cl.lt_domain) == Domain::ust) {
            throw CLI::ValidationError(
                "-u", "UST tracepoints belong to each app: tracectl list-apps --tracepoints");
        }
        // D-Bus strings are UTF-8: a name that is not cannot even be sent.
        for (const std::string* name :
             {&cl.create.name, &cl.show.name, &cl.start.name, &cl.stop.name, &cl.destroy.name,
              &cl.start.glob, &cl.stop.glob, &cl.destroy.glob, &cl.set_session_name,
              &cl.rotate_name, &cl.snapshot_name, &cl.er_name, &cl.dr_name, &cl.clear_name,
              &cl.save_name, &cl.load_name, &cl.load_override_name}) {
            if (!is_valid_utf8(*name)) {
                throw CLI::ValidationError("NAME", "a session name must be valid UTF-8");
            }
        }
        if (!is_valid_utf8(cl.create_output)) {
            throw CLI::ValidationError("--output", "the folder's path must be valid UTF-8 "
                                                   "(D-Bus carries paths as UTF-8 strings)");
        }
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
            app.exit(e); // --help, --version: print to stdout
            return ExitStatus::success;
        }
        std::string what = e.what();
        if (app.get_subcommands().empty() && !app.remaining().empty()) {
            // CLI11 checks for the missing subcommand before it reports what
            // it could not place: name that instead.
            const std::string first = app.remaining().front();
            what = first.rfind('-', 0) != 0 ? "unknown command '" + first + "'"
                                            : "unknown option '" + first + "'";
        }
        print_error_line(std::cerr, what + " (" + help_hint(app) + ")");
        return ExitStatus::usage;
    }
    if (create_output->count() > 0) {
        cl.create.output = cl.create_output;
    }
    if (clear_name->count() > 0) {
        cl.clear.name = cl.clear_name;
    }
    if (save_name->count() > 0) {
        cl.save.name = cl.save_name;
    }
    if (save_output->count() > 0) {
        cl.save.output_path = cl.save_output;
    }
    if (load_name->count() > 0) {
        cl.load.name = cl.load_name;
    }
    if (load_input->count() > 0) {
        cl.load.input_path = cl.load_input;
    }
    if (load_override_name->count() > 0) {
        cl.load.override_name = cl.load_override_name;
    }
    if (load_override_url->count() > 0) {
        cl.load.override_url = cl.load_override_url;
    }
    if (ee_session->count() > 0) {
        cl.enable_event.session = cl.ee_session;
    }
    if (ee_level->count() > 0) {
        cl.enable_event.loglevel = cl.ee_loglevel;
    } else if (ee_only->count() > 0) {
        cl.enable_event.loglevel = cl.ee_loglevel_only;
        cl.enable_event.loglevel_only = true;
    }
    if (ee_exclude->count() > 0) {
        std::string item;
        for (char c : cl.ee_exclude + ",") {
            if (c == ',') {
                if (!item.empty()) {
                    cl.enable_event.exclusions.push_back(item);
                }
                item.clear();
            } else {
                item += c;
            }
        }
    }
    if (ac_session->count() > 0) {
        cl.add_context.session = cl.ac_session;
    }
    if (ec_session->count() > 0) {
        cl.enable_channel.session = cl.ec_session;
    }
    if (ec_size->count() > 0) {
        cl.enable_channel.subbuf_size = cl.ec_subbuf_size;
    }
    if (ec_num->count() > 0) {
        cl.enable_channel.num_subbuf = cl.ec_num_subbuf;
    }
    if (ec_switch->count() > 0) {
        cl.enable_channel.switch_timer_us = cl.ec_switch_timer;
    }
    if (ec_read->count() > 0) {
        cl.enable_channel.read_timer_us = cl.ec_read_timer;
    }

    DtraceCommandLine* const d_command =
        dtrace->parsed() ? &cl.dtrace : (aggregate->parsed() ? &cl.aggregate : nullptr);
    if (d_command != nullptr &&
        (d_command->args.trace || (d_command->args.list && !d_command->args.session))) {
        const ExitStatus status = run_aggregate_trace(d_command->args, std::cout, std::cerr);
        if (!std::cout.flush()) {
            print_error_line(std::cerr, "cannot write to standard output");
            return ExitStatus::daemon_error;
        }
        return status;
    }
    if (d_command != nullptr && !d_command->args.session) {
        // -c COMMAND that cannot run, -p PID that does not exist: refused before the bus.
        if (const auto problem = live_target_problem(d_command->args)) {
            print_error_line(std::cerr, d_command->args.command + ": " + *problem);
            return ExitStatus::daemon_error;
        }
    }
    if (top->parsed() && !check_terminal_for_top(std::cerr)) {
        return ExitStatus::usage; // before connecting: nothing to show it on anyway
    }

    if (version->parsed()) {
        std::cout << "tracectl " << TRACECTL_VERSION << '\n' << std::flush; // even with no bus
    }
    BusChoice bus_choice;
    if (cl.user_bus) {
        bus_choice.kind = BusChoice::Kind::user;
    } else if (bus_address->count() > 0) {
        bus_choice = {BusChoice::Kind::address, cl.bus_address};
    }
    BusClient bus{bus_choice};
    bus.set_interactive(cl.interactive);

    if (run_disable_commands(bus, cl.disable, std::cout)) {
        // disable-event, disable-channel
    } else if (create->parsed()) {
        run_create(bus, cl.create, std::cout, std::cerr);
    } else if (list->parsed() && list_name->count() > 0) {
        cl.show.json = cl.list.json;
        run_show(bus, cl.show, std::cout, std::cerr);
    } else if (list->parsed() && cl.list_ust) {
        run_list_apps(bus, true, cl.list.json, std::cout);
    } else if (list->parsed() && cl.list_kernel) {
        run_list_kernel_tracepoints(bus, false, cl.list.json, std::cout);
    } else if (version->parsed()) {
        std::cout << "tracectld " << bus.daemon_version() << '\n';
    } else if (list->parsed()) {
        run_list(bus, cl.list, std::cout, std::cerr);
    } else if (show->parsed()) {
        run_show(bus, cl.show, std::cout, std::cerr);
    } else if (top->parsed()) {
        std::cout.flush();
        return run_top(bus, std::cerr);
    } else if (start->parsed() || stop->parsed() || destroy->parsed()) {
        const auto& run_command = start->parsed()  ? run_start
                                  : stop->parsed() ? run_stop
                                                   : run_destroy;
        const SessionSpec spec = (start->parsed()  ? cl.start
                                  : stop->parsed() ? cl.stop
                                                   : cl.destroy)
                                     .spec();
        const ExitStatus status = run_command(bus, spec, std::cout, std::cerr);
        if (status != ExitStatus::success) {
            std::cout.flush();
            return status;
        }
    } else if (set_session->parsed()) {
        run_set_session(bus, cl.set_session_name, std::cout);
    } else if (status_command->parsed()) {
        run_status(bus, cl.status_json, std::cout, std::cerr);
    } else if (enable_rotation->parsed()) {
        run_enable_rotation(bus, optional_session(er_name, er_session, cl.er_name), cl.er_triggers,
                            std::cout);
    } else if (disable_rotation->parsed()) {
        run_disable_rotation(bus, optional_session(dr_name, dr_session, cl.dr_name), cl.dr_timer,
                             cl.dr_size, std::cout);
    } else if (snapshot->parsed()) {
        run_snapshot(
            bus, cl.snapshot_named ? std::optional<std::string>(cl.snapshot_name) : std::nullopt,
            cl.snapshot_max_bytes, std::cout, std::cerr);
    } else if (clear->parsed()) {
        run_clear(bus, cl.clear, std::cout, std::cerr);
    } else if (save->parsed() || load->parsed()) {
        const ExitStatus status = save->parsed() ? run_save(bus, cl.save, std::cout, std::cerr)
                                                 : run_load(bus, cl.load, std::cout, std::cerr);
        if (status != ExitStatus::success) {
            std::cout.flush();
            return status;
        }
    } else if (rotate->parsed()) {
        run_rotate(bus, optional_name(rotate_name, cl.rotate_name), cl.rotate_wait, std::cout,
                   std::cerr);
    } else if (enable_event->parsed()) {
        const ExitStatus status = run_enable_event(bus, cl.enable_event, std::cout, std::cerr);
        if (status != ExitStatus::success) {
            std::cout.flush();
            return status;
        }
    } else if (enable_channel->parsed()) {
        run_enable_channel(bus, cl.enable_channel, std::cout);
    } else if (add_context->parsed()) {
        run_add_context(bus, cl.add_context, std::cout);
    } else if (track_command_parsed(cl.track)) {
        run_track_command(bus, cl.track, std::cout);
    } else if (list_apps->parsed()) {
        run_list_apps(bus, cl.apps_tracepoints, cl.apps_json, std::cout);
    } else if (list_tracepoints->parsed()) {
        run_list_kernel_tracepoints(bus, cl.lt_fields, cl.lt_json, std::cout);
    } else if (d_command != nullptr) {
        const AggregateArgs& d_args = d_command->args;
        const ExitStatus status = d_args.session
                                      ? run_aggregate_session(bus, d_args, std::cout, std::cerr)
                                      : run_aggregate_live(bus, d_args, std::cout, std::cerr);
        if (status != ExitStatus::success) {
            std::cout.flush();
            return status;
        }
    } else if (view->parsed()) {
        const std::string dir =
            session_output(bus, view_name->count() > 0 ? std::optional<std::string>(cl.view_session)
                                                       : std::nullopt);
        std::vector<std::string> words{"babeltrace2"};
        if (view_viewer->count() > 0) {
            words = split_words(cl.view_viewer);
            if (words.empty()) {
                print_error_line(std::cerr, "--viewer: give a command");
                return ExitStatus::usage;
            }
        }
        words.push_back(dir);
        std::vector<char*> argv_view;
        for (std::string& word : words) {
            argv_view.push_back(word.data());
        }
        argv_view.push_back(nullptr);
        std::cout.flush();
        execvp(argv_view.front(), argv_view.data());
        print_error_line(std::cerr,
                         "cannot run " + words.front() + ": " + std::string(std::strerror(errno)));
        return ExitStatus::daemon_error;
    }

    if (!std::cout.flush()) {
        print_error_line(std::cerr, "cannot write to standard output");
        return ExitStatus::daemon_error;
    }
    return ExitStatus::success;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return static_cast<int>(run(argc, argv));
    } catch (...) {
        return static_cast<int>(report_exception(std::current_exception(), std::cerr));
    }
}
