// The enumerations apps register (notify command ENUM) in one trace
// registry. Ids come from one counter per registry, from 0; registering an
// enum equal to a known one (same name, same entries) gives the known id,
// as lttng-sessiond's ust_registry_create_or_find_enum does. Event fields
// then refer to an enum by (name, id).
#pragma once

#include "limits.hpp"

#include <cstdint>
#include <lttng/ust-ctl.h>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tracectl::metadata {

/// A 64-bit value that is either signed or unsigned, as lttng-ust sends
/// enum values (lttng_ust_ctl_enum_value).
struct EnumValue {
    std::uint64_t value = 0;
    bool isSigned = false;

    bool isNegative() const noexcept { return isSigned && static_cast<std::int64_t>(value) < 0; }
    friend bool operator==(const EnumValue&, const EnumValue&) = default;
};

/// True if a < b as mathematical integers.
bool lessThan(const EnumValue& a, const EnumValue& b) noexcept;

struct EnumEntry {
    std::string label;
    /// LTTNG_UST_CTL_UST_ENUM_ENTRY_OPTION_IS_AUTO: written without a value;
    /// the reader gives it the previous entry's end + 1 (start/end below
    /// hold that value).
    bool isAuto = false;
    EnumValue start; ///< inclusive
    EnumValue end;   ///< inclusive
    friend bool operator==(const EnumEntry&, const EnumEntry&) = default;
};

struct EnumDescription {
    std::string name;
    std::uint64_t id = 0;
    std::vector<EnumEntry> entries;
    bool hasNegativeValue = false;   ///< some value < 0: needs a signed container
    bool hasValueAboveInt64 = false; ///< some value > INT64_MAX: needs an unsigned one
};

class EnumRegistry {
public:
    explicit EnumRegistry(const RegistryLimits& limits) : limits_(limits) {}

    /// Validates and adds an enum, or finds the equal one. Throws
    /// MetadataError: EINVAL (a label without its NUL byte, a range whose
    /// start is above its end), E2BIG (name, entry count or enum count
    /// beyond the limits).
    std::uint64_t registerEnum(std::string_view name,
                               std::span<const lttng_ust_ctl_enum_entry> entries);

    /// The enum with that id if its name is `name`, else nullptr.
    std::shared_ptr<const EnumDescription> find(std::string_view name,
                                                std::uint64_t id) const noexcept;

    std::size_t size() const noexcept { return byId_.size(); }

private:
    const RegistryLimits& limits_;
    std::vector<std::shared_ptr<const EnumDescription>> byId_; // id == index
    std::unordered_multimap<std::string, std::uint64_t> byName_;
};

} // namespace tracectl::metadata
