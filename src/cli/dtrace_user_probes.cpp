#include "dtrace_user_probes.hpp"

#include "aggregate/trace_reader.hpp"
#include "aggregate/user_probes.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <unistd.h>

namespace tracectl::cli {

namespace agg = tracectl::aggregate;

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
            const std::string file = executable.substr(executable.rfind('/') + 1);
            if (!user.module.empty() && user.module != "*" && user.module != "a.out" &&
                user.module != file) {
                throw agg::TraceReadError("probe description " + probe.text + ": module " +
                                          user.module + " is not the executable of process " +
                                          std::to_string(user.pid) + " (" + executable +
                                          "); probes of shared libraries are not offered");
            }
            enablings.push_back(
                {probe.pattern, agg::userProbeLocation(user, executable), probe.text});
        }
    }
    return enablings;
}

} // namespace tracectl::cli
