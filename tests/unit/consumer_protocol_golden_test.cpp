// The consumer protocol's wire bytes, every message type, frozen: each frame
// below was written by the codec of protocol version 16 (commit e7f1a10,
// before the table-driven codec) and is checked both ways, so that a change
// of the codec that moves one byte fails here. Version 17 added
// CreateKernelChannel's two u16 stack types after contextMask; version 18 its
// u64 bufferBytes after readTimerUsec.
#include "common/consumer_protocol.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

namespace cp = tracectl::consumer_protocol;

namespace {

/// One message, its request id and its whole frame as hex: the 16-byte
/// header, a space, the payload.
struct Golden {
    cp::Message message;
    std::uint32_t request;
    std::string hex;
};

std::string hexOf(const std::vector<std::byte>& bytes) {
    std::string out;
    char two[3];
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        std::snprintf(two, sizeof two, "%02x", std::to_integer<unsigned>(bytes[i]));
        out += two;
        if (i + 1 == cp::kHeaderSize)
            out += ' ';
    }
    return out;
}

std::vector<std::byte> bytesOfHex(const std::string& hex) {
    std::vector<std::byte> out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
        if (hex[i] == ' ')
            ++i;
        out.push_back(static_cast<std::byte>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return out;
}

std::array<std::uint8_t, 16> uuid() {
    std::array<std::uint8_t, 16> u{};
    for (std::size_t i = 0; i < u.size(); ++i)
        u[i] = static_cast<std::uint8_t>(0xa0 + i);
    return u;
}

cp::CreateChannel createChannel() {
    return cp::CreateChannel{0x0102030405060708,
                             cp::ChannelKind::Metadata,
                             "ust/uid/1000/64-bit",
                             "chan",
                             1 << 20,
                             4,
                             true,
                             1'000'000,
                             200,
                             5,
                             -1,
                             7,
                             uuid()};
}

cp::CreateKernelChannel createKernelChannel() {
    cp::CreateKernelChannel c;
    c.key = 21;
    c.outputDir = "kernel";
    c.name = "k0";
    c.packetSize = 1 << 18;
    c.streamId = 2;
    c.contextMask = 0x11;
    c.statedump = true;
    c.traceUuid = uuid();
    c.pageSize = 8192;
    c.timestampOffset = 1;
    c.timestampSize = 4;
    c.commitOffset = 12;
    c.commitSize = 4;
    c.dataOffset = 24;
    c.readTimerUsec = 5000;
    c.bufferBytes = 0x0102030405060708;
    c.cpus = {0, 2, 0x0305};
    return c;
}

const std::vector<Golden>& goldens() {
    static const std::vector<Golden> all{
        {cp::Hello{16, "0.1"}, 1, "54434350010000000b00000001000000 1000000003000000302e31"},
        {cp::HelloReply{16, 0x01020304, "0.1"}, 2,
         "54434350830000000f00000002000000 100000000403020103000000302e31"},
        {cp::Adopt{16, "0.2"}, 3, "54434350120000000b00000003000000 1000000003000000302e32"},
        {cp::AdoptReply{16, 77, "0.1", 9, 2, "c-2", 0x1122334455667788, 4, "h/s"}, 4,
         "54434350880000003900000004000000 "
         "100000004d00000003000000302e310900000000000000020000000000000003000000632d328877665544332"
         "2110400000003000000682f73"},
        {createChannel(), 5,
         "54434350020000006100000005000000 "
         "080706050403020101130000007573742f7569642f313030302f36342d626974040000006368616e000010000"
         "000000004000000000000000140420f00c800000005000000ffffffffffffffff07000000a0a1a2a3a4a5a6a7"
         "a8a9aaabacadaeaf"},
        {cp::ChannelCreated{9, 64}, 6, "54434350840000000c00000006000000 090000000000000040000000"},
        {cp::PushMetadata{1, 4096, "/* CTF */"}, 7,
         "54434350030000001d00000007000000 "
         "01000000000000000010000000000000090000002f2a20435446202a2f"},
        {cp::FlushChannel{3}, 8, "54434350040000000800000008000000 0300000000000000"},
        {cp::DestroyChannel{4}, 9, "54434350050000000800000009000000 0400000000000000"},
        {cp::Shutdown{}, 10, "5443435006000000010000000a000000 00"},
        {cp::Shutdown{true}, 10, "5443435006000000010000000a000000 01"},
        {cp::Rotate{12, "a-1", "b-2", "archives/a-b-1", true, 3, 0x69001234}, 11,
         "5443435007000000390000000b000000 "
         "0c0000000000000003000000612d3103000000622d320e00000061726368697665732f612d622d31010300000"
         "0000000003412006900000000"},
        {cp::RecordSnapshot{0x0102, 5}, 12,
         "5443435008000000100000000c000000 02010000000000000500000000000000"},
        {cp::RotateMetadata{13}, 13, "5443435009000000080000000d000000 0d00000000000000"},
        {cp::SnapshotMetadata{14}, 14, "544343500a000000080000000e000000 0e00000000000000"},
        {cp::DeclareLayouts{5, cp::LayoutAbi{32, 8, 16, 32, 32, 32, true},
                            std::string("\x01\x00\x02", 3)},
         15, "544343500b000000160000000f000000 05000000000000002008102020200103000000010002"},
        {createKernelChannel(), 16,
         "544343500c0000007200000010000000 "
         "150000000000000000060000006b65726e656c020000006b3000000400000000000200000011000000"
         "0000"
         "0000" // version 17: kernelStackType, userStackType
         "01a0a1a"
         "2a3a4a5a6a7a8a9aaabacadaeaf0020000001000000040000000c000000040000001800000088130000"
         "0807060504030201" // version 18: bufferBytes
         "03000000"
         "000000000200000005030000"},
        {cp::DeclareKernelEvents{21, std::string("\x01\x00\x00\x00", 4)}, 17,
         "544343500d0000001000000011000000 15000000000000000400000001000000"},
        {cp::AttachIpProbes{22, 0x0A0B, 0x0C0D}, 18,
         "544343500e0000000c00000012000000 16000000000000000b0a0d0c"},
        {cp::ClearBuffers{}, 19, "544343500f0000000000000013000000 "},
        {cp::AttachRelayd{7, 13, 1000000, 2, 1796162246, "host/net"}, 20,
         "54434350100000003000000014000000 "
         "07000000000000000d00000040420f00000000000200000000000000c6420f6b0000000008000000686f73742"
         "f6e6574"},
        {cp::RecordSnapshotToRelay{3, 1, 9, 13, 2, 1796162246, "snap-1"}, 21,
         "54434350110000003600000015000000 "
         "0300000000000000010000000000000009000000000000000d0000000200000000000000c6420f6b000000000"
         "6000000736e61702d31"},
        {cp::WatchChunkSize{2u << 20}, 22, "54434350130000000800000016000000 0000200000000000"},
        {cp::AttachSyscallStrings{23}, 23, "54434350140000000800000017000000 1700000000000000"},
        {cp::ProducerGone{24, 4321}, 24,
         "54434350150000000c00000018000000 1800000000000000e1100000"},
        {cp::Ok{}, 25, "54434350810000000000000019000000 "},
        {cp::ErrorReply{cp::ErrorKind::Resources, "EMFILE"}, 26,
         "54434350820000000e0000001a000000 0800000006000000454d46494c45"},
        {cp::RotationCompleted{12, false, "EIO"}, 0,
         "54434350850000001000000000000000 0c00000000000000000300000045494f"},
        {cp::Statistics{5,
                        {cp::ChannelFigures{1, 2, 3, 4, 5, 6, 7},
                         cp::ChannelFigures{9, 0x10, 0, 0, 0x0102030405060708, 0, 0xff}}},
         0,
         "54434350860000007c00000000000000 "
         "05000000000000000200000001000000000000000200000000000000030000000000000004000000000000000"
         "50000000000000006000000000000000700000000000000090000000000000010000000000000000000000000"
         "000000000000000000000008070605040302010000000000000000ff00000000000000"},
        {cp::OutputFailed{"relay gone"}, 0,
         "54434350870000000e00000000000000 0a00000072656c617920676f6e65"},
    };
    return all;
}

} // namespace

TEST(ConsumerProtocolGolden, EveryMessageEncodesToItsFrozenBytes) {
    for (const Golden& g : goldens()) {
        EXPECT_EQ(hexOf(cp::encode(g.message, g.request)), g.hex)
            << cp::messageName(cp::typeOf(g.message));
    }
}

TEST(ConsumerProtocolGolden, EveryFrozenFrameDecodesToItsMessage) {
    for (const Golden& g : goldens()) {
        const std::vector<std::byte> frame = bytesOfHex(g.hex);
        ASSERT_GE(frame.size(), cp::kHeaderSize);
        EXPECT_EQ(cp::decodeHeader(frame.data()).request, g.request);
        EXPECT_EQ(cp::decode(frame), g.message) << cp::messageName(cp::typeOf(g.message));
    }
}

TEST(ConsumerProtocolGolden, EveryMessageTypeHasAFrozenFrame) {
    std::set<cp::MessageType> covered;
    for (const Golden& g : goldens())
        covered.insert(cp::typeOf(g.message));
    for (unsigned t = 0; t <= 0xFFFF; ++t) {
        const auto type = static_cast<cp::MessageType>(t);
        if (cp::messageName(type) != "unknown") {
            EXPECT_EQ(covered.count(type), 1u) << cp::messageName(type);
        }
    }
    EXPECT_EQ(covered.size(), std::variant_size_v<cp::Message>);
}
