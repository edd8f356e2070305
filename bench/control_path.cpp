// tracectl-bench-control-path: the daemon -> consumer control path, today's
// codec (src/common/consumer_protocol) against peer-to-peer D-Bus (sd-bus over
// the same kind of socketpair), for issue 12 item 2. See bench/README.md.
//
// Two socketpairs, two server threads (one per transport) standing in for the
// consumer; the main thread is the daemon. Each request is answered Ok (an
// empty method return) at once: what is measured is the transport alone.
// Latency and pipelined blocks of the two transports alternate, so both see
// the same machine load.
#include "common/consumer_protocol.hpp"
#include "common/fd_passing.hpp"
#include "common/relayd/relayd_protocol.hpp"
#include "common/unique_fd.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <memory>
#include <poll.h>
#include <sched.h>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/resource.h>
#include <sys/socket.h>
#include <system_error>
#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#include <thread>
#include <variant>
#include <vector>

namespace {

namespace cp = tracectl::consumer_protocol;
using tracectl::UniqueFd;
using Clock = std::chrono::steady_clock;

/// One request of the control path, with or without a folder fd after it.
struct Case {
    std::string_view name;
    cp::Message request;
    bool passesFd = false;
};

void check(int r, const char* what) {
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), what);
}

std::array<UniqueFd, 2> makeSocketpair() {
    std::array<int, 2> fds{};
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()) != 0)
        throw std::system_error(errno, std::generic_category(), "socketpair");
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// ---------------------------------------------------------------- the codec
// As the consumer does it: poll, MessageReader, the folder fd on the byte
// after the frame (recvExactWithFds), the reply with writeMessage.

void codecServer(int sock) {
    cp::MessageReader reader;
    pollfd p{sock, POLLIN, 0};
    for (;;) {
        if (::poll(&p, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            throw std::system_error(errno, std::generic_category(), "poll");
        }
        for (;;) {
            const auto status = reader.readFrom(sock);
            if (status == cp::MessageReader::Status::WouldBlock)
                break;
            if (status == cp::MessageReader::Status::Eof)
                return;
            const cp::Frame frame = reader.takeFrame();
            if (std::holds_alternative<cp::RecordSnapshot>(frame.message)) {
                std::byte marker{};
                std::vector<UniqueFd> fds;
                if (tracectl::recvExactWithFds(sock, std::span<std::byte>(&marker, 1), fds, 1) !=
                        1 ||
                    fds.size() != 1)
                    throw std::runtime_error("codec server: RecordSnapshot without its fd");
            }
            cp::writeMessage(sock, cp::Ok{}, frame.request);
        }
    }
}

class CodecClient {
public:
    explicit CodecClient(UniqueFd sock) : sock_(std::move(sock)) {}

    void send(const Case& c, std::uint32_t id) {
        const std::vector<std::byte> frame = cp::encode(c.request, id);
        tracectl::sendWithFds(sock_.get(), frame);
        if (c.passesFd) {
            const std::byte marker{0};
            const std::array<int, 1> fds{folderFd_};
            tracectl::sendWithFds(sock_.get(), std::span<const std::byte>(&marker, 1), fds);
        }
    }

    void receive(std::uint32_t id) {
        const std::optional<cp::Frame> reply = cp::readFrame(sock_.get());
        if (!reply || reply->request != id || !std::holds_alternative<cp::Ok>(reply->message))
            throw std::runtime_error("codec: unexpected reply");
    }

    void roundTrip(const Case& c) {
        const std::uint32_t id = next();
        send(c, id);
        receive(id);
    }

    /// `total` requests, at most `window` unanswered.
    void pipeline(const Case& c, std::uint64_t total, std::uint64_t window) {
        // Replies come in request order (protocol version 4).
        std::uint32_t firstUnanswered = nextId_;
        std::uint64_t sent = 0;
        for (; sent < std::min(total, window); ++sent)
            send(c, next());
        for (std::uint64_t done = 0; done < total; ++done) {
            receive(firstUnanswered++);
            if (sent < total) {
                send(c, next());
                ++sent;
            }
        }
    }

    void setFolderFd(int fd) { folderFd_ = fd; }
    void close() { sock_.reset(); }

private:
    std::uint32_t next() { return nextId_++; }

    UniqueFd sock_;
    std::uint32_t nextId_ = 1;
    int folderFd_ = -1;
};

// ------------------------------------------------------------------ sd-bus
// [sd-bus protocol begin] What p2p D-Bus needs for these four requests:
// server vtable and handlers, client proxy (sync and async). Counted by
// printLineCounts().

struct BusUnref {
    void operator()(sd_bus* b) const noexcept { sd_bus_flush_close_unref(b); }
};
struct MessageUnref {
    void operator()(sd_bus_message* m) const noexcept { sd_bus_message_unref(m); }
};
using BusPtr = std::unique_ptr<sd_bus, BusUnref>;
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

constexpr const char* kPath = "/org/tracectl/Consumer1";
constexpr const char* kInterface = "org.tracectl.Consumer1";

int onFlushChannel(sd_bus_message* m, void*, sd_bus_error*) {
    std::uint64_t key = 0;
    if (const int r = sd_bus_message_read(m, "t", &key); r < 0)
        return r;
    return sd_bus_reply_method_return(m, nullptr);
}

int onRotate(sd_bus_message* m, void*, sd_bus_error*) {
    std::uint64_t id = 0;
    const char* oldChunk = nullptr;
    const char* newChunk = nullptr;
    const char* archive = nullptr;
    if (const int r = sd_bus_message_read(m, "tsss", &id, &oldChunk, &newChunk, &archive); r < 0)
        return r;
    return sd_bus_reply_method_return(m, nullptr);
}

int onRotateMetadata(sd_bus_message* m, void*, sd_bus_error*) {
    std::uint64_t id = 0;
    if (const int r = sd_bus_message_read(m, "t", &id); r < 0)
        return r;
    return sd_bus_reply_method_return(m, nullptr);
}

int onRecordSnapshot(sd_bus_message* m, void*, sd_bus_error*) {
    std::uint64_t id = 0;
    std::uint64_t packetsPerStream = 0;
    int folder = -1; // owned by the message; the consumer would dup it
    if (const int r = sd_bus_message_read(m, "tth", &id, &packetsPerStream, &folder); r < 0)
        return r;
    return sd_bus_reply_method_return(m, nullptr);
}

const sd_bus_vtable kVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("FlushChannel", SD_BUS_ARGS("t", key), SD_BUS_NO_RESULT, onFlushChannel,
                            0),
    SD_BUS_METHOD_WITH_ARGS("Rotate",
                            SD_BUS_ARGS("t", id, "s", oldChunk, "s", newChunk, "s", archive),
                            SD_BUS_NO_RESULT, onRotate, 0),
    SD_BUS_METHOD_WITH_ARGS("RotateMetadata", SD_BUS_ARGS("t", id), SD_BUS_NO_RESULT,
                            onRotateMetadata, 0),
    SD_BUS_METHOD_WITH_ARGS("RecordSnapshot",
                            SD_BUS_ARGS("t", id, "t", packetsPerStream, "h", folder),
                            SD_BUS_NO_RESULT, onRecordSnapshot, 0),
    SD_BUS_VTABLE_END};

/// One end of the peer-to-peer connection over `sock` (taken over).
BusPtr openPeer(UniqueFd sock, bool server) {
    sd_bus* raw = nullptr;
    check(sd_bus_new(&raw), "sd_bus_new");
    BusPtr bus(raw);
    const int fd = sock.get();
    check(sd_bus_set_fd(bus.get(), fd, fd), "sd_bus_set_fd");
    (void)sock.release(); // the bus closes it
    if (server) {
        sd_id128_t id;
        check(sd_id128_randomize(&id), "sd_id128_randomize");
        check(sd_bus_set_server(bus.get(), 1, id), "sd_bus_set_server");
        check(sd_bus_set_anonymous(bus.get(), 1), "sd_bus_set_anonymous");
        check(sd_bus_add_object_vtable(bus.get(), nullptr, kPath, kInterface, kVtable, nullptr),
              "sd_bus_add_object_vtable");
    }
    check(sd_bus_start(bus.get()), "sd_bus_start");
    return bus;
}

/// The method call for `c`'s request.
MessagePtr newCall(sd_bus* bus, const Case& c, int folderFd) {
    sd_bus_message* raw = nullptr;
    int r = 0;
    const auto make = [&](const char* member) {
        check(sd_bus_message_new_method_call(bus, &raw, nullptr, kPath, kInterface, member),
              "sd_bus_message_new_method_call");
    };
    if (const auto* f = std::get_if<cp::FlushChannel>(&c.request)) {
        make("FlushChannel");
        r = sd_bus_message_append(raw, "t", f->key);
    } else if (const auto* rot = std::get_if<cp::Rotate>(&c.request)) {
        make("Rotate");
        r = sd_bus_message_append(raw, "tsss", rot->id, rot->oldChunk.c_str(),
                                  rot->newChunk.c_str(), rot->archive.c_str());
    } else if (const auto* meta = std::get_if<cp::RotateMetadata>(&c.request)) {
        make("RotateMetadata");
        r = sd_bus_message_append(raw, "t", meta->id);
    } else if (const auto* snap = std::get_if<cp::RecordSnapshot>(&c.request)) {
        make("RecordSnapshot");
        r = sd_bus_message_append(raw, "tth", snap->id, snap->packetsPerStream, folderFd);
    } else {
        throw std::logic_error("no D-Bus method for this request");
    }
    MessagePtr m(raw);
    check(r, "sd_bus_message_append");
    return m;
}
// [sd-bus protocol end]

void busServer(sd_bus* bus) {
    for (;;) {
        const int r = sd_bus_process(bus, nullptr);
        if (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE)
            return; // the client closed
        check(r, "sd_bus_process (server)");
        if (r > 0)
            continue;
        if (const int w = sd_bus_wait(bus, UINT64_MAX); w < 0 && w != -EINTR) {
            if (w == -ECONNRESET || w == -ENOTCONN)
                return;
            check(w, "sd_bus_wait (server)");
        }
    }
}

class BusClient {
public:
    explicit BusClient(UniqueFd sock) : bus_(openPeer(std::move(sock), false)) {
        // Waits for the authentication (and fd negotiation) to be over.
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call_method(bus_.get(), nullptr, kPath, "org.freedesktop.DBus.Peer",
                                         "Ping", &error, &reply, nullptr);
        MessagePtr owned(reply);
        sd_bus_error_free(&error);
        check(r, "Ping");
        if (sd_bus_can_send(bus_.get(), SD_BUS_TYPE_UNIX_FD) <= 0)
            throw std::runtime_error("sd-bus: the peer connection cannot pass fds");
    }

    void roundTrip(const Case& c) {
        MessagePtr call = newCall(bus_.get(), c, folderFd_);
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call(bus_.get(), call.get(), 0, &error, &reply);
        MessagePtr owned(reply);
        sd_bus_error_free(&error);
        check(r, "sd_bus_call");
    }

    void pipeline(const Case& c, std::uint64_t total, std::uint64_t window) {
        Pipeline p{this, &c, total, 0, 0, 0};
        for (; p.sent < std::min(total, window); ++p.sent)
            sendAsync(p);
        while (p.done < total) {
            const int r = sd_bus_process(bus_.get(), nullptr);
            check(r, "sd_bus_process (client)");
            if (p.error != 0)
                check(p.error, "async reply");
            if (r == 0)
                check(sd_bus_wait(bus_.get(), UINT64_MAX), "sd_bus_wait (client)");
        }
    }

    void setFolderFd(int fd) { folderFd_ = fd; }
    void close() { bus_.reset(); }

private:
    struct Pipeline {
        BusClient* self;
        const Case* request;
        std::uint64_t total;
        std::uint64_t sent;
        std::uint64_t done;
        int error;
    };

    void sendAsync(Pipeline& p) {
        MessagePtr call = newCall(bus_.get(), *p.request, folderFd_);
        check(sd_bus_call_async(bus_.get(), nullptr, call.get(), onReply, &p, 0),
              "sd_bus_call_async");
    }

    static int onReply(sd_bus_message* m, void* userdata, sd_bus_error*) {
        auto& p = *static_cast<Pipeline*>(userdata);
        if (sd_bus_message_is_method_error(m, nullptr))
            p.error = -EBADMSG;
        ++p.done;
        if (p.sent < p.total) {
            ++p.sent;
            p.self->sendAsync(p);
        }
        return 0;
    }

    BusPtr bus_;
    int folderFd_ = -1;
};

// ------------------------------------------------------------ measurement

struct Result {
    std::vector<double> latencyUs;
    std::uint64_t pipelined = 0;
    double pipelinedSeconds = 0;
    double pipelinedCpuSeconds = 0; ///< both threads, user + system

    double percentile(double q) {
        if (latencyUs.empty())
            return 0;
        std::sort(latencyUs.begin(), latencyUs.end());
        const auto i = static_cast<std::size_t>(q * static_cast<double>(latencyUs.size() - 1));
        return latencyUs[i];
    }
    double rate() const { return static_cast<double>(pipelined) / pipelinedSeconds; }
    double cpuUsPerRequest() const {
        return pipelinedCpuSeconds * 1e6 / static_cast<double>(pipelined);
    }
};

template <class Client>
void latencyBlock(Client& client, const Case& c, std::uint64_t n, Result& out) {
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto begin = Clock::now();
        client.roundTrip(c);
        const auto end = Clock::now();
        out.latencyUs.push_back(std::chrono::duration<double, std::micro>(end - begin).count());
    }
}

/// User + system CPU time of the whole process (client and server threads).
double processCpuSeconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    const auto seconds = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(u.ru_utime) + seconds(u.ru_stime);
}

template <class Client>
void pipelineBlock(Client& client, const Case& c, std::uint64_t n, std::uint64_t window,
                   Result& out) {
    const double cpuBegin = processCpuSeconds();
    const auto begin = Clock::now();
    client.pipeline(c, n, window);
    out.pipelinedSeconds += std::chrono::duration<double>(Clock::now() - begin).count();
    out.pipelinedCpuSeconds += processCpuSeconds() - cpuBegin;
    out.pipelined += n;
}

struct Options {
    std::uint64_t roundTrips = 20000; ///< per message and transport
    std::uint64_t pipelined = 100000; ///< per message and transport
    std::uint64_t window = 64;
    std::uint64_t blocks = 10;         ///< alternations codec / sd-bus
    std::uint64_t codecCalls = 200000; ///< per message, the codec alone
    /// same: the client and both servers on one CPU; split: the client on
    /// the first CPU, the servers on the second; free: wherever the
    /// scheduler puts them.
    std::string placement = "same";
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const auto value = [&]() -> std::uint64_t {
            if (i + 1 >= argc)
                throw std::invalid_argument(std::string(arg) + " needs a value");
            return std::stoull(argv[++i]);
        };
        if (arg == "--round-trips")
            o.roundTrips = value();
        else if (arg == "--pipelined")
            o.pipelined = value();
        else if (arg == "--window")
            o.window = value();
        else if (arg == "--blocks")
            o.blocks = value();
        else if (arg == "--codec-calls")
            o.codecCalls = value();
        else if (arg == "--placement") {
            if (i + 1 >= argc)
                throw std::invalid_argument("--placement needs a value");
            o.placement = argv[++i];
            if (o.placement != "same" && o.placement != "split" && o.placement != "free")
                throw std::invalid_argument("--placement: same, split or free");
        } else if (arg == "--help" || arg == "-h") {
            std::printf(
                "usage: tracectl-bench-control-path [--round-trips N] [--pipelined N] "
                "[--window W] [--blocks B] [--codec-calls N] [--placement same|split|free]\n");
            std::exit(0);
        } else
            throw std::invalid_argument("unknown option " + std::string(arg));
    }
    if (o.blocks == 0 || o.window == 0)
        throw std::invalid_argument("--blocks and --window must be > 0");
    return o;
}

/// The CPUs the calling thread may run on (of those it may run on now).
std::vector<int> allowedCpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0)
        throw std::system_error(errno, std::generic_category(), "sched_getaffinity");
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set))
            cpus.push_back(cpu);
    return cpus;
}

/// Keeps the calling thread on `cpu` (-1: leaves it free).
void pinTo(int cpu) {
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0)
        throw std::system_error(errno, std::generic_category(), "sched_setaffinity");
}

struct LineCount {
    std::size_t all = 0;
    std::size_t code = 0; ///< neither blank nor a // comment line
};

LineCount countLines(const std::string& path, std::string_view from = {},
                     std::string_view to = {}) {
    std::ifstream in(path);
    if (!in)
        std::fprintf(stderr,
                     "cannot read %s: run from the checkout's top or set "
                     "TRACECTL_SOURCE_ROOT\n",
                     path.c_str());
    LineCount n;
    bool inside = from.empty();
    std::string line;
    while (std::getline(in, line)) {
        if (!from.empty() && line.find(from) != std::string::npos) {
            inside = true;
            continue;
        }
        if (!to.empty() && line.find(to) != std::string::npos)
            break;
        if (!inside)
            continue;
        ++n.all;
        const auto first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line.compare(first, 2, "//") != 0)
            ++n.code;
    }
    return n;
}

/// The codec alone, without a socket: ns per encode() and per decode() of
/// each message, the fastest of `blocks` blocks of `count` calls each (the
/// block least disturbed by the rest of the machine).
void printCodecAlone(std::uint64_t count, std::uint64_t blocks) {
    cp::CreateChannel create;
    create.key = 12;
    create.outputDir = "ust/uid/1000/64-bit";
    create.name = "channel0";
    create.subbufSize = 1 << 20;
    create.subbufCount = 4;
    cp::Statistics statistics{123456, {}};
    for (std::uint64_t key = 1; key <= 8; ++key)
        statistics.channels.push_back(cp::ChannelFigures{key, 1000, 2, 0, 1 << 20, 1 << 20, 0});
    const std::vector<std::pair<std::string_view, cp::Message>> messages = {
        {"FlushChannel", cp::FlushChannel{7}},
        {"Rotate", cp::Rotate{3, "", "archives/20261201T120000+0000-3",
                              "archives/20261201T115500+0000-20261201T120000+0000-2"}},
        {"RotateMetadata", cp::RotateMetadata{3}},
        {"RecordSnapshot", cp::RecordSnapshot{1, 0}},
        {"CreateChannel", create},
        {"Statistics (8 ch.)", statistics},
    };
    const auto fastest = [](const std::vector<double>& v) {
        return *std::min_element(v.begin(), v.end());
    };
    std::printf("\ncodec alone (no socket), %llu calls per message, fastest of %llu blocks:\n",
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(blocks));
    std::printf("%-18s %14s %14s\n", "message", "encode ns", "decode ns");
    for (const auto& [name, message] : messages) {
        const std::vector<std::byte> frame = cp::encode(message, 1);
        std::vector<double> encodeNs;
        std::vector<double> decodeNs;
        std::size_t sink = 0;
        for (std::uint64_t b = 0; b < blocks; ++b) {
            auto start = Clock::now();
            for (std::uint64_t i = 0; i < count / blocks; ++i)
                sink += cp::encode(message, static_cast<std::uint32_t>(i)).size();
            encodeNs.push_back(
                std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                static_cast<double>(count / blocks));
            start = Clock::now();
            for (std::uint64_t i = 0; i < count / blocks; ++i)
                sink += cp::decode(frame).index();
            decodeNs.push_back(
                std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                static_cast<double>(count / blocks));
        }
        if (sink == 0)
            throw std::runtime_error("codec alone: nothing encoded");
        std::printf("%-18s %14.0f %14.0f\n", std::string(name).c_str(), fastest(encodeNs),
                    fastest(decodeNs));
    }
}

/// ns per call of `call` (which returns a size, summed so that nothing is
/// optimised away): the fastest of `blocks` blocks of count / blocks calls.
template <class Call>
double fastestNs(std::uint64_t count, std::uint64_t blocks, Call call) {
    double best = 0;
    std::size_t sink = 0;
    for (std::uint64_t b = 0; b < blocks; ++b) {
        const auto start = Clock::now();
        for (std::uint64_t i = 0; i < count / blocks; ++i)
            sink += call(i);
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                          static_cast<double>(count / blocks);
        best = b == 0 ? ns : std::min(best, ns);
    }
    if (sink == 0)
        throw std::runtime_error("codec alone: nothing encoded");
    return best;
}

/// The lttng-relayd codec alone (src/common/relayd/relayd_protocol), as the
/// consumer uses it per packet (the data header, SEND_INDEX) and per session
/// or stream (CREATE_SESSION, ADD_STREAM), and the replies it decodes.
void printRelaydCodecAlone(std::uint64_t count, std::uint64_t blocks) {
    namespace rd = tracectl::relayd;
    rd::CreateSessionRequest session;
    session.sessionName = "s-20261207-153800";
    session.hostname = "testhost";
    session.liveTimerUs = 1'000'000;
    session.sessiondUuid[15] = 1;
    session.sessionId = 3;
    session.creationTime = 1796162246;
    session.currentChunkId = 0;
    rd::AddStream stream{"channel0_1", "ust/uid/1000/64-bit", 0, 0, 0};
    rd::RelaydIndex index{5, 9, 1 << 20, 1 << 19, 1000, 2000, 0, 1, 2, 9};
    // Replies of LTTNG_OK: session 3 with a 16-byte path; stream handle 0x11.
    const auto bytes = [](std::initializer_list<unsigned> values) {
        rd::Bytes out;
        for (unsigned v : values)
            out.push_back(static_cast<std::byte>(v));
        return out;
    };
    const rd::Bytes sessionReply = bytes({0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 10, 0, 0, 0, 16});
    const rd::Bytes streamReply = bytes({0, 0, 0, 0, 0, 0, 0, 0x11, 0, 0, 0, 10});
    std::printf("\nrelayd codec alone, %llu calls per message, fastest of %llu blocks:\n",
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(blocks));
    std::printf("%-28s %10s\n", "message", "ns");
    const auto row = [&](const char* name, auto call) {
        std::printf("%-28s %10.0f\n", name, fastestNs(count, blocks, call));
    };
    row("encode data header", [](std::uint64_t i) {
        return rd::encode(rd::DataHeader{0, 5, i, 1 << 20, 0}).size();
    });
    row("encode SEND_INDEX", [&](std::uint64_t i) {
        index.netSeqNum = i;
        return rd::encode(index).size();
    });
    row("encode CREATE_SESSION", [&](std::uint64_t i) {
        session.sessionId = i;
        return rd::encode(session).size();
    });
    row("encode ADD_STREAM", [&](std::uint64_t i) {
        stream.traceChunkId = i;
        return rd::encode(stream).size();
    });
    row("decode CREATE_SESSION reply", [&](std::uint64_t) {
        return rd::decode<rd::CreateSessionReplyHeader>(sessionReply).retCode;
    });
    row("decode ADD_STREAM reply",
        [&](std::uint64_t) { return rd::decode<rd::StreamStatusReply>(streamReply).retCode; });
}

void printLineCounts() {
    // The checkout: $TRACECTL_SOURCE_ROOT, else the current directory when it
    // is the checkout's top (as bench/README.md runs it), else the parent of
    // the build folder this program is in (<checkout>/<build>/bench/...).
    std::string root = ".";
    std::error_code error;
    if (const char* env = std::getenv("TRACECTL_SOURCE_ROOT"))
        root = env;
    else if (!std::filesystem::exists("src/common/consumer_protocol.hpp", error))
        root = std::filesystem::read_symlink("/proc/self/exe", error)
                   .parent_path()
                   .parent_path()
                   .parent_path()
                   .string();
    const LineCount hpp = countLines(root + "/src/common/consumer_protocol.hpp");
    const LineCount cpp = countLines(root + "/src/common/consumer_protocol.cpp");
    const LineCount fields = countLines(root + "/src/common/wire_fields.hpp");
    const LineCount bus = countLines(root + "/bench/control_path.cpp", "[sd-bus protocol begin]",
                                     "[sd-bus protocol end]");
    std::printf("\nlines (all / code, i.e. not blank nor comment):\n");
    std::printf("  codec, src/common/consumer_protocol.hpp: %zu / %zu\n", hpp.all, hpp.code);
    std::printf("  codec, src/common/consumer_protocol.cpp: %zu / %zu\n", cpp.all, cpp.code);
    std::printf("  codec, src/common/wire_fields.hpp (the generic field codec): %zu / %zu\n",
                fields.all, fields.code);
    std::printf("  codec, all three (all 29 messages, framing, validation, readers): %zu / %zu\n",
                hpp.all + cpp.all + fields.all, hpp.code + cpp.code + fields.code);
    std::printf("  sd-bus p2p, this benchmark's vtable + handlers + proxy (4 methods, no "
                "validation): %zu / %zu\n",
                bus.all, bus.code);
}

} // namespace

int main(int argc, char** argv) try {
    const Options o = parse(argc, argv);

    int clientCpu = -1;
    int serverCpu = -1;
    if (o.placement != "free") {
        const std::vector<int> cpus = allowedCpus();
        clientCpu = cpus.back();
        serverCpu = o.placement == "split" && cpus.size() > 1 ? cpus[cpus.size() - 2] : clientCpu;
    }
    pinTo(clientCpu);

    const UniqueFd folder(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!folder)
        throw std::system_error(errno, std::generic_category(), "open /");

    auto codecPair = makeSocketpair();
    auto busPair = makeSocketpair();
    std::jthread codecThread([sock = std::move(codecPair[1]), serverCpu] {
        pinTo(serverCpu);
        codecServer(sock.get());
    });
    BusPtr serverBus = openPeer(std::move(busPair[1]), true);
    std::jthread busThread([bus = serverBus.get(), serverCpu] {
        pinTo(serverCpu);
        busServer(bus);
    });

    CodecClient codec(std::move(codecPair[0]));
    BusClient bus(std::move(busPair[0]));
    codec.setFolderFd(folder.get());
    bus.setFolderFd(folder.get());

    const std::vector<Case> cases = {
        {"FlushChannel", cp::FlushChannel{7}, false},
        {"Rotate",
         cp::Rotate{3, "", "archives/20261201T120000+0000-3",
                    "archives/20261201T115500+0000-20261201T120000+0000-2"},
         false},
        {"RotateMetadata", cp::RotateMetadata{3}, false},
        {"RecordSnapshot+fd", cp::RecordSnapshot{1, 0}, true},
    };

    std::printf("# placement %s: client on CPU %d, servers on CPU %d (-1: not pinned)\n",
                o.placement.c_str(), clientCpu, serverCpu);
    std::printf("# %u CPUs; %llu round trips and %llu pipelined requests (window %llu) per "
                "message and transport, in %llu alternating blocks\n",
                std::thread::hardware_concurrency(), static_cast<unsigned long long>(o.roundTrips),
                static_cast<unsigned long long>(o.pipelined),
                static_cast<unsigned long long>(o.window),
                static_cast<unsigned long long>(o.blocks));
    std::printf("%-18s %-11s %10s %10s %14s %12s\n", "message", "transport", "median us", "p99 us",
                "pipelined/s", "cpu us/req");
    for (const Case& c : cases) {
        Result rc;
        Result rb;
        // Warm-up, not counted.
        latencyBlock(codec, c, 200, rc);
        latencyBlock(bus, c, 200, rb);
        rc.latencyUs.clear();
        rb.latencyUs.clear();
        for (std::uint64_t b = 0; b < o.blocks; ++b) {
            latencyBlock(codec, c, o.roundTrips / o.blocks, rc);
            latencyBlock(bus, c, o.roundTrips / o.blocks, rb);
        }
        for (std::uint64_t b = 0; b < o.blocks; ++b) {
            pipelineBlock(codec, c, o.pipelined / o.blocks, o.window, rc);
            pipelineBlock(bus, c, o.pipelined / o.blocks, o.window, rb);
        }
        const double cm = rc.percentile(0.5);
        const double c99 = rc.percentile(0.99);
        const double bm = rb.percentile(0.5);
        const double b99 = rb.percentile(0.99);
        std::printf("%-18s %-11s %10.1f %10.1f %14.0f %12.2f\n", std::string(c.name).c_str(),
                    "codec", cm, c99, rc.rate(), rc.cpuUsPerRequest());
        std::printf("%-18s %-11s %10.1f %10.1f %14.0f %12.2f\n", "", "sd-bus p2p", bm, b99,
                    rb.rate(), rb.cpuUsPerRequest());
        std::printf("%-18s %-11s %10.2f %10.2f %14.2f %12.2f\n", "", "ratio", bm / cm, b99 / c99,
                    rb.rate() / rc.rate(), rb.cpuUsPerRequest() / rc.cpuUsPerRequest());
    }

    codec.close();
    bus.close();
    codecThread.join();
    busThread.join();
    serverBus.reset();
    printCodecAlone(o.codecCalls, o.blocks);
    printRelaydCodecAlone(o.codecCalls, o.blocks);
    printLineCounts();
    std::printf("\nratio: sd-bus p2p / codec (latency above 1: sd-bus slower; rate below 1: "
                "sd-bus slower)\n");
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "tracectl-bench-control-path: %s\n", e.what());
    return 1;
}
