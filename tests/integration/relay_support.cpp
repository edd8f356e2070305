// SPDX-License-Identifier: LGPL-2.1-or-later
#include "relay_support.hpp"

#include "eventually.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex>
#include <spawn.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace tracectl::test {

namespace {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

/// A socket address for `host` (an IPv4 or IPv6 literal) and `port`.
sockaddr_storage loopbackAddress(bool ipv6, std::uint16_t port, socklen_t& length) {
    sockaddr_storage storage{};
    if (ipv6) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        a->sin6_addr = in6addr_loopback;
        length = sizeof(sockaddr_in6);
    } else {
        auto* a = reinterpret_cast<sockaddr_in*>(&storage);
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        length = sizeof(sockaddr_in);
    }
    return storage;
}

/// A listening TCP socket on a free loopback port; its port in `port`.
int listenOnFreePort(bool ipv6, std::uint16_t& port) {
    const int fd = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    socklen_t length = 0;
    sockaddr_storage address = loopbackAddress(ipv6, 0, length);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 || ::listen(fd, 16) != 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error(std::string("bind/listen: ") + std::strerror(e));
    }
    length = sizeof(address);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    port = ipv6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
    return fd;
}

/// A connected TCP socket to loopback `port`, or -1.
int connectLoopback(bool ipv6, std::uint16_t port) {
    const int fd = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    socklen_t length = 0;
    const sockaddr_storage address = loopbackAddress(ipv6, port, length);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool sendAll(int fd, const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

ssize_t recvSome(int fd, void* buffer, std::size_t size) {
    for (;;) {
        const ssize_t n = ::recv(fd, buffer, size, 0);
        if (n < 0 && errno == EINTR)
            continue;
        return n;
    }
}

bool recvExactly(int fd, void* buffer, std::size_t size) {
    auto* p = static_cast<char*>(buffer);
    while (size > 0) {
        const ssize_t n = recvSome(fd, p, size);
        if (n <= 0)
            return false;
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

std::uint64_t bigEndian64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v = (v << 8) | p[i];
    return v;
}

std::uint32_t bigEndian32(const unsigned char* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

void putBigEndian32(unsigned char* p, std::uint32_t v) {
    p[0] = static_cast<unsigned char>(v >> 24);
    p[1] = static_cast<unsigned char>(v >> 16);
    p[2] = static_cast<unsigned char>(v >> 8);
    p[3] = static_cast<unsigned char>(v);
}

std::int64_t realtimeNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

std::vector<std::uint16_t> freeLoopbackPorts(std::size_t n, bool ipv6) {
    std::vector<int> fds;
    std::vector<std::uint16_t> ports;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t port = 0;
        fds.push_back(listenOnFreePort(ipv6, port));
        ports.push_back(port);
    }
    for (const int fd : fds)
        ::close(fd);
    return ports;
}

bool portAccepts(const std::string& host, std::uint16_t port) {
    const int fd = connectLoopback(host.find(':') != std::string::npos, port);
    if (fd < 0)
        return false;
    ::close(fd);
    return true;
}

std::string hostName() {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0')
        return "localhost";
    return name;
}

std::string makeNobodyFolder(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + ".XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    if (::chown(pattern.c_str(), kNobody, kNogroup) != 0 || ::chmod(pattern.c_str(), 0755) != 0)
        throw std::runtime_error("chown " + pattern + ": " + std::strerror(errno));
    return pattern;
}

std::vector<std::string> asNobody(const std::string& home) {
    return {"setpriv",
            "--reuid=" + std::to_string(kNobody),
            "--regid=" + std::to_string(kNogroup),
            "--clear-groups",
            "env",
            "LTTNG_HOME=" + home,
            "HOME=" + home};
}

// ---- RelayDaemon -----------------------------------------------------------

RelayDaemon::RelayDaemon(const std::string& outputDir, bool ipv6)
    : ipv6_(ipv6), outputDir_(outputDir) {
    home_ = makeNobodyFolder("tracectl-relayd-home");
    logPath_ = home_ + "/relayd.log";
    // Ports found free may be taken again before the relay binds them: then
    // it exits at once, and another set is tried.
    for (int attempt = 0;; ++attempt) {
        ports_ = freeLoopbackPorts(3, ipv6_);
        try {
            start();
            return;
        } catch (const std::runtime_error&) {
            if (attempt == 2)
                throw;
        }
    }
}

RelayDaemon::~RelayDaemon() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    fs::remove_all(home_, ec);
}

void RelayDaemon::start() {
    std::error_code ec;
    fs::create_directories(outputDir_, ec);
    if (::chown(outputDir_.c_str(), kNobody, kNogroup) != 0)
        throw std::runtime_error("chown " + outputDir_ + ": " + std::strerror(errno));
    const std::string scheme = ipv6_ ? "tcp6://" : "tcp://";
    std::vector<std::string> argv = asNobody(home_);
    for (const std::string& a :
         {std::string("lttng-relayd"), std::string("-o"), outputDir_, std::string("-C"),
          scheme + urlHost() + ":" + std::to_string(controlPort()), std::string("-D"),
          scheme + urlHost() + ":" + std::to_string(dataPort()), std::string("-L"),
          scheme + urlHost() + ":" + std::to_string(livePort())})
        argv.push_back(a);
    std::vector<char*> args;
    for (auto& a : argv)
        args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logPath_.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    const int r = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (r != 0) {
        pid_ = -1;
        throw std::runtime_error(std::string("cannot start lttng-relayd: ") + std::strerror(r));
    }
    const bool up = eventually(
        [&] {
            if (!running())
                return true; // it exited: no use waiting
            return portAccepts(address(), controlPort()) && portAccepts(address(), dataPort()) &&
                   portAccepts(address(), livePort());
        },
        std::chrono::seconds(10));
    if (!up || !running()) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
        throw std::runtime_error("lttng-relayd did not come up on ports " +
                                 std::to_string(controlPort()) + ", " + std::to_string(dataPort()) +
                                 ", " + std::to_string(livePort()) + ": " + log());
    }
}

void RelayDaemon::signal(int sig) {
    if (pid_ > 0)
        ::kill(pid_, sig);
}

bool RelayDaemon::running() const {
    if (pid_ <= 0)
        return false;
    int status = 0;
    // Our child: reaped here if it died, so that kill(pid, 0) cannot see a zombie.
    return ::waitpid(pid_, &status, WNOHANG) == 0;
}

void RelayDaemon::kill() {
    if (pid_ <= 0)
        return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    eventually([&] {
        return !portAccepts(address(), controlPort()) && !portAccepts(address(), dataPort());
    });
}

void RelayDaemon::restart(const std::string& outputDir) {
    kill();
    outputDir_ = outputDir;
    start();
}

std::string RelayDaemon::url() const {
    return "net://" + urlHost() + ":" + std::to_string(controlPort()) + ":" +
           std::to_string(dataPort());
}

std::string RelayDaemon::liveUrl(const std::string& name) const {
    return "net://" + urlHost() + ":" + std::to_string(livePort()) + "/host/" + hostName() + "/" +
           name;
}

std::string RelayDaemon::log() const {
    return fileText(logPath_);
}

std::vector<std::string> RelayDaemon::sessionDirs(const std::string& name) const {
    std::vector<std::string> dirs;
    const std::regex pattern(R"(\d{8}-\d{6})");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(outputDir_ + "/" + hostName(), ec)) {
        const std::string base = e.path().filename().string();
        if (e.is_directory() && base.size() == name.size() + 16 && base.rfind(name + "-", 0) == 0 &&
            std::regex_match(base.substr(name.size() + 1), pattern))
            dirs.push_back(e.path().string());
    }
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

std::string RelayDaemon::sessionDir(const std::string& name) const {
    const auto dirs = sessionDirs(name);
    if (dirs.size() != 1) {
        std::string listing;
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(outputDir_, ec);
             !ec && it != fs::end(it) && listing.size() < 4000; it.increment(ec))
            listing += "\n  " + it->path().string();
        ADD_FAILURE() << dirs.size() << " relay folders for session " << name << " under "
                      << outputDir_ << "/" << hostName() << "; the relay's output:" << listing;
        return "";
    }
    return dirs.front();
}

// ---- FakeRelay -------------------------------------------------------------

struct FakeRelay::Link {
    int client = -1;
    int upstream = -1;
    bool control = false;
    std::atomic<bool> faultPending{false};
    // The control stream's framing: a 24-byte header, then data_size bytes.
    std::array<unsigned char, 24> header{};
    std::size_t headerFilled = 0;
    std::uint64_t skip = 0;
};

FakeRelay::FakeRelay(Stranger behaviour) : stranger_(behaviour) {
    listen();
}

FakeRelay::FakeRelay(const RelayDaemon& upstream, std::uint32_t command, Fault fault)
    : proxy_(true), upstreamControl_(upstream.controlPort()), upstreamData_(upstream.dataPort()),
      command_(command), fault_(fault) {
    listen();
}

FakeRelay::FakeRelay(const RelayDaemon& upstream, std::chrono::milliseconds replyDelay)
    : proxy_(true), upstreamControl_(upstream.controlPort()), upstreamData_(upstream.dataPort()),
      replyDelay_(replyDelay) {
    listen();
}

void FakeRelay::listen() {
    ports_.resize(2);
    for (int i = 0; i < 2; ++i)
        listeners_[i] = listenOnFreePort(false, ports_[static_cast<std::size_t>(i)]);
    for (int i = 0; i < 2; ++i)
        acceptThreads_[i] = std::thread([this, i] { acceptLoop(listeners_[i], i == 0); });
}

FakeRelay::~FakeRelay() {
    stopping_ = true;
    for (const int fd : listeners_)
        ::shutdown(fd, SHUT_RDWR); // wakes accept(2)
    // The two accept loops first: after them no connection thread is added.
    for (auto& t : acceptThreads_)
        t.join();
    {
        std::lock_guard lock(mutex_);
        for (const int fd : sockets_)
            ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : threads_)
        t.join();
    for (const int fd : sockets_)
        ::close(fd);
    for (const int fd : listeners_)
        ::close(fd);
}

std::string FakeRelay::url() const {
    return "net://127.0.0.1:" + std::to_string(controlPort()) + ":" + std::to_string(dataPort());
}

std::vector<std::uint32_t> FakeRelay::commandsSeen() const {
    std::lock_guard lock(mutex_);
    return seen_;
}

std::string FakeRelay::commandName(std::uint32_t command) {
    switch (command) {
    case AddStream:
        return "ADD_STREAM";
    case CreateSession:
        return "CREATE_SESSION";
    case Version:
        return "VERSION";
    case SendMetadata:
        return "SEND_METADATA";
    case CloseStream:
        return "CLOSE_STREAM";
    case DataPending:
        return "DATA_PENDING";
    case QuiescentControl:
        return "QUIESCENT_CONTROL";
    case BeginDataPending:
        return "BEGIN_DATA_PENDING";
    case EndDataPending:
        return "END_DATA_PENDING";
    case SendIndex:
        return "SEND_INDEX";
    case StreamsSent:
        return "STREAMS_SENT";
    case RotateStreams:
        return "ROTATE_STREAMS";
    case CreateTraceChunk:
        return "CREATE_TRACE_CHUNK";
    case CloseTraceChunk:
        return "CLOSE_TRACE_CHUNK";
    case GetConfiguration:
        return "GET_CONFIGURATION";
    default:
        return "command " + std::to_string(command);
    }
}

void FakeRelay::acceptLoop(int listener, bool control) {
    for (;;) {
        const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; // shut down
        }
        std::lock_guard lock(mutex_);
        if (stopping_) {
            ::close(client);
            return;
        }
        ++connections_;
        sockets_.push_back(client);
        if (proxy_)
            threads_.emplace_back([this, client, control] { proxy(client, control); });
        else
            threads_.emplace_back([this, client, control] { serveStranger(client, control); });
    }
}

void FakeRelay::serveStranger(int client, bool control) {
    char buffer[4096];
    switch (stranger_) {
    case Stranger::CloseAtOnce:
        ::shutdown(client, SHUT_RDWR);
        return;
    case Stranger::Banner: {
        static const char banner[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n";
        sendAll(client, banner, sizeof(banner) - 1);
        break;
    }
    case Stranger::WrongVersion:
        if (control) {
            unsigned char header[24];
            while (recvExactly(client, header, sizeof(header))) {
                const std::uint64_t size = bigEndian64(header + 8);
                const std::uint32_t command = bigEndian32(header + 16);
                {
                    std::lock_guard lock(mutex_);
                    seen_.push_back(command);
                }
                if (size > sizeof(buffer) || !recvExactly(client, buffer, size))
                    return;
                if (command == Version) {
                    unsigned char reply[8];
                    putBigEndian32(reply, 9);
                    putBigEndian32(reply + 4, 0);
                    sendAll(client, reply, sizeof(reply));
                }
            }
            return;
        }
        break;
    case Stranger::Silent:
        break;
    }
    while (recvSome(client, buffer, sizeof(buffer)) > 0) {
    }
}

void FakeRelay::proxy(int client, bool control) {
    const int upstream = connectLoopback(false, control ? upstreamControl_ : upstreamData_);
    if (upstream < 0) {
        ::shutdown(client, SHUT_RDWR);
        return;
    }
    auto link = std::make_shared<Link>();
    link->client = client;
    link->upstream = upstream;
    link->control = control;
    {
        std::lock_guard lock(mutex_);
        sockets_.push_back(upstream);
        links_.push_back(link);
        if (stopping_) {
            ::shutdown(client, SHUT_RDWR);
            ::shutdown(upstream, SHUT_RDWR);
        }
    }
    std::thread back([this, link] { pumpToClient(*link); });
    pumpToUpstream(*link);
    back.join();
}

void FakeRelay::pumpToUpstream(Link& link) {
    std::vector<unsigned char> buffer(65536);
    for (;;) {
        const ssize_t n = recvSome(link.client, buffer.data(), buffer.size());
        if (n <= 0)
            break;
        const auto size = static_cast<std::size_t>(n);
        for (std::size_t i = 0; link.control && i < size;) {
            if (link.skip > 0) {
                const std::size_t k = std::min<std::uint64_t>(link.skip, size - i);
                link.skip -= k;
                i += k;
                continue;
            }
            const std::size_t k = std::min(link.header.size() - link.headerFilled, size - i);
            std::memcpy(link.header.data() + link.headerFilled, buffer.data() + i, k);
            link.headerFilled += k;
            i += k;
            if (link.headerFilled == link.header.size()) {
                link.headerFilled = 0;
                link.skip = bigEndian64(link.header.data() + 8);
                const std::uint32_t command = bigEndian32(link.header.data() + 16);
                std::lock_guard lock(mutex_);
                seen_.push_back(command);
                // Armed before the command reaches the relay: its reply is
                // the next thing the relay sends on this connection.
                bool armed = true;
                if (command == command_ && armed_.compare_exchange_strong(armed, false))
                    link.faultPending = true;
            }
        }
        if (!sendAll(link.upstream, buffer.data(), size))
            break;
    }
    ::shutdown(link.client, SHUT_RDWR);
    ::shutdown(link.upstream, SHUT_RDWR);
}

void FakeRelay::pumpToClient(Link& link) {
    std::vector<unsigned char> buffer(65536);
    bool silent = false; // after a HugeLength reply: read the relay, pass nothing on
    for (;;) {
        ssize_t n = recvSome(link.upstream, buffer.data(), buffer.size());
        if (n <= 0)
            break;
        if (silent)
            continue;
        if (link.control && replyDelay_.count() > 0)
            std::this_thread::sleep_for(replyDelay_);
        if (!link.faultPending.exchange(false)) {
            if (!sendAll(link.client, buffer.data(), static_cast<std::size_t>(n)))
                break;
            continue;
        }
        faulted_ = true;
        if (fault_ == Fault::Garbage) {
            const std::vector<unsigned char> garbage(64, 0xA5);
            sendAll(link.client, garbage.data(), garbage.size());
        } else if (fault_ == Fault::Truncate) {
            sendAll(link.client, buffer.data(), static_cast<std::size_t>(n) / 2);
            break; // both connections closed below
        } else if (fault_ == Fault::HugeLength &&
                   (command_ == CreateSession || command_ == CloseTraceChunk)) {
            // CREATE_SESSION's reply: u64 session id, u32 status, u32 path
            // length; CLOSE_TRACE_CHUNK's: u64 status, u32 path length.
            const std::size_t offset = command_ == CreateSession ? 12 : 8;
            while (static_cast<std::size_t>(n) < offset + 4) {
                const ssize_t more = recvSome(link.upstream, buffer.data() + n,
                                              buffer.size() - static_cast<std::size_t>(n));
                if (more <= 0)
                    break;
                n += more;
            }
            putBigEndian32(buffer.data() + offset, 0xFFFFFFF0u);
            std::memset(buffer.data() + offset + 4, 'x', 16);
            sendAll(link.client, buffer.data(), offset + 4 + 16);
            silent = true;
        } else { // Flood (and HugeLength of a reply without a length)
            sendAll(link.client, buffer.data(), static_cast<std::size_t>(n));
            const std::vector<unsigned char> flood(1 << 20, 0xFF);
            sendAll(link.client, flood.data(), flood.size());
        }
    }
    ::shutdown(link.client, SHUT_RDWR);
    ::shutdown(link.upstream, SHUT_RDWR);
}

// ---- LineReader ------------------------------------------------------------

LineReader::LineReader(const std::vector<std::string>& argv, const std::string& errLog) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
    std::vector<std::string> args = argv;
    std::vector<char*> argp;
    for (auto& a : args)
        argp.push_back(a.data());
    argp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errLog.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    const int r = ::posix_spawnp(&pid_, argp[0], &actions, &attributes, argp.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(fds[1]);
    if (r != 0) {
        ::close(fds[0]);
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(r));
    }
    out_ = fds[0];
    reader_ = std::thread([this] {
        std::string pending;
        char buffer[65536];
        for (;;) {
            const ssize_t n = ::read(out_, buffer, sizeof(buffer));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            const std::int64_t now = realtimeNs();
            pending.append(buffer, static_cast<std::size_t>(n));
            std::lock_guard lock(mutex_);
            for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
                lines_.push_back({pending.substr(0, end), now});
                pending.erase(0, end + 1);
            }
        }
    });
}

LineReader::~LineReader() {
    if (!reaped_) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    reader_.join();
    ::close(out_);
}

std::vector<LineReader::Line> LineReader::lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
}

int LineReader::wait(std::chrono::milliseconds timeout) {
    eventually(
        [&] {
            if (reaped_)
                return true;
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                reaped_ = true;
                status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            return reaped_;
        },
        timeout);
    return reaped_ ? status_ : -1;
}

// ---- LttngSessiond ---------------------------------------------------------

LttngSessiond::LttngSessiond() : home_(makeNobodyFolder("tracectl-lttng-home")) {
    const RunResult r = run(command({"lttng-sessiond", "--daemonize", "--no-kernel", "--quiet"}));
    if (!r.ok())
        throw std::runtime_error("lttng-sessiond: " + r.describe());
    const std::string pidText = fileText(home_ + "/.lttng/lttng-sessiond.pid");
    pid_ = static_cast<pid_t>(std::atoi(pidText.c_str()));
    if (pid_ <= 0)
        throw std::runtime_error("lttng-sessiond wrote no pid file in " + home_);
}

LttngSessiond::~LttngSessiond() {
    ::kill(pid_, SIGTERM);
    if (!eventually([&] { return !processAlive(pid_); }, std::chrono::seconds(10)))
        ::kill(pid_, SIGKILL);
    std::error_code ec;
    fs::remove_all(home_, ec);
}

std::vector<std::string> LttngSessiond::command(const std::vector<std::string>& argv) const {
    std::vector<std::string> full = asNobody(home_);
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
}

RunResult LttngSessiond::lttng(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"lttng"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(command(argv));
}

} // namespace tracectl::test
