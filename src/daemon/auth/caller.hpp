// Who sent a D-Bus message to tracectld.
#pragma once

#include <string>
#include <sys/types.h>

namespace tracectl::auth {

/// The sender of a message: its unique bus name and uid.
struct Caller {
    std::string sender; ///< unique name, ":1.42"
    uid_t uid = 0;      ///< the bus's uid of the sender's connection (SO_PEERCRED)
};

} // namespace tracectl::auth
