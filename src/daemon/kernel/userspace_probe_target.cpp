#include "kernel/userspace_probe_target.hpp"

#include "common/error.hpp"
#include "kernel/elf_probe_points.hpp"
#include "kernel/sdt_arguments.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <vector>

namespace tracectl::kernel {

namespace {

/// The caller's gid and supplementary groups, from /proc/PID/status.
std::vector<gid_t> groupsOf(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::vector<gid_t> groups;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string key;
        fields >> key;
        if (key == "Gid:") {
            unsigned long gid = 0;
            for (int i = 0; i < 2 && fields >> gid; ++i) // real and effective
                groups.push_back(static_cast<gid_t>(gid));
        } else if (key == "Groups:") {
            unsigned long gid = 0;
            while (fields >> gid)
                groups.push_back(static_cast<gid_t>(gid));
        }
    }
    return groups;
}

bool mayRead(const struct stat& st, pid_t pid, uid_t uid) {
    if (uid == 0)
        return true;
    if (st.st_uid == uid)
        return (st.st_mode & S_IRUSR) != 0;
    const std::vector<gid_t> groups = groupsOf(pid);
    if (std::find(groups.begin(), groups.end(), st.st_gid) != groups.end())
        return (st.st_mode & S_IRGRP) != 0;
    return (st.st_mode & S_IROTH) != 0;
}

std::string hex(std::uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

} // namespace

std::string UserspaceProbeTarget::definition(const std::string& group,
                                             const std::string& event) const {
    const bool ret = location.kind == UserspaceProbeLocation::Kind::FunctionReturn;
    std::string line = std::string(ret ? "r:" : "p:") + group + "/" + event + " /proc/self/fd/" +
                       std::to_string(file.get()) + ":" + hex(offset);
    if (!fetchArguments.empty())
        line += " " + fetchArguments;
    return line;
}

std::shared_ptr<const UserspaceProbeTarget>
openUserspaceProbeTarget(const UserspaceProbeLocation& location, pid_t pid, uid_t uid) {
    const std::string& path = location.path;
    if (path.empty() || path[0] != '/')
        throw Error(ErrorCode::InvalidArgument,
                    "userspace probe path '" + path + "' is not absolute");
    auto t = std::make_shared<UserspaceProbeTarget>();
    t->location = location;
    // Through the caller's root: its mount namespace and chroot.
    const std::string seen = "/proc/" + std::to_string(pid) + "/root" + path;
    t->file = UniqueFd(::open(seen.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!t->file) {
        const int e = errno;
        throw Error(ErrorCode::InvalidArgument,
                    "userspace probe: " + path +
                        (e == ENOENT || e == ENOTDIR ? std::string(" does not exist")
                                                     : ": " + std::string(std::strerror(e))));
    }
    struct stat st {};
    if (::fstat(t->file.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(ErrorCode::InvalidArgument,
                    "userspace probe: " + path + " is not a regular file");
    if (!mayRead(st, pid, uid))
        throw Error(ErrorCode::InvalidArgument, "userspace probe: " + path +
                                                    ": permission denied (the caller, uid " +
                                                    std::to_string(uid) + ", may not read it)");
    try {
        switch (location.kind) {
        case UserspaceProbeLocation::Kind::Function:
            t->offset = elfFunctionOffset(t->file.get(), path, location.symbol);
            break;
        case UserspaceProbeLocation::Kind::FunctionArguments:
            t->offset = elfFunctionOffset(t->file.get(), path, location.symbol);
            // The x86-64 SysV ABI's integer argument registers, in order, and the
            // return address at the top of the stack: at a function's first instruction
            // the caller's frame is not linked yet, so ftrace's frame pointer walk
            // (userstacktrace) skips the caller; D's ustack() puts it back.
            t->fetchArguments = "arg0=%di:s64 arg1=%si:s64 arg2=%dx:s64 arg3=%cx:s64 "
                                "arg4=%r8:s64 arg5=%r9:s64 caller=$stack0:x64";
            break;
        case UserspaceProbeLocation::Kind::FunctionReturn:
            t->offset = elfFunctionOffset(t->file.get(), path, location.symbol);
            // The return value, as the ABI returns an integer (rax).
            t->fetchArguments = "ret=$retval:s64";
            break;
        case UserspaceProbeLocation::Kind::Sdt: {
            const std::vector<SdtProbeSite> sites =
                elfSdtProbeSites(t->file.get(), path, location.provider, location.probe);
            const std::string name = location.provider + ":" + location.probe;
            if (std::any_of(sites.begin(), sites.end(),
                            [](const SdtProbeSite& s) { return s.semaphore != 0; }))
                throw Error(ErrorCode::InvalidArgument,
                            "SDT probe " + name + " of " + path +
                                " is guarded by a semaphore: such probes are not supported (as "
                                "in LTTng 2.13)");
            if (sites.size() > 1)
                throw Error(ErrorCode::InvalidArgument,
                            "SDT probe " + name + " has " + std::to_string(sites.size()) +
                                " sites in " + path +
                                "; probes with several sites are not supported yet");
            t->offset = sites.front().offset;
            try {
                t->fetchArguments = sdtFetchArguments(sites.front().arguments);
            } catch (const std::invalid_argument& e) {
                throw Error(ErrorCode::InvalidArgument,
                            "SDT probe " + name + " of " + path + ": " + e.what());
            }
            break;
        }
        }
    } catch (const ElfProbeError& e) {
        throw Error(ErrorCode::InvalidArgument, std::string("userspace probe: ") + e.what());
    }
    return t;
}

} // namespace tracectl::kernel
