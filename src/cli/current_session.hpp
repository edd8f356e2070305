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
// goes away at logout (pam_systemd), and so does the choice. A shell without
// XDG_RUNTIME_DIR (su, sudo, ssh or a container without pam_systemd) keeps it
// in `$XDG_CONFIG_HOME/tracectl` or `$HOME/.config/tracectl` instead (if that
// folder is the caller's), where it stays until changed, as lttng keeps it in
// $HOME/.lttngrc.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace tracectl::cli {

/// Where the current session of one bus is kept.
class CurrentSession {
public:
    /// For the bus called `bus_key` ("system", "user", or
    /// address_bus_key(address)) in `base`/tracectl, `base` as baseFolder()
    /// gives it (empty: nowhere, and then nothing is kept: read() gives
    /// nullopt and write() throws).
    CurrentSession(std::filesystem::path base, std::string busKey);

    /// The folder whose "tracectl" subfolder keeps the current sessions, from
    /// the environment's values (null or not an absolute path: not set, as
    /// the XDG base directory specification says): `runtimeDir`
    /// ($XDG_RUNTIME_DIR), else `configHome` ($XDG_CONFIG_HOME), else
    /// `home`/.config ($HOME); empty when none is set. The last two only if
    /// they belong to `owner` (the caller's effective uid; for a folder not
    /// made yet, the nearest existing folder above it): a shell that kept
    /// another user's environment (su without -, setpriv) has no current
    /// session rather than one it may not write.
    static std::filesystem::path baseFolder(const char* runtimeDir, const char* configHome,
                                            const char* home, uid_t owner);

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

    /// Keeps `name` as the current session (creating the folder, and the
    /// base folder if it is missing, mode 0700; the folder must then be the
    /// caller's alone, as read() checks). Throws std::runtime_error naming
    /// the file and the reason when it cannot (no base folder, no
    /// permission, a disk error).
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
