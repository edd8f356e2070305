#include "registration_message.hpp"

#include <climits>
#include <cstring>
#include <endian.h>
#include <lttng/ust-tracer.h>

namespace tracectl {

namespace {

uint32_t readU32(std::span<const std::byte, kUstRegistrationMessageSize> bytes, std::size_t offset,
                 bool swapped) noexcept {
    uint32_t v = 0;
    std::memcpy(&v, bytes.data() + offset, sizeof v);
    return swapped ? __builtin_bswap32(v) : v;
}

} // namespace

RegistrationReadiness registrationReadiness(std::size_t available, bool peerHungUp) noexcept {
    if (available >= kUstRegistrationMessageSize)
        return RegistrationReadiness::Complete;
    return peerHungUp ? RegistrationReadiness::Truncated : RegistrationReadiness::Wait;
}

std::optional<RegistrationClaims>
decodeRegistrationClaims(std::span<const std::byte, kUstRegistrationMessageSize> bytes) noexcept {
    const uint32_t magic = readU32(bytes, reg_msg_offset::kMagic, false);
    bool swapped = false;
    if (magic == __builtin_bswap32(LTTNG_UST_ABI_COMM_MAGIC))
        swapped = true;
    else if (magic != LTTNG_UST_ABI_COMM_MAGIC)
        return std::nullopt;
    RegistrationClaims c;
    c.pid = readU32(bytes, reg_msg_offset::kPid, swapped);
    c.ppid = readU32(bytes, reg_msg_offset::kPpid, swapped);
    c.uid = readU32(bytes, reg_msg_offset::kUid, swapped);
    c.gid = readU32(bytes, reg_msg_offset::kGid, swapped);
    return c;
}

std::string abiMismatch(const RegistrationAbi& abi) {
    if (abi.bitsPerLong != sizeof(long) * CHAR_BIT)
        return "";
    const RegistrationAbi native{
        sizeof(long) * CHAR_BIT,
        lttng_ust_rb_alignof(uint8_t) * CHAR_BIT,
        lttng_ust_rb_alignof(uint16_t) * CHAR_BIT,
        lttng_ust_rb_alignof(uint32_t) * CHAR_BIT,
        lttng_ust_rb_alignof(uint64_t) * CHAR_BIT,
        lttng_ust_rb_alignof(long) * CHAR_BIT,
        BYTE_ORDER,
    };
    auto layout = [](const RegistrationAbi& a) {
        return std::to_string(a.uint8Alignment) + "/" + std::to_string(a.uint16Alignment) + "/" +
               std::to_string(a.uint32Alignment) + "/" + std::to_string(a.uint64Alignment) + "/" +
               std::to_string(a.longAlignment) + " bits, " +
               (a.byteOrder == BIG_ENDIAN      ? "big"
                : a.byteOrder == LITTLE_ENDIAN ? "little"
                                               : "unknown (" + std::to_string(a.byteOrder) + ")") +
               " endian";
    };
    if (abi.uint8Alignment != native.uint8Alignment ||
        abi.uint16Alignment != native.uint16Alignment ||
        abi.uint32Alignment != native.uint32Alignment ||
        abi.uint64Alignment != native.uint64Alignment ||
        abi.longAlignment != native.longAlignment || abi.byteOrder != native.byteOrder)
        return "its type layout (uint8/16/32/64/long alignments " + layout(abi) +
               ") is not lttng-ust's on this machine (" + layout(native) + ")";
    return "";
}

} // namespace tracectl
