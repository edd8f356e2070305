// The folder where the daemon keeps each session's state document
// (session_record.hpp), one file per session: <32 hex digits>.json, mode
// 0600, written to a temporary file and renamed over the old one, so a
// crash of the daemon leaves the old document or the new one, never half of
// one (not synced: a power failure ends the sessions anyway).
//
// Where: systemd's RuntimeDirectory= of the unit (tracectld.service:
// /run/tracectl, kept across restarts by RuntimeDirectoryPreserve=restart,
// removed at stop and at boot), else <run directory>/tracectld-sessions.
// Runtime, not state: what a session needs to go on (its consumer unit,
// its ring buffers, its apps' registrations) does not outlive a reboot
// either; LTTng's session files (tracectl save, auto-load) are the way to
// keep a configuration across reboots.
#pragma once

#include "restart/session_record.hpp"

#include <string>
#include <vector>

namespace tracectl {

class SessionStore {
public:
    /// Uses `directory`, made (mode 0700) if missing. An empty `directory`,
    /// or one that is not a folder of this process's user that only it may
    /// write (logged): a store that keeps nothing.
    explicit SessionStore(std::string directory);

    /// Writes `record`. Failures are logged (the session goes on; it would
    /// not come back after a restart), never thrown.
    void save(const SessionRecord& record) const;
    /// Removes the session's document, if any.
    void remove(const SessionId& id) const;

    /// Renames the session's document to <name>.refused: kept for a look,
    /// never read again.
    void setAside(const SessionId& id) const;

    /// One document that could be read.
    struct Loaded {
        std::string path;
        SessionRecord record;
    };
    /// Every document of the folder. A file that is not a regular file
    /// owned by this process's user and writable by it only, or whose
    /// document fromStateDocument() refuses, is appended to `refused`
    /// (path and reason), and renamed to <name>.refused so that it is
    /// refused once only.
    std::vector<Loaded> loadAll(std::vector<std::string>& refused) const;

    const std::string& directory() const noexcept { return dir_; }

private:
    std::string dir_;
};

} // namespace tracectl
