#include "session_file_commands.hpp"

#include "error_report.hpp"
#include "session_view.hpp"
#include "trace_commands.hpp"
#include "utf8.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sdbus-c++/Error.h>
#include <sstream>
#include <stdexcept>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kNoSuchSession = "org.tracectl.Tracing1.Error.NoSuchSession";
constexpr const char* kUnknownObject = "org.freedesktop.DBus.Error.UnknownObject";
constexpr const char* kInvalidArgument = "org.tracectl.Tracing1.Error.InvalidArgument";
/// How the daemon's LoadSessions begins its message for a document that is
/// not a session file at all (objects/manager_load.cpp).
constexpr std::string_view kNotASessionFile = "not an LTTng session file: ";
/// The daemon's bound (session_file::kMaxSessionFileBytes).
constexpr std::uintmax_t kMaxFileBytes = 4 * 1024 * 1024;

void printWarnings(const std::vector<std::string>& warnings, std::ostream& err) {
    for (const std::string& w : warnings)
        err << "tracectl: warning: " << w << '\n';
}

/// Writes `text` to `path` through a temporary file of a random name in the
/// same folder, made with O_EXCL (never an existing file or a symbolic link
/// someone planted) and given its mode through its own fd; then renamed onto
/// `path`, never over an existing entry unless `force` (and even then a
/// symbolic link at `path` is replaced, not followed). Throws
/// std::runtime_error naming `path`.
void writeFile(const fs::path& path, const std::string& text, bool force) {
    std::string tmp = (path.parent_path() / ("." + path.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0)
        throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
    auto fail = [&](const std::string& why) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot write " + path.string() + ": " + why);
    };
    if (::fchmod(fd, 0644) != 0)
        fail(std::strerror(errno));
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail(n < 0 ? std::strerror(errno) : "no space written");
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(e));
    }
    const int r =
        force ? ::rename(tmp.c_str(), path.c_str())
              : ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (r != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        if (e == EEXIST)
            throw std::runtime_error(path.string() + " exists; give --force to overwrite it");
        throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(e));
    }
}

std::string readFile(const fs::path& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw std::runtime_error("cannot read " + path.string() + ": " + ec.message());
    if (size > kMaxFileBytes)
        throw std::runtime_error(path.string() + " is larger than 4 MiB: not a session file");
    std::ifstream f(path, std::ios::binary);
    std::ostringstream text;
    text << f.rdbuf();
    if (!f && !f.eof())
        throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
    return text.str();
}

/// The files a load reads: `path` itself, or the *.lttng files of the
/// folder `path`, by name.
std::vector<fs::path> filesOf(const fs::path& path) {
    if (!fs::is_directory(path))
        return {path};
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
        if (entry.path().extension() == ".lttng" && !entry.is_directory())
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

std::string defaultSessionsFolder() {
    for (const char* variable : {"LTTNG_HOME", "HOME"})
        if (const char* v = std::getenv(variable); v != nullptr && *v != '\0')
            return std::string(v) + "/.lttng/sessions";
    throw std::runtime_error("neither LTTNG_HOME nor HOME is set: give --output-path");
}

ExitStatus runSave(BusClient& bus, const SaveArgs& args, std::ostream& out, std::ostream& err) {
    std::vector<std::pair<std::string, std::string>> sessions; // (path, name)
    if (args.all) {
        const uid_t self = geteuid();
        for (const std::string& path : bus.listSessions()) {
            try {
                const SessionView v = sessionViewFromProperties(path, bus.sessionProperties(path));
                if (v.owner == self)
                    sessions.emplace_back(path, v.name);
            } catch (const sdbus::Error& e) {
                if (e.getName() != kUnknownObject) // destroyed meanwhile
                    throw;
            }
        }
        if (sessions.empty()) {
            out << "No session to save.\n";
            return ExitStatus::Success;
        }
    } else {
        const std::string path = resolveSession(bus, args.name);
        sessions.emplace_back(path, args.name ? *args.name : bus.sessionName(path));
    }
    const fs::path folder = args.outputPath ? *args.outputPath : defaultSessionsFolder();
    std::error_code ec;
    const bool made = fs::create_directories(folder, ec);
    if (ec) {
        printErrorLine(err, "cannot make " + folder.string() + ": " + ec.message());
        return ExitStatus::DaemonError;
    }
    // A folder made here for the caller's sessions is the caller's only; one
    // that was there keeps its mode.
    if (made && !args.outputPath)
        fs::permissions(folder, fs::perms::owner_all, ec);
    ExitStatus status = ExitStatus::Success;
    for (const auto& [path, name] : sessions) {
        auto [document, warnings] = bus.saveConfiguration(path);
        printWarnings(warnings, err);
        const fs::path file = folder / (name + ".lttng");
        try {
            writeFile(file, document, args.force);
            out << "Session " << name << " saved to " << file.string() << '\n';
        } catch (const std::exception& e) {
            printErrorLine(err, e.what());
            status = ExitStatus::DaemonError;
        }
    }
    return status;
}

ExitStatus runLoad(BusClient& bus, const LoadArgs& args, std::ostream& out, std::ostream& err) {
    std::vector<fs::path> files;
    if (args.inputPath) {
        if (!fs::exists(*args.inputPath)) {
            printErrorLine(err, "no such file or folder: " + *args.inputPath);
            return ExitStatus::DaemonError;
        }
        files = filesOf(*args.inputPath);
    } else {
        // lttng-load(1): the caller's folder first, then the system one.
        for (const std::string& folder :
             {defaultSessionsFolder(), std::string(kSystemSessionsFolder)})
            if (fs::is_directory(folder))
                for (fs::path& f : filesOf(folder))
                    files.push_back(std::move(f));
    }
    ExitStatus status = ExitStatus::Success;
    bool found = false;
    // With a NAME, a file that cannot be read or is not a session file at
    // all is passed over with a warning: it is not the one asked for.
    std::vector<std::string> passedOver;
    for (const fs::path& file : files) {
        std::string text;
        try {
            text = readFile(file);
            if (text.find('\0') != std::string::npos)
                throw std::runtime_error(file.string() + " holds a NUL byte: not a session file");
            if (!isValidUtf8(text))
                throw std::runtime_error(file.string() +
                                         " is not UTF-8, which session files are (convert it "
                                         "with iconv -t UTF-8)");
        } catch (const std::exception& e) {
            if (args.name) {
                passedOver.push_back(e.what());
                continue;
            }
            printErrorLine(err, e.what());
            status = ExitStatus::DaemonError;
            continue;
        }
        try {
            auto [paths, warnings] =
                bus.loadSessions(text, args.name, args.overrideName, args.overrideUrl);
            found = true;
            printWarnings(warnings, err);
            for (const std::string& path : paths)
                out << "Session " << bus.sessionName(path) << " loaded from " << file.string()
                    << '\n';
            if (args.name)
                break; // one session of that name: done
        } catch (const sdbus::Error& e) {
            if (args.name && e.getName() == kNoSuchSession)
                continue; // this file has no session of that name
            if (args.name && e.getName() == kInvalidArgument &&
                e.getMessage().rfind(kNotASessionFile, 0) == 0) {
                passedOver.push_back(file.string() + ": " + e.getMessage());
                continue;
            }
            printErrorLine(err, file.string() + ": " + e.getName() + ": " + e.getMessage());
            status = exitStatusForError(e.getName());
            if (status == ExitStatus::Unreachable)
                return status;
        }
    }
    if (args.name && !found)
        for (const std::string& why : passedOver)
            err << "tracectl: warning: passed over " << why << '\n';
    if (files.empty()) {
        printErrorLine(err, "no session file (*.lttng) in " +
                                (args.inputPath
                                     ? *args.inputPath
                                     : defaultSessionsFolder() + " or " + kSystemSessionsFolder));
        return ExitStatus::DaemonError;
    }
    if (args.name && !found && status == ExitStatus::Success) {
        printErrorLine(err,
                       "no session named " + *args.name + " in " +
                           (args.inputPath ? *args.inputPath : std::string("the session files")));
        return ExitStatus::DaemonError;
    }
    return status;
}

} // namespace tracectl::cli
