#include "dtrace_options.hpp"

#include "quantities.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace tracectl::cli {

CLI::App* addDtraceCommand(CLI::App& app, const std::string& name, DtraceCommandLine& cl) {
    cl.args.command = name;
    auto* command = app.add_subcommand(
        name, name == "dtrace"
                  ? "Run D programs (dtrace(1)'s language and options) on traces or live"
                  : "Run DTrace aggregations and D programs (the same as 'tracectl dtrace')");
    cl.command = command;
    command->add_option("-s", cl.scripts, "Run the D script FILE (several -s: all of them)")
        ->type_name("FILE")
        ->allow_extra_args(false);
    command->add_option("-n", cl.programs, "Run the D program PROGRAM (several -n: all of them)")
        ->type_name("PROGRAM")
        ->allow_extra_args(false);
    command->add_option("PROGRAM", cl.positional,
                        "Without -s or -n: the D program, then its macro arguments ($1...); "
                        "with them: the macro arguments");
    command->add_flag("-q", cl.args.quiet,
                      "Quiet: print only what printf, printa, trace and print print, and the "
                      "aggregations (option quiet)");
    command->add_option("-o", cl.args.output, "Append the program's output to FILE")
        ->type_name("FILE");
    command
        ->add_option("-x", cl.options,
                     "Set option NAME (to VALUE), as #pragma D option does (switchrate=RATE: how "
                     "often live output is printed, default 1hz)")
        ->type_name("NAME[=VALUE]")
        ->allow_extra_args(false);
    command->add_flag("-l", cl.args.list,
                      "List the probes the program would enable (the event classes of the "
                      "trace it matches with --trace or --session) and run nothing");
    auto* run = command
                    ->add_option("-c", cl.args.run,
                                 "Run COMMAND while tracing live, from its first "
                                 "instruction (its pid$target and USDT probes are defined "
                                 "first); $target is its pid, and tracing ends when it exits")
                    ->type_name("COMMAND");
    command->add_option("-p", cl.args.pid, "$target is PID")->type_name("PID")->excludes(run);
    auto* trace =
        command
            ->add_option("--trace", cl.args.trace,
                         "Read the CTF trace(s) at PATH: a trace folder, or any folder holding "
                         "traces (every folder under it with a metadata file)")
            ->type_name("PATH");
    auto* session =
        command
            ->add_option("--session", cl.args.session,
                         "Read everything session NAME (or the session at a D-Bus object path) has "
                         "recorded so far (an active session is rotated first)")
            ->type_name("NAME")
            ->excludes(trace);
    command
        ->add_option("--duration", cl.args.duration,
                     "Without --trace or --session: trace for SECONDS (default: until Ctrl-C)")
        ->type_name("SECONDS")
        ->check(CLI::Validator(
            [](std::string& text) { return aggregateSecondsError(text).value_or(""); }, ""))
        ->excludes(trace)
        ->excludes(session);
    command->add_flag("--json", cl.args.json,
                      "Print the aggregations as a JSON object instead of dtrace's tables");
    command->footer(
        "Runs a D program (see tracectl-dtrace(1)) on every event record of the trace(s)\n"
        "(--trace), or of everything a session recorded so far (--session: an active\n"
        "session is rotated first, and its archives are read), or, with neither, as\n"
        "dtrace -n does: in a temporary session enabling exactly the program's probes,\n"
        "traced until Ctrl-C, --duration, exit() or the end of -c COMMAND, then\n"
        "destroyed with its files. Live, what the program prints appears while it\n"
        "traces, within the switch rate (-x switchrate=RATE: 10hz, 250ms...; default\n"
        "1hz, at least every 10 ms): the session is rotated every period and each\n"
        "closed chunk is run at once. BEGIN runs before the first event record (live:\n"
        "before tracing starts), END after the last; then each aggregation printa()\n"
        "did not print is printed as dtrace(1) does. A probe is provider:::name (the\n"
        "event provider:name), provider:name or an event name, with * and ? wildcards;\n"
        "BEGIN, END, ERROR and tick-N[unit] are the dtrace provider's and timers on the\n"
        "trace's clock. Live with -c or -p, pid$target::FUNCTION:entry (arg0..arg5),\n"
        "pid$target::FUNCTION:return (arg1: the return value) and PROVIDER$target:::NAME\n"
        "(a USDT probe) probe the process $target through the kernel's uprobes.\n"
        "A program with an error is refused with its line and column\n"
        "(exit status 2); an unreadable trace exits with status 1; exit(N) exits with\n"
        "status N.\n\n"
        "Example:\n"
        "  tracectl " +
        name +
        " --trace ./trace -n 'tracectl_demo:tick { @[text] = count(); }'\n"
        "  tracectl " +
        name +
        " -n 'ip:::receive { @[args[2]->ip_saddr] = count(); }'\n"
        "  tracectl " +
        name + " --trace ./trace -s /usr/share/tracectl/examples/ipproto.d");
    return command;
}

namespace {

/// The script's text, its interpreter line blanked. Only a regular file of at most
/// largest_script bytes is read (not /dev/zero, a FIFO or a folder).
std::string readScript(const std::string& path) {
    std::ifstream in;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        throw CLI::ValidationError("-s", "cannot read " + path + ": " + std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        throw CLI::ValidationError("-s",
                                   "cannot read " + path + ": it is a folder, not a D script");
    }
    if (!S_ISREG(st.st_mode)) {
        throw CLI::ValidationError("-s", "cannot read " + path +
                                             ": not a regular file (a D script is a file)");
    }
    const auto tooBig = [&path] {
        return CLI::ValidationError("-s", "cannot read " + path + ": larger than " +
                                              std::to_string(kLargestScript >> 20) +
                                              " MiB, the most a D script may be");
    };
    if (static_cast<std::uintmax_t>(st.st_size) > kLargestScript) {
        throw tooBig();
    }
    in.open(path, std::ios::binary);
    if (!in) {
        throw CLI::ValidationError("-s", "cannot read " + path + ": " + std::strerror(errno));
    }
    // At most one byte more than the bound, should the file have grown since.
    std::string source(kLargestScript + 1, '\0');
    in.read(source.data(), static_cast<std::streamsize>(source.size()));
    if (in.bad()) {
        throw CLI::ValidationError("-s", "cannot read " + path + ": " + std::strerror(errno));
    }
    source.resize(static_cast<std::size_t>(in.gcount()));
    if (source.size() > kLargestScript) {
        throw tooBig();
    }
    if (source.rfind("#!", 0) == 0) {
        const std::size_t newline = source.find('\n');
        source.erase(0, newline == std::string::npos ? source.size() : newline);
    }
    return source;
}

int linesOf(const std::string& text) {
    int n = 1;
    for (const char c : text) {
        n += c == '\n' ? 1 : 0;
    }
    return n;
}

} // namespace

void finishDtraceCommandLine(DtraceCommandLine& cl) {
    AggregateArgs& args = cl.args;
    args.program.clear();
    args.origins.clear();
    args.options = cl.options;
    std::vector<std::string> positional = cl.positional;
    const auto append = [&](const std::string& text, const std::string& label) {
        if (!args.program.empty()) {
            args.program += '\n';
        }
        const int firstLine = args.program.empty() ? 1 : linesOf(args.program);
        args.origins.push_back({firstLine, label});
        args.program += text;
    };
    for (const std::string& script : cl.scripts) {
        append(readScript(script), script);
    }
    for (const std::string& program : cl.programs) {
        append(program, "");
    }
    if (cl.scripts.empty() && cl.programs.empty()) {
        if (positional.empty()) {
            throw CLI::ValidationError(args.command,
                                       "give the PROGRAM (or -n PROGRAM, or -s FILE)");
        }
        append(positional.front(), "");
        positional.erase(positional.begin());
    }
    args.arguments = positional;
    if (args.pid && *args.pid <= 0) {
        throw CLI::ValidationError("-p", "a process id is a positive integer");
    }
}

} // namespace tracectl::cli
