// The current session: the session a tracectl command acts on when none is
// named, as lttng's current session (lttng-concepts(7): `lttng create` and
// `lttng set-session` set it in $LTTNG_HOME/.lttngrc, and the commands that
// take an optional SESSION use it).
//
// tracectl keeps it per user and per bus, in the user's runtime folder:
// `$XDG_RUNTIME_DIR/tracectl/current-session.<bus>`, where <bus> is
// "system", "user" or "address-<16 hex digits>" (FNV-1a of the --bus-address
// value), since session names are per daemon. The file holds the name and a
// newline; it is written to a temporary file in the same folder and renamed
// over the old one, mode 0600 in a folder of mode 0700. The runtime folder
// goes away at logout (pam_systemd), and so does the choice.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tracectl::cli {

/// Where the current session of one bus is kept.
class CurrentSession {
public:
    /// For the bus called `bus_key` ("system", "user", or
    /// address_bus_key(address)) under `runtime_dir` ($XDG_RUNTIME_DIR; empty:
    /// not set, and then nothing is kept: read() gives nullopt and write()
    /// throws).
    CurrentSession(std::filesystem::path runtimeDir, std::string busKey);

    /// The key of the bus at D-Bus address `address`: "address-" and the
    /// FNV-1a 64-bit hash of the address in 16 lowercase hex digits.
    static std::string addressBusKey(std::string_view address);

    /// The file's path (empty without a runtime folder).
    const std::filesystem::path& file() const noexcept { return file_; }

    /// The name kept, or nullopt when none is (no runtime folder, no file).
    /// Throws std::runtime_error naming the file when it cannot be read, is
    /// not a regular file (a FIFO, a symbolic link, a folder), lies in a
    /// folder that is a symbolic link, not the caller's or writable by
    /// others, or does not hold one valid name (UTF-8, 1 to 255 bytes, no
    /// control character: tracectl never writes anything else).
    std::optional<std::string> read() const;

    /// Keeps `name` as the current session (creating the folder, which must
    /// then be the caller's alone, as read() checks). Throws
    /// std::runtime_error naming the file and the reason when it cannot
    /// (no $XDG_RUNTIME_DIR, no permission, a disk error).
    void write(std::string_view name) const;

    /// Forgets the current session if it is `name` (after it was destroyed).
    /// Returns true if it was. Never throws: a file that cannot be removed
    /// stays, and is found stale at the next read.
    bool forgetIf(std::string_view name) const noexcept;

private:
    std::filesystem::path dir_;
    std::filesystem::path file_;
};

} // namespace tracectl::cli
