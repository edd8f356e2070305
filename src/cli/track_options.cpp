#include "track_options.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace tracectl::cli {

namespace {

constexpr const char* kAttributes[] = {"vpid", "vuid", "vgid", "pid", "uid", "gid"};

bool isUstAttribute(std::string_view a) {
    return a == "vpid" || a == "vuid" || a == "vgid";
}

/// getpwnam_r or getgrnam_r, growing the buffer as they ask.
template <class Entry, class Get, class Id>
std::optional<std::uint32_t> lookup(const std::string& name, int sizeHint, Get get, Id id) {
    const long suggested = sysconf(sizeHint);
    std::vector<char> buffer(suggested > 0 ? static_cast<std::size_t>(suggested) : 1024);
    for (;;) {
        Entry entry{};
        Entry* result = nullptr;
        const int error = get(name.c_str(), &entry, buffer.data(), buffer.size(), &result);
        if (error == ERANGE && buffer.size() < 1024 * 1024) {
            buffer.resize(buffer.size() * 2);
            continue;
        }
        if (error != 0 || result == nullptr) {
            return std::nullopt;
        }
        return static_cast<std::uint32_t>(id(*result));
    }
}

std::optional<std::uint32_t> wholeNumber(const std::string& text) {
    std::uint32_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end) {
        return std::nullopt;
    }
    return value;
}

} // namespace

std::optional<std::uint32_t> lookupUserId(const std::string& name) {
    return lookup<passwd>(name, _SC_GETPW_R_SIZE_MAX, getpwnam_r,
                          [](const passwd& p) { return p.pw_uid; });
}

std::optional<std::uint32_t> lookupGroupId(const std::string& name) {
    return lookup<group>(name, _SC_GETGR_R_SIZE_MAX, getgrnam_r,
                         [](const group& g) { return g.gr_gid; });
}

CLI::App* addTrackCommand(CLI::App& app, bool track, TrackFlags& flags) {
    const std::string verb = track ? "track" : "untrack";
    auto* command = app.add_subcommand(
        verb, track ? "Record only the processes of given pids, uids or gids"
                    : "Stop recording the processes of given pids, uids or gids");
    flags.command = command;
    addDomainFlags(*command, flags.domain);
    flags.sessionOption =
        command->add_option("-s,--session", flags.session,
                            "Session (default: the current session, else your only session)");
    flags.attributes.clear();
    flags.attributes.reserve(std::size(kAttributes));
    for (const char* name : kAttributes) {
        auto& a = flags.attributes.emplace_back();
        a.name = name;
    }
    for (auto& a : flags.attributes) {
        const std::string_view n = a.name;
        const bool ust = isUstAttribute(n);
        const bool user = n.find("uid") != std::string_view::npos;
        const bool group = n.find("gid") != std::string_view::npos;
        const std::string what = user    ? "user ids or names"
                                 : group ? "group ids or names"
                                         : "process ids";
        a.option = command
                       ->add_option("--" + std::string(n), a.values,
                                    std::string(ust ? "-u" : "-k") + ": " + verb + " these " +
                                        what + " (comma-separated), or with --all every one")
                       ->expected(0, 1)
                       ->type_name("VALUES");
    }
    command->add_flag("-a,--all", flags.all,
                      track ? "Track every process again (the default)"
                            : "Track no process at all of that attribute");
    command->footer(
        track ? "Give -u or -k and exactly one attribute. A UST app is recorded only if its\n"
                "vpid, vuid and vgid are all tracked (every process is, by default) and the\n"
                "session's owner may trace it: tracking a uid never records the apps of\n"
                "another user unless the owner holds org.tracectl.Tracing1.trace-all-users.\n"
                "From 'every process', the tracker becomes the set of VALUES; later\n"
                "track commands add to it. Takes effect at once in an active session.\n"
                "Kernel trackers (-k --pid/--uid/--gid) are refused: tracefs cannot filter\n"
                "events by uid or gid, and tracectl does not drive its pid filter yet.\n\n"
                "Example:\n"
                "  tracectl track -u --vpid 1234,5678\n"
                "  tracectl track -u -s web --vuid alice\n"
                "  tracectl track -u --vpid --all"
              : "Give -u or -k and exactly one attribute. The VALUES leave the tracker; an\n"
                "app no longer tracked stops recording at once in an active session.\n"
                "--all leaves the tracker empty: nothing of that attribute is recorded\n"
                "until values are tracked again. Untracking a value not tracked, or any\n"
                "value while every process is tracked, is refused.\n\n"
                "Example:\n"
                "  tracectl untrack -u --vpid 1234\n"
                "  tracectl untrack -u --vuid --all");
    return command;
}

TrackCall resolveTrackCall(const TrackFlags& flags, bool track, const IdLookup& users,
                           const IdLookup& groups) {
    const std::string verb = track ? "track" : "untrack";
    TrackCall call;
    call.track = track;
    call.domain = chosenDomain(flags.domain);
    if (flags.sessionOption != nullptr && flags.sessionOption->count() > 0) {
        call.session = flags.session;
    }
    const TrackFlags::Attribute* given = nullptr;
    for (const auto& a : flags.attributes) {
        if (a.option == nullptr || a.option->count() == 0) {
            continue;
        }
        if (given != nullptr) {
            throw CLI::ValidationError(verb, "give one attribute at a time (--" +
                                                 std::string(given->name) + " and --" +
                                                 std::string(a.name) + ")");
        }
        given = &a;
    }
    if (given == nullptr) {
        throw CLI::ValidationError(
            verb, "give an attribute: -u --vpid, --vuid, --vgid or -k --pid, --uid, --gid");
    }
    const std::string name = given->name;
    if (isUstAttribute(name) != (call.domain == Domain::Ust)) {
        throw CLI::ValidationError(
            "--" + name, call.domain == Domain::Ust
                             ? "is a kernel (-k) attribute; -u takes --vpid, --vuid, --vgid"
                             : "is a user-space (-u) attribute; -k takes --pid, --uid, --gid");
    }
    call.attribute = name;
    call.all = flags.all;
    const std::vector<std::string> items = splitCommas(given->values);
    if (call.all && !items.empty()) {
        throw CLI::ValidationError("--all", "give VALUES or --all, not both");
    }
    if (!call.all && items.empty()) {
        throw CLI::ValidationError("--" + name, "give VALUES (comma-separated) or --all");
    }
    const bool user = name.find("uid") != std::string::npos;
    const bool group = name.find("gid") != std::string::npos;
    for (const std::string& item : items) {
        if (const auto n = wholeNumber(item)) {
            call.values.push_back(*n);
            continue;
        }
        const auto id = user ? users(item) : group ? groups(item) : std::nullopt;
        if (!id) {
            throw CLI::ValidationError("--" + name,
                                       "'" + item + "' is not " +
                                           (user    ? "a user id or a known user name"
                                            : group ? "a group id or a known group name"
                                                    : "a whole number from 0 to 4294967295"));
        }
        call.values.push_back(*id);
    }
    return call;
}

std::string formatTrackingSection(const PropertyMap& properties) {
    const auto it = properties.find("ProcessAttributeTrackers");
    if (it == properties.end() || !it->second.is_array()) {
        return {};
    }
    std::string out = "Process attribute tracking:\n";
    for (const auto& t : it->second) {
        if (!t.is_array() || t.size() != 4 || !t[0].is_string() || !t[1].is_string()) {
            continue;
        }
        out += "  " + t[0].get<std::string>() + " " + t[1].get<std::string>() + ": ";
        if (t[2].is_boolean() && t[2].get<bool>()) {
            out += "all\n";
            continue;
        }
        std::string values;
        if (t[3].is_array()) {
            for (const auto& v : t[3]) {
                if (v.is_number_unsigned()) {
                    values += (values.empty() ? "" : ", ") + std::to_string(v.get<std::uint32_t>());
                }
            }
        }
        out += (values.empty() ? "none" : values) + "\n";
    }
    return out;
}

} // namespace tracectl::cli
