// The relayd 2.13 codec against the packed big-endian layouts of
// lttng-tools v2.13.9 src/common/sessiond-comm/relayd.h.
#include "relayd/relayd_protocol.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <sys/mman.h>

using namespace tracectl::relayd;

namespace {

std::string hex(ByteView bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::byte b : bytes) {
        const auto v = static_cast<unsigned>(b);
        out += digits[v >> 4];
        out += digits[v & 0xf];
    }
    return out;
}

Bytes fromHex(const std::string& text) {
    Bytes out;
    for (std::size_t i = 0; i + 1 < text.size(); i += 2)
        out.push_back(static_cast<std::byte>(std::stoul(text.substr(i, 2), nullptr, 16)));
    return out;
}

std::uint64_t be64At(const Bytes& bytes, std::size_t offset) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i)
        v = (v << 8) | static_cast<std::uint8_t>(bytes.at(offset + i));
    return v;
}

std::uint32_t be32At(const Bytes& bytes, std::size_t offset) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i)
        v = (v << 8) | static_cast<std::uint8_t>(bytes.at(offset + i));
    return v;
}

std::string stringAt(const Bytes& bytes, std::size_t offset, std::size_t length) {
    return std::string(reinterpret_cast<const char*>(bytes.data()) + offset, length);
}

/// The header every command starts with: circuit 0, data_size, cmd, version 0.
void expectHeader(const Bytes& message, RelaydCommand command, std::uint64_t payloadSize) {
    ASSERT_EQ(message.size(), kCommandHeaderSize + payloadSize);
    EXPECT_EQ(be64At(message, 0), 0u);
    EXPECT_EQ(be64At(message, 8), payloadSize);
    EXPECT_EQ(be32At(message, 16), static_cast<std::uint32_t>(command));
    EXPECT_EQ(be32At(message, 20), 0u);
}

} // namespace

TEST(RelaydProtocol, CommandValuesAreRelaydOnes) {
    // sessiond-comm.h, enum lttcomm_relayd_command.
    EXPECT_EQ(static_cast<int>(RelaydCommand::AddStream), 1);
    EXPECT_EQ(static_cast<int>(RelaydCommand::CreateSession), 2);
    EXPECT_EQ(static_cast<int>(RelaydCommand::Version), 5);
    EXPECT_EQ(static_cast<int>(RelaydCommand::SendMetadata), 6);
    EXPECT_EQ(static_cast<int>(RelaydCommand::SendIndex), 13);
    EXPECT_EQ(static_cast<int>(RelaydCommand::StreamsSent), 16);
    EXPECT_EQ(static_cast<int>(RelaydCommand::RotateStreams), 18);
    EXPECT_EQ(static_cast<int>(RelaydCommand::GetConfiguration), 22);
    EXPECT_EQ(commandName(RelaydCommand::CloseTraceChunk), "CLOSE_TRACE_CHUNK");
    EXPECT_EQ(commandName(static_cast<RelaydCommand>(99)), "command 99");
}

TEST(RelaydProtocol, VersionGoldenBytes) {
    EXPECT_EQ(hex(encode(Version{2, 13})), "0000000000000000"
                                           "0000000000000008"
                                           "00000005"
                                           "00000000"
                                           "00000002"
                                           "0000000d");
}

TEST(RelaydProtocol, HeaderRoundTrip) {
    const Bytes message = encode(DataPending{0x1234, 0x55});
    const CommandHeader header = decode<CommandHeader>(ByteView(message).first(kCommandHeaderSize));
    EXPECT_EQ(header.circuitId, 0u);
    EXPECT_EQ(header.dataSize, 16u);
    EXPECT_EQ(header.command, 8u);
    EXPECT_EQ(header.commandVersion, 0u);
    EXPECT_THROW(decode<CommandHeader>(ByteView(message).first(23)), RelaydProtocolError);
}

TEST(RelaydProtocol, CreateSession211Layout) {
    CreateSessionRequest request;
    request.sessionName = "wire";
    request.hostname = "testhost";
    request.liveTimerUs = 1'000'000;
    request.snapshot = true;
    request.sessionNameContainsCreationTime = false;
    for (std::size_t i = 0; i < 16; ++i)
        request.sessiondUuid[i] = static_cast<std::uint8_t>(i + 1);
    request.sessionId = 0x0102030405060708;
    request.creationTime = 0x1122334455667788;
    request.currentChunkId = 7;
    const Bytes m = encode(request);
    // 59 fixed bytes, "wire\0" "testhost\0" "\0".
    expectHeader(m, RelaydCommand::CreateSession, 59 + 5 + 9 + 1);
    const std::size_t p = kCommandHeaderSize;
    EXPECT_EQ(be32At(m, p + 0), 5u); // session_name_len
    EXPECT_EQ(be32At(m, p + 4), 9u); // hostname_len
    EXPECT_EQ(be32At(m, p + 8), 1u); // base_path_len
    EXPECT_EQ(be32At(m, p + 12), 1'000'000u);
    EXPECT_EQ(static_cast<int>(m[p + 16]), 1); // snapshot
    EXPECT_EQ(static_cast<int>(m[p + 17]), 0); // session_name_contains_creation_time
    EXPECT_EQ(hex(ByteView(m).subspan(p + 18, 16)), "0102030405060708090a0b0c0d0e0f10");
    EXPECT_EQ(be64At(m, p + 34), 0x0102030405060708u);
    EXPECT_EQ(be64At(m, p + 42), 0x1122334455667788u);
    EXPECT_EQ(static_cast<int>(m[p + 50]), 1); // current_chunk_id.is_set
    EXPECT_EQ(be64At(m, p + 51), 7u);
    EXPECT_EQ(stringAt(m, p + 59, 15), std::string("wire\0testhost\0\0", 15));

    request.currentChunkId.reset();
    const Bytes noChunk = encode(request);
    EXPECT_EQ(static_cast<int>(noChunk[p + 50]), 0);
    EXPECT_EQ(be64At(noChunk, p + 51), 0u);
}

TEST(RelaydProtocol, CreateSessionRefusesWhatRelaydRefuses) {
    CreateSessionRequest request;
    request.sessionName = "s";
    request.hostname = "h";
    request.sessiondUuid[3] = 1;
    EXPECT_NO_THROW(encode(request));

    auto with = [&](auto change) {
        CreateSessionRequest r = request;
        change(r);
        return r;
    };
    EXPECT_THROW(encode(with([](auto& r) { r.sessiondUuid = {}; })), RelaydProtocolError);
    EXPECT_THROW(encode(with([](auto& r) { r.sessionName = ""; })), RelaydProtocolError);
    EXPECT_THROW(encode(with([](auto& r) { r.sessionName = ".hidden"; })), RelaydProtocolError);
    EXPECT_THROW(encode(with([](auto& r) { r.sessionName = "a/b"; })), RelaydProtocolError);
    EXPECT_THROW(encode(with([](auto& r) { r.sessionName = std::string("a\0b", 3); })),
                 RelaydProtocolError);
    // LTTNG_NAME_MAX (255) with the NUL.
    EXPECT_NO_THROW(encode(with([](auto& r) { r.sessionName = std::string(254, 'n'); })));
    EXPECT_THROW(encode(with([](auto& r) { r.sessionName = std::string(255, 'n'); })),
                 RelaydProtocolError);
    // LTTNG_HOST_NAME_MAX (256) with the NUL.
    EXPECT_NO_THROW(encode(with([](auto& r) { r.hostname = std::string(255, 'h'); })));
    EXPECT_THROW(encode(with([](auto& r) { r.hostname = std::string(256, 'h'); })),
                 RelaydProtocolError);
    EXPECT_THROW(encode(with([](auto& r) { r.basePath = "x/../y"; })), RelaydProtocolError);
}

TEST(RelaydProtocol, CreateTraceChunkLayout) {
    const Bytes plain = encode(CreateTraceChunk{3, 0xAABBCCDD, std::nullopt});
    expectHeader(plain, RelaydCommand::CreateTraceChunk, 20);
    EXPECT_EQ(be64At(plain, 24), 3u);
    EXPECT_EQ(be64At(plain, 32), 0xAABBCCDDu);
    EXPECT_EQ(be32At(plain, 40), 0u);

    const Bytes named = encode(CreateTraceChunk{4, 5, std::string("chunk-a")});
    expectHeader(named, RelaydCommand::CreateTraceChunk, 20 + 8);
    EXPECT_EQ(be32At(named, 40), 8u);
    EXPECT_EQ(stringAt(named, 44, 8), std::string("chunk-a\0", 8));
    EXPECT_THROW(encode(CreateTraceChunk{4, 5, std::string("a/b")}), RelaydProtocolError);
}

TEST(RelaydProtocol, AddStream211Layout) {
    const Bytes m = encode(AddStream{"chan_0", "ust/uid/1000/64-bit", 4096, 3, 0x42});
    expectHeader(m, RelaydCommand::AddStream, 32 + 7 + 20);
    EXPECT_EQ(be32At(m, 24), 7u);
    EXPECT_EQ(be32At(m, 28), 20u);
    EXPECT_EQ(be64At(m, 32), 4096u);
    EXPECT_EQ(be64At(m, 40), 3u);
    EXPECT_EQ(be64At(m, 48), 0x42u);
    EXPECT_EQ(stringAt(m, 56, 27), std::string("chan_0\0ust/uid/1000/64-bit\0", 27));

    EXPECT_THROW(encode(AddStream{"", "p", 0, 0, 0}), RelaydProtocolError);
    EXPECT_THROW(encode(AddStream{"c", "../etc", 0, 0, 0}), RelaydProtocolError);
    EXPECT_THROW(encode(AddStream{"c", std::string(255, 'p'), 0, 0, 0}), RelaydProtocolError);
    EXPECT_NO_THROW(encode(AddStream{std::string(263, 'c'), "p", 0, 0, 0}));
    EXPECT_THROW(encode(AddStream{std::string(264, 'c'), "p", 0, 0, 0}), RelaydProtocolError);
}

TEST(RelaydProtocol, SendMetadataCarriesPayloadHeaderAndBytes) {
    const std::string text = "/* CTF 1.8 */";
    const Bytes m = encode(SendMetadata{9, 3, std::as_bytes(std::span(text.data(), text.size()))});
    expectHeader(m, RelaydCommand::SendMetadata, 12 + text.size());
    EXPECT_EQ(be64At(m, 24), 9u);
    EXPECT_EQ(be32At(m, 32), 3u);
    EXPECT_EQ(stringAt(m, 36, text.size()), text);
}

TEST(RelaydProtocol, SendIndexIsTenBigEndianU64) {
    RelaydIndex index;
    index.relayStreamId = 1;
    index.netSeqNum = 2;
    index.packetSizeBits = 3;
    index.contentSizeBits = 4;
    index.timestampBegin = 5;
    index.timestampEnd = 6;
    index.eventsDiscarded = 7;
    index.streamId = 8;
    index.streamInstanceId = 9;
    index.packetSeqNum = 0x0a0b0c0d0e0f1011;
    const Bytes m = encode(index);
    expectHeader(m, RelaydCommand::SendIndex, kIndexSize);
    for (std::uint64_t i = 0; i < 9; ++i)
        EXPECT_EQ(be64At(m, 24 + 8 * i), i + 1) << "field " << i;
    EXPECT_EQ(hex(ByteView(m).subspan(24 + 72, 8)), "0a0b0c0d0e0f1011");
}

TEST(RelaydProtocol, SmallCommandsLayouts) {
    EXPECT_EQ(hex(encode(StreamsSent{})), "0000000000000000"
                                          "0000000000000000"
                                          "00000010"
                                          "00000000");
    const Bytes q = encode(QuiescentControl{0x77});
    expectHeader(q, RelaydCommand::QuiescentControl, 8);
    EXPECT_EQ(be64At(q, 24), 0x77u);
    const Bytes b = encode(BeginDataPending{5});
    expectHeader(b, RelaydCommand::BeginDataPending, 8);
    EXPECT_EQ(be64At(b, 24), 5u);
    const Bytes e = encode(EndDataPending{6});
    expectHeader(e, RelaydCommand::EndDataPending, 8);
    EXPECT_EQ(be64At(e, 24), 6u);
    const Bytes d = encode(DataPending{10, 11});
    expectHeader(d, RelaydCommand::DataPending, 16);
    EXPECT_EQ(be64At(d, 24), 10u);
    EXPECT_EQ(be64At(d, 32), 11u);
    const Bytes c = encode(CloseStream{12, 0xFFFFFFFFFFFFFFFF});
    expectHeader(c, RelaydCommand::CloseStream, 16);
    EXPECT_EQ(be64At(c, 24), 12u);
    EXPECT_EQ(be64At(c, 32), 0xFFFFFFFFFFFFFFFFu);
    const Bytes g = encode(GetConfiguration{});
    expectHeader(g, RelaydCommand::GetConfiguration, 8);
    EXPECT_EQ(be64At(g, 24), 0u);
    const Bytes r = encode(ResetMetadata{3, 4});
    expectHeader(r, RelaydCommand::ResetMetadata, 16);
    EXPECT_EQ(be64At(r, 32), 4u);
    const Bytes x = encode(TraceChunkExists{8});
    expectHeader(x, RelaydCommand::TraceChunkExists, 8);
    EXPECT_EQ(be64At(x, 24), 8u);
}

TEST(RelaydProtocol, CloseTraceChunkIs21PackedBytes) {
    const Bytes m = encode(CloseTraceChunk{1, 2, TraceChunkCloseCommand::Delete});
    expectHeader(m, RelaydCommand::CloseTraceChunk, 21);
    EXPECT_EQ(hex(ByteView(m).subspan(24)), "0000000000000001"
                                            "0000000000000002"
                                            "01"
                                            "00000002");
    const Bytes none = encode(CloseTraceChunk{1, 2, std::nullopt});
    EXPECT_EQ(hex(ByteView(none).subspan(40)), "0000000000");
}

TEST(RelaydProtocol, RotateStreamsUsesTheSevenBytePaddingLayout) {
    const StreamRotationPosition positions[] = {{1, 2}, {3, 4}};
    const Bytes m = encode(RotateStreams{9, {std::begin(positions), std::end(positions)}});
    expectHeader(m, RelaydCommand::RotateStreams, 20 + 32);
    EXPECT_EQ(hex(ByteView(m).subspan(24, 20)), "00000002"
                                                "01"
                                                "00000000000000"
                                                "0000000000000009");
    EXPECT_EQ(be64At(m, 44), 1u);
    EXPECT_EQ(be64At(m, 52), 2u);
    EXPECT_EQ(be64At(m, 60), 3u);
    EXPECT_EQ(be64At(m, 68), 4u);
    const Bytes none = encode(RotateStreams{});
    expectHeader(none, RelaydCommand::RotateStreams, 20);
    EXPECT_EQ(static_cast<int>(none[28]), 0);
}

TEST(RelaydProtocol, DataHeaderGoldenBytes) {
    EXPECT_EQ(hex(encode(DataHeader{0, 0x0102, 0x0304, 0x05060708, 0x090a0b0c})), "0000000000000000"
                                                                                  "0000000000000102"
                                                                                  "0000000000000304"
                                                                                  "05060708"
                                                                                  "090a0b0c");
}

TEST(RelaydProtocol, GenericReplyMustBeFourBytes) {
    EXPECT_EQ(decode<GenericReply>(fromHex("0000000a")).retCode, kLttngOk);
    EXPECT_EQ(decode<GenericReply>(fromHex("ffffffff")).retCode, 0xFFFFFFFFu);
    EXPECT_THROW(decode<GenericReply>(fromHex("000000")).retCode, RelaydProtocolError);
    EXPECT_THROW(decode<GenericReply>(fromHex("000000000a")).retCode, RelaydProtocolError);
    EXPECT_THROW(decode<GenericReply>({}), RelaydProtocolError);
}

TEST(RelaydProtocol, VersionAndConfigurationReplies) {
    EXPECT_EQ(decode<Version>(fromHex("000000020000000d")), (Version{2, 13}));
    EXPECT_THROW(decode<Version>(fromHex("00000002")), RelaydProtocolError);
    const ConfigurationReply c = decode<ConfigurationReply>(fromHex("0000000a0000000000000001"));
    EXPECT_EQ(c.retCode, kLttngOk);
    EXPECT_EQ(c.flags, kConfigurationClearAllowed);
    EXPECT_THROW(decode<ConfigurationReply>(fromHex("0000000a")), RelaydProtocolError);
}

TEST(RelaydProtocol, CreateSessionReplyBoundsThePath) {
    const CreateSessionReplyHeader h = decode<CreateSessionReplyHeader>(fromHex("0000000000000003"
                                                                                "0000000a"
                                                                                "00000010"));
    EXPECT_EQ(h.relaySessionId, 3u);
    EXPECT_EQ(h.retCode, kLttngOk);
    EXPECT_EQ(h.outputPathLength, 16u);
    EXPECT_NO_THROW(decode<CreateSessionReplyHeader>(fromHex("0000000000000003"
                                                             "0000000a"
                                                             "00000fff")));
    EXPECT_THROW(decode<CreateSessionReplyHeader>(fromHex("0000000000000003"
                                                          "0000000a"
                                                          "00001000")),
                 RelaydProtocolError);
    EXPECT_THROW(decode<CreateSessionReplyHeader>(fromHex("0000000000000003"
                                                          "0000000a"
                                                          "ffffffff")),
                 RelaydProtocolError);
    // The 2.4-2.10 reply (12 bytes) is not a 2.11 one.
    EXPECT_THROW(decode<CreateSessionReplyHeader>(fromHex("0000000000000003"
                                                          "0000000a")),
                 RelaydProtocolError);
}

TEST(RelaydProtocol, ReplyPathNeedsExactlyOneTrailingNul) {
    const std::string good("host/s-1\0", 9);
    EXPECT_EQ(decodeReplyPath(std::as_bytes(std::span(good.data(), good.size()))), "host/s-1");
    EXPECT_EQ(decodeReplyPath({}), "");
    const std::string unterminated = "host";
    EXPECT_THROW(
        decodeReplyPath(std::as_bytes(std::span(unterminated.data(), unterminated.size()))),
        RelaydProtocolError);
    const std::string inner("ho\0st\0", 6);
    EXPECT_THROW(decodeReplyPath(std::as_bytes(std::span(inner.data(), inner.size()))),
                 RelaydProtocolError);
}

TEST(RelaydProtocol, StreamStatusReply) {
    const StreamStatusReply r = decode<StreamStatusReply>(fromHex("0000000000000011"
                                                                  "0000000a"));
    EXPECT_EQ(r.handle, 0x11u);
    EXPECT_EQ(r.retCode, kLttngOk);
    EXPECT_THROW(decode<StreamStatusReply>(fromHex("0000000000000011")), RelaydProtocolError);
    EXPECT_THROW(decode<StreamStatusReply>(fromHex("0000000000000011"
                                                   "0000000a"
                                                   "00")),
                 RelaydProtocolError);
}

TEST(RelaydProtocol, CloseTraceChunkReplyReadsAPathOnlyOnSuccess) {
    const CloseTraceChunkReplyHeader ok = decode<CloseTraceChunkReplyHeader>(fromHex("0000000a"
                                                                                     "00000005"));
    EXPECT_EQ(ok.trailingBytes(), 5u);
    // A refusal carries no path whatever the length says (main.c).
    const CloseTraceChunkReplyHeader refused =
        decode<CloseTraceChunkReplyHeader>(fromHex("00000098"
                                                   "ffffffff"));
    EXPECT_EQ(refused.retCode, 152u);
    EXPECT_EQ(refused.trailingBytes(), 0u);
    EXPECT_THROW(decode<CloseTraceChunkReplyHeader>(fromHex("0000000a"
                                                            "00001000")),
                 RelaydProtocolError);
    EXPECT_THROW(decode<CloseTraceChunkReplyHeader>(fromHex("0000000a")), RelaydProtocolError);
}

TEST(RelaydProtocol, TraceChunkExistsReply) {
    EXPECT_TRUE(decode<TraceChunkExistsReply>(fromHex("0000000a01")).exists);
    EXPECT_FALSE(decode<TraceChunkExistsReply>(fromHex("0000000a00")).exists);
    EXPECT_THROW(decode<TraceChunkExistsReply>(fromHex("0000000a02")), RelaydProtocolError);
    EXPECT_THROW(decode<TraceChunkExistsReply>(fromHex("0000000a")), RelaydProtocolError);
}

TEST(RelaydProtocol, OversizedPayloadIsRefusedBeforeCopying) {
    // One byte over the relay's 128 MiB control limit with SEND_METADATA's
    // 12-byte header: the relay would drop the connection. The
    // buffer is an untouched anonymous mapping, so the test costs no memory.
    const std::size_t size = kMaxControlPayload + 1;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(map, MAP_FAILED);
    const auto* bytes = static_cast<const std::byte*>(map);
    EXPECT_THROW(encode(SendMetadata{1, 0, ByteView(bytes, kMaxControlPayload - 12 + 1)}),
                 RelaydProtocolError);
    ::munmap(map, size);
}

TEST(RelaydProtocol, CommandsDecodeAsStrictlyAsTheyEncode) {
    // For peers (a stand-in relay): a command's payload back into its struct.
    const Bytes named = encode(CreateTraceChunk{4, 5, "chunk-a"});
    const ByteView payload = ByteView(named).subspan(kCommandHeaderSize);
    EXPECT_EQ(decode<CreateTraceChunk>(payload).overrideName, "chunk-a");
    Bytes unterminated(payload.begin(), payload.end());
    unterminated.back() = std::byte{'x'};
    EXPECT_THROW(decode<CreateTraceChunk>(unterminated), RelaydProtocolError);
    Bytes inner(payload.begin(), payload.end());
    inner[20 + 2] = std::byte{0};
    EXPECT_THROW(decode<CreateTraceChunk>(inner), RelaydProtocolError);
    // A length over the relay's limit, and a length of 0 for a name that
    // must be there (no room for its NUL).
    EXPECT_THROW(decode<CreateTraceChunk>(fromHex("0000000000000004"
                                                  "0000000000000005"
                                                  "00000100")),
                 RelaydProtocolError);
    EXPECT_THROW(decode<AddStream>(fromHex("00000000000000010000000000000000000000000000000000"
                                           "00000000000000000000")),
                 RelaydProtocolError);

    // LTTNG_OPTIONAL: is_set 0 or 1; a set enum within its range; an unset
    // value not looked at (as relayd does).
    EXPECT_EQ(decode<CloseTraceChunk>(fromHex("0000000000000001"
                                              "0000000000000002"
                                              "01"
                                              "00000001"))
                  .closeCommand,
              TraceChunkCloseCommand::NoOperation);
    EXPECT_THROW(decode<CloseTraceChunk>(fromHex("0000000000000001"
                                                 "0000000000000002"
                                                 "02"
                                                 "00000001")),
                 RelaydProtocolError);
    EXPECT_THROW(decode<CloseTraceChunk>(fromHex("0000000000000001"
                                                 "0000000000000002"
                                                 "01"
                                                 "00000003")),
                 RelaydProtocolError);
    EXPECT_FALSE(decode<CloseTraceChunk>(fromHex("0000000000000001"
                                                 "0000000000000002"
                                                 "00"
                                                 "00000007"))
                     .closeCommand);

    // ROTATE_STREAMS: a count the payload cannot hold.
    EXPECT_THROW(decode<RotateStreams>(fromHex("00000002"
                                               "01"
                                               "00000000000000"
                                               "0000000000000009"
                                               "0000000000000001"
                                               "0000000000000002")),
                 RelaydProtocolError);

    // SEND_METADATA's bytes view the payload.
    const std::string text = "/* CTF */";
    const Bytes m = encode(SendMetadata{9, 3, std::as_bytes(std::span(text.data(), text.size()))});
    const SendMetadata back = decode<SendMetadata>(ByteView(m).subspan(kCommandHeaderSize));
    EXPECT_EQ(back.streamHandle, 9u);
    EXPECT_EQ(back.paddingSize, 3u);
    EXPECT_EQ(back.metadata.data(), m.data() + kCommandHeaderSize + 12);
    EXPECT_EQ(back.metadata.size(), text.size());
}
