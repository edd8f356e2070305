// A session's identity: a random (version 4) UUID.
#pragma once

#include <optional>
#include <string>
#include <systemd/sd-id128.h>

namespace tracectl {

/// 128-bit session identifier, drawn with sd_id128_randomize(3) (RFC 4122
/// version 4). Value type; compares by value.
class SessionId {
public:
    /// A new random id. Throws std::system_error if the kernel has no entropy source.
    static SessionId random();
    /// Parses 32 lowercase/uppercase hex digits; returns false if `hex` is not that.
    static bool fromHex(const std::string& hex, SessionId& out);
    /// The id of 32 hex digits, or nullopt.
    static std::optional<SessionId> parseHex(const std::string& hex);

    /// 32 lowercase hex digits: the last element of the session object path.
    std::string hex() const;
    /// 8-4-4-4-12 lowercase hex (RFC 4122 textual form): the `Id` property.
    std::string uuid() const;

    bool operator==(const SessionId& other) const noexcept {
        return sd_id128_equal(value_, other.value_);
    }

private:
    explicit SessionId(sd_id128_t v) : value_(v) {}
    sd_id128_t value_{};
};

} // namespace tracectl
