// RelaydControl / RelaydData / RelaydSocket against a stand-in peer on a
// socketpair (and loopback TCP for connect()): well-formed exchanges, then
// a hostile peer (garbage, truncated replies, huge lengths, silence, a
// closed socket) must give a thrown error within the timeout, never a
// crash, a hang or a huge allocation.
#include "relayd/relayd_control.hpp"
#include "stand_in_io.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace tracectl;
using namespace tracectl::relayd;
using namespace std::chrono_literals;

using tracectl::test::readAll;
using tracectl::test::writeAll;

namespace {

/// One command as the peer received it.
struct Received {
    CommandHeader header;
    Bytes payload;
};

Received readCommand(int fd) {
    std::array<std::byte, kCommandHeaderSize> header{};
    if (!readAll(fd, header.data(), header.size()))
        throw std::runtime_error("peer: no command header");
    Received received{decode<CommandHeader>(header), {}};
    received.payload.resize(received.header.dataSize);
    if (!readAll(fd, received.payload.data(), received.payload.size()))
        throw std::runtime_error("peer: short payload");
    return received;
}

/// Big-endian bytes of a reply.
class Reply {
public:
    Reply& u8(std::uint8_t v) {
        bytes_.push_back(static_cast<std::byte>(v));
        return *this;
    }
    Reply& u32(std::uint32_t v) {
        for (int s = 24; s >= 0; s -= 8)
            u8(static_cast<std::uint8_t>(v >> s));
        return *this;
    }
    Reply& u64(std::uint64_t v) {
        for (int s = 56; s >= 0; s -= 8)
            u8(static_cast<std::uint8_t>(v >> s));
        return *this;
    }
    Reply& text(const std::string& t) {
        for (char c : t)
            u8(static_cast<std::uint8_t>(c));
        return *this;
    }
    const Bytes& bytes() const { return bytes_; }
    operator ByteView() const { return bytes_; }

private:
    Bytes bytes_;
};

std::uint64_t be64(const Bytes& b, std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i)
        v = (v << 8) | static_cast<std::uint8_t>(b.at(at + i));
    return v;
}

/// A stand-in relay on the other end of a socketpair, running `script` on
/// its own thread; joined (after the test's end of the pair is closed by
/// the caller, or the script returns) when it goes out of scope.
class FakePeer {
public:
    explicit FakePeer(std::function<void(int)> script) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
            throw std::runtime_error("socketpair");
        ours_ = UniqueFd(fds[0]);
        theirs_ = UniqueFd(fds[1]);
        thread_ = std::thread([this, script = std::move(script)] {
            try {
                script(theirs_.get());
            } catch (const std::exception& e) {
                failure_ = e.what();
            }
            // A script that returns has hung up, as a relay that exits.
            ::shutdown(theirs_.get(), SHUT_RDWR);
        });
    }
    ~FakePeer() {
        ::shutdown(theirs_.get(), SHUT_RDWR);
        if (thread_.joinable())
            thread_.join();
    }
    FakePeer(const FakePeer&) = delete;
    FakePeer& operator=(const FakePeer&) = delete;

    /// The test's end, as the relay connection.
    RelaydSocket socket() { return RelaydSocket::adopt(std::move(ours_), "the fake relay"); }
    /// Waits for the script to finish; returns its failure ("" = none).
    std::string finish() {
        if (thread_.joinable())
            thread_.join();
        return failure_;
    }

private:
    UniqueFd ours_;
    UniqueFd theirs_;
    std::thread thread_;
    std::string failure_;
};

/// Reads commands until the client goes away (for silent peers).
void drainUntilClosed(int fd) {
    std::byte buffer[4096];
    while (::read(fd, buffer, sizeof buffer) > 0) {
    }
}

template <typename F>
RelaydIoError::Kind ioErrorKind(F&& call, std::string* message = nullptr) {
    try {
        call();
    } catch (const RelaydIoError& e) {
        if (message)
            *message = e.what();
        return e.kind();
    }
    ADD_FAILURE() << "no RelaydIoError";
    return RelaydIoError::Kind::System;
}

} // namespace

TEST(RelaydControl, VersionNegotiatesTheLowerMinor) {
    FakePeer peer([](int fd) {
        const Received r = readCommand(fd);
        if (r.header.command != 5 || r.payload.size() != 8)
            throw std::runtime_error("not a VERSION");
        writeAll(fd, Reply().u32(2).u32(15));
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_EQ(control.version(), (Version{2, 13}));
    EXPECT_EQ(control.negotiated(), (Version{2, 13}));
}

TEST(RelaydControl, VersionRefusesAnotherMajorOrAnOldMinor) {
    {
        FakePeer peer([](int fd) {
            readCommand(fd);
            writeAll(fd, Reply().u32(3).u32(0));
            drainUntilClosed(fd);
        });
        RelaydControl control(peer.socket(), 2s);
        EXPECT_THROW(control.version(), RelaydRefused);
        EXPECT_TRUE(control.broken());
    }
    {
        FakePeer peer([](int fd) {
            readCommand(fd);
            writeAll(fd, Reply().u32(2).u32(10));
            drainUntilClosed(fd);
        });
        RelaydControl control(peer.socket(), 2s);
        try {
            control.version();
            FAIL() << "2.10 accepted";
        } catch (const RelaydRefused& e) {
            EXPECT_NE(std::string(e.what()).find("2.10"), std::string::npos) << e.what();
        }
    }
}

TEST(RelaydControl, CreateSessionKeepsTheRelaySessionId) {
    FakePeer peer([](int fd) {
        const Received create = readCommand(fd);
        if (create.header.command != 2)
            throw std::runtime_error("not CREATE_SESSION");
        const std::string path = "testhost/wire-20261203-080000";
        writeAll(fd, Reply()
                         .u64(42)
                         .u32(kLttngOk)
                         .u32(static_cast<std::uint32_t>(path.size() + 1))
                         .text(path)
                         .u8(0));
        const Received begin = readCommand(fd);
        if (begin.header.command != 10 || be64(begin.payload, 0) != 42)
            throw std::runtime_error("BEGIN_DATA_PENDING without the relay's session id");
        writeAll(fd, Reply().u32(kLttngOk));
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_THROW(control.beginDataPending(), RelaydProtocolError); // no session yet
    CreateSessionRequest request;
    request.sessionName = "wire";
    request.hostname = "testhost";
    request.sessiondUuid[0] = 1;
    const CreatedSession created = control.createSession(request);
    EXPECT_EQ(created.relaySessionId, 42u);
    EXPECT_EQ(created.outputPath, "testhost/wire-20261203-080000");
    EXPECT_EQ(control.relaySessionId(), 42u);
    control.beginDataPending();
    control.socket(); // still usable
    EXPECT_FALSE(control.broken());
}

TEST(RelaydControl, ARefusalNamesTheCommandAndKeepsTheConnection) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u64(0xFFFFFFFFFFFFFFFF).u32(11)); // ADD_STREAM: LTTNG_ERR_UNK
        readCommand(fd);
        writeAll(fd, Reply().u32(kLttngOk)); // STREAMS_SENT
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    try {
        control.addStream("chan_0", "ust/uid/0/64-bit", 0, 0, 0);
        FAIL() << "refusal accepted";
    } catch (const RelaydRefused& e) {
        EXPECT_EQ(e.command(), "ADD_STREAM");
        EXPECT_EQ(e.code(), 11u);
        EXPECT_NE(std::string(e.what()).find("ADD_STREAM"), std::string::npos);
    }
    EXPECT_FALSE(control.broken());
    EXPECT_NO_THROW(control.streamsSent());
}

TEST(RelaydControl, DataPendingAnswersAreBooleansElseRefused) {
    FakePeer peer([](int fd) {
        for (std::uint32_t answer : {0u, 1u, 0xFFFFFFFFu}) {
            const Received r = readCommand(fd);
            if (r.header.command != 8 || be64(r.payload, 0) != 7 || be64(r.payload, 8) != 3)
                throw std::runtime_error("bad DATA_PENDING");
            writeAll(fd, Reply().u32(answer));
        }
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_FALSE(control.dataPending(7, 3));
    EXPECT_TRUE(control.dataPending(7, 3));
    EXPECT_THROW(control.dataPending(7, 3), RelaydRefused);
}

TEST(RelaydControl, SendMetadataReadsNoReply) {
    const std::string text = "/* CTF 1.8 */ typealias integer";
    FakePeer peer([&](int fd) {
        const Received r = readCommand(fd);
        if (r.header.command != 6 || r.header.dataSize != 12 + text.size() ||
            be64(r.payload, 0) != 5)
            throw std::runtime_error("bad SEND_METADATA");
        if (std::memcmp(r.payload.data() + 12, text.data(), text.size()) != 0)
            throw std::runtime_error("metadata bytes differ");
        drainUntilClosed(fd);
    });
    {
        RelaydControl control(peer.socket(), 2s);
        const auto start = std::chrono::steady_clock::now();
        control.sendMetadata(5, std::as_bytes(std::span(text.data(), text.size())), 0);
        EXPECT_LT(std::chrono::steady_clock::now() - start, 1s); // did not wait for a reply
    }
    EXPECT_EQ(peer.finish(), "");
}

TEST(RelaydControl, GarbageOfTheWrongSizeThenCloseIsAnIoError) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u32(0xdeadbeef)); // 4 of the 12 bytes
        ::shutdown(fd, SHUT_WR);
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    std::string message;
    EXPECT_EQ(ioErrorKind([&] { control.getConfiguration(); }, &message),
              RelaydIoError::Kind::PeerClosed);
    EXPECT_NE(message.find("GET_CONFIGURATION"), std::string::npos) << message;
    EXPECT_NE(message.find("4 of the 12"), std::string::npos) << message;
    EXPECT_TRUE(control.broken());
    // Out of step: the next call fails at once, without touching the socket.
    EXPECT_THROW(control.streamsSent(), RelaydIoError);
}

TEST(RelaydControl, GarbageOfTheRightSizeIsAProtocolError) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u32(kLttngOk).u8(0x7f)); // trace_chunk_exists = 127
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_THROW(control.traceChunkExists(1), RelaydProtocolError);
    EXPECT_TRUE(control.broken());
    EXPECT_THROW(control.traceChunkExists(1), RelaydIoError);
}

TEST(RelaydControl, ShortReplyThenCloseIsAnIoError) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u8(0).u8(0).u8(0)); // 3 of VERSION's 8 bytes
    });
    RelaydControl control(peer.socket(), 5s);
    std::string message;
    EXPECT_EQ(ioErrorKind([&] { control.version(); }, &message), RelaydIoError::Kind::PeerClosed);
    EXPECT_NE(message.find("3 of the 8"), std::string::npos) << message;
}

TEST(RelaydControl, HugeLengthsAreRefusedWithoutAllocating) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        // CREATE_SESSION: an output path of 4 GiB - 1 bytes.
        writeAll(fd, Reply().u64(1).u32(kLttngOk).u32(0xFFFFFFFF));
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    CreateSessionRequest request;
    request.sessionName = "s";
    request.hostname = "h";
    request.sessiondUuid[0] = 1;
    EXPECT_THROW(control.createSession(request), RelaydProtocolError);
    EXPECT_TRUE(control.broken());
}

TEST(RelaydControl, HugeChunkPathIsRefused) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u32(kLttngOk).u32(0x7FFFFFFF));
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_THROW(control.closeTraceChunk(0, 0), RelaydProtocolError);
}

TEST(RelaydControl, ChunkPathWithoutItsNulIsRefused) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u32(kLttngOk).u32(4).text("abcd"));
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_THROW(control.closeTraceChunk(0, 0), RelaydProtocolError);
}

TEST(RelaydControl, ARefusedChunkCloseReadsNoPath) {
    FakePeer peer([](int fd) {
        readCommand(fd);
        writeAll(fd, Reply().u32(152).u32(77)); // refused: no path follows
        readCommand(fd);
        writeAll(fd, Reply().u32(kLttngOk));
        drainUntilClosed(fd);
    });
    RelaydControl control(peer.socket(), 2s);
    EXPECT_THROW(control.closeTraceChunk(0, 0), RelaydRefused);
    EXPECT_NO_THROW(control.streamsSent()); // still in step
}

TEST(RelaydControl, ASilentPeerTimesOut) {
    FakePeer peer([](int fd) { drainUntilClosed(fd); });
    RelaydControl control(peer.socket(), 200ms);
    const auto start = std::chrono::steady_clock::now();
    std::string message;
    EXPECT_EQ(ioErrorKind([&] { control.streamsSent(); }, &message), RelaydIoError::Kind::Timeout);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_GE(elapsed, 190ms);
    EXPECT_LT(elapsed, 2s);
    EXPECT_NE(message.find("STREAMS_SENT"), std::string::npos) << message;
}

TEST(RelaydControl, APeerThatDoesNotReadTimesOutTheSend) {
    FakePeer peer([](int fd) {
        // Read nothing until the client is gone.
        pollfd pfd{fd, POLLRDHUP, 0};
        ::poll(&pfd, 1, 10'000);
    });
    RelaydControl control(peer.socket(), 200ms);
    const Bytes metadata(8 << 20); // far more than a socketpair buffers
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ioErrorKind([&] { control.sendMetadata(1, metadata, 0); }),
              RelaydIoError::Kind::Timeout);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(RelaydControl, AClosedPeerIsAnErrorNotSigpipe) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    ::close(fds[1]);
    RelaydControl control(RelaydSocket::adopt(UniqueFd(fds[0])), 1s);
    EXPECT_EQ(ioErrorKind([&] { control.streamsSent(); }), RelaydIoError::Kind::PeerClosed);
}

TEST(RelaydData, SendPacketIsTheHeaderThenTheBytes) {
    Bytes payload(100'000);
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<std::byte>(i * 7);
    FakePeer peer([&](int fd) {
        std::array<std::byte, kDataHeaderSize> header{};
        if (!readAll(fd, header.data(), header.size()))
            throw std::runtime_error("no data header");
        const Bytes expected =
            encode(DataHeader{0, 3, 9, static_cast<std::uint32_t>(payload.size()), 12});
        if (!std::equal(header.begin(), header.end(), expected.begin()))
            throw std::runtime_error("data header differs");
        Bytes body(payload.size());
        if (!readAll(fd, body.data(), body.size()) || body != payload)
            throw std::runtime_error("packet bytes differ");
        drainUntilClosed(fd);
    });
    {
        RelaydData data(peer.socket(), 2s);
        data.sendPacket(3, 9, payload, 12);
    }
    EXPECT_EQ(peer.finish(), "");
}

TEST(RelaydSocket, AdoptRefusesWhatIsNotAStreamSocket) {
    int pipeFds[2];
    ASSERT_EQ(::pipe2(pipeFds, O_CLOEXEC), 0);
    UniqueFd writeEnd(pipeFds[1]);
    EXPECT_THROW(RelaydSocket::adopt(UniqueFd(pipeFds[0])), RelaydIoError);
    const int dgram = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(dgram, 0);
    EXPECT_THROW(RelaydSocket::adopt(UniqueFd(dgram)), RelaydIoError);
    EXPECT_THROW(RelaydSocket::adopt(UniqueFd()), RelaydIoError);
}

namespace {

/// A listening loopback TCP socket on a free port.
struct Listener {
    UniqueFd fd;
    std::uint16_t port = 0;
    static Listener on(int family) {
        Listener l;
        l.fd = UniqueFd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (!l.fd)
            return l;
        sockaddr_storage storage{};
        socklen_t length = 0;
        if (family == AF_INET) {
            auto* in = reinterpret_cast<sockaddr_in*>(&storage);
            in->sin_family = AF_INET;
            in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            length = sizeof *in;
        } else {
            auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
            in6->sin6_family = AF_INET6;
            in6->sin6_addr = in6addr_loopback;
            length = sizeof *in6;
        }
        if (::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
            ::listen(l.fd.get(), 4) != 0 ||
            ::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
            l.fd.reset();
            return l;
        }
        l.port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&storage)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port);
        return l;
    }
};

} // namespace

TEST(RelaydSocket, ConnectsToIpv4LiteralsAndNames) {
    Listener listener = Listener::on(AF_INET);
    ASSERT_TRUE(listener.fd.valid());
    RelaydSocket literal = RelaydSocket::connect("127.0.0.1", listener.port, 2s);
    EXPECT_EQ(literal.peerName(), "127.0.0.1:" + std::to_string(listener.port));
    // "localhost" may resolve to ::1 first (refused: nothing listens there), then 127.0.0.1.
    RelaydSocket named = RelaydSocket::connect("localhost", listener.port, 2s);
    EXPECT_EQ(named.peerName(), "127.0.0.1:" + std::to_string(listener.port));
}

TEST(RelaydSocket, ConnectedSocketsSendWithoutNagle) {
    // The data connection gets no replies: with Nagle's algorithm each
    // packet's last segment would wait for the relay's delayed ACK.
    Listener listener = Listener::on(AF_INET);
    ASSERT_TRUE(listener.fd.valid());
    RelaydSocket s = RelaydSocket::connect("127.0.0.1", listener.port, 2s);
    int noDelay = 0;
    socklen_t length = sizeof noDelay;
    ASSERT_EQ(::getsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &noDelay, &length), 0);
    EXPECT_NE(noDelay, 0);
}

TEST(RelaydSocket, AnAdoptedTcpSocketIsNamedByItsPeer) {
    Listener listener = Listener::on(AF_INET);
    ASSERT_TRUE(listener.fd.valid());
    RelaydSocket connected = RelaydSocket::connect("127.0.0.1", listener.port, 2s);
    const RelaydSocket adopted = RelaydSocket::adopt(connected.release(), "the relay");
    EXPECT_EQ(adopted.peerName(), "127.0.0.1:" + std::to_string(listener.port));
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    UniqueFd other(pair[1]);
    EXPECT_EQ(RelaydSocket::adopt(UniqueFd(pair[0]), "the relay").peerName(), "the relay");
}

TEST(RelaydSocket, ConnectsToIpv6Literals) {
    Listener listener = Listener::on(AF_INET6);
    if (!listener.fd.valid())
        GTEST_SKIP() << "no IPv6 loopback on this machine";
    RelaydSocket plain = RelaydSocket::connect("::1", listener.port, 2s);
    EXPECT_EQ(plain.peerName(), "[::1]:" + std::to_string(listener.port));
    RelaydSocket bracketed = RelaydSocket::connect("[::1]", listener.port, 2s);
    EXPECT_EQ(bracketed.peerName(), "[::1]:" + std::to_string(listener.port));
}

TEST(RelaydSocket, ARefusedConnectionNamesTheAddressAndTheError) {
    std::uint16_t port = 0;
    {
        Listener listener = Listener::on(AF_INET); // take a free port, then free it
        ASSERT_TRUE(listener.fd.valid());
        port = listener.port;
    }
    try {
        RelaydSocket::connect("127.0.0.1", port, 2s);
        FAIL() << "connected to a closed port";
    } catch (const RelaydIoError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot connect to the relay at 127.0.0.1:" +
                                             std::to_string(port) + ": Connection refused");
        EXPECT_EQ(e.errnoValue(), ECONNREFUSED);
    }
}

TEST(RelaydSocket, AnUnknownHostIsAResolutionError) {
    try {
        RelaydSocket::connect("no-such-relay.invalid", 5342, 2s);
        FAIL() << "resolved .invalid";
    } catch (const RelaydIoError& e) {
        EXPECT_NE(
            std::string(e.what()).find("cannot resolve the relay host 'no-such-relay.invalid'"),
            std::string::npos)
            << e.what();
    }
}
