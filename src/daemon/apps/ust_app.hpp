// One registered LTTng-UST application: what it told us at registration
// (checked against SO_PEERCRED) and its two sockets.
#pragma once

#include "common/unique_fd.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace tracectl {

/// The identity of an app, from its registration message
/// (lttng_ust_ctl_recv_reg_msg, ust-ctl.h) with pid/uid/gid from the
/// socket's SO_PEERCRED. Plain data.
struct UstAppInfo {
    pid_t pid = 0;
    pid_t ppid = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    uint32_t bitness = 0;  ///< bits per long: 32 or 64
    std::string name;      ///< process name (comm), sanitized to printable UTF-8
    uint32_t abiMajor = 0; ///< LTTng-UST ABI version of the app
    uint32_t abiMinor = 0;
    uint32_t tracerMajor = 0; ///< lttng_ust_ctl_tracer_version()
    uint32_t tracerMinor = 0;
    uint32_t tracerPatchlevel = 0;
    uint32_t uint8Alignment = 0; ///< type alignments in bits, for the metadata
    uint32_t uint16Alignment = 0;
    uint32_t uint32Alignment = 0;
    uint32_t uint64Alignment = 0;
    uint32_t longAlignment = 0;
    int byteOrder = 0; ///< BYTE_ORDER of the app (LITTLE_ENDIAN / BIG_ENDIAN)
    std::chrono::system_clock::time_point registeredAt;

    /// "major.minor.patchlevel" of the app's tracer.
    std::string tracerVersion() const {
        return std::to_string(tracerMajor) + "." + std::to_string(tracerMinor) + "." +
               std::to_string(tracerPatchlevel);
    }
};

/// A registered app. Its sockets are used for commands only on the app
/// thread (UstAppRegistrar); other threads read `info` only.
struct UstApp {
    UstAppInfo info;
    UniqueFd command; ///< the app's command socket (daemon -> app requests)
    UniqueFd notify;  ///< the app's notify socket (app -> daemon registrations)
};

} // namespace tracectl
