// The output folder of a session, checked and made as its owner (uid, gid
// and the user's supplementary groups, as the consumer unit runs) in a
// forked child, so the daemon never creates a file as root in a user's
// folder and a caller can only name a folder it could write itself.
#pragma once

#include <string>
#include <sys/types.h>

namespace tracectl {

/// The primary group of `uid` (getpwuid_r(3)); the uid itself if unknown.
gid_t primaryGidOf(uid_t uid);

/// At CreateSession: could `uid` (with `gid` and its groups) make and write
/// `path`? Makes nothing. Every existing component is looked at: a symbolic
/// link owned by another user than `uid` or root is refused (it could lead
/// the trace where that user chooses); the deepest existing folder must be
/// writable by `uid`; an existing `path` must be a folder without a "ust"
/// entry. Throws Error(InvalidArgument) naming what is wrong,
/// Error(Failed) if the check itself cannot run (fork, a child that hangs
/// more than 2 s, e.g. on a dead network mount).
void checkOutputFolder(const std::string& path, uid_t uid, gid_t gid);

/// At the first Start (and for each snapshot's folder): mkdir -p `path`
/// (0750) as `uid`, with the same symbolic link rule; then checks, as that
/// user, that `path` is a folder the user can write. With `claim` it must
/// hold no trace yet ("ust" or "archives") and is claimed by making its
/// "ust" folder (a second session on the same folder, whoever owns it, would
/// overwrite LTTng's layout); a snapshot session's own folder is not
/// claimed (each snapshot claims its own). Throws Error(InvalidArgument)
/// naming what is wrong, Error(Failed) if the check cannot run.
void makeOutputFolder(const std::string& path, uid_t uid, gid_t gid, bool claim = true);

/// After a snapshot that wrote nothing: removes `path` and the folders
/// below it, as `uid`, if they hold no file (only empty folders, such as
/// the "ust" one makeOutputFolder() claims with); anything else stays.
/// Returns true if `path` is gone. Never throws (a check that cannot run
/// leaves the folder).
bool removeEmptyFolder(const std::string& path, uid_t uid, gid_t gid);

} // namespace tracectl
