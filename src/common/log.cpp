#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

namespace tracectl::log {

namespace {

struct State {
    std::string identifier = "tracectl";
    bool journal = false;
    Level maxLevel = Level::Info;
};

State& state() {
    static State s;
    return s;
}

// systemd.exec(5): $JOURNAL_STREAM is "<device>:<inode>" of the stream the
// service manager connected stdout/stderr to; only trust it if it is ours.
bool stderrIsJournal() {
    const char* env = std::getenv("JOURNAL_STREAM");
    if (env == nullptr)
        return false;
    struct stat st {};
    if (fstat(STDERR_FILENO, &st) < 0)
        return false;
    unsigned long long dev = 0;
    unsigned long long ino = 0;
    if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2)
        return false;
    return dev == static_cast<unsigned long long>(st.st_dev) &&
           ino == static_cast<unsigned long long>(st.st_ino);
}

const char* levelName(Level level) {
    switch (level) {
    case Level::Error:
        return "error";
    case Level::Warning:
        return "warning";
    case Level::Notice:
        return "notice";
    case Level::Info:
        return "info";
    case Level::Debug:
        return "debug";
    }
    return "?";
}

} // namespace

void init(std::string_view identifier, Target target, Level maxLevel) {
    State& s = state();
    s.identifier = identifier;
    s.maxLevel = maxLevel;
    s.journal = target == Target::Journal || (target == Target::Auto && stderrIsJournal());
}

void write(Level level, std::string_view message, std::string_view sessionId) noexcept {
    const State& s = state();
    if (static_cast<int>(level) > static_cast<int>(s.maxLevel))
        return;
    const int len = static_cast<int>(message.size());
    if (s.journal) {
        if (sessionId.empty()) {
            sd_journal_send("MESSAGE=%.*s", len, message.data(), "PRIORITY=%i",
                            static_cast<int>(level), "SYSLOG_IDENTIFIER=%s", s.identifier.c_str(),
                            nullptr);
        } else {
            sd_journal_send("MESSAGE=%.*s", len, message.data(), "PRIORITY=%i",
                            static_cast<int>(level), "SYSLOG_IDENTIFIER=%s", s.identifier.c_str(),
                            "TRACECTL_SESSION=%.*s", static_cast<int>(sessionId.size()),
                            sessionId.data(), nullptr);
        }
        return;
    }
    std::fprintf(stderr, "%s[%d]: %s: %.*s\n", s.identifier.c_str(), static_cast<int>(getpid()),
                 levelName(level), len, message.data());
}

} // namespace tracectl::log
