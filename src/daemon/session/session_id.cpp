#include "session/session_id.hpp"

#include <system_error>

namespace tracectl {

SessionId SessionId::random() {
    sd_id128_t v;
    const int r = sd_id128_randomize(&v);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_id128_randomize");
    return SessionId(v);
}

bool SessionId::fromHex(const std::string& hex, SessionId& out) {
    if (hex.size() != 32)
        return false;
    sd_id128_t v;
    if (sd_id128_from_string(hex.c_str(), &v) < 0)
        return false;
    out = SessionId(v);
    return true;
}

std::optional<SessionId> SessionId::parseHex(const std::string& hex) {
    sd_id128_t v;
    if (hex.size() != 32 || sd_id128_from_string(hex.c_str(), &v) < 0)
        return std::nullopt;
    return SessionId(v);
}

std::string SessionId::hex() const {
    char buf[SD_ID128_STRING_MAX];
    return sd_id128_to_string(value_, buf);
}

std::string SessionId::uuid() const {
    char buf[SD_ID128_UUID_STRING_MAX];
    return sd_id128_to_uuid_string(value_, buf);
}

} // namespace tracectl
