// Making a session's output folder (or a snapshot's) as its owner.
#pragma once

#include <string>
#include <sys/types.h>

namespace tracectl {

/// mkdir -p `path` (0750) as `uid`:`gid` with the user's supplementary
/// groups (what the consumer unit runs with), in a child process, so the
/// daemon never creates a file as root in a user's folder; then checks, as
/// that user, that `path` is a folder the user can write. With `claim` it
/// must hold no trace yet, and is claimed by making its "ust" folder (a
/// second session on it would overwrite LTTng's layout). Throws
/// Error(InvalidArgument) naming what is wrong, Error(Failed) if it cannot fork.
void makeOutputFolder(const std::string& path, uid_t uid, gid_t gid, bool claim = true);

} // namespace tracectl
