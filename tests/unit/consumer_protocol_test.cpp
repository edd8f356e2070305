// The daemon<->consumer protocol codec and the fd passing under it.
#include "common/consumer_protocol.hpp"
#include "common/fd_passing.hpp"
#include "common/unique_fd.hpp"

#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace cp = tracectl::consumer_protocol;
using tracectl::UniqueFd;

namespace {

cp::CreateChannel sampleCreate() {
    cp::CreateChannel c;
    c.key = 0x0102030405060708ULL;
    c.kind = cp::ChannelKind::Data;
    c.outputDir = "ust/uid/1000/64-bit";
    c.name = "channel0";
    c.subbufSize = 1 << 20;
    c.subbufCount = 4;
    c.overwrite = true;
    c.switchTimerUsec = 1'000'000;
    c.readTimerUsec = 200;
    c.monitorTimerUsec = 5;
    c.blockingTimeoutUsec = -1;
    c.chanId = 7;
    for (std::size_t i = 0; i < c.traceUuid.size(); ++i)
        c.traceUuid[i] = static_cast<std::uint8_t>(0xa0 + i);
    return c;
}

cp::CreateKernelChannel sampleKernelCreate() {
    cp::CreateKernelChannel c;
    c.key = 21;
    c.outputDir = "kernel";
    c.name = "channel0";
    c.packetSize = 1 << 18;
    c.streamId = 2;
    c.contextMask = 0x11;
    c.statedump = true;
    c.traceUuid[3] = 7;
    c.cpus = {0, 1, 3};
    return c;
}

std::vector<cp::Message> everyMessage() {
    return {
        cp::Hello{cp::kVersion, "0.1.0"},
        cp::HelloReply{cp::kVersion, 4242, "0.1.0"},
        cp::Adopt{cp::kVersion, "0.1.0"},
        cp::AdoptReply{cp::kVersion, 4242, "0.1.0", 9, 0, "", 1796162246, 4, ""},
        cp::AdoptReply{cp::kVersion, 4242, "0.1.0", 12, 2, "20261204T203000+0000-2", 1796162300, 0,
                       ""},
        cp::AdoptReply{cp::kVersion, 4242, "0.1.0", 3, 1, "", 1796162300, 2,
                       "host/net-20261204-203000"},
        sampleCreate(),
        cp::ChannelCreated{9, 64},
        cp::PushMetadata{1, 4096, "/* CTF 1.8 */\ntrace { major = 1; };\n"},
        cp::FlushChannel{3},
        cp::DestroyChannel{4},
        cp::Shutdown{},
        cp::WatchChunkSize{0},
        cp::WatchChunkSize{2u << 20},
        cp::Ok{},
        cp::ErrorReply{cp::ErrorKind::UnknownChannel, "no channel 5"},
        cp::ErrorReply{cp::ErrorKind::Resources, "Too many open files"},
        cp::Rotate{12, "", "20261130T031700+0000-1", "archives/a-b-0"},
        cp::Rotate{13, "c-1", "d-2", "archives/c-d-1"},
        cp::Rotate{14, "d-2", "e-3", "archives/d-e-2", true},
        cp::Rotate{15, "e-3", "f-4", "archives/e-f-3", false, 3, 1764472620},
        cp::ClearBuffers{},
        cp::RotationCompleted{12, true, ""},
        cp::RotationCompleted{13, false, "stream x: EIO"},
        cp::RecordSnapshot{7, 0},
        cp::RecordSnapshot{8, 3},
        cp::DeclareLayouts{5, cp::LayoutAbi{}, std::string("\x01\x00\x02", 3)},
        cp::DeclareLayouts{6, cp::LayoutAbi{32, 8, 16, 32, 32, 32, true}, ""},
        cp::Statistics{123456789, {}},
        sampleKernelCreate(),
        cp::DeclareKernelEvents{21, std::string("\x01\x00\x00\x00", 4)},
        cp::AttachIpProbes{22, 9, 10},
        cp::AttachSyscallStrings{23},
        cp::ProducerGone{24, 4321},
        cp::AttachRelayd{7, 13, 1000000, 0, 1796162246, ""},
        cp::AttachRelayd{7, 13, 0, 0, 1796162246, "host/net-20261204-203000"},
        cp::OutputFailed{"the relay at 127.0.0.1:5342 closed the connection"},
        cp::RecordSnapshotToRelay{3, 0, 9, 13, 2, 1796162246, "snapshot-1-20261204-140000-2"},
        cp::Statistics{
            5, {cp::ChannelFigures{1, 2, 3, 4, 5, 6, 7}, cp::ChannelFigures{9, 0, 0, 0, 0, 0, 0}}},
    };
}

std::vector<std::byte> bytesOf(std::initializer_list<int> values) {
    std::vector<std::byte> out;
    for (int v : values)
        out.push_back(static_cast<std::byte>(v));
    return out;
}

// A frame whose header is valid and whose payload is `payload`.
std::vector<std::byte> frameWith(cp::MessageType type, const std::vector<std::byte>& payload) {
    std::vector<std::byte> f = bytesOf({'T', 'C', 'C', 'P'});
    const auto t = static_cast<std::uint16_t>(type);
    f.push_back(static_cast<std::byte>(t & 0xff));
    f.push_back(static_cast<std::byte>(t >> 8));
    f.push_back(std::byte{0});
    f.push_back(std::byte{0});
    const auto n = static_cast<std::uint32_t>(payload.size());
    for (int i = 0; i < 4; ++i)
        f.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xff));
    for (int i = 0; i < 4; ++i) // request id 0
        f.push_back(std::byte{0});
    f.insert(f.end(), payload.begin(), payload.end());
    return f;
}

std::vector<std::byte> payloadOf(const std::vector<std::byte>& frame) {
    return {frame.begin() + cp::kHeaderSize, frame.end()};
}

std::size_t openFdCount() {
    std::size_t n = 0;
    DIR* d = opendir("/proc/self/fd");
    if (d == nullptr)
        return 0;
    while (readdir(d) != nullptr)
        ++n;
    closedir(d);
    return n;
}

struct SocketPair {
    UniqueFd a, b;
    SocketPair() {
        int fds[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
            throw std::system_error(errno, std::generic_category(), "socketpair");
        a.reset(fds[0]);
        b.reset(fds[1]);
    }
};

} // namespace

// ---- codec ------------------------------------------------------------------

TEST(ConsumerProtocol, EveryMessageRoundTrips) {
    for (const cp::Message& m : everyMessage()) {
        const std::vector<std::byte> frame = cp::encode(m);
        const cp::FrameHeader h = cp::decodeHeader(frame.data());
        EXPECT_EQ(h.type, cp::typeOf(m));
        EXPECT_EQ(h.length, frame.size() - cp::kHeaderSize);
        EXPECT_EQ(cp::decode(frame), m) << cp::messageName(cp::typeOf(m));
    }
}

TEST(ConsumerProtocol, RequestIdsTravelInTheHeader) {
    const auto frame = cp::encode(cp::Ok{}, 77);
    EXPECT_EQ(cp::decodeHeader(frame.data()).request, 77u);
    EXPECT_EQ(cp::decodeHeader(cp::encode(cp::Ok{}).data()).request, 0u);
    SocketPair sp;
    cp::writeMessage(sp.a.get(), cp::FlushChannel{3}, 5);
    cp::writeMessage(sp.a.get(), cp::Ok{}, 0xFFFFFFFF);
    const auto first = cp::readFrame(sp.b.get());
    ASSERT_TRUE(first);
    EXPECT_EQ(first->request, 5u);
    EXPECT_EQ(first->message, cp::Message(cp::FlushChannel{3}));
    cp::MessageReader reader;
    ASSERT_EQ(reader.readFrom(sp.b.get()), cp::MessageReader::Status::Complete);
    const cp::Frame second = reader.takeFrame();
    EXPECT_EQ(second.request, 0xFFFFFFFFu);
    EXPECT_EQ(second.message, cp::Message(cp::Ok{}));
}

TEST(ConsumerProtocol, WireLayoutIsLittleEndian) {
    const std::vector<std::byte> frame =
        cp::encode(cp::FlushChannel{0x1122334455667788ULL}, 0xA1B2C3D4);
    EXPECT_EQ(frame,
              bytesOf({'T',  'C',  'C',  'P',  0x04, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
                       0xD4, 0xC3, 0xB2, 0xA1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}));
    const std::vector<std::byte> error = cp::encode(cp::ErrorReply{cp::ErrorKind::Io, "ab"});
    EXPECT_EQ(payloadOf(error), bytesOf({0x06, 0, 0, 0, 0x02, 0, 0, 0, 'a', 'b'}));
}

TEST(ConsumerProtocol, CreateChannelFieldOrder) {
    const std::vector<std::byte> p = payloadOf(cp::encode(sampleCreate()));
    // key(8) kind(1) dir(4+19) name(4+8) subbuf(8) count(8) overwrite(1)
    // switch(4) read(4) monitor(4) blocking(8) chanId(4) uuid(16)
    ASSERT_EQ(p.size(), 8u + 1 + 23 + 12 + 8 + 8 + 1 + 4 + 4 + 4 + 8 + 4 + 16);
    EXPECT_EQ(p[0], std::byte{0x08});
    EXPECT_EQ(p[8], std::byte{0});  // kind Data
    EXPECT_EQ(p[9], std::byte{19}); // outputDir length
    EXPECT_EQ(p[13], std::byte{'u'});
    std::size_t at = 8 + 1 + 23 + 12 + 8 + 8;
    EXPECT_EQ(p[at], std::byte{1}); // overwrite
    at += 1 + 4 + 4 + 4;
    for (int i = 0; i < 8; ++i) // blocking -1: all ones
        EXPECT_EQ(p[at + static_cast<std::size_t>(i)], std::byte{0xff});
    EXPECT_EQ(p.back(), std::byte{0xaf}); // last uuid byte
}

TEST(ConsumerProtocol, RejectsBadHeaders) {
    std::vector<std::byte> good = cp::encode(cp::Ok{});
    auto bad = good;
    bad[0] = std::byte{'X'};
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "magic";
    bad = good;
    bad[4] = std::byte{0x07}; // type 7 does not exist
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "type";
    bad = good;
    bad[4] = std::byte{0x00};
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "type 0";
    bad = good;
    bad[6] = std::byte{1};
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "flags";
    bad = good;
    bad[7] = std::byte{0x80};
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "flags high byte";
    bad = good;
    bad[10] = std::byte{0x10}; // length exactly kMaxPayload (1 MiB): the largest allowed
    EXPECT_EQ(cp::decodeHeader(bad.data()).length, cp::kMaxPayload);
    bad[8] = std::byte{0x01}; // one byte more
    EXPECT_THROW(cp::decodeHeader(bad.data()), cp::ProtocolError) << "length";
    bad = good;
    bad.resize(cp::kHeaderSize - 1);
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "short header";
    bad = good;
    bad.push_back(std::byte{0});
    EXPECT_THROW(cp::decode(bad), cp::ProtocolError) << "frame longer than its header says";
}

TEST(ConsumerProtocol, RejectsEveryTruncatedOrExtendedPayload) {
    for (const cp::Message& m : everyMessage()) {
        const std::vector<std::byte> payload = payloadOf(cp::encode(m));
        const cp::MessageType type = cp::typeOf(m);
        for (std::size_t len = 0; len < payload.size(); ++len)
            EXPECT_THROW(cp::decodePayload(type, payload.data(), len), cp::ProtocolError)
                << cp::messageName(type) << " cut at " << len;
        std::vector<std::byte> longer = payload;
        longer.push_back(std::byte{0});
        EXPECT_THROW(cp::decodePayload(type, longer.data(), longer.size()), cp::ProtocolError)
            << cp::messageName(type) << " with a trailing byte";
    }
}

TEST(ConsumerProtocol, RejectsOutOfRangeEnumsAndBools) {
    std::vector<std::byte> p = payloadOf(cp::encode(sampleCreate()));
    auto bad = p;
    bad[8] = std::byte{2}; // kind
    EXPECT_THROW(cp::decodePayload(cp::MessageType::CreateChannel, bad.data(), bad.size()),
                 cp::ProtocolError);
    bad = p;
    bad[8 + 1 + 23 + 12 + 8 + 8] = std::byte{2}; // overwrite
    EXPECT_THROW(cp::decodePayload(cp::MessageType::CreateChannel, bad.data(), bad.size()),
                 cp::ProtocolError);

    std::vector<std::byte> e = payloadOf(cp::encode(cp::ErrorReply{cp::ErrorKind::Io, "x"}));
    for (int code : {0, 9, 0xff}) {
        e[0] = static_cast<std::byte>(code);
        EXPECT_THROW(cp::decodePayload(cp::MessageType::Error, e.data(), e.size()),
                     cp::ProtocolError)
            << code;
    }
}

TEST(ConsumerProtocol, RejectsBadStrings) {
    // A string length that claims more bytes than the payload has.
    std::vector<std::byte> p = bytesOf({1, 0, 0, 0, 0xff, 0xff, 0, 0, 'a'});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Hello, p.data(), p.size()), cp::ProtocolError);
    // A NUL inside.
    p = payloadOf(cp::encode(cp::Hello{cp::kVersion, "abc"}));
    p[9] = std::byte{0};
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Hello, p.data(), p.size()), cp::ProtocolError);
    // Too long (the limit is checked before the bytes are looked at).
    p = bytesOf({1, 0, 0, 0});
    const auto n = static_cast<std::uint32_t>(cp::kMaxText + 1);
    for (int i = 0; i < 4; ++i)
        p.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xff));
    p.resize(p.size() + n, std::byte{'a'});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Hello, p.data(), p.size()), cp::ProtocolError);
    // And encode() refuses to produce any of that.
    EXPECT_THROW(cp::encode(cp::Hello{cp::kVersion, std::string("a\0b", 3)}), cp::ProtocolError);
    EXPECT_THROW(cp::encode(cp::ErrorReply{cp::ErrorKind::Io, std::string(cp::kMaxText + 1, 'x')}),
                 cp::ProtocolError);
    EXPECT_THROW(cp::encode(cp::PushMetadata{1, 0, std::string(cp::kMaxMetadataChunk + 1, 'x')}),
                 cp::ProtocolError);
    EXPECT_NO_THROW(cp::encode(cp::PushMetadata{1, 0, std::string(cp::kMaxMetadataChunk, 'x')}));
}

TEST(ConsumerProtocol, AdoptReplyChunkMustBeTheRootOrASafeFolder) {
    for (const char* dir : {"/ust", "../x", "a/../../b", "a\nb"}) {
        cp::AdoptReply r{cp::kVersion, 1, "0.1.0", 1, 1, dir, 0, 0, ""};
        EXPECT_THROW(cp::encode(r), cp::ProtocolError) << dir;
    }
    EXPECT_NO_THROW(cp::encode(cp::AdoptReply{cp::kVersion, 1, "0.1.0", 1, 0, "", 0, 0, ""}));
}

TEST(ConsumerProtocol, RejectsUnsafeDirectoriesAndNames) {
    for (const char* dir :
         {"", "/ust", "ust/", "ust//uid", "./ust", "ust/..", "../x", "ust/./a", "a\nb", "a\x7f"}) {
        EXPECT_FALSE(cp::isSafeRelativeDir(dir)) << dir;
        cp::CreateChannel c = sampleCreate();
        c.outputDir = dir;
        EXPECT_THROW(cp::encode(c), cp::ProtocolError) << dir;
        // Build the frame by hand to show the decoder refuses it too.
        cp::CreateChannel ok = sampleCreate();
        std::vector<std::byte> p = payloadOf(cp::encode(ok));
        std::vector<std::byte> q(p.begin(), p.begin() + 9);
        const std::string d = dir;
        for (int i = 0; i < 4; ++i)
            q.push_back(static_cast<std::byte>((d.size() >> (8 * i)) & 0xff));
        for (char ch : d)
            q.push_back(static_cast<std::byte>(ch));
        q.insert(q.end(), p.begin() + 9 + 4 + 19, p.end());
        EXPECT_THROW(cp::decodePayload(cp::MessageType::CreateChannel, q.data(), q.size()),
                     cp::ProtocolError)
            << dir;
    }
    EXPECT_FALSE(cp::isSafeRelativeDir(std::string(cp::kMaxOutputDir + 1, 'a')));
    EXPECT_TRUE(cp::isSafeRelativeDir("ust/pid/my app-12-20240101-101010"));
    EXPECT_TRUE(cp::isSafeRelativeDir("kernel"));

    for (const char* name : {"", ".hidden", ".", "..", "a/b", "tab\there"}) {
        EXPECT_FALSE(cp::isSafeChannelName(name)) << name;
        cp::CreateChannel c = sampleCreate();
        c.name = name;
        EXPECT_THROW(cp::encode(c), cp::ProtocolError) << name;
    }
    EXPECT_FALSE(cp::isSafeChannelName(std::string(cp::kMaxChannelName + 1, 'c')));
    EXPECT_TRUE(cp::isSafeChannelName("my-channel.v2"));
}

TEST(ConsumerProtocol, RejectsUnusableBufferGeometry) {
    const auto rejects = [](auto mutate) {
        cp::CreateChannel c = sampleCreate();
        mutate(c);
        EXPECT_THROW(cp::encode(c), cp::ProtocolError);
        // Same bytes built without encode()'s check: patch a valid frame.
        cp::CreateChannel valid = sampleCreate();
        std::vector<std::byte> p = payloadOf(cp::encode(valid));
        const std::size_t sizeAt = 8 + 1 + 23 + 12;
        for (int i = 0; i < 8; ++i) {
            p[sizeAt + static_cast<std::size_t>(i)] =
                static_cast<std::byte>((c.subbufSize >> (8 * i)) & 0xff);
            p[sizeAt + 8 + static_cast<std::size_t>(i)] =
                static_cast<std::byte>((c.subbufCount >> (8 * i)) & 0xff);
            p[sizeAt + 8 + 8 + 1 + 12 + static_cast<std::size_t>(i)] = static_cast<std::byte>(
                (static_cast<std::uint64_t>(c.blockingTimeoutUsec) >> (8 * i)) & 0xff);
        }
        EXPECT_THROW(cp::decodePayload(cp::MessageType::CreateChannel, p.data(), p.size()),
                     cp::ProtocolError);
    };
    rejects([](cp::CreateChannel& c) { c.subbufSize = 0; });
    rejects([](cp::CreateChannel& c) { c.subbufSize = 2048; });
    rejects([](cp::CreateChannel& c) { c.subbufSize = 12288; });
    rejects([](cp::CreateChannel& c) { c.subbufSize = std::uint64_t{1} << 33; });
    rejects([](cp::CreateChannel& c) { c.subbufCount = 0; });
    rejects([](cp::CreateChannel& c) { c.subbufCount = 3; });
    rejects([](cp::CreateChannel& c) { c.subbufCount = std::uint64_t{1} << 21; });
    rejects([](cp::CreateChannel& c) { c.blockingTimeoutUsec = -2; });
}

TEST(ConsumerProtocol, RotateLayoutAndChecks) {
    EXPECT_EQ(payloadOf(cp::encode(cp::Rotate{0x0102, "", "n", "a/b"})),
              bytesOf({0x02, 0x01, 0,   0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'n', 3, 0, 0, 0,
                       'a',  '/',  'b', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   0, 0, 0}));
    // Version 10: the relay's chunk index and the boundary's time, u64s.
    EXPECT_EQ(
        payloadOf(cp::encode(cp::Rotate{1, "", "n", "a", false, 0x0203, 0x69001234})),
        bytesOf({1, 0,   0, 0,    0,    0, 0, 0, 0, 0, 0, 0,    1,    0, 0,    0, 'n', 1, 0, 0,
                 0, 'a', 0, 0x03, 0x02, 0, 0, 0, 0, 0, 0, 0x34, 0x12, 0, 0x69, 0, 0,   0, 0}));
    EXPECT_EQ(payloadOf(cp::encode(cp::RotationCompleted{7, true, "m"})),
              bytesOf({7, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 'm'}));
    // Unsafe or colliding folders are refused both ways.
    const std::vector<cp::Rotate> bad{
        {1, "../x", "n", "a"},  {1, "", "", "a"},   {1, "", "n", "/a"},
        {1, "", "n", "a/../b"}, {1, "o", "o", "a"}, {1, "", "n", "n"},
    };
    for (const cp::Rotate& r : bad) {
        EXPECT_THROW(cp::encode(r), cp::ProtocolError) << r.oldChunk << " " << r.newChunk;
        std::vector<std::byte> p = bytesOf({1, 0, 0, 0, 0, 0, 0, 0});
        for (const std::string* s : {&r.oldChunk, &r.newChunk, &r.archive}) {
            for (int i = 0; i < 4; ++i)
                p.push_back(static_cast<std::byte>((s->size() >> (8 * i)) & 0xff));
            for (char ch : *s)
                p.push_back(static_cast<std::byte>(ch));
        }
        p.push_back(std::byte{0});           // discard
        p.insert(p.end(), 16, std::byte{0}); // chunkIndex, boundaryTime
        EXPECT_THROW(cp::decodePayload(cp::MessageType::Rotate, p.data(), p.size()),
                     cp::ProtocolError);
    }
    std::vector<std::byte> done = payloadOf(cp::encode(cp::RotationCompleted{7, true, ""}));
    done[8] = std::byte{2};
    EXPECT_THROW(cp::decodePayload(cp::MessageType::RotationCompleted, done.data(), done.size()),
                 cp::ProtocolError);
    EXPECT_EQ(cp::messageName(cp::MessageType::Rotate), "Rotate");
    EXPECT_EQ(cp::messageName(cp::MessageType::RotationCompleted), "RotationCompleted");
    EXPECT_EQ(cp::kVersion, 19u);
}

TEST(ConsumerProtocol, RotateCarriesDiscardAsOneStrictBoolAndClearBuffersNothing) {
    const cp::Rotate clear{3, "", "c-1", "archives/a-b-0", true};
    std::vector<std::byte> p = payloadOf(cp::encode(clear));
    ASSERT_GT(p.size(), 17u);
    const std::size_t flag = p.size() - 17; // then u64 chunkIndex, u64 boundaryTime
    EXPECT_EQ(p[flag], std::byte{1});
    EXPECT_EQ(cp::decodePayload(cp::MessageType::Rotate, p.data(), p.size()), cp::Message(clear));
    p[flag] = std::byte{2};
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Rotate, p.data(), p.size()), cp::ProtocolError);
    p[flag] = std::byte{1};
    p.resize(p.size() - 16); // a version 8/9 Rotate, without the chunk index and time
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Rotate, p.data(), p.size()), cp::ProtocolError);
    p.pop_back(); // a version 7 Rotate, without the flag
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Rotate, p.data(), p.size()), cp::ProtocolError);
    EXPECT_TRUE(payloadOf(cp::encode(cp::ClearBuffers{})).empty());
    const std::byte extra{0};
    EXPECT_THROW(cp::decodePayload(cp::MessageType::ClearBuffers, &extra, 1), cp::ProtocolError);
    EXPECT_EQ(cp::messageName(cp::MessageType::ClearBuffers), "ClearBuffers");
}

TEST(ConsumerProtocol, WatchChunkSizeIsOneLittleEndianU64) {
    const auto frame = cp::encode(cp::WatchChunkSize{0x0102030405060708ULL});
    EXPECT_EQ(payloadOf(frame), bytesOf({8, 7, 6, 5, 4, 3, 2, 1}));
    const std::byte truncated[4]{};
    EXPECT_THROW(cp::decodePayload(cp::MessageType::WatchChunkSize, truncated, 4),
                 cp::ProtocolError);
    EXPECT_EQ(cp::messageName(cp::MessageType::WatchChunkSize), "WatchChunkSize");
}

TEST(ConsumerProtocol, CreateKernelChannelRejectsWhatItCannotRead) {
    const auto refused = [](auto change) {
        cp::CreateKernelChannel c = sampleKernelCreate();
        change(c);
        EXPECT_THROW(cp::encode(c), cp::ProtocolError);
    };
    refused([](auto& c) { c.outputDir = "../kernel"; });
    refused([](auto& c) { c.name = "a/b"; });
    refused([](auto& c) { c.pageSize = 3000; });
    refused([](auto& c) { c.packetSize = 2048; });
    refused([](auto& c) { c.commitOffset = 4092; });
    refused([](auto& c) { c.timestampSize = 2; });
    refused([](auto& c) { c.dataOffset = 4096; });
    refused([](auto& c) { c.readTimerUsec = 10; });
    refused([](auto& c) { c.contextMask = 0x80; });
    // A stack type without its call stack context, or the context without it.
    refused([](auto& c) { c.kernelStackType = 4; });
    refused([](auto& c) { c.contextMask |= 0x20; });
    refused([](auto& c) { c.userStackType = 13; });
    refused([](auto& c) { c.cpus = {}; });
    refused([](auto& c) { c.cpus = {1, 1}; });
    refused([](auto& c) {
        c.kind = cp::ChannelKind::Metadata;
        c.cpus = {0};
    });
    cp::CreateKernelChannel metadata = sampleKernelCreate();
    metadata.kind = cp::ChannelKind::Metadata;
    metadata.cpus = {};
    EXPECT_EQ(std::get<cp::CreateKernelChannel>(cp::decode(cp::encode(metadata))), metadata);
}

TEST(ConsumerProtocol, AttachSyscallStringsIsOneLittleEndianKey) {
    const auto frame = cp::encode(cp::AttachSyscallStrings{0x0102030405060708ULL});
    const std::vector<std::byte> payload = payloadOf(frame);
    ASSERT_EQ(payload.size(), 8u);
    EXPECT_EQ(payload[0], std::byte{0x08});
    EXPECT_EQ(payload[7], std::byte{0x01});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::AttachSyscallStrings, payload.data(), 4),
                 cp::ProtocolError);
    EXPECT_EQ(cp::messageName(cp::MessageType::AttachSyscallStrings), "AttachSyscallStrings");
}

TEST(ConsumerProtocol, ProducerGoneIsAKeyThenAPid) {
    const auto frame = cp::encode(cp::ProducerGone{0x0102030405060708ULL, 0x0A0B0C0D});
    const std::vector<std::byte> payload = payloadOf(frame);
    ASSERT_EQ(payload.size(), 12u);
    EXPECT_EQ(payload[0], std::byte{0x08});
    EXPECT_EQ(payload[8], std::byte{0x0D});
    EXPECT_EQ(payload[11], std::byte{0x0A});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::ProducerGone, payload.data(), 8),
                 cp::ProtocolError);
    EXPECT_EQ(cp::messageName(cp::MessageType::ProducerGone), "ProducerGone");
}

TEST(ConsumerProtocol, AttachIpProbesLayoutAndChecks) {
    const auto frame = cp::encode(cp::AttachIpProbes{0x0102030405060708, 0x0A0B, 0x0C0D});
    EXPECT_EQ(payloadOf(frame), bytesOf({8, 7, 6, 5, 4, 3, 2, 1, 0x0B, 0x0A, 0x0D, 0x0C}));
    // One id for both probes, or the extended header's mark, cannot be read back.
    EXPECT_THROW(cp::encode(cp::AttachIpProbes{1, 7, 7}), cp::ProtocolError);
    EXPECT_THROW(cp::encode(cp::AttachIpProbes{1, 0xFFFF, 4}), cp::ProtocolError);
    const auto same = bytesOf({1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 5, 0});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::AttachIpProbes, same.data(), same.size()),
                 cp::ProtocolError);
}

TEST(ConsumerProtocol, AttachRelaydLayoutAndChecks) {
    const auto frame = cp::encode(cp::AttachRelayd{0x0102, 13, 0x0304, 5, 6, "h/s"});
    EXPECT_EQ(payloadOf(frame),
              bytesOf({0x02, 0x01, 0, 0, 0, 0, 0, 0, 13, 0, 0,   0,   0x04, 0x03, 0,
                       0,    0,    0, 0, 0, 5, 0, 0, 0,  0, 0,   0,   0,    6,    0,
                       0,    0,    0, 0, 0, 0, 3, 0, 0,  0, 'h', '/', 's'}));
    EXPECT_EQ(cp::messageName(cp::MessageType::AttachRelayd), "AttachRelayd");
    // A relay older than 2.4 has no live mode nor anything since.
    EXPECT_THROW(cp::encode(cp::AttachRelayd{1, 3, 0, 0, 0, ""}), cp::ProtocolError);
    const std::vector<std::byte> cut = bytesOf({1, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::AttachRelayd, cut.data(), cut.size()),
                 cp::ProtocolError);
}

TEST(ConsumerProtocol, RecordSnapshotLayout) {
    EXPECT_EQ(payloadOf(cp::encode(cp::RecordSnapshot{0x0102, 5})),
              bytesOf({0x02, 0x01, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}));
    const std::vector<std::byte> shortPayload = bytesOf({1, 0, 0, 0, 0, 0, 0, 0});
    EXPECT_THROW(cp::decodePayload(cp::MessageType::RecordSnapshot, shortPayload.data(),
                                   shortPayload.size()),
                 cp::ProtocolError);
    EXPECT_EQ(cp::messageName(cp::MessageType::RecordSnapshot), "RecordSnapshot");
}

TEST(ConsumerProtocol, RecordSnapshotToRelayLayoutAndChecks) {
    const auto frame = cp::encode(cp::RecordSnapshotToRelay{0x0102, 5, 9, 13, 2, 6, "s-1"});
    EXPECT_EQ(payloadOf(frame),
              bytesOf({0x02, 0x01, 0, 0, 0, 0, 0, 0,  5, 0, 0, 0, 0, 0, 0,   0,   9,
                       0,    0,    0, 0, 0, 0, 0, 13, 0, 0, 0, 2, 0, 0, 0,   0,   0,
                       0,    0,    6, 0, 0, 0, 0, 0,  0, 0, 3, 0, 0, 0, 's', '-', '1'}));
    EXPECT_EQ(cp::messageName(cp::MessageType::RecordSnapshotToRelay), "RecordSnapshotToRelay");
    // The chunk's name is one folder on the relay, never a path out of it.
    for (const char* bad : {"", "..", "a/b", "/abs", "."})
        EXPECT_THROW(cp::encode(cp::RecordSnapshotToRelay{1, 0, 1, 13, 0, 0, bad}),
                     cp::ProtocolError)
            << bad;
    EXPECT_THROW(cp::encode(cp::RecordSnapshotToRelay{1, 0, 1, 3, 0, 0, "s"}), cp::ProtocolError);
    std::vector<std::byte> cut = payloadOf(frame);
    cut.pop_back();
    EXPECT_THROW(cp::decodePayload(cp::MessageType::RecordSnapshotToRelay, cut.data(), cut.size()),
                 cp::ProtocolError);
}

TEST(ConsumerProtocol, NamesAndErrorCodes) {
    EXPECT_EQ(cp::messageName(cp::MessageType::PushMetadata), "PushMetadata");
    EXPECT_EQ(cp::messageName(static_cast<cp::MessageType>(0x55)), "unknown");
    EXPECT_EQ(cp::toErrorCode(cp::ErrorKind::InvalidArgument),
              tracectl::ErrorCode::InvalidArgument);
    EXPECT_EQ(cp::toErrorCode(cp::ErrorKind::Io), tracectl::ErrorCode::Failed);
    EXPECT_EQ(cp::toErrorCode(cp::ErrorKind::Resources), tracectl::ErrorCode::LimitExceeded);
}

// ---- over a socket --------------------------------------------------------------

TEST(ConsumerProtocol, ReadMessageReadsExactlyOneFrame) {
    SocketPair sp;
    cp::writeMessage(sp.a.get(), cp::DestroyChannel{12});
    const char tail[] = "raw ust-ctl bytes";
    ASSERT_EQ(write(sp.a.get(), tail, sizeof tail), static_cast<ssize_t>(sizeof tail));
    EXPECT_EQ(cp::readMessage(sp.b.get()), cp::Message(cp::DestroyChannel{12}));
    char got[sizeof tail] = {};
    ASSERT_EQ(read(sp.b.get(), got, sizeof got), static_cast<ssize_t>(sizeof got));
    EXPECT_STREQ(got, tail);
}

TEST(ConsumerProtocol, ReadMessageEofHandling) {
    {
        SocketPair sp;
        sp.a.reset();
        EXPECT_EQ(cp::readMessage(sp.b.get()), std::nullopt);
    }
    {
        SocketPair sp;
        const auto frame = cp::encode(cp::Hello{cp::kVersion, "x"});
        ASSERT_EQ(write(sp.a.get(), frame.data(), 5), 5);
        sp.a.reset();
        EXPECT_THROW(cp::readMessage(sp.b.get()), cp::TruncatedFrame);
    }
    {
        SocketPair sp;
        const auto frame = cp::encode(cp::Hello{cp::kVersion, "x"});
        ASSERT_EQ(write(sp.a.get(), frame.data(), frame.size() - 1),
                  static_cast<ssize_t>(frame.size() - 1));
        sp.a.reset();
        EXPECT_THROW(cp::readMessage(sp.b.get()), cp::TruncatedFrame);
    }
}

TEST(ConsumerProtocol, FdAttachedToAFrameIsRejectedAndClosed) {
    SocketPair sp;
    const std::size_t before = openFdCount();
    const auto frame = cp::encode(cp::Ok{});
    UniqueFd extra(open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int fds[] = {extra.get()};
    tracectl::sendWithFds(sp.a.get(), frame, fds);
    extra.reset();
    EXPECT_THROW(cp::readMessage(sp.b.get()), cp::ProtocolError);
    EXPECT_EQ(openFdCount(), before);
}

TEST(ConsumerProtocol, MessageReaderAssemblesPartialFrames) {
    SocketPair sp;
    cp::MessageReader reader;
    EXPECT_EQ(reader.readFrom(sp.b.get()), cp::MessageReader::Status::WouldBlock);
    const auto f1 = cp::encode(cp::PushMetadata{2, 0, "typealias integer"});
    const auto f2 = cp::encode(cp::Shutdown{});
    std::vector<std::byte> all = f1;
    all.insert(all.end(), f2.begin(), f2.end());
    std::vector<cp::Message> got;
    for (std::byte b : all) {
        ASSERT_EQ(write(sp.a.get(), &b, 1), 1);
        for (;;) {
            const auto st = reader.readFrom(sp.b.get());
            if (st == cp::MessageReader::Status::Complete) {
                got.push_back(reader.take());
                continue;
            }
            ASSERT_EQ(st, cp::MessageReader::Status::WouldBlock);
            break;
        }
    }
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], cp::Message(cp::PushMetadata{2, 0, "typealias integer"}));
    EXPECT_EQ(got[1], cp::Message(cp::Shutdown{}));
    EXPECT_FALSE(reader.midFrame());
    sp.a.reset();
    EXPECT_EQ(reader.readFrom(sp.b.get()), cp::MessageReader::Status::Eof);
}

TEST(ConsumerProtocol, MessageReaderRejectsGarbageAndTruncation) {
    {
        SocketPair sp;
        cp::MessageReader reader;
        const auto f = frameWith(cp::MessageType::Ok, bytesOf({1}));
        ASSERT_EQ(write(sp.a.get(), f.data(), f.size()), static_cast<ssize_t>(f.size()));
        EXPECT_THROW(reader.readFrom(sp.b.get()), cp::ProtocolError);
    }
    {
        SocketPair sp;
        cp::MessageReader reader;
        const char junk[] = "GET / HTTP/1.1\r\n";
        ASSERT_EQ(write(sp.a.get(), junk, sizeof junk), static_cast<ssize_t>(sizeof junk));
        EXPECT_THROW(reader.readFrom(sp.b.get()), cp::ProtocolError);
    }
    {
        SocketPair sp;
        cp::MessageReader reader;
        const auto f = cp::encode(cp::FlushChannel{1});
        ASSERT_EQ(write(sp.a.get(), f.data(), 14), 14);
        EXPECT_EQ(reader.readFrom(sp.b.get()), cp::MessageReader::Status::WouldBlock);
        EXPECT_TRUE(reader.midFrame());
        sp.a.reset();
        EXPECT_THROW(reader.readFrom(sp.b.get()), cp::TruncatedFrame);
    }
}

// ---- fd passing ---------------------------------------------------------------------

TEST(FdPassing, PassesFdsWithCloexec) {
    SocketPair sp;
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    UniqueFd r(p[0]), w(p[1]);
    const std::vector<std::byte> data = bytesOf({1, 2, 3});
    const int fds[] = {r.get(), w.get()};
    tracectl::sendWithFds(sp.a.get(), data, fds);

    std::vector<std::byte> buf(16);
    tracectl::Received got = tracectl::recvWithFds(sp.b.get(), buf, 4);
    ASSERT_EQ(got.bytes, 3u);
    ASSERT_EQ(got.fds.size(), 2u);
    for (const UniqueFd& fd : got.fds)
        EXPECT_NE(fcntl(fd.get(), F_GETFD) & FD_CLOEXEC, 0);
    // The passed write end reaches the original read end.
    ASSERT_EQ(write(got.fds[1].get(), "z", 1), 1);
    char c = 0;
    ASSERT_EQ(read(r.get(), &c, 1), 1);
    EXPECT_EQ(c, 'z');
}

TEST(FdPassing, RejectsMoreFdsThanAllowedWithoutLeaking) {
    SocketPair sp;
    const std::size_t before = openFdCount();
    {
        UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
        UniqueFd b(open("/dev/null", O_RDONLY | O_CLOEXEC));
        UniqueFd c(open("/dev/null", O_RDONLY | O_CLOEXEC));
        const int fds[] = {a.get(), b.get(), c.get()};
        tracectl::sendWithFds(sp.a.get(), bytesOf({9}), fds);
        tracectl::sendWithFds(sp.a.get(), bytesOf({8}), fds);
    }
    std::vector<std::byte> buf(1);
    try {
        tracectl::recvWithFds(sp.b.get(), buf, 1);
        ADD_FAILURE() << "three fds accepted where one was allowed";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), EPROTO);
    }
    try {
        tracectl::recvWithFds(sp.b.get(), buf, 0);
        ADD_FAILURE() << "fds accepted where none was allowed";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), EPROTO);
    }
    EXPECT_EQ(openFdCount(), before);
}

TEST(FdPassing, ArgumentChecksAndNonBlockingAndEof) {
    SocketPair sp;
    const int fd = 0;
    EXPECT_THROW(tracectl::sendWithFds(sp.a.get(), {}, std::span<const int>(&fd, 1)),
                 std::invalid_argument);
    std::vector<int> many(tracectl::kMaxPassedFds + 1, 0);
    EXPECT_THROW(tracectl::sendWithFds(sp.a.get(), bytesOf({1}), many), std::invalid_argument);

    std::vector<std::byte> buf(4);
    EXPECT_TRUE(tracectl::recvWithFds(sp.b.get(), buf, 0, true).wouldBlock);
    sp.a.reset();
    const tracectl::Received eof = tracectl::recvWithFds(sp.b.get(), buf, 0, true);
    EXPECT_FALSE(eof.wouldBlock);
    EXPECT_EQ(eof.bytes, 0u);
    try {
        tracectl::sendWithFds(sp.b.get(), bytesOf({1}));
        ADD_FAILURE() << "send to a closed peer succeeded";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), EPIPE);
    }
}

TEST(FdPassing, RecvExactCollectsFdsAcrossReads) {
    SocketPair sp;
    UniqueFd a(open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int fds[] = {a.get()};
    tracectl::sendWithFds(sp.a.get(), bytesOf({1, 2}), fds);
    tracectl::sendWithFds(sp.a.get(), bytesOf({3, 4}), fds);
    std::vector<std::byte> buf(4);
    std::vector<UniqueFd> got;
    EXPECT_EQ(tracectl::recvExactWithFds(sp.b.get(), buf, got, 2), 4u);
    EXPECT_EQ(buf, bytesOf({1, 2, 3, 4}));
    EXPECT_EQ(got.size(), 2u);
}

TEST(ConsumerProtocol, DeclareLayoutsRefusesAnAbiNoTraceHas) {
    for (const cp::LayoutAbi abi :
         {cp::LayoutAbi{16, 8, 16, 32, 64, 64}, cp::LayoutAbi{64, 8, 1, 32, 64, 64},
          cp::LayoutAbi{64, 8, 16, 24, 64, 64}, cp::LayoutAbi{64, 8, 16, 32, 64, 128}}) {
        EXPECT_THROW(cp::encode(cp::DeclareLayouts{1, abi, ""}), cp::ProtocolError);
        // The same bytes built by hand are refused when decoded too.
        auto good = payloadOf(cp::encode(cp::DeclareLayouts{1, cp::LayoutAbi{}, ""}));
        good[8] = static_cast<std::byte>(abi.bitsPerLong);
        good[9] = static_cast<std::byte>(abi.uint8Alignment);
        good[10] = static_cast<std::byte>(abi.uint16Alignment);
        good[11] = static_cast<std::byte>(abi.uint32Alignment);
        good[12] = static_cast<std::byte>(abi.uint64Alignment);
        good[13] = static_cast<std::byte>(abi.longAlignment);
        EXPECT_THROW(cp::decodePayload(cp::MessageType::DeclareLayouts, good.data(), good.size()),
                     cp::ProtocolError);
    }
    EXPECT_EQ(cp::messageName(cp::MessageType::DeclareLayouts), "DeclareLayouts");
}

// Version 15: each channel's figures end with bytesProduced (u64).
TEST(ConsumerProtocol, StatisticsCarryBytesProducedAfterChunkBytes) {
    const auto p = payloadOf(
        cp::encode(cp::Statistics{7, {cp::ChannelFigures{1, 2, 3, 4, 5, 6, 0x0102030405060708}}}));
    ASSERT_EQ(p.size(), 12U + 7 * 8);
    EXPECT_EQ(p[p.size() - 8], std::byte{0x08}); // little endian, last
    EXPECT_EQ(p[p.size() - 1], std::byte{0x01});
    const auto m = std::get<cp::Statistics>(
        cp::decodePayload(cp::MessageType::Statistics, p.data(), p.size()));
    EXPECT_EQ(m.channels.at(0).bytesProduced, 0x0102030405060708U);
}

TEST(ConsumerProtocol, StatisticsRefusesACountItsPayloadDoesNotHold) {
    auto p = payloadOf(cp::encode(cp::Statistics{7, {cp::ChannelFigures{1, 2, 3, 4, 5, 6}}}));
    p[8] = std::byte{2}; // says two channels, holds one
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Statistics, p.data(), p.size()),
                 cp::ProtocolError);
    p[8] = std::byte{0xff};
    p[9] = std::byte{0xff};
    p[10] = std::byte{0xff};
    p[11] = std::byte{0xff};
    EXPECT_THROW(cp::decodePayload(cp::MessageType::Statistics, p.data(), p.size()),
                 cp::ProtocolError);
    cp::Statistics tooMany;
    tooMany.channels.resize(cp::kMaxFiguresPerMessage + 1);
    EXPECT_THROW(cp::encode(tooMany), cp::ProtocolError);
    cp::Statistics most;
    most.channels.resize(cp::kMaxFiguresPerMessage);
    EXPECT_NO_THROW(cp::decode(cp::encode(most)));
    EXPECT_EQ(cp::messageName(cp::MessageType::Statistics), "Statistics");
}
