#include "enum_registry.hpp"

#include "metadata_error.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tracectl::metadata {

namespace {

constexpr std::uint64_t kInt64Max =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

EnumValue valueOf(const lttng_ust_ctl_enum_value& v) noexcept {
    return EnumValue{v.value, v.signedness != 0};
}

// The value after `v`, as babeltrace2 computes an auto entry's value
// (visit_enum_decl_entry: previous end + 1 in the end's own signedness).
EnumValue successor(const EnumValue& v) noexcept {
    return EnumValue{v.value + 1, v.isSigned};
}

std::vector<EnumEntry> decodeEntries(std::span<const lttng_ust_ctl_enum_entry> entries) {
    std::vector<EnumEntry> out;
    out.reserve(entries.size());
    EnumValue next{0, false};
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const lttng_ust_ctl_enum_entry& e = entries[i];
        const std::size_t len = strnlen(e.string, sizeof e.string);
        if (len == sizeof e.string)
            throw MetadataError(EINVAL,
                                "enum entry " + std::to_string(i) + ": label not terminated");
        EnumEntry entry;
        entry.label.assign(e.string, len);
        entry.isAuto = (e.u.extra.options & LTTNG_UST_CTL_UST_ENUM_ENTRY_OPTION_IS_AUTO) != 0;
        if (entry.isAuto) {
            entry.start = entry.end = next;
        } else {
            entry.start = valueOf(e.start);
            entry.end = valueOf(e.end);
            if (lessThan(entry.end, entry.start))
                throw MetadataError(EINVAL, "enum entry " + std::to_string(i) +
                                                ": range start above its end");
        }
        next = successor(entry.end);
        out.push_back(std::move(entry));
    }
    return out;
}

} // namespace

bool lessThan(const EnumValue& a, const EnumValue& b) noexcept {
    const bool an = a.isNegative();
    const bool bn = b.isNegative();
    if (an != bn)
        return an;
    if (an)
        return static_cast<std::int64_t>(a.value) < static_cast<std::int64_t>(b.value);
    return a.value < b.value;
}

std::uint64_t EnumRegistry::registerEnum(std::string_view name,
                                         std::span<const lttng_ust_ctl_enum_entry> entries) {
    if (name.size() > limits_.maxNameBytes)
        throw MetadataError(E2BIG, "enum name too long");
    if (name.find('\0') != std::string_view::npos)
        throw MetadataError(EINVAL, "enum name holds a NUL byte");
    if (entries.size() > limits_.maxEnumEntries)
        throw MetadataError(E2BIG, "enum has too many entries");
    std::vector<EnumEntry> decoded = decodeEntries(entries);

    const std::string key(name);
    const auto [first, last] = byName_.equal_range(key);
    for (auto it = first; it != last; ++it) {
        if (byId_[it->second]->entries == decoded)
            return it->second;
    }
    if (byId_.size() >= limits_.maxEnums)
        throw MetadataError(E2BIG, "too many enums in this trace");

    auto description = std::make_shared<EnumDescription>();
    description->name = key;
    description->id = byId_.size();
    for (const EnumEntry& e : decoded) {
        for (const EnumValue& v : {e.start, e.end}) {
            description->hasNegativeValue |= v.isNegative();
            description->hasValueAboveInt64 |= !v.isSigned && v.value > kInt64Max;
        }
    }
    description->entries = std::move(decoded);
    const std::uint64_t id = description->id;
    if (byId_.size() == byId_.capacity()) // so that push_back below cannot throw
        byId_.reserve(2 * byId_.size() + 1);
    byName_.emplace(key, id);
    byId_.push_back(std::move(description));
    return id;
}

std::shared_ptr<const EnumDescription> EnumRegistry::find(std::string_view name,
                                                          std::uint64_t id) const noexcept {
    if (id >= byId_.size() || byId_[id]->name != name)
        return nullptr;
    return byId_[id];
}

} // namespace tracectl::metadata
