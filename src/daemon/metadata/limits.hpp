// Bounds on what one app can make a registry hold. Everything an app sends
// over its notify socket is checked against these before anything is kept;
// going past one is refused with E2BIG (MetadataError).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tracectl::metadata {

struct RegistryLimits {
    /// Entries in one lttng_ust_ctl_field list (an event's payload or a
    /// channel's context), nested entries included. lttng-ust sends one
    /// entry per scalar field, two per enum/array/sequence.
    std::size_t maxFields = 16384;
    /// Nesting depth of struct members and variant choices (a top-level
    /// field is depth 0). lttng-ust 2.13 never goes past 1.
    std::size_t maxDepth = 8;
    /// Bytes of an event name, enum name or field name (lttng-ust: at most
    /// LTTNG_UST_ABI_SYM_NAME_LEN - 1 = 255).
    std::size_t maxNameBytes = 255;
    /// Bytes of an event signature (stored, compared, not written).
    std::size_t maxSignatureBytes = 64 * 1024;
    /// Bytes of a model.emf.uri attribute.
    std::size_t maxUriBytes = 4096;
    /// Entries of one enumeration.
    std::size_t maxEnumEntries = 65536;
    /// Distinct enumerations in one registry.
    std::size_t maxEnums = 65536;
    /// Channels in one registry.
    std::size_t maxChannels = 4096;
    /// Distinct events in one channel.
    std::size_t maxEventsPerChannel = 1u << 20;
    /// Bytes of TSDL one registry may hold (emitted + waiting for its
    /// channel). lttng-sessiond's own bound is 2^31 - 1.
    std::size_t maxMetadataBytes = std::size_t{256} << 20;
};

} // namespace tracectl::metadata
