// The StartTransientUnit message of a consumer (systemd.exec(5),
// systemd.resource-control(5), org.freedesktop.systemd1(5)).
#include "common/error.hpp"
#include "systemd_bus.hpp"

#include <cstring>
#include <optional>
#include <pwd.h>
#include <string>
#include <vector>

namespace tracectl {

namespace {

/// The login name of `uid` (getpwuid_r(3)), if it has one.
std::optional<std::string> userNameOf(uid_t uid) {
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* found = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    return std::string(found->pw_name);
}

void check(int r, const char* what) {
    if (r < 0)
        throw Error(ErrorCode::Failed, std::string(what) + ": " + std::strerror(-r));
}

} // namespace

SdBusMessagePtr transientUnitCall(sd_bus* bus, const ConsumerSpec& spec, int stdinSocket) {
    sd_bus_message* raw = nullptr;
    check(sd_bus_message_new_method_call(bus, &raw, systemd::kService, systemd::kPath,
                                         systemd::kManager, "StartTransientUnit"),
          "StartTransientUnit");
    SdBusMessagePtr m(raw);
    check(sd_bus_message_append(m.get(), "ss", spec.unitName.c_str(), "fail"), "append");
    check(sd_bus_message_open_container(m.get(), 'a', "(sv)"), "append");
    // By name when it has one: systemd then gives the unit the user's
    // supplementary groups too (getgrouplist(3) of that name), so the
    // consumer may write where the owner may through a group.
    const std::string uid = userNameOf(spec.uid).value_or(std::to_string(spec.uid));
    const std::string gid = std::to_string(spec.gid);
    const std::string description = "tracectl consumer (" + spec.unitName + ")";
    check(sd_bus_message_append(
              m.get(), "(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s",
              description.c_str(), "Type", "s", "exec", "User", "s", uid.c_str(), "Group", "s",
              gid.c_str(), "StandardInputFileDescriptor", "h", stdinSocket, "StandardOutput", "s",
              "journal", "StandardError", "s", "journal", "CollectMode", "s", "inactive",
              "NoNewPrivileges", "b", 1, "ProtectSystem", "s", "strict", "PrivateNetwork", "b", 1),
          "append properties");
    // A network session's consumer writes nothing locally: it streams over
    // the sockets the daemon connected (outside its PrivateNetwork=).
    if (!spec.outputDir.empty())
        check(sd_bus_message_append(m.get(), "(sv)", "ReadWritePaths", "as", 1,
                                    spec.outputDir.c_str()),
              "append ReadWritePaths");
    // Exit status 3 is the consumer's "the daemon went away" (it drained
    // and closed everything first, tracectl-consumerd(8)): not a failure
    // for systemd to keep the unit loaded for.
    check(sd_bus_message_append(m.get(), "(sv)", "SuccessExitStatus", "(aiai)", 1, 3, 0),
          "append SuccessExitStatus");
    // Every stream holds fds (shm, wakeup, its file and index): a per-PID
    // session of many apps needs far more than the default soft 1024.
    check(sd_bus_message_append(m.get(), "(sv)(sv)", "LimitNOFILE", "t", uint64_t{65536},
                                "LimitNOFILESoft", "t", uint64_t{65536}),
          "append LimitNOFILE");
    if (spec.memoryMax != 0)
        check(sd_bus_message_append(m.get(), "(sv)", "MemoryMax", "t", spec.memoryMax),
              "append MemoryMax");
    // ExecStart: a(sasb) = [(path, argv, ignore-failure)].
    check(sd_bus_message_open_container(m.get(), 'r', "sv"), "append");
    check(sd_bus_message_append(m.get(), "s", "ExecStart"), "append");
    check(sd_bus_message_open_container(m.get(), 'v', "a(sasb)"), "append");
    check(sd_bus_message_open_container(m.get(), 'a', "(sasb)"), "append");
    check(sd_bus_message_open_container(m.get(), 'r', "sasb"), "append");
    check(sd_bus_message_append(m.get(), "s", spec.binary.c_str()), "append");
    check(sd_bus_message_open_container(m.get(), 'a', "s"), "append");
    check(sd_bus_message_append(m.get(), "s", spec.binary.c_str()), "append");
    // systemd expands "$VAR", "${VAR}" and "$$" in ExecStart's arguments,
    // also in a transient unit's (systemd.service(5), "Command lines"):
    // every '$' of ours is doubled so that an output path reaches the
    // consumer as it is.
    for (const auto& a : spec.args) {
        std::string literal;
        for (const char c : a)
            literal += c == '$' ? std::string("$$") : std::string(1, c);
        check(sd_bus_message_append(m.get(), "s", literal.c_str()), "append");
    }
    check(sd_bus_message_close_container(m.get()), "append"); // as
    check(sd_bus_message_append(m.get(), "b", 0), "append");
    for (int i = 0; i < 5; ++i) // (sasb), a(sasb), v, (sv), a(sv)
        check(sd_bus_message_close_container(m.get()), "append");
    check(sd_bus_message_append(m.get(), "a(sa(sv))", 0), "append");
    return m;
}

} // namespace tracectl
