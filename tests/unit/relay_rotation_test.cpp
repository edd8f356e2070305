// The consumer's side of rotating a network session (output/relay_output.hpp)
// against a stand-in lttng-relayd 2.13 on socketpairs: which commands go on
// the control connection, in which order, with which bytes: CREATE_TRACE_CHUNK
// for the new chunk, ROTATE_STREAMS per stream at the CTF packet_seq_num
// following the last packet sent (lttng-tools 2.13 consumer.c
// lttng_consumer_rotate_channel; relayd stream.c try_rotate_stream_index),
// no CLOSE_STREAM for a stream that goes on, the data-pending exchange, then
// CLOSE_TRACE_CHUNK with MOVE_TO_COMPLETED (or DELETE for a clear).
#include "output/local_output.hpp"
#include "output/relay_output.hpp"
#include "stand_in_io.hpp"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace tracectl;
using namespace tracectl::consumer;
using namespace tracectl::relayd;
using namespace std::chrono_literals;

using tracectl::test::readAll;
using tracectl::test::writeAll;

namespace {

struct Received {
    RelaydCommand command{};
    Bytes payload;
};

void putBe(Bytes& b, std::uint64_t v, int bytes) {
    for (int s = 8 * (bytes - 1); s >= 0; s -= 8)
        b.push_back(static_cast<std::byte>((v >> s) & 0xff));
}

std::uint64_t be(const Bytes& b, std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v = (v << 8) | static_cast<std::uint8_t>(b.at(at + static_cast<std::size_t>(i)));
    return v;
}

/// A stand-in relay: answers every command as lttng-relayd 2.13 does when
/// all goes well (ADD_STREAM hands out 7, 8, ...; DATA_PENDING and
/// END_DATA_PENDING say nothing is pending), except the one command
/// `refuse` names, answered with an error code. Records what it got.
class FakeRelay {
public:
    explicit FakeRelay(std::optional<RelaydCommand> refuse = std::nullopt) : refuse_(refuse) {
        control_ = pair(controlPeer_);
        data_ = pair(dataPeer_);
        controlThread_ = std::thread([this] { serveControl(); });
        dataThread_ = std::thread([this] { serveData(); });
    }
    ~FakeRelay() {
        ::shutdown(controlPeer_.get(), SHUT_RDWR);
        ::shutdown(dataPeer_.get(), SHUT_RDWR);
        controlThread_.join();
        dataThread_.join();
    }
    FakeRelay(const FakeRelay&) = delete;
    FakeRelay& operator=(const FakeRelay&) = delete;

    /// A relay session on both connections (session id 42, minor 13).
    std::shared_ptr<RelaySession> session() {
        RelaydControl control(RelaydSocket::adopt(std::move(control_), "the fake relay"), 2s);
        control.adoptSession(Version{2, 13}, 42);
        RelaydData data(RelaydSocket::adopt(std::move(data_), "the fake relay"), 2s);
        return std::make_shared<RelaySession>(std::move(control), std::move(data), 42);
    }
    /// The commands received so far (SEND_METADATA has no reply: call
    /// after a command that has one).
    std::vector<Received> commands() {
        std::lock_guard lock(mutex_);
        return commands_;
    }
    std::vector<RelaydCommand> commandKinds() {
        std::vector<RelaydCommand> kinds;
        for (const Received& r : commands())
            kinds.push_back(r.command);
        return kinds;
    }
    /// Waits until `count` data packets came.
    std::vector<DataHeader> packets(std::size_t count) {
        for (int i = 0; i < 400; ++i) {
            {
                std::lock_guard lock(mutex_);
                if (packets_.size() >= count)
                    return packets_;
            }
            std::this_thread::sleep_for(5ms);
        }
        std::lock_guard lock(mutex_);
        return packets_;
    }
    void clear() {
        std::lock_guard lock(mutex_);
        commands_.clear();
    }

private:
    static UniqueFd pair(UniqueFd& peer) {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
            throw std::runtime_error("socketpair");
        peer = UniqueFd(fds[1]);
        return UniqueFd(fds[0]);
    }

    void serveControl() {
        const int fd = controlPeer_.get();
        std::uint64_t nextHandle = 7;
        for (;;) {
            std::array<std::byte, kCommandHeaderSize> header{};
            if (!readAll(fd, header.data(), header.size()))
                return;
            const CommandHeader h = decode<CommandHeader>(header);
            Received r{static_cast<RelaydCommand>(h.command), Bytes(h.dataSize)};
            if (!readAll(fd, r.payload.data(), r.payload.size()))
                return;
            {
                std::lock_guard lock(mutex_);
                commands_.push_back(r);
            }
            const std::uint32_t code = refuse_ == r.command ? 1u : kLttngOk;
            Bytes reply;
            switch (r.command) {
            case RelaydCommand::SendMetadata:
                continue;
            case RelaydCommand::AddStream:
                putBe(reply, nextHandle++, 8);
                putBe(reply, code, 4);
                break;
            case RelaydCommand::DataPending:
            case RelaydCommand::EndDataPending:
                putBe(reply, 0, 4);
                break;
            case RelaydCommand::CloseTraceChunk: {
                const std::string path = "host/s-20261130-031700/archives/x-y-0";
                putBe(reply, code, 4);
                putBe(reply, path.size() + 1, 4);
                if (code == kLttngOk) {
                    for (char c : path)
                        reply.push_back(static_cast<std::byte>(c));
                    reply.push_back(std::byte{0});
                }
                break;
            }
            default:
                putBe(reply, code, 4);
            }
            writeAll(fd, reply);
        }
    }

    void serveData() {
        const int fd = dataPeer_.get();
        for (;;) {
            Bytes header(kDataHeaderSize);
            if (!readAll(fd, header.data(), header.size()))
                return;
            const DataHeader h = decode<DataHeader>(header);
            Bytes body(h.dataSize);
            if (!readAll(fd, body.data(), body.size()))
                return;
            std::lock_guard lock(mutex_);
            packets_.push_back(h);
        }
    }

    std::optional<RelaydCommand> refuse_;
    UniqueFd control_, data_, controlPeer_, dataPeer_;
    std::thread controlThread_, dataThread_;
    std::mutex mutex_;
    std::vector<Received> commands_;
    std::vector<DataHeader> packets_;
};

/// A data packet's index entry with CTF packet_seq_num `seq`.
IndexEntry packet(std::uint64_t seq) {
    IndexEntry e;
    e.packetSizeBits = 8 * 64;
    e.contentSizeBits = 8 * 40;
    e.timestampBegin = 100 * seq;
    e.timestampEnd = 100 * seq + 50;
    e.streamId = 0;
    e.streamInstanceId = 3;
    e.packetSeqNum = seq;
    return e;
}

const std::array<char, 64> kBytes{};

/// ROTATE_STREAMS' payload as lttng-tools 2.13 lays it out on x86-64:
/// u32 count, u8 is_set, 7 padding bytes, u64 new chunk id, then
/// {u64 stream, u64 position} per stream (relayd.h).
Bytes rotateStreamsPayload(std::uint64_t chunk, std::uint64_t stream, std::uint64_t position) {
    Bytes b;
    putBe(b, 1, 4);
    b.push_back(std::byte{1});
    b.insert(b.end(), 7, std::byte{0});
    putBe(b, chunk, 8);
    putBe(b, stream, 8);
    putBe(b, position, 8);
    return b;
}

/// CLOSE_TRACE_CHUNK's payload: u64 chunk, u64 close time, u8 is_set, u32 command.
Bytes closeTraceChunkPayload(std::uint64_t chunk, std::uint64_t time,
                             TraceChunkCloseCommand command) {
    Bytes b;
    putBe(b, chunk, 8);
    putBe(b, time, 8);
    b.push_back(std::byte{1});
    putBe(b, static_cast<std::uint32_t>(command), 4);
    return b;
}

std::vector<RelaydCommand> after(const std::vector<RelaydCommand>& all, std::size_t from) {
    return {all.begin() + static_cast<std::ptrdiff_t>(std::min(from, all.size())), all.end()};
}

} // namespace

TEST(RelayRotation, StreamsGoOnInTheNewChunkAndTheOldOneIsArchived) {
    FakeRelay relay;
    auto session = relay.session();
    RelayChunk first(session, 0);
    std::unique_ptr<StreamSink> data =
        first.openStream("ust/uid/1000/64-bit", "chan_0", StreamKind::Data);
    std::unique_ptr<StreamSink> metadata =
        first.openStream("ust/uid/1000/64-bit", "metadata", StreamKind::Metadata);
    first.streamsOpened();
    // (SEND_METADATA has no reply: a command with one follows.)
    metadata->write("/* CTF 1.8 */", 13, 13, nullptr);
    for (std::uint64_t seq : {0, 1, 2}) {
        const IndexEntry e = packet(seq);
        data->write(kBytes.data(), 64, 40, &e);
    }
    const std::size_t before = relay.commands().size();

    // The rotation begins: the next chunk on the relay first.
    session->createTraceChunk(1, 1764472700);
    RelayChunk second(session, 1);
    // The data stream reached its switch position: it goes on in chunk 1
    // from packet_seq_num 3 on (the last one sent + 1).
    std::unique_ptr<StreamSink> data2 =
        second.continueStream(*data, "ust/uid/1000/64-bit", "chan_0", StreamKind::Data);
    data->close(); // handed over: no CLOSE_STREAM
    // The metadata moves at once, and all of it is sent again.
    std::unique_ptr<StreamSink> metadata2 =
        second.continueStream(*metadata, "ust/uid/1000/64-bit", "metadata", StreamKind::Metadata);
    metadata->close();
    metadata2->write("/* CTF 1.8 */", 13, 13, nullptr);
    const IndexEntry e = packet(3);
    data2->write(kBytes.data(), 64, 40, &e);
    EXPECT_EQ(data2->bytes(), 64u); // the new chunk's bytes only
    const std::string where =
        session->archiveChunk(0, 1764472700, TraceChunkCloseCommand::MoveToCompleted, 2s);
    EXPECT_EQ(where, "host/s-20261130-031700/archives/x-y-0");
    EXPECT_TRUE(session->failure().empty()) << session->failure();

    const std::vector<Received> got = relay.commands();
    const std::vector<RelaydCommand> kinds = after(relay.commandKinds(), before);
    const std::vector<RelaydCommand> expected{
        RelaydCommand::CreateTraceChunk, RelaydCommand::RotateStreams,
        RelaydCommand::RotateStreams,    RelaydCommand::SendMetadata,
        RelaydCommand::SendIndex,        RelaydCommand::BeginDataPending,
        RelaydCommand::DataPending,      RelaydCommand::QuiescentControl,
        RelaydCommand::EndDataPending,   RelaydCommand::CloseTraceChunk,
    };
    ASSERT_EQ(kinds, expected);
    // CREATE_TRACE_CHUNK {u64 id 1, u64 creation time, u32 no override name}.
    Bytes create;
    putBe(create, 1, 8);
    putBe(create, 1764472700, 8);
    putBe(create, 0, 4);
    EXPECT_EQ(got[before].payload, create);
    EXPECT_EQ(got[before + 1].payload, rotateStreamsPayload(1, 7, 3));
    EXPECT_EQ(got[before + 2].payload, rotateStreamsPayload(1, 8, 0));
    // The data-pending exchange asks up to the last net_seq_num sent (3).
    EXPECT_EQ(be(got[before + 6].payload, 0, 8), 7u);
    EXPECT_EQ(be(got[before + 6].payload, 8, 8), 3u);
    EXPECT_EQ(got[before + 9].payload,
              closeTraceChunkPayload(0, 1764472700, TraceChunkCloseCommand::MoveToCompleted));
    // The relay stream is the same one: its net_seq_num goes on.
    const std::vector<DataHeader> packets = relay.packets(4);
    ASSERT_EQ(packets.size(), 4u);
    for (std::uint64_t i = 0; i < 4; ++i) {
        EXPECT_EQ(packets[i].streamHandle, 7u);
        EXPECT_EQ(packets[i].netSeqNum, i);
    }

    // The end of the session: the streams close in the chunk they are in.
    relay.clear();
    data2->close();
    metadata2->close();
    session->closeTraceChunk(1, 1764472800);
    const std::vector<Received> end = relay.commands();
    ASSERT_EQ(end.size(), 3u);
    EXPECT_EQ(end[0].command, RelaydCommand::CloseStream);
    EXPECT_EQ(be(end[0].payload, 0, 8), 7u);
    EXPECT_EQ(be(end[0].payload, 8, 8), 3u);
    EXPECT_EQ(end[1].command, RelaydCommand::CloseStream);
    EXPECT_EQ(be(end[1].payload, 0, 8), 8u);
    EXPECT_EQ(end[2].command, RelaydCommand::CloseTraceChunk);
    EXPECT_EQ(end[2].payload.at(16), std::byte{0}); // no command: stays where it is
}

TEST(RelayRotation, AStreamThatSentNothingMovesFromPacketZero) {
    FakeRelay relay;
    auto session = relay.session();
    RelayChunk first(session, 4);
    std::unique_ptr<StreamSink> idle = first.openStream("kernel", "chan_1", StreamKind::Data);
    session->createTraceChunk(5, 1000);
    RelayChunk second(session, 5);
    std::unique_ptr<StreamSink> next =
        second.continueStream(*idle, "kernel", "chan_1", StreamKind::Data);
    idle->close();
    const std::vector<Received> got = relay.commands();
    ASSERT_EQ(got.back().command, RelaydCommand::RotateStreams);
    EXPECT_EQ(got.back().payload, rotateStreamsPayload(5, 7, 0));
}

TEST(RelayRotation, ASinkOfAnotherKindOrAClosedStreamGetsANewRelayStream) {
    FakeRelay relay;
    auto session = relay.session();
    RelayChunk first(session, 0);
    std::unique_ptr<StreamSink> closed = first.openStream("kernel", "chan_0", StreamKind::Data);
    closed->close();
    session->createTraceChunk(1, 1000);
    RelayChunk second(session, 1);
    const std::size_t before = relay.commands().size();
    std::unique_ptr<StreamSink> fresh =
        second.continueStream(*closed, "kernel", "chan_0", StreamKind::Data);
    ASSERT_EQ(relay.commands().size(), before + 1);
    EXPECT_EQ(relay.commands().back().command, RelaydCommand::AddStream);
    // ADD_STREAM 2.11: ..., u64 trace_chunk_id at 24.
    EXPECT_EQ(be(relay.commands().back().payload, 24, 8), 1u);

    // A local sink as the previous one (never happens in one session, but
    // the relay chunk then opens its own stream).
    char folder[] = "/tmp/relay-rotation-XXXXXX";
    ASSERT_NE(::mkdtemp(folder), nullptr);
    {
        LocalChunk local(OutputDir::openRoot(folder));
        std::unique_ptr<StreamSink> file = local.openStream("kernel", "chan_2", StreamKind::Data);
        std::unique_ptr<StreamSink> relayed =
            second.continueStream(*file, "kernel", "chan_2", StreamKind::Data);
        EXPECT_EQ(relay.commands().back().command, RelaydCommand::AddStream);
        file->close();
    }
    ASSERT_EQ(std::system((std::string("rm -rf ") + folder).c_str()), 0);
}

TEST(RelayRotation, AClearDeletesTheOldChunk) {
    FakeRelay relay;
    auto session = relay.session();
    RelayChunk first(session, 2);
    std::unique_ptr<StreamSink> data =
        first.openStream("ust/uid/0/64-bit", "c_0", StreamKind::Data);
    session->createTraceChunk(3, 2000);
    RelayChunk second(session, 3);
    auto next = second.continueStream(*data, "ust/uid/0/64-bit", "c_0", StreamKind::Data);
    data->close();
    (void)session->archiveChunk(2, 2000, TraceChunkCloseCommand::Delete, 2s);
    const std::vector<Received> got = relay.commands();
    ASSERT_EQ(got.back().command, RelaydCommand::CloseTraceChunk);
    EXPECT_EQ(got.back().payload, closeTraceChunkPayload(2, 2000, TraceChunkCloseCommand::Delete));
    // A stream that sent nothing is asked up to net_seq_num -1, as
    // lttng-consumerd's next_net_seq_num - 1 wraps (consumer.c
    // consumer_data_pending): END_DATA_PENDING counts a stream never asked
    // as in flight.
    for (const Received& r : got) {
        if (r.command != RelaydCommand::DataPending)
            continue;
        ASSERT_EQ(r.payload.size(), 16u);
        for (std::size_t i = 8; i < 16; ++i)
            EXPECT_EQ(r.payload[i], std::byte{0xFF});
    }
}

TEST(RelayRotation, ARefusedCloseFailsTheSessionOnce) {
    FakeRelay relay(RelaydCommand::CloseTraceChunk);
    auto session = relay.session();
    int told = 0;
    std::string why;
    session->setFailureHook([&](const std::string& w) {
        ++told;
        why = w;
    });
    session->createTraceChunk(0, 1000);
    session->createTraceChunk(1, 2000);
    EXPECT_THROW((void)session->archiveChunk(0, 2000, TraceChunkCloseCommand::MoveToCompleted, 2s),
                 std::runtime_error);
    EXPECT_EQ(told, 1);
    EXPECT_NE(why.find("closing trace chunk 0"), std::string::npos) << why;
    // Nothing more goes to the relay.
    const std::size_t sent = relay.commands().size();
    EXPECT_THROW(session->rotateStream(7, 2), std::runtime_error);
    session->closeTraceChunk(1, 3000);
    EXPECT_EQ(relay.commands().size(), sent);
    EXPECT_EQ(told, 1);
}

TEST(RelayRotation, ARefusedRotateStreamsFailsTheSession) {
    FakeRelay relay(RelaydCommand::RotateStreams);
    auto session = relay.session();
    std::string why;
    session->setFailureHook([&](const std::string& w) { why = w; });
    RelayChunk first(session, 0);
    std::unique_ptr<StreamSink> data = first.openStream("kernel", "chan_0", StreamKind::Data);
    session->createTraceChunk(1, 1000);
    RelayChunk second(session, 1);
    EXPECT_THROW((void)second.continueStream(*data, "kernel", "chan_0", StreamKind::Data),
                 std::runtime_error);
    EXPECT_NE(why.find("moving stream 7 into trace chunk 1"), std::string::npos) << why;
}

// A network snapshot (consumer.cpp, RecordSnapshotToRelay and
// SnapshotMetadata) on its relay session of its own: its chunk is created
// with the snapshot's name (the relay writes it in <session>/<name>/), its
// streams are added in that chunk and closed, their packets go without
// index entries (a snapshot's relay session keeps none: lttng-relayd 2.13
// main.c session_streams_have_index), and once the relay holds everything
// the chunk is closed as it is, with NO_OPERATION (lttng-tools 2.13 cmd.c
// snapshot_record).
TEST(RelayRotation, ASnapshotChunkIsNamedAndClosedAsItIs) {
    FakeRelay relay;
    auto session = relay.session();
    session->setSnapshot();
    const std::string name = "snapshot-1-20261204-140000-3";
    session->createTraceChunk(3, 1000, name);
    RelayChunk snapshot(session, 3);
    {
        std::unique_ptr<StreamSink> data =
            snapshot.openStream("ust/uid/0/64-bit", "channel0_0", StreamKind::Data);
        const IndexEntry entry = packet(0);
        data->write(kBytes.data(), 64, 40, &entry);
        data->close();
        std::unique_ptr<StreamSink> metadata =
            snapshot.openStream("ust/uid/0/64-bit", "metadata", StreamKind::Metadata);
        metadata->write(kBytes.data(), 16, 16, nullptr);
    } // closed by its destructor
    (void)session->archiveChunk(3, 1001, TraceChunkCloseCommand::NoOperation, 2s);
    EXPECT_EQ(relay.packets(1).size(), 1u);

    const std::vector<Received> got = relay.commands();
    ASSERT_FALSE(got.empty());
    // CREATE_TRACE_CHUNK: u64 id, u64 creation time, u32 name length (with
    // its NUL), the name.
    ASSERT_EQ(got.front().command, RelaydCommand::CreateTraceChunk);
    Bytes created;
    putBe(created, 3, 8);
    putBe(created, 1000, 8);
    putBe(created, name.size() + 1, 4);
    for (char c : name)
        created.push_back(static_cast<std::byte>(c));
    created.push_back(std::byte{0});
    EXPECT_EQ(got.front().payload, created);
    int added = 0, closed = 0, indexes = 0;
    for (const Received& r : got) {
        added += r.command == RelaydCommand::AddStream ? 1 : 0;
        closed += r.command == RelaydCommand::CloseStream ? 1 : 0;
        indexes += r.command == RelaydCommand::SendIndex ? 1 : 0;
    }
    EXPECT_EQ(added, 2);
    EXPECT_EQ(closed, 2);
    EXPECT_EQ(indexes, 0);
    ASSERT_EQ(got.back().command, RelaydCommand::CloseTraceChunk);
    EXPECT_EQ(got.back().payload,
              closeTraceChunkPayload(3, 1001, TraceChunkCloseCommand::NoOperation));
    EXPECT_TRUE(session->failure().empty()) << session->failure();
}

// A snapshot's chunk name is one folder: the relay's codec refuses a path,
// and the session fails before anything is sent.
TEST(RelayRotation, ASnapshotChunkNameWithASlashIsRefused) {
    FakeRelay relay;
    auto session = relay.session();
    EXPECT_THROW(session->createTraceChunk(0, 1000, std::string("a/b")), std::runtime_error);
    EXPECT_FALSE(session->failure().empty());
}

// A.6's linger is bounded: beyond RelaySession::kMaxLingeringTraces, the
// oldest traces close at once (the relay's fds are not the viewers' to hold).
TEST(RelayRotation, AtMostSoManyTracesLingerTheOldestCloseFirst) {
    FakeRelay relay;
    auto session = relay.session();
    session->setLiveLinger({1, 1});
    RelayChunk chunk(session, 0);
    std::vector<std::unique_ptr<StreamSink>> apps;
    const std::size_t count = RelaySession::kMaxLingeringTraces + 2;
    for (std::size_t i = 0; i < count; ++i)
        apps.push_back(chunk.openStream("ust/pid/app-" + std::to_string(i) + "-20261207-100000",
                                        "chan_0", StreamKind::Data));
    chunk.streamsOpened();
    for (auto& app : apps)
        app->close();
    session->waitUntilReceived(2s);
    relay.clear();
    session->liveTick();
    session->waitUntilReceived(2s);
    std::vector<std::uint64_t> closed;
    for (const Received& r : relay.commands())
        if (r.command == RelaydCommand::CloseStream)
            closed.push_back(be(r.payload, 0, 8));
    // The 2 beyond the bound, then the head's turn.
    EXPECT_EQ(closed, (std::vector<std::uint64_t>{7, 8, 9}));
    EXPECT_TRUE(session->failure().empty()) << session->failure();
}

// Issue 40, A.6: in a live session, the streams of a per-PID app that
// exited stay open on the relay for the linger's ticks, so that a viewer
// learns of them before lttng-relayd forgets them; the traces close one at
// a time, spaced, so that a viewer whose last stream hung up still finds
// the next one; a trace's metadata closes a tick after its data; no beacon
// is sent for them; the session's end closes what still lingers at once.
TEST(RelayRotation, ALiveSessionsClosedStreamsLingerAndCloseOneTraceAtATimeMetadataLast) {
    FakeRelay relay;
    auto session = relay.session();
    session->setLiveLinger({2, 2});
    RelayChunk chunk(session, 0);
    const std::string appA = "ust/pid/app-123-20261207-100000";
    const std::string appB = "ust/pid/app-124-20261207-100000";
    std::unique_ptr<StreamSink> metadataA =
        chunk.openStream(appA, "metadata", StreamKind::Metadata);
    std::unique_ptr<StreamSink> dataA = chunk.openStream(appA, "chan_0", StreamKind::Data);
    std::unique_ptr<StreamSink> metadataB =
        chunk.openStream(appB, "metadata", StreamKind::Metadata);
    std::unique_ptr<StreamSink> dataB = chunk.openStream(appB, "chan_0", StreamKind::Data);
    chunk.streamsOpened();
    metadataA->write("/* CTF 1.8 */", 13, 13, nullptr);
    IndexEntry e = packet(0);
    e.streamId = 5;
    dataA->write(kBytes.data(), 64, 40, &e);
    // Another app's trace, still running.
    std::unique_ptr<StreamSink> other =
        chunk.openStream("ust/pid/other-9-20261207-100000", "chan_0", StreamKind::Data);
    (void)relay.packets(1);
    session->waitUntilReceived(2s); // a command with a reply: all before it arrived
    relay.clear();

    // Both apps exit: nothing goes to the relay yet.
    dataA->close();
    metadataA->close();
    metadataB->close();
    dataB->close();
    session->waitUntilReceived(2s); // the lingering streams are still asked about
    std::vector<Received> got = relay.commands();
    const auto closes = [](const std::vector<Received>& commands) {
        std::vector<std::uint64_t> handles;
        for (const Received& r : commands) {
            EXPECT_NE(r.command, RelaydCommand::SendIndex) << "no beacon for a lingering stream";
            if (r.command == RelaydCommand::CloseStream)
                handles.push_back(be(r.payload, 0, 8));
        }
        return handles;
    };
    EXPECT_TRUE(closes(got).empty());
    EXPECT_EQ(std::count_if(got.begin(), got.end(),
                            [](const Received& r) {
                                return r.command == RelaydCommand::DataPending &&
                                       be(r.payload, 0, 8) == 8u;
                            }),
              1)
        << "the lingering data stream is open on the relay: DATA_PENDING asks about it";

    // Handles in the order added: 7 metadata A, 8 data A, 9 metadata B,
    // 10 data B, 11 the other app's stream.
    const auto tick = [&] {
        relay.clear();
        session->liveTick();
        session->waitUntilReceived(2s);
        return closes(relay.commands());
    };
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{}) << "tick 1: both linger";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{8}) << "tick 2: A's data, the first closed";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{7}) << "tick 3: A's metadata; B waits its turn";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{10}) << "tick 4: B's data, 2 ticks after A's";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{9}) << "tick 5: B's metadata";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{});
    relay.clear();

    // The session ends: what lingers closes at once (and the traces not
    // published yet are: B's never sent a packet).
    other->close();
    session->closeLingering();
    session->closeTraceChunk(0, 1764472800);
    got = relay.commands();
    std::erase_if(got, [](const Received& r) { return r.command == RelaydCommand::StreamsSent; });
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].command, RelaydCommand::CloseStream);
    EXPECT_EQ(be(got[0].payload, 0, 8), 11u);
    EXPECT_EQ(got[1].command, RelaydCommand::CloseTraceChunk);
    EXPECT_TRUE(session->failure().empty()) << session->failure();
}

// Issue 40, A.6: at the session's end, the traces still lingering close one
// at a time at a viewer's pace (drainLingering()), whatever their linger
// time left, each trace's metadata a tick after its data, until none lingers.
TEST(RelayRotation, AtTheSessionsEndLingeringTracesCloseOneAtATimeWhateverTheirLingerLeft) {
    FakeRelay relay;
    auto session = relay.session();
    session->setLiveLinger({100, 50}); // far longer than the drain takes
    RelayChunk chunk(session, 0);
    std::vector<std::unique_ptr<StreamSink>> sinks;
    for (const char* app : {"ust/pid/app-1-20261207-100000", "ust/pid/app-2-20261207-100000"}) {
        sinks.push_back(chunk.openStream(app, "metadata", StreamKind::Metadata));
        sinks.push_back(chunk.openStream(app, "chan_0", StreamKind::Data));
    }
    chunk.streamsOpened();
    for (auto& s : sinks)
        s->close();
    session->waitUntilReceived(2s);
    EXPECT_TRUE(session->lingers());
    session->drainLingering(2);
    // Handles in the order added: 7 metadata 1, 8 data 1, 9 metadata 2, 10 data 2.
    const auto tick = [&] {
        relay.clear();
        session->liveTick();
        session->waitUntilReceived(2s);
        std::vector<std::uint64_t> handles;
        for (const Received& r : relay.commands())
            if (r.command == RelaydCommand::CloseStream)
                handles.push_back(be(r.payload, 0, 8));
        return handles;
    };
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{}) << "tick 1: the spacing";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{8}) << "tick 2: app 1's data";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{7}) << "tick 3: its metadata";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{10}) << "tick 4: app 2's data";
    EXPECT_TRUE(session->lingers()) << "app 2's metadata still lingers";
    EXPECT_EQ(tick(), std::vector<std::uint64_t>{9}) << "tick 5: its metadata";
    EXPECT_FALSE(session->lingers());
    EXPECT_TRUE(session->failure().empty()) << session->failure();
}

namespace {

/// How many STREAMS_SENT the relay got so far (waitUntilReceived() first:
/// a command with a reply, so that every command before it arrived).
std::size_t streamsSentCount(FakeRelay& relay, RelaySession& session) {
    session.waitUntilReceived(2s);
    const auto kinds = relay.commandKinds();
    return static_cast<std::size_t>(
        std::count(kinds.begin(), kinds.end(), RelaydCommand::StreamsSent));
}

} // namespace

// Issue 40, A.6 (and the activation suite's live viewer across a restart):
// a live session publishes each trace whole, with its first data packet.
// A viewer that asked for new streams between a trace's metadata stream's
// STREAMS_SENT and its data streams' got a trace with metadata and no data
// stream, and babeltrace2 2.0.4's lttng-live then asked for new streams in a
// loop without ever reading the data streams that came next (relayd log:
// metadata published 11 ms before the data streams, then GET_NEW_STREAMS
// ~50,000 times a second). A viewer that learned of a trace before its
// metadata held the event classes of its packets crashed (babeltrace2 2.0.4
// sizes its table of sequence lengths once). Either order of streams, and
// the STREAMS_SENT of a whole trace waits for another trace that is partial
// (the relay publishes every stream added).
TEST(RelayRotation, ALiveSessionPublishesEachTraceWholeWithItsFirstDataPacket) {
    for (const bool metadataFirst : {true, false}) {
        SCOPED_TRACE(metadataFirst ? "metadata first" : "data first");
        FakeRelay relay;
        auto session = relay.session();
        session->setLiveLinger({2, 2});
        RelayChunk chunk(session, 0);
        const std::string appA = "ust/pid/app-1-20261207-100000";
        const std::string appB = "ust/pid/app-2-20261207-100000";
        const StreamKind first = metadataFirst ? StreamKind::Metadata : StreamKind::Data;
        const StreamKind second = metadataFirst ? StreamKind::Data : StreamKind::Metadata;
        const auto name = [](StreamKind k) {
            return k == StreamKind::Metadata ? "metadata" : "chan_0";
        };
        std::map<std::string, std::unique_ptr<StreamSink>> sinks;
        sinks["A1"] = chunk.openStream(appA, name(first), first);
        chunk.streamsOpened();
        EXPECT_EQ(streamsSentCount(relay, *session), 0u) << "A has one kind of stream";
        sinks["B1"] = chunk.openStream(appB, name(first), first);
        sinks["B2"] = chunk.openStream(appB, name(second), second);
        chunk.streamsOpened();
        StreamSink& dataB = *sinks[metadataFirst ? "B2" : "B1"];
        IndexEntry e = packet(0);
        e.streamId = 5;
        dataB.write(kBytes.data(), 64, 40, &e);
        EXPECT_EQ(streamsSentCount(relay, *session), 0u)
            << "B is whole and has a packet, but the relay would publish A's stream with it";
        sinks["A2"] = chunk.openStream(appA, name(second), second);
        chunk.streamsOpened();
        EXPECT_EQ(streamsSentCount(relay, *session), 0u) << "both whole, no packet since";
        StreamSink& dataA = *sinks[metadataFirst ? "A2" : "A1"];
        relay.clear();
        dataA.write(kBytes.data(), 64, 40, &e);
        EXPECT_EQ(streamsSentCount(relay, *session), 1u);
        const auto kinds = relay.commandKinds();
        const auto sent = std::find(kinds.begin(), kinds.end(), RelaydCommand::StreamsSent);
        EXPECT_LT(sent - kinds.begin(),
                  std::find(kinds.begin(), kinds.end(), RelaydCommand::SendIndex) - kinds.begin())
            << "published before the packet's index";
        // A stream added to a trace already published goes with its packet.
        auto a3 = chunk.openStream(appA, "chan_1", StreamKind::Data);
        chunk.streamsOpened();
        EXPECT_EQ(streamsSentCount(relay, *session), 1u);
        a3->write(kBytes.data(), 64, 40, &e);
        EXPECT_EQ(streamsSentCount(relay, *session), 2u);
        EXPECT_TRUE(session->failure().empty()) << session->failure();
    }
}

// A trace that stays partial is published after kMaxPublishWaitTicks
// live-timer ticks (its other streams may never come: an app refused, a
// kernel session's metadata alone), or at once when its streams close
// (nothing more will come) or the session ends. A session that is not
// live publishes at once, as before.
TEST(RelayRotation, APartialTraceIsPublishedAfterAWhileOrWhenNothingMoreComes) {
    {
        FakeRelay relay;
        auto session = relay.session();
        session->setLiveLinger({2, 2});
        RelayChunk chunk(session, 0);
        auto lone =
            chunk.openStream("ust/pid/app-1-20261207-100000", "metadata", StreamKind::Metadata);
        chunk.streamsOpened();
        for (unsigned i = 1; i < RelaySession::kMaxPublishWaitTicks; ++i)
            session->liveTick();
        EXPECT_EQ(streamsSentCount(relay, *session), 0u);
        session->liveTick();
        EXPECT_EQ(streamsSentCount(relay, *session), 1u) << "published as it is";
    }
    {
        FakeRelay relay;
        auto session = relay.session();
        session->setLiveLinger({2, 2});
        RelayChunk chunk(session, 0);
        const std::string app = "ust/pid/app-1-20261207-100000";
        auto metadata = chunk.openStream(app, "metadata", StreamKind::Metadata);
        auto idle = chunk.openStream(app, "chan_0", StreamKind::Data);
        chunk.streamsOpened();
        for (unsigned i = 1; i < RelaySession::kMaxPublishWaitTicks; ++i)
            session->liveTick();
        EXPECT_EQ(streamsSentCount(relay, *session), 0u) << "whole, but no packet yet";
        session->liveTick();
        EXPECT_EQ(streamsSentCount(relay, *session), 1u) << "an idle app's trace, in the end";
    }
    {
        FakeRelay relay;
        auto session = relay.session();
        session->setLiveLinger({2, 2});
        RelayChunk chunk(session, 0);
        auto lone = chunk.openStream("ust/pid/app-1-20261207-100000", "chan_0", StreamKind::Data);
        chunk.streamsOpened();
        lone->close(); // it lingers: its trace gets nothing more
        EXPECT_EQ(streamsSentCount(relay, *session), 0u);
        session->liveTick();
        EXPECT_EQ(streamsSentCount(relay, *session), 1u) << "published at the next tick";
    }
    {
        FakeRelay relay;
        auto session = relay.session();
        session->setLiveLinger({2, 2});
        RelayChunk chunk(session, 0);
        auto lone = chunk.openStream("kernel", "metadata", StreamKind::Metadata);
        chunk.streamsOpened();
        session->closeLingering(); // the session's end
        EXPECT_EQ(streamsSentCount(relay, *session), 1u);
    }
    {
        FakeRelay relay;
        auto session = relay.session(); // not live
        RelayChunk chunk(session, 0);
        auto lone = chunk.openStream("ust/uid/0/64-bit", "metadata", StreamKind::Metadata);
        chunk.streamsOpened();
        EXPECT_EQ(streamsSentCount(relay, *session), 1u);
    }
}

// The relay publishes every stream added with a STREAMS_SENT, not only the
// trace whose packet asked for it: a trace whose first packet has not come
// (its metadata may not declare its events yet) holds the publication back,
// until it sends one or waited kMaxPublishWaitTicks ticks. Published
// with another app's first packet, such traces crashed babeltrace2 2.0.4 in
// 10 of 14 runs of 30 per-PID apps started at once (a fresh user's case).
TEST(RelayRotation, ATraceWithoutItsFirstPacketIsNotPublishedWithAnothers) {
    FakeRelay relay;
    auto session = relay.session();
    session->setLiveLinger({2, 2});
    RelayChunk chunk(session, 0);
    std::vector<std::unique_ptr<StreamSink>> sinks;
    for (const char* app : {"ust/pid/app-1-20261207-100000", "ust/pid/app-2-20261207-100000"}) {
        sinks.push_back(chunk.openStream(app, "metadata", StreamKind::Metadata));
        sinks.push_back(chunk.openStream(app, "chan_0", StreamKind::Data));
    }
    chunk.streamsOpened();
    IndexEntry e = packet(0);
    e.streamId = 5;
    sinks[1]->write(kBytes.data(), 64, 40, &e); // app 1's first packet
    EXPECT_EQ(streamsSentCount(relay, *session), 0u) << "app 2 has sent nothing yet";
    session->liveTick();
    EXPECT_EQ(streamsSentCount(relay, *session), 0u);
    sinks[3]->write(kBytes.data(), 64, 40, &e); // app 2's
    EXPECT_EQ(streamsSentCount(relay, *session), 1u) << "both ready";

    // An app that stays idle: published once it waited.
    auto metadata =
        chunk.openStream("ust/pid/app-3-20261207-100000", "metadata", StreamKind::Metadata);
    auto idle = chunk.openStream("ust/pid/app-3-20261207-100000", "chan_0", StreamKind::Data);
    chunk.streamsOpened();
    for (unsigned i = 1; i < RelaySession::kMaxPublishWaitTicks; ++i)
        session->liveTick();
    EXPECT_EQ(streamsSentCount(relay, *session), 1u);
    session->liveTick();
    EXPECT_EQ(streamsSentCount(relay, *session), 2u);
    EXPECT_TRUE(session->failure().empty()) << session->failure();
}
