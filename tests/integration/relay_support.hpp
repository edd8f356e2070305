// SPDX-License-Identifier: LGPL-2.1-or-later
//
// What the streaming suite (relay_test.cpp) runs beside the sandbox: a real
// lttng-relayd (Debian's lttng-tools) on free loopback ports, peers that
// pose as a relay (not one at all, or a proxy in front of a real one that
// spoils one reply), an lttng-sessiond of its own, and a process whose
// output lines are timed as they are read (a live babeltrace2).
//
// lttng-relayd and lttng-sessiond run as user nobody with an LTTNG_HOME of
// their own: a root relayd would make /run/lttng/relayd, a root sessiond
// would take /run/lttng's sockets, and neither may touch what the
// sandbox's tracectld uses.
#pragma once

#include "sandbox.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace tracectl::test {

/// `n` TCP ports free on 127.0.0.1 (or ::1 if `ipv6`), bound together so
/// that they differ, then released.
std::vector<std::uint16_t> freeLoopbackPorts(std::size_t n, bool ipv6 = false);

/// Whether a TCP connection to `host` (an IPv4 or IPv6 literal) : `port`
/// is accepted now.
bool portAccepts(const std::string& host, std::uint16_t port);

/// This machine's gethostname(2): the relay's first folder level, and the
/// HOST of lttng-live URLs.
std::string hostName();

/// A fresh folder under /tmp owned by user nobody (mode 0755).
std::string makeNobodyFolder(const std::string& prefix);

/// The argv prefix that runs a command as user nobody (setpriv) with
/// LTTNG_HOME and HOME set to `home`.
std::vector<std::string> asNobody(const std::string& home);

/// lttng-relayd on free loopback ports: control, data and live. Started by
/// the constructor, which returns once all three accept connections (and
/// throws std::runtime_error, with the relay's log, if it does not); killed
/// and reaped by the destructor.
class RelayDaemon {
public:
    /// The relay writes below `outputDir` (made, and given to nobody).
    explicit RelayDaemon(const std::string& outputDir, bool ipv6 = false);
    ~RelayDaemon();
    RelayDaemon(const RelayDaemon&) = delete;
    RelayDaemon& operator=(const RelayDaemon&) = delete;

    /// SIGKILL, reaped: its ports refuse connections once this returns.
    void kill();
    /// Sends `sig` to it (SIGSTOP: its connections stay open and nothing
    /// is answered; SIGCONT resumes it).
    void signal(int sig);
    /// Starts it again on the same ports, writing below `outputDir`.
    void restart(const std::string& outputDir);
    [[nodiscard]] bool running() const;

    [[nodiscard]] std::uint16_t controlPort() const noexcept { return ports_[0]; }
    [[nodiscard]] std::uint16_t dataPort() const noexcept { return ports_[1]; }
    [[nodiscard]] std::uint16_t livePort() const noexcept { return ports_[2]; }
    /// "127.0.0.1" or "::1".
    [[nodiscard]] std::string address() const { return ipv6_ ? "::1" : "127.0.0.1"; }
    /// "127.0.0.1" or "[::1]", as URLs write it.
    [[nodiscard]] std::string urlHost() const { return ipv6_ ? "[::1]" : "127.0.0.1"; }
    /// net://HOST:CONTROL:DATA
    [[nodiscard]] std::string url() const;
    /// The lttng-live URL of session `name` of this host.
    [[nodiscard]] std::string liveUrl(const std::string& name) const;
    [[nodiscard]] const std::string& outputDir() const noexcept { return outputDir_; }
    [[nodiscard]] std::string log() const;

    /// The folders the relay made for session `name` of this host:
    /// <output>/<hostname>/<name>-<YYYYmmdd-HHMMSS>, sorted.
    [[nodiscard]] std::vector<std::string> sessionDirs(const std::string& name) const;
    /// The one such folder ("" and a test failure if there is not exactly one).
    [[nodiscard]] std::string sessionDir(const std::string& name) const;

private:
    void start();

    bool ipv6_;
    std::vector<std::uint16_t> ports_;
    std::string outputDir_;
    std::string home_;
    std::string logPath_;
    pid_t pid_ = -1;
};

/// A peer posing as an lttng-relayd on two free loopback ports (control,
/// data). Either no relay at all, or a proxy in front of a real relay that
/// passes everything through except the reply to one control command,
/// which it spoils. One thread per connection direction; the destructor
/// closes everything and joins them.
class FakeRelay {
public:
    /// What a fake that is no relay does with each connection.
    enum class Stranger {
        CloseAtOnce,  ///< accepts and closes
        Banner,       ///< greets with a line of text (an SSH server's), then reads
        WrongVersion, ///< answers VERSION with protocol 9.0
        Silent,       ///< accepts, reads, never answers
    };
    /// How the proxy spoils the reply to the command it watches for.
    enum class Fault {
        Garbage,    ///< 64 bytes of 0xA5 instead of the reply, then passes on
        Truncate,   ///< half of the reply, then closes both connections
        HugeLength, ///< the reply's trailing-string length set to 0xFFFFFFF0
                    ///< (CREATE_SESSION, CLOSE_TRACE_CHUNK), then a few bytes and silence
        Flood,      ///< the reply followed by 1 MiB of 0xFF
    };
    /// enum lttcomm_relayd_command (lttng-tools 2.13 sessiond-comm.h).
    enum Command : std::uint32_t {
        AddStream = 1,
        CreateSession = 2,
        Version = 5,
        SendMetadata = 6,
        CloseStream = 7,
        DataPending = 8,
        QuiescentControl = 9,
        BeginDataPending = 10,
        EndDataPending = 11,
        SendIndex = 13,
        StreamsSent = 16,
        RotateStreams = 18,
        CreateTraceChunk = 19,
        CloseTraceChunk = 20,
        GetConfiguration = 22,
    };

    explicit FakeRelay(Stranger behaviour);
    /// A proxy to `upstream` that spoils the reply to the first `command`
    /// any client sends, with `fault`.
    FakeRelay(const RelayDaemon& upstream, std::uint32_t command, Fault fault);
    /// A proxy to `upstream` that spoils nothing but holds every reply on
    /// the control connection back for `replyDelay`: a slow, far relay
    /// (the producer waits for the reply to each packet's SEND_INDEX).
    FakeRelay(const RelayDaemon& upstream, std::chrono::milliseconds replyDelay);
    ~FakeRelay();
    FakeRelay(const FakeRelay&) = delete;
    FakeRelay& operator=(const FakeRelay&) = delete;

    [[nodiscard]] std::uint16_t controlPort() const noexcept { return ports_[0]; }
    [[nodiscard]] std::uint16_t dataPort() const noexcept { return ports_[1]; }
    [[nodiscard]] std::string url() const;
    /// Whether the fault was applied (the watched command came and its reply
    /// was spoiled).
    [[nodiscard]] bool faulted() const noexcept { return faulted_; }
    /// The control commands clients sent, in order, over every connection.
    [[nodiscard]] std::vector<std::uint32_t> commandsSeen() const;
    [[nodiscard]] int connections() const noexcept { return connections_; }

    static std::string commandName(std::uint32_t command);

private:
    struct Link;
    void listen();
    void acceptLoop(int listener, bool control);
    void serveStranger(int client, bool control);
    void proxy(int client, bool control);
    void pumpToUpstream(Link& link);
    void pumpToClient(Link& link);

    bool proxy_ = false;
    Stranger stranger_ = Stranger::CloseAtOnce;
    std::uint16_t upstreamControl_ = 0;
    std::uint16_t upstreamData_ = 0;
    std::uint32_t command_ = 0;
    Fault fault_ = Fault::Garbage;
    std::chrono::milliseconds replyDelay_{0};

    std::vector<std::uint16_t> ports_;
    int listeners_[2] = {-1, -1};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> faulted_{false};
    std::atomic<bool> armed_{true};
    std::atomic<int> connections_{0};
    mutable std::mutex mutex_;
    std::vector<std::uint32_t> seen_;
    std::vector<int> sockets_; // every accepted/connected socket, shut down at the end
    std::vector<std::shared_ptr<Link>> links_;
    std::thread acceptThreads_[2];
    std::vector<std::thread> threads_; // one per connection
};

/// A process whose stdout the test reads line by line as it comes, each
/// line stamped with CLOCK_REALTIME when it was read; stderr goes to a log.
class LineReader {
public:
    struct Line {
        std::string text;
        std::int64_t readAtNs; ///< CLOCK_REALTIME, ns since the Epoch
    };
    LineReader(const std::vector<std::string>& argv, const std::string& errLog);
    /// SIGKILL to its process group if still running, reaped.
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    [[nodiscard]] std::vector<Line> lines() const;
    /// Waits up to `timeout` for the exit: its status, -1 if still running
    /// or killed by a signal.
    int wait(std::chrono::milliseconds timeout);
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    bool reaped_ = false;
    int status_ = -1;
    mutable std::mutex mutex_;
    std::vector<Line> lines_;
    std::thread reader_;
};

/// An lttng-sessiond 2.13 (--no-kernel) run as user nobody with its own
/// LTTNG_HOME: its apps are those run as nobody with the same LTTNG_HOME.
class LttngSessiond {
public:
    LttngSessiond();
    /// SIGTERM (it stops its consumer daemons), SIGKILL if it lingers.
    ~LttngSessiond();
    LttngSessiond(const LttngSessiond&) = delete;
    LttngSessiond& operator=(const LttngSessiond&) = delete;

    /// `lttng ARGS...` as nobody against this daemon.
    RunResult lttng(const std::vector<std::string>& args) const;
    /// argv run as nobody with this daemon's LTTNG_HOME.
    [[nodiscard]] std::vector<std::string> command(const std::vector<std::string>& argv) const;
    [[nodiscard]] const std::string& home() const noexcept { return home_; }

private:
    std::string home_;
    pid_t pid_ = -1;
};

} // namespace tracectl::test
