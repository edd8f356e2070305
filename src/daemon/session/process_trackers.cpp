#include "session/process_trackers.hpp"

#include "common/error.hpp"

#include <string>

namespace tracectl {

namespace {

constexpr std::array<std::string_view, 6> kNames = {"vpid", "vuid", "vgid", "pid", "uid", "gid"};

/// Throws InvalidArgument unless exactly one of `values` / `all` is given
/// and no value repeats.
void checkArguments(ProcessAttribute a, const std::vector<uint32_t>& values, bool all,
                    std::string_view verb) {
    const std::string name(toString(a));
    if (all && !values.empty())
        throw Error(ErrorCode::InvalidArgument,
                    std::string(verb) + " " + name + ": give values or \"all\", not both");
    if (!all && values.empty())
        throw Error(ErrorCode::InvalidArgument,
                    std::string(verb) + " " + name + ": no value given (or \"all\")");
    std::set<uint32_t> seen;
    for (const uint32_t v : values)
        if (!seen.insert(v).second)
            throw Error(ErrorCode::InvalidArgument, std::string(verb) + " " + name + ": " +
                                                        std::to_string(v) + " is given twice");
}

} // namespace

std::string_view toString(ProcessAttribute a) noexcept {
    return kNames[static_cast<std::size_t>(a)];
}

std::optional<ProcessAttribute> processAttributeFromName(std::string_view name) noexcept {
    for (std::size_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == name)
            return static_cast<ProcessAttribute>(i);
    return std::nullopt;
}

TracingDomain domainOf(ProcessAttribute a) noexcept {
    switch (a) {
    case ProcessAttribute::Vpid:
    case ProcessAttribute::Vuid:
    case ProcessAttribute::Vgid:
        return TracingDomain::Ust;
    default:
        return TracingDomain::Kernel;
    }
}

ProcessTrackers::ProcessTrackers() {
    for (std::size_t i = 0; i < trackers_.size(); ++i)
        trackers_[i].attribute = static_cast<ProcessAttribute>(i);
}

bool ProcessTrackers::track(ProcessAttribute a, const std::vector<uint32_t>& values, bool all) {
    checkArguments(a, values, all, "track");
    ProcessTracker& t = trackers_[static_cast<std::size_t>(a)];
    if (all) {
        if (t.all)
            return false;
        t.all = true;
        t.values.clear();
        return true;
    }
    const std::string name(toString(a));
    // From "all", the tracker becomes the inclusion set of `values`.
    const std::set<uint32_t> base = t.all ? std::set<uint32_t>{} : t.values;
    for (const uint32_t v : values)
        if (base.count(v) != 0)
            throw Error(ErrorCode::InvalidArgument,
                        name + " " + std::to_string(v) + " is already tracked");
    if (base.size() + values.size() > kMaxTrackedValues)
        throw Error(ErrorCode::LimitExceeded,
                    "a tracker holds at most " + std::to_string(kMaxTrackedValues) + " values; " +
                        name + " would hold " + std::to_string(base.size() + values.size()));
    t.all = false;
    t.values = base;
    t.values.insert(values.begin(), values.end());
    return true;
}

bool ProcessTrackers::untrack(ProcessAttribute a, const std::vector<uint32_t>& values, bool all) {
    checkArguments(a, values, all, "untrack");
    ProcessTracker& t = trackers_[static_cast<std::size_t>(a)];
    if (all) {
        if (!t.all && t.values.empty())
            return false;
        t.all = false;
        t.values.clear();
        return true;
    }
    const std::string name(toString(a));
    if (t.all)
        throw Error(ErrorCode::InvalidArgument,
                    "the " + name +
                        " tracker tracks every process: there is no value to untrack (untrack "
                        "\"all\" first, or track the values to keep)");
    for (const uint32_t v : values)
        if (t.values.count(v) == 0)
            throw Error(ErrorCode::InvalidArgument,
                        name + " " + std::to_string(v) + " is not tracked");
    for (const uint32_t v : values)
        t.values.erase(v);
    return true;
}

} // namespace tracectl
