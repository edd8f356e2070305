// The registration message an LTTng-UST 2.13 app sends first on each of its
// two sockets, as bytes: its fixed size (so the daemon reads it only once it
// is all there and never blocks on a client that stalls mid-message), and
// the identity it claims (which lttng_ust_ctl_recv_reg_msg() silently
// replaces by SO_PEERCRED, so a false claim would go unnoticed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <lttng/ust-abi.h>
#include <optional>
#include <span>
#include <string>

namespace tracectl {

/// `LTTNG_UST_COMM_REG_MSG_PADDING`, lttng-ust 2.13 src/common/ustcomm.h.
inline constexpr std::size_t kUstRegistrationPadding = 64;

/// Size in bytes of `struct lttng_ust_ctl_reg_msg` (lttng-ust 2.13.5
/// src/common/ustcomm.h, `__attribute__((packed))`): 14 uint32_t (magic,
/// major, minor, pid, ppid, uid, gid, bits_per_long, five alignments,
/// socket_type), `char name[LTTNG_UST_ABI_PROCNAME_LEN]` (16) and
/// `char padding[LTTNG_UST_COMM_REG_MSG_PADDING]` (64). The app sends
/// exactly this many bytes (ustcomm_send_reg_msg) and
/// lttng_ust_ctl_recv_reg_msg() reads exactly this many.
inline constexpr std::size_t kUstRegistrationMessageSize =
    14 * sizeof(uint32_t) + LTTNG_UST_ABI_PROCNAME_LEN + kUstRegistrationPadding;
static_assert(kUstRegistrationMessageSize == 136, "lttng-ust 2.13's registration message");

/// Byte offsets of the fields of `struct lttng_ust_ctl_reg_msg` used here.
namespace reg_msg_offset {
inline constexpr std::size_t kMagic = 0;
inline constexpr std::size_t kMajor = 4;
inline constexpr std::size_t kMinor = 8;
inline constexpr std::size_t kPid = 12;
inline constexpr std::size_t kPpid = 16;
inline constexpr std::size_t kUid = 20;
inline constexpr std::size_t kGid = 24;
inline constexpr std::size_t kBitsPerLong = 28;
inline constexpr std::size_t kSocketType = 52;
inline constexpr std::size_t kName = 56;
} // namespace reg_msg_offset

/// What to do with a connection that has `available` bytes queued
/// (FIONREAD) towards its registration message.
enum class RegistrationReadiness {
    Complete,  ///< a whole message is there: reading it cannot block
    Wait,      ///< part of one (or nothing) and the peer may still send
    Truncated, ///< part of one (or nothing) and the peer hung up: drop it
};

/// Decides from byte counts alone: `available` >= kUstRegistrationMessageSize
/// is Complete (more than one message is fine: lttng-ust sends exactly one
/// and the rest is never read as a registration); otherwise Truncated if
/// `peerHungUp`, else Wait.
RegistrationReadiness registrationReadiness(std::size_t available, bool peerHungUp) noexcept;

/// The identity a registration message claims, in host byte order.
struct RegistrationClaims {
    uint32_t pid = 0;
    uint32_t ppid = 0;
    uint32_t uid = 0;
    uint32_t gid = 0;
};

/// The claims of the message in `bytes` (a whole one); std::nullopt if its
/// magic is neither LTTNG_UST_ABI_COMM_MAGIC nor that byte-swapped (then
/// lttng_ust_ctl_recv_reg_msg() refuses it too). A byte-swapped magic means
/// an app of the other endianness: its fields are swapped back.
std::optional<RegistrationClaims>
decodeRegistrationClaims(std::span<const std::byte, kUstRegistrationMessageSize> bytes) noexcept;

/// The type layout an app's registration announces (alignments in bits).
struct RegistrationAbi {
    uint32_t bitsPerLong = 0;
    uint32_t uint8Alignment = 0, uint16Alignment = 0, uint32Alignment = 0;
    uint32_t uint64Alignment = 0, longAlignment = 0;
    int byteOrder = 0; ///< BIG_ENDIAN or LITTLE_ENDIAN (<endian.h>)
};

/// Why an app of this machine's own bitness cannot be traced with the
/// layout it announces, or "" if it can. lttng-ust announces
/// lttng_ust_rb_alignof(type) * CHAR_BIT (lttng/ust-tracer.h: 1 byte where
/// unaligned access is efficient, as on x86, else the natural alignment)
/// and the host byte order; every app built for this machine announces the
/// same, so anything else is refused, before it could define the layout of
/// a per-UID trace shared with real apps. Apps of the other bitness are not
/// judged here ("").
std::string abiMismatch(const RegistrationAbi& abi);

} // namespace tracectl
