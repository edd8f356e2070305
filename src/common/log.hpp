// Logging for tracectld and tracectl-consumerd: to the journal when the
// process runs under systemd with its stderr connected to the journal
// ($JOURNAL_STREAM, see systemd.exec(5)), to stderr otherwise.
#pragma once

#include <string_view>

namespace tracectl::log {

/// syslog(3) priorities, the journal's PRIORITY= field.
enum class Level { Error = 3, Warning = 4, Notice = 5, Info = 6, Debug = 7 };

enum class Target {
    Auto,    ///< journal if $JOURNAL_STREAM names our stderr, else stderr
    Journal, ///< sd_journal_send(3)
    Stderr,  ///< "<ident>[pid]: level: message" lines
};

/// Sets the identifier (SYSLOG_IDENTIFIER=), the target and the most verbose
/// level that is emitted. Call once at start-up; until then messages go to
/// stderr at Info with identifier "tracectl".
void init(std::string_view identifier, Target target, Level maxLevel);

/// Emits one message. `sessionId`, when not empty, is attached as the
/// journal field TRACECTL_SESSION= so `journalctl TRACECTL_SESSION=<id>`
/// finds every line about one session. Never throws.
void write(Level level, std::string_view message, std::string_view sessionId = {}) noexcept;

inline void error(std::string_view m, std::string_view s = {}) noexcept {
    write(Level::Error, m, s);
}
inline void warning(std::string_view m, std::string_view s = {}) noexcept {
    write(Level::Warning, m, s);
}
inline void notice(std::string_view m, std::string_view s = {}) noexcept {
    write(Level::Notice, m, s);
}
inline void info(std::string_view m, std::string_view s = {}) noexcept {
    write(Level::Info, m, s);
}
inline void debug(std::string_view m, std::string_view s = {}) noexcept {
    write(Level::Debug, m, s);
}

} // namespace tracectl::log
