// Looking up user names in the password database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tracectl::cli {

/// The login name of `uid` (getpwuid_r), or nullopt if the uid has no entry or the
/// lookup fails. Never throws except std::bad_alloc.
std::optional<std::string> lookupUserName(std::uint32_t uid);

} // namespace tracectl::cli
