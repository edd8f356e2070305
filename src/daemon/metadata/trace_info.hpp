// What a registry needs to know about the trace it describes: the ABI of the
// apps that write into it (from their registration message), the session,
// the clock and, per-PID, the app. Plain data; TraceRegistry validates it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace tracectl::metadata {

using Uuid = std::array<std::uint8_t, 16>;

enum class ByteOrder { Little, Big };

/// The byte order an app gives in its registration message
/// (lttng_ust_ctl_recv_reg_msg's `byte_order`: BYTE_ORDER of the app, 1234 or
/// 4321). Anything else is nullopt.
std::optional<ByteOrder> byteOrderFromRegistration(int byteOrder) noexcept;

/// Type layout of the apps writing the trace: lttng_ust_ctl_recv_reg_msg's
/// bits_per_long, uint{8,16,32,64}_t_alignment, long_alignment (alignments
/// in bits: 8 for uint8_t; 32 for uint64_t on i386) and byte_order. All apps
/// of one per-UID registry share it (the registry is per bitness).
struct Abi {
    std::uint32_t bitsPerLong = 64;
    std::uint32_t uint8Alignment = 8;
    std::uint32_t uint16Alignment = 16;
    std::uint32_t uint32Alignment = 32;
    std::uint32_t uint64Alignment = 64;
    std::uint32_t longAlignment = 64;
    ByteOrder byteOrder = ByteOrder::Little;
};

/// lttng_ust_ctl_tracer_version of the (first) app.
struct TracerVersion {
    std::uint32_t major = 2;
    std::uint32_t minor = 13;
    std::uint32_t patchlevel = 0;
};

/// The trace clock. lttng-ust's default clock: "monotonic", "Monotonic
/// Clock", 1 GHz, uuid = the kernel's boot_id; offset = realtime - monotonic
/// in clock ticks, measured when the registry is made (see clock_source.hpp).
struct ClockInfo {
    std::string name = "monotonic";
    std::string description = "Monotonic Clock";
    std::uint64_t frequency = 1'000'000'000;
    std::int64_t offset = 0;
    std::optional<Uuid> uuid;
};

enum class BufferingScheme { PerUid, PerPid };

/// The app of a per-PID registry (env vpid, procname, vpid_datetime,
/// tracer_patchlevel).
struct AppInfo {
    std::int32_t vpid = 0;
    std::string procname;
    std::int64_t registrationTime = 0; ///< seconds since the Epoch
};

struct TraceInfo {
    Uuid uuid{}; ///< trace uuid, also in every packet header
    Abi abi;
    TracerVersion tracer; ///< env tracer_major/minor (+patchlevel per-PID)
    std::string hostname;
    /// env trace_name: the session name, or "auto" for a session whose name
    /// was generated (lttng-sessiond does the same).
    std::string traceName;
    std::int64_t creationTime = 0; ///< session creation, seconds since the Epoch
    BufferingScheme buffering = BufferingScheme::PerUid;
    /// env tracer_buffering_id: the uid (per-UID) or the app's pid (per-PID).
    std::uint32_t bufferingId = 0;
    ClockInfo clock;
    /// Required per-PID, ignored per-UID.
    std::optional<AppInfo> app;
};

} // namespace tracectl::metadata
