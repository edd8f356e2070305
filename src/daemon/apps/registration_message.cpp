#include "registration_message.hpp"

#include <cstring>

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
    const uint32_t magic = readU32(bytes, reg_msg_offset::magic, false);
    bool swapped = false;
    if (magic == __builtin_bswap32(LTTNG_UST_ABI_COMM_MAGIC))
        swapped = true;
    else if (magic != LTTNG_UST_ABI_COMM_MAGIC)
        return std::nullopt;
    RegistrationClaims c;
    c.pid = readU32(bytes, reg_msg_offset::pid, swapped);
    c.ppid = readU32(bytes, reg_msg_offset::ppid, swapped);
    c.uid = readU32(bytes, reg_msg_offset::uid, swapped);
    c.gid = readU32(bytes, reg_msg_offset::gid, swapped);
    return c;
}

} // namespace tracectl
