#include "aggregate/user_probes.hpp"

#include "userspace_probe_location.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string_view>
#include <sys/types.h>

namespace tracectl::aggregate {

namespace {

bool hasWildcard(const std::string& s) {
    return s.find_first_of("*?[") != std::string::npos;
}

/// The provider and process id of a process's provider `text`: "pid" and the digits after
/// it (pid1234; -1 if they overflow), or, `target` given, the name `text` ends in $target's
/// digits after (myprov1234: "myprov"; python3 of $target 1234 is python31234, so the
/// digits are $target's, not all trailing ones). nullopt for anything else.
std::optional<std::pair<std::string, std::int64_t>> splitPid(const std::string& text,
                                                             std::optional<std::int64_t> target) {
    const auto allDigits = [](std::string_view s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
    };
    if (text.rfind("pid", 0) == 0 && allDigits(std::string_view(text).substr(3))) {
        std::int64_t pid = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data() + 3, end, pid);
        return std::pair{std::string("pid"), ec == std::errc() && ptr == end ? pid : -1};
    }
    if (target) {
        const std::string digits = std::to_string(*target);
        if (text.size() > digits.size() &&
            text.compare(text.size() - digits.size(), digits.size(), digits) == 0) {
            return std::pair{text.substr(0, text.size() - digits.size()), *target};
        }
    }
    return std::nullopt;
}

/// `s` with every byte other than a letter, a digit or '_' made '_'.
std::string identifier(const std::string& s) {
    std::string out = s;
    for (char& c : out) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') {
            c = '_';
        }
    }
    return out;
}

} // namespace

std::optional<UserProbe> userProbe(const std::vector<std::string>& parts,
                                   std::optional<std::int64_t> target, const std::string& text,
                                   Position at) {
    if (parts.size() != 4) {
        return std::nullopt;
    }
    const auto split = splitPid(parts[0], target);
    if (!split) {
        return std::nullopt; // an event provider (whose name may end in digits)
    }
    const auto& [provider, pid] = *split;
    const bool pidProvider = provider == "pid";
    if (pid <= 0 || pid > std::numeric_limits<pid_t>::max()) {
        throw ProgramError(at, "probe description '" + text +
                                   "': " + parts[0].substr(provider.size()) + " is no process id");
    }
    if (hasWildcard(provider)) {
        throw ProgramError(at, "probe description '" + text +
                                   "': a process's provider has no wildcards");
    }
    UserProbe probe;
    probe.pid = pid;
    probe.provider = provider;
    probe.module = parts[1];
    const std::string& function = parts[2];
    const std::string& name = parts[3];
    if (pidProvider) {
        if (function.empty() || hasWildcard(function)) {
            throw ProgramError(at, "probe description '" + text +
                                       "': the pid provider needs one function's name (no "
                                       "wildcards), as in pid$target::malloc:entry");
        }
        if (name != "entry" && name != "return") {
            throw ProgramError(at, "probe description '" + text +
                                       "': the pid provider's probes are entry and return "
                                       "(instruction offsets are not offered)");
        }
        probe.kind = name == "entry" ? UserProbe::Kind::Entry : UserProbe::Kind::Return;
        probe.function = function;
    } else {
        if (!function.empty() && function != "*") {
            throw ProgramError(at, "probe description '" + text +
                                       "': a USDT probe is named by its provider and name "
                                       "(PROVIDER$target:::NAME); leave the function empty");
        }
        if (name.empty() || hasWildcard(name)) {
            throw ProgramError(at, "probe description '" + text +
                                       "': give the USDT probe's name (no wildcards)");
        }
        probe.kind = UserProbe::Kind::Usdt;
    }
    probe.name = name;
    return probe;
}

std::string userProbeEvent(const UserProbe& probe) {
    const std::string head = identifier(probe.provider) + std::to_string(probe.pid) + "_";
    const std::string event = probe.kind == UserProbe::Kind::Usdt
                                  ? head + identifier(probe.name)
                                  : head + identifier(probe.function) + "_" + probe.name;
    constexpr std::size_t kLongest = 64;
    if (event.size() <= kLongest) {
        return event;
    }
    // FNV-1a over the untruncated name (and the original bytes, which identifier() may
    // have merged), so that two long names sharing their first 55 bytes differ.
    std::uint32_t hash = 2166136261u;
    const std::string whole = probe.provider + ":" + probe.function + ":" + probe.name;
    for (const char c : whole) {
        hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
    }
    char tail[10];
    std::snprintf(tail, sizeof tail, "_%08x", hash);
    return event.substr(0, kLongest - 9) + tail;
}

std::string userProbeLocation(const UserProbe& probe, const std::string& executable) {
    UserspaceProbeLocation l;
    l.path = executable;
    switch (probe.kind) {
    case UserProbe::Kind::Entry:
        l.kind = UserspaceProbeLocation::Kind::FunctionArguments;
        l.symbol = probe.function;
        break;
    case UserProbe::Kind::Return:
        l.kind = UserspaceProbeLocation::Kind::FunctionReturn;
        l.symbol = probe.function;
        break;
    case UserProbe::Kind::Usdt:
        l.kind = UserspaceProbeLocation::Kind::Sdt;
        l.provider = probe.provider;
        l.probe = probe.name;
        break;
    }
    return formatUserspaceProbeLocation(l);
}

std::string userProbeLabel(const UserProbe& probe) {
    return probe.function + ":" + probe.name;
}

} // namespace tracectl::aggregate
