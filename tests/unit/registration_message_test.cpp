// The registration message as bytes: its size and layout checked against the
// real liblttng-ust-ctl reading a hand-built message, and the pure decisions
// the app thread takes from byte counts.
#include "apps/registration_message.hpp"

#include <array>
#include <cstring>
#include <endian.h>
#include <gtest/gtest.h>
#include <lttng/ust-ctl.h>
#include <lttng/ust-error.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace tracectl;

namespace {

using Message = std::array<std::byte, kUstRegistrationMessageSize>;

void put(Message& m, std::size_t offset, uint32_t v) {
    std::memcpy(m.data() + offset, &v, sizeof v);
}

/// A well-formed 2.13 registration message (what ustcomm_send_reg_msg sends).
Message wellFormed(uint32_t pid, uint32_t uid, uint32_t socketType) {
    Message m{};
    put(m, reg_msg_offset::kMagic, LTTNG_UST_ABI_COMM_MAGIC);
    put(m, reg_msg_offset::kMajor, LTTNG_UST_ABI_MAJOR_VERSION);
    put(m, reg_msg_offset::kMinor, LTTNG_UST_ABI_MINOR_VERSION);
    put(m, reg_msg_offset::kPid, pid);
    put(m, reg_msg_offset::kPpid, 1);
    put(m, reg_msg_offset::kUid, uid);
    put(m, reg_msg_offset::kGid, 7);
    put(m, reg_msg_offset::kBitsPerLong, 64);
    for (std::size_t i = 0; i < 5; ++i) // uint8/16/32/64_t and long alignments
        put(m, reg_msg_offset::kBitsPerLong + 4 + 4 * i, 8u << i);
    put(m, reg_msg_offset::kSocketType, socketType);
    std::memcpy(m.data() + reg_msg_offset::kName, "fake-app", 8);
    return m;
}

/// What lttng_ust_ctl_recv_reg_msg() returns, field by field.
struct Received {
    lttng_ust_ctl_socket_type type{};
    uint32_t major = 0, minor = 0, pid = 0, ppid = 0, uid = 0, gid = 0, bits = 0;
    uint32_t a8 = 0, a16 = 0, a32 = 0, a64 = 0, along = 0;
    int byteOrder = 0;
    char name[LTTNG_UST_ABI_PROCNAME_LEN + 1] = {};

    int receive(int fd) {
        return lttng_ust_ctl_recv_reg_msg(fd, &type, &major, &minor, &pid, &ppid, &uid, &gid, &bits,
                                          &a8, &a16, &a32, &a64, &along, &byteOrder, name);
    }
};

} // namespace

TEST(RegistrationMessage, ReadinessFromByteCounts) {
    using R = RegistrationReadiness;
    EXPECT_EQ(registrationReadiness(0, false), R::Wait);
    EXPECT_EQ(registrationReadiness(1, false), R::Wait);
    EXPECT_EQ(registrationReadiness(kUstRegistrationMessageSize - 1, false), R::Wait);
    EXPECT_EQ(registrationReadiness(kUstRegistrationMessageSize, false), R::Complete);
    EXPECT_EQ(registrationReadiness(4096, false), R::Complete);
    EXPECT_EQ(registrationReadiness(0, true), R::Truncated);
    EXPECT_EQ(registrationReadiness(kUstRegistrationMessageSize - 1, true), R::Truncated);
    // A whole message then a hang-up is still a registration.
    EXPECT_EQ(registrationReadiness(kUstRegistrationMessageSize, true), R::Complete);
}

TEST(RegistrationMessage, ClaimsAreDecodedInEitherByteOrder) {
    const Message m = wellFormed(4242, 1000, 0);
    const auto c = decodeRegistrationClaims(m);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->pid, 4242u);
    EXPECT_EQ(c->ppid, 1u);
    EXPECT_EQ(c->uid, 1000u);
    EXPECT_EQ(c->gid, 7u);

    Message swapped = m;
    for (std::size_t off : {reg_msg_offset::kMagic, reg_msg_offset::kPid, reg_msg_offset::kPpid,
                            reg_msg_offset::kUid, reg_msg_offset::kGid}) {
        uint32_t v = 0;
        std::memcpy(&v, m.data() + off, sizeof v);
        put(swapped, off, __builtin_bswap32(v));
    }
    const auto s = decodeRegistrationClaims(swapped);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->pid, 4242u);
    EXPECT_EQ(s->uid, 1000u);

    Message junk{};
    junk.fill(std::byte{0xa5});
    EXPECT_FALSE(decodeRegistrationClaims(junk));
}

// The size and the offsets are those liblttng-ust-ctl itself uses: it reads
// exactly kUstRegistrationMessageSize bytes (the extra ones stay queued) and
// finds every field where reg_msg_offset says.
TEST(RegistrationMessage, LibLttngUstCtlReadsExactlyThisLayout) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    const Message m = wellFormed(static_cast<uint32_t>(getpid()), getuid(), 1);
    ASSERT_EQ(write(sv[1], m.data(), m.size()), static_cast<ssize_t>(m.size()));
    ASSERT_EQ(write(sv[1], "more", 4), 4);

    Received r;
    ASSERT_EQ(r.receive(sv[0]), 0);
    int left = 0;
    ASSERT_EQ(ioctl(sv[0], FIONREAD, &left), 0);
    EXPECT_EQ(left, 4);
    EXPECT_EQ(r.type, LTTNG_UST_CTL_SOCKET_NOTIFY);
    EXPECT_EQ(r.major, static_cast<uint32_t>(LTTNG_UST_ABI_MAJOR_VERSION));
    EXPECT_EQ(r.minor, static_cast<uint32_t>(LTTNG_UST_ABI_MINOR_VERSION));
    EXPECT_EQ(r.pid, static_cast<uint32_t>(getpid()));
    EXPECT_EQ(r.ppid, 1u); // kept: the claimed pid is the real one
    EXPECT_EQ(r.bits, 64u);
    EXPECT_EQ(r.a8, 8u);
    EXPECT_EQ(r.a16, 16u);
    EXPECT_EQ(r.a32, 32u);
    EXPECT_EQ(r.a64, 64u);
    EXPECT_EQ(r.along, 128u);
    EXPECT_STREQ(r.name, "fake-app");
    close(sv[0]);
    close(sv[1]);
}

// liblttng-ust-ctl overwrites a claimed pid/uid/gid with SO_PEERCRED without
// saying so: only the raw bytes tell a false claim.
TEST(RegistrationMessage, LibLttngUstCtlHidesAFalseClaim) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    const Message m = wellFormed(static_cast<uint32_t>(getpid()) + 1, getuid() + 1, 0);
    ASSERT_EQ(write(sv[1], m.data(), m.size()), static_cast<ssize_t>(m.size()));
    Received r;
    ASSERT_EQ(r.receive(sv[0]), 0);
    EXPECT_EQ(r.pid, static_cast<uint32_t>(getpid()));
    EXPECT_EQ(r.uid, getuid());
    const auto claims = decodeRegistrationClaims(m);
    ASSERT_TRUE(claims);
    EXPECT_EQ(claims->pid, static_cast<uint32_t>(getpid()) + 1);
    EXPECT_EQ(claims->uid, getuid() + 1);
    close(sv[0]);
    close(sv[1]);
}

TEST(RegistrationAbi, ThisMachinesLayoutIsAcceptedAnyOtherRefused) {
    RegistrationAbi native{sizeof(long) * 8, 8, 8, 8, 8, 8, BYTE_ORDER};
#if !defined(__x86_64__) && !defined(__i386__)
    native = {sizeof(long) * 8, 8, 16, 32, 64, sizeof(long) * 8, BYTE_ORDER};
#endif
    EXPECT_EQ(abiMismatch(native), "");
    RegistrationAbi natural = native; // what x86 lttng-ust never sends
    natural.uint16Alignment = 16;
    natural.uint32Alignment = 32;
    natural.uint64Alignment = 64;
    natural.longAlignment = sizeof(long) * 8;
    if (natural.uint16Alignment != native.uint16Alignment) {
        const std::string why = abiMismatch(natural);
        EXPECT_NE(why.find("8/16/32/64/"), std::string::npos) << why;
    }
    RegistrationAbi swapped = native;
    swapped.byteOrder = BYTE_ORDER == LITTLE_ENDIAN ? BIG_ENDIAN : LITTLE_ENDIAN;
    EXPECT_NE(abiMismatch(swapped).find("endian"), std::string::npos);
    RegistrationAbi other = natural; // the other bitness is judged per trace
    other.bitsPerLong = sizeof(long) == 8 ? 32 : 64;
    EXPECT_EQ(abiMismatch(other), "");
}
