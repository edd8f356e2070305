// tracectl-consumerd: the per-session consumer. Started by tracectld (as a
// systemd transient unit, or fork/exec'd) with the daemon<->consumer socket
// as its standard input; creates the ring buffers, hands them to the daemon,
// and writes the trace files below --output.
#include "common/cli_parse.hpp"
#include "common/event_loop.hpp"
#include "common/log.hpp"
#include "common/log_options.hpp"
#include "common/unique_fd.hpp"
#include "config.h"
#include "consumer.hpp"
#include "ring_buffer_guard.hpp"
#include "stream_file.hpp"

#include <CLI/CLI.hpp>
#include <csignal>
#include <fcntl.h>
#include <map>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace tracectl;
using namespace tracectl::consumer;

static_assert(ExitOk == kCommandLineOk && ExitFailure == kCommandLineFailure &&
                  ExitUsage == kCommandLineUsage,
              "the consumer's exit statuses 0-2 are parseAndRun's");

struct Options {
    std::string output;
    bool snapshot = false;
    bool network = false;
    bool countEvents = false;
    tracectl::log::Options log;
    bool stderrWasSocket = false; ///< stderr was the command socket (now /dev/null)
};

/// systemd's StandardOutput=/StandardError= default to "inherit", i.e. to the
/// stdin socket: anything printed there would break the protocol's framing.
/// Points stdout/stderr at /dev/null when they are the same socket as stdin.
/// Returns true if stderr was.
bool detachOutputsFromStdinSocket() {
    struct stat in {};
    if (::fstat(STDIN_FILENO, &in) < 0 || !S_ISSOCK(in.st_mode))
        return false;
    bool stderrDetached = false;
    for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
        struct stat st {};
        if (::fstat(fd, &st) < 0 || st.st_dev != in.st_dev || st.st_ino != in.st_ino)
            continue;
        UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
        if (null && ::dup2(null.get(), fd) >= 0 && fd == STDERR_FILENO)
            stderrDetached = true;
    }
    return stderrDetached;
}

/// Takes the command socket off fd 0 (which becomes /dev/null) so that it is
/// close-on-exec and no library mistakes it for a terminal. Returns an empty
/// fd if stdin is not a connected AF_UNIX stream socket.
UniqueFd takeCommandSocket() {
    int value = 0;
    socklen_t len = sizeof value;
    if (::getsockopt(STDIN_FILENO, SOL_SOCKET, SO_DOMAIN, &value, &len) < 0 || value != AF_UNIX)
        return {};
    len = sizeof value;
    if (::getsockopt(STDIN_FILENO, SOL_SOCKET, SO_TYPE, &value, &len) < 0 || value != SOCK_STREAM)
        return {};
    UniqueFd sock(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3));
    if (!sock)
        return {};
    UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (null && ::dup2(null.get(), STDIN_FILENO) < 0)
        return {};
    return sock;
}

int run(const Options& o) {
    log::Target target = log::targetOf(o.log);
    if (o.stderrWasSocket && target != log::Target::Stderr)
        target = log::Target::Journal;
    log::init("tracectl-consumerd", target, log::levelOf(o.log));

    UniqueFd sock = takeCommandSocket();
    if (!sock) {
        log::error("standard input must be the daemon's AF_UNIX stream socket");
        return ExitUsage;
    }

    // Directories 0750 and files 0640 whatever umask we inherited.
    ::umask(0027);
    ::signal(SIGPIPE, SIG_IGN);
    installRingBufferGuards();

    // Before any channel exists: liblttng-ust-ctl's timer thread, started
    // with the first channel that has a timer, inherits this signal mask.
    EventLoop loop;
    std::unique_ptr<Consumer> consumer;
    loop.onSignals({SIGTERM, SIGINT}, [&](int sig) {
        log::notice(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") +
                    ", draining and exiting");
        if (consumer)
            consumer->stop(ExitOk);
        else
            loop.exit(ExitOk);
    });

    std::optional<OutputDir> root;
    if (!o.network)
        root = OutputDir::openRoot(o.output); // throws: ExitFailure
    consumer = std::make_unique<Consumer>(loop, std::move(sock), std::move(root), o.snapshot,
                                          o.countEvents);
    log::info(std::string("tracectl-consumerd ") + TRACECTL_VERSION +
              (o.network ? std::string(" streaming to the relay the daemon connects")
                         : " writing below " + o.output));
    const int code = loop.run();
    consumer.reset();
    return code;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    o.stderrWasSocket = detachOutputsFromStdinSocket();
    CLI::App app{"tracectl-consumerd - ring buffers and trace files of one tracectl session",
                 "tracectl-consumerd"};
    app.set_version_flag("--version", std::string("tracectl-consumerd ") + TRACECTL_VERSION);
    auto* output = app.add_option("--output", o.output,
                                  "Root directory of the trace; created if missing (mode 0750)");
    auto* network =
        app.add_flag("--network", o.network,
                     "Network session: write nothing locally; stream to the lttng-relayd whose\n"
                     "connections the daemon passes (AttachRelayd) before any channel, or with\n"
                     "--snapshot, send each snapshot to the relay whose connections come with\n"
                     "its RecordSnapshotToRelay")
            ->excludes(output);
    output->excludes(network);
    app.callback([&] {
        if (!o.network && o.output.empty())
            throw CLI::RequiredError("--output (or --network)");
    });
    app.add_flag("--snapshot", o.snapshot,
                 "Snapshot session: never read the buffers nor write below --output; only\n"
                 "copy them into the folder each RecordSnapshot request names (or, with\n"
                 "--network, to the relay)");
    app.add_flag("--count-events", o.countEvents,
                 "Count the event records of every packet written (statistics), with the\n"
                 "layouts the daemon declares; costs CPU at high rates")
        ->excludes("--snapshot");
    tracectl::log::addOptions(app, o.log);
    app.footer("Standard input must be the daemon's end of an AF_UNIX stream socket; this\n"
               "program is started by tracectld, not by hand. See tracectl-consumerd(8).\n"
               "Exit status: 0 shutdown requested (or SIGTERM/SIGINT), 1 failure,\n"
               "2 usage error (or stdin is not a socket), 3 the daemon went away,\n"
               "4 the daemon sent a malformed request. Except for 2, every buffer was\n"
               "drained and every file closed first.");
    return parseAndRun(app, argc, argv, [&] { return run(o); });
}
