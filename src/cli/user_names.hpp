// Looking up user names in the password database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tracectl::cli {

/// The login name of `uid` (getpwuid_r), or nullopt if the uid has no entry or the
/// lookup fails. Never throws except std::bad_alloc.
std::optional<std::string> lookup_user_name(std::uint32_t uid);

} // namespace tracectl::cli
