#include "dtrace_user_probes.hpp"

#include "aggregate/trace_reader.hpp"
#include "aggregate/user_probes.hpp"
#include "symbols/process_objects.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <unistd.h>

namespace tracectl::cli {

namespace agg = tracectl::aggregate;
namespace sym = tracectl::symbols;

std::string processExecutable(long pid) {
    const std::string link = "/proc/" + std::to_string(pid) + "/exe";
    std::string path(PATH_MAX, '\0');
    const ssize_t n = readlink(link.c_str(), path.data(), path.size());
    if (n < 0) {
        const int error = errno;
        if (error == ENOENT) {
            throw agg::TraceReadError("process " + std::to_string(pid) + " does not exist");
        }
        throw agg::TraceReadError("cannot read " + link + ": " + std::strerror(error));
    }
    path.resize(static_cast<std::size_t>(n));
    const std::string deleted = " (deleted)";
    if (path.size() > deleted.size() &&
        path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0) {
        throw agg::TraceReadError("the executable of process " + std::to_string(pid) + " (" +
                                  path.substr(0, path.size() - deleted.size()) +
                                  ") was deleted since it started");
    }
    return path;
}

namespace {

/// The list of `paths`, for a message: "A, B, C".
std::string listed(const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths) {
        out += (out.empty() ? "" : ", ") + p;
    }
    return out;
}

/// The file of process `user.pid`'s objects that pid provider probe `user` (written
/// `text`) goes in: the executable when its module is "a.out" or the executable's file
/// name; the object its module names; for an empty module (or "*"), the executable if it
/// defines the function, else the first shared library that exports it.
std::string pidProbeFile(const agg::UserProbe& user, const std::string& text,
                         const std::string& executable) {
    const std::string file = executable.substr(executable.rfind('/') + 1);
    const std::string pid = std::to_string(user.pid);
    const bool anyModule = user.module.empty() || user.module == "*";
    if (user.module == "a.out" || user.module == file ||
        (anyModule && (::access(executable.c_str(), R_OK) != 0 ||
                       sym::elfDefinesFunction(executable, user.function, false)))) {
        return executable; // the daemon reads it (and refuses what it may not)
    }
    const sym::ProcessObjects objects =
        sym::processObjects(static_cast<std::int32_t>(user.pid), executable);
    const std::vector<std::string> libraries(objects.paths.begin() + 1, objects.paths.end());
    if (anyModule) {
        for (const std::string& library : libraries) {
            if (sym::elfDefinesFunction(library, user.function, true)) {
                return library;
            }
        }
        throw agg::TraceReadError(
            "probe description " + text + ": no function named '" + user.function +
            "' in process " + pid + "'s executable (" + executable +
            ": .symtab, .dynsym) nor in the .dynsym exports of its shared libraries (" +
            objects.source + "): " + (libraries.empty() ? "none" : listed(libraries)));
    }
    for (const std::string& library : libraries) {
        if (!sym::moduleNames(user.module, library)) {
            continue;
        }
        if (!sym::elfDefinesFunction(library, user.function, true)) {
            throw agg::TraceReadError("probe description " + text + ": " + library +
                                      " exports no function named '" + user.function +
                                      "' (its .dynsym's global and weak functions)");
        }
        return library;
    }
    throw agg::TraceReadError("probe description " + text + ": module " + user.module +
                              " is neither the executable of process " + pid + " (" + executable +
                              ") nor one of its shared libraries (" + objects.source +
                              "): " + (libraries.empty() ? "none" : listed(libraries)));
}

} // namespace

std::vector<UserProbeEnabling> userProbeEnablings(const agg::Program& program) {
    std::vector<UserProbeEnabling> enablings;
    for (const agg::Clause& clause : program.clauses) {
        for (const agg::ProbeDescription& probe : clause.probes) {
            if (!probe.user ||
                std::any_of(enablings.begin(), enablings.end(),
                            [&](const UserProbeEnabling& e) { return e.event == probe.pattern; })) {
                continue;
            }
            const agg::UserProbe& user = *probe.user;
            const std::string executable = processExecutable(static_cast<long>(user.pid));
            if (user.kind != agg::UserProbe::Kind::Usdt) {
                enablings.push_back(
                    {probe.pattern,
                     agg::userProbeLocation(user, pidProbeFile(user, probe.text, executable)),
                     probe.text});
                continue;
            }
            const std::string file = executable.substr(executable.rfind('/') + 1);
            if (!user.module.empty() && user.module != "*" && user.module != "a.out" &&
                user.module != file) {
                throw agg::TraceReadError("probe description " + probe.text + ": module " +
                                          user.module + " is not the executable of process " +
                                          std::to_string(user.pid) + " (" + executable +
                                          "); USDT probes of shared libraries are not offered");
            }
            enablings.push_back(
                {probe.pattern, agg::userProbeLocation(user, executable), probe.text});
        }
    }
    return enablings;
}

} // namespace tracectl::cli
