// Reads the a{sv} options dictionary every tracectld method takes from a
// raw sd-bus message into the values the option readers check
// (typed_option.hpp, objects/create_session_options.hpp, ...).
#pragma once

#include <cstddef>
#include <map>
#include <sdbus-c++/Types.h>
#include <string>
#include <systemd/sd-bus.h>

namespace tracectl::bus {

/// Most entries an options dictionary may have, and most strings an `as`
/// value may hold: a client's message is read on the daemon's one loop, so
/// what one call makes it read is bounded (a million strings took minutes
/// through sd_bus_message_read_strv, whose appends rescan the list).
inline constexpr std::size_t kMaxOptionEntries = 256;
inline constexpr std::size_t kMaxOptionArrayItems = 4096;

/// The a{sv} at the read position of `m`, consumed. Values of the basic
/// types (b y n q i u x t d s o g) and string arrays (as) are taken; any
/// other value type, a key given twice, more than kMaxOptionEntries entries
/// and an array of more than kMaxOptionArrayItems strings throw
/// tracectl::Error(InvalidArgument) naming the key, so nothing is silently
/// dropped or overridden, and reading stops there. Throws std::system_error
/// if `m` holds no a{sv} there.
std::map<std::string, sdbus::Variant> readOptions(sd_bus_message* m);

/// The string argument (s) at the read position of `m`, consumed. Throws
/// std::system_error if `m` holds no string there.
std::string readStringArgument(sd_bus_message* m);

} // namespace tracectl::bus
