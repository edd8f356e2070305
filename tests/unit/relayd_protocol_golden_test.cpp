// The lttng-relayd 2.13 wire, every message tracectl sends and every reply
// it reads, frozen: each command below was encoded by the relayd codec as it
// was before it became table-driven (the commit that added this file), and
// each reply decodes to the figures it gave then, so that a change of the
// codec that moves one byte fails here. Commands decode back too (for peers:
// tests, a relay). Commands are hex of the 24-byte command header, a space,
// the payload; the data header has no command header.
#include "relayd/relayd_protocol.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <variant>
#include <vector>

using namespace tracectl::relayd;

namespace {

std::string hexOf(ByteView bytes, std::size_t split) {
    std::string out;
    char two[3];
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        std::snprintf(two, sizeof two, "%02x", std::to_integer<unsigned>(bytes[i]));
        out += two;
        if (i + 1 == split)
            out += ' ';
    }
    return out;
}

Bytes bytesOfHex(const std::string& hex) {
    Bytes out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        if (hex[i] == ' ')
            ++i;
        out.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

ByteView textBytes(const std::string& text) {
    return std::as_bytes(std::span(text.data(), text.size()));
}

using AnyCommand = std::variant<Version, GetConfiguration, CreateSessionRequest, CreateTraceChunk,
                                AddStream, StreamsSent, SendMetadata, ResetMetadata, RelaydIndex,
                                QuiescentControl, BeginDataPending, EndDataPending, DataPending,
                                CloseStream, CloseTraceChunk, TraceChunkExists, RotateStreams>;

/// One command and its frozen bytes.
struct Golden {
    std::string name;
    AnyCommand message;
    std::string hex;
};

Bytes encodeAny(const AnyCommand& message) {
    return std::visit([](const auto& m) { return encode(m); }, message);
}

CreateSessionRequest createSession() {
    CreateSessionRequest r;
    r.sessionName = "wire";
    r.hostname = "testhost";
    r.basePath = "base/p";
    r.liveTimerUs = 1'000'000;
    r.snapshot = true;
    r.sessionNameContainsCreationTime = false;
    for (std::size_t i = 0; i < 16; ++i)
        r.sessiondUuid[i] = static_cast<std::uint8_t>(0xa0 + i);
    r.sessionId = 0x0102030405060708;
    r.creationTime = 0x1122334455667788;
    r.currentChunkId = 7;
    return r;
}

CreateSessionRequest createSessionWithoutChunk() {
    CreateSessionRequest r;
    r.sessionName = "s-20261207-153800";
    r.hostname = "h";
    r.sessionNameContainsCreationTime = true;
    r.sessiondUuid[15] = 1;
    r.sessionId = 3;
    r.creationTime = 1796162246;
    return r;
}

RelaydIndex sendIndex() {
    RelaydIndex i;
    i.relayStreamId = 1;
    i.netSeqNum = 2;
    i.packetSizeBits = 0x8000;
    i.contentSizeBits = 0x7ff8;
    i.timestampBegin = 0x1111111111111111;
    i.timestampEnd = 0x2222222222222222;
    i.eventsDiscarded = 3;
    i.streamId = 4;
    i.streamInstanceId = 5;
    i.packetSeqNum = 0x0a0b0c0d0e0f1011;
    return i;
}

const std::vector<Golden>& goldens() {
    static const std::string metadata = "/* CTF 1.8 */";
    static const std::vector<Golden> all{
        {"VERSION", Version{2, 13},
         "000000000000000000000000000000080000000500000000 000000020000000d"},
        {"GET_CONFIGURATION", GetConfiguration{},
         "000000000000000000000000000000080000001600000000 0000000000000000"},
        {"CREATE_SESSION", createSession(),
         "000000000000000000000000000000500000000200000000 "
         "00000005000000090000000700"
         "0f424001"
         "00a0a1a2a3a4a5a6a7a8a9aaabacadaeaf0102030405060708112233445566778801000000000000000777697"
         "2650074657374686f737400626173652f7000"},
        {"CREATE_SESSION without chunk nor base path", createSessionWithoutChunk(),
         "000000000000000000000000000000500000000200000000 "
         "0000001200000002000000010000000000010000000000000000000000000000000100000000000000030000"
         "00006b0f42c6000000000000000000732d32303236313230372d31353338303000680000"},
        {"CREATE_TRACE_CHUNK", CreateTraceChunk{3, 0xAABBCCDD, {}},
         "000000000000000000000000000000140000001300000000 "
         "000000000000000300000000aabbccdd00000000"},
        {"CREATE_TRACE_CHUNK named", CreateTraceChunk{4, 5, "chunk-a"},
         "0000000000000000000000000000001c0000001300000000 "
         "00000000000000040000000000000005000000086368756e6b2d6100"},
        {"ADD_STREAM", AddStream{"chan_0", "ust/uid/1000/64-bit", 4096, 3, 0x42},
         "0000000000000000000000000000003b0000000100000000 "
         "00000007000000140000000000001000000000000000000300000000000000426368616e5f300075737"
         "42f7569642f313030302f36342d62697400"},
        {"STREAMS_SENT", StreamsSent{}, "000000000000000000000000000000000000001000000000 "},
        {"SEND_METADATA", SendMetadata{9, 3, textBytes(metadata)},
         "000000000000000000000000000000190000000600000000 "
         "0000000000000009000000032f2a2043544620312e38202a2f"},
        {"RESET_METADATA", ResetMetadata{3, 4},
         "000000000000000000000000000000100000001100000000 00000000000000030000000000000004"},
        {"SEND_INDEX", sendIndex(),
         "000000000000000000000000000000500000000d00000000 "
         "000000000000000100000000000000020000000000008000000000000000"
         "7ff811111111111111112222222222222222000000000000000300000000000000040000000000000005"
         "0a0b0c0d0e0f1011"},
        {"QUIESCENT_CONTROL", QuiescentControl{0x77},
         "000000000000000000000000000000080000000900000000 0000000000000077"},
        {"BEGIN_DATA_PENDING", BeginDataPending{5},
         "000000000000000000000000000000080000000a00000000 0000000000000005"},
        {"END_DATA_PENDING", EndDataPending{6},
         "000000000000000000000000000000080000000b00000000 0000000000000006"},
        {"DATA_PENDING", DataPending{10, 11},
         "000000000000000000000000000000100000000800000000 000000000000000a000000000000000b"},
        {"CLOSE_STREAM", CloseStream{12, 0xFFFFFFFFFFFFFFFF},
         "000000000000000000000000000000100000000700000000 000000000000000cffffffffffffffff"},
        {"CLOSE_TRACE_CHUNK", CloseTraceChunk{1, 2, TraceChunkCloseCommand::Delete},
         "000000000000000000000000000000150000001400000000 "
         "0000000000000001000000000000000201000000"
         "02"},
        {"CLOSE_TRACE_CHUNK without command", CloseTraceChunk{1, 2, {}},
         "000000000000000000000000000000150000001400000000 "
         "0000000000000001000000000000000200000000"
         "00"},
        {"TRACE_CHUNK_EXISTS", TraceChunkExists{8},
         "000000000000000000000000000000080000001500000000 0000000000000008"},
        {"ROTATE_STREAMS", RotateStreams{9, {{1, 2}, {0x0304, 0xffffffffffffffff}}},
         "000000000000000000000000000000340000001200000000 "
         "0000000201000000000000000000000000000009"
         "000000000000000100000000000000020000000000000304ffffffffffffffff"},
        {"ROTATE_STREAMS without chunk nor stream", RotateStreams{},
         "000000000000000000000000000000140000001200000000 "
         "0000000000000000000000000000000000000000"},
    };
    return all;
}

} // namespace

TEST(RelaydProtocolGolden, EveryCommandEncodesToItsFrozenBytes) {
    for (const Golden& g : goldens())
        EXPECT_EQ(hexOf(encodeAny(g.message), kCommandHeaderSize), g.hex) << g.name;
}

TEST(RelaydProtocolGolden, EveryFrozenPayloadDecodesToWhatEncodesToIt) {
    for (const Golden& g : goldens()) {
        const Bytes bytes = bytesOfHex(g.hex);
        const ByteView payload = ByteView(bytes).subspan(kCommandHeaderSize);
        std::visit(
            [&](const auto& m) {
                const auto decoded = decode<std::decay_t<decltype(m)>>(payload);
                EXPECT_EQ(hexOf(encode(decoded), kCommandHeaderSize), g.hex) << g.name;
            },
            g.message);
    }
}

TEST(RelaydProtocolGolden, EveryCommandHeaderDecodes) {
    for (const Golden& g : goldens()) {
        const Bytes bytes = bytesOfHex(g.hex);
        const CommandHeader h = decode<CommandHeader>(ByteView(bytes).first(kCommandHeaderSize));
        EXPECT_EQ(h.circuitId, 0u) << g.name;
        EXPECT_EQ(h.dataSize, bytes.size() - kCommandHeaderSize) << g.name;
        EXPECT_EQ(commandName(static_cast<RelaydCommand>(h.command)),
                  g.name.substr(0, g.name.find(' ')));
        EXPECT_EQ(h.commandVersion, 0u) << g.name;
    }
}

TEST(RelaydProtocolGolden, DataHeader) {
    EXPECT_EQ(hexOf(encode(DataHeader{0, 0x0102, 0x0304, 0x05060708, 0x090a0b0c}), 0),
              "0000000000000000000000000000010200000000000003040506070809"
              "0a0b0c");
}

TEST(RelaydProtocolGolden, CommandNames) {
    const char* names[] = {"command 0",          "ADD_STREAM",         "CREATE_SESSION",
                           "START_DATA",         "UPDATE_SYNC_INFO",   "VERSION",
                           "SEND_METADATA",      "CLOSE_STREAM",       "DATA_PENDING",
                           "QUIESCENT_CONTROL",  "BEGIN_DATA_PENDING", "END_DATA_PENDING",
                           "ADD_INDEX",          "SEND_INDEX",         "CLOSE_INDEX",
                           "LIST_SESSIONS",      "STREAMS_SENT",       "RESET_METADATA",
                           "ROTATE_STREAMS",     "CREATE_TRACE_CHUNK", "CLOSE_TRACE_CHUNK",
                           "TRACE_CHUNK_EXISTS", "GET_CONFIGURATION",  "command 23"};
    for (std::uint32_t v = 0; v < std::size(names); ++v)
        EXPECT_EQ(commandName(static_cast<RelaydCommand>(v)), names[v]);
}

TEST(RelaydProtocolGolden, EveryReplyDecodesToItsFigures) {
    EXPECT_EQ(decode<GenericReply>(bytesOfHex("0000000a")).retCode, kLttngOk);
    EXPECT_EQ(decode<GenericReply>(bytesOfHex("ffffffff")).retCode, 0xffffffffu);

    EXPECT_EQ(decode<Version>(bytesOfHex("000000020000000b")), (Version{2, 11}));

    const ConfigurationReply c = decode<ConfigurationReply>(bytesOfHex("0000000a0102030405060708"));
    EXPECT_EQ(c.retCode, kLttngOk);
    EXPECT_EQ(c.flags, 0x0102030405060708u);

    const CreateSessionReplyHeader s =
        decode<CreateSessionReplyHeader>(bytesOfHex("0102030405060708000000980000000f"));
    EXPECT_EQ(s.relaySessionId, 0x0102030405060708u);
    EXPECT_EQ(s.retCode, 0x98u);
    EXPECT_EQ(s.outputPathLength, 15u);

    EXPECT_EQ(decodeReplyPath(bytesOfHex("686f73742f732d3100")), "host/s-1");

    const StreamStatusReply a = decode<StreamStatusReply>(bytesOfHex("11223344556677880000000a"));
    EXPECT_EQ(a.handle, 0x1122334455667788u);
    EXPECT_EQ(a.retCode, kLttngOk);

    const CloseTraceChunkReplyHeader t =
        decode<CloseTraceChunkReplyHeader>(bytesOfHex("0000000a00000fff"));
    EXPECT_EQ(t.retCode, kLttngOk);
    EXPECT_EQ(t.pathLength, 0xfffu);
    EXPECT_EQ(t.trailingBytes(), 0xfffu);

    const TraceChunkExistsReply e = decode<TraceChunkExistsReply>(bytesOfHex("0000000a01"));
    EXPECT_EQ(e.retCode, kLttngOk);
    EXPECT_TRUE(e.exists);
    EXPECT_FALSE(decode<TraceChunkExistsReply>(bytesOfHex("0000000b00")).exists);
}
