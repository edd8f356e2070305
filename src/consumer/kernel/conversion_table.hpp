// The conversions of one kernel channel, by ftrace event id (common_type):
// a flat table indexed by the u16 id, so the per-record lookup is one load.
#pragma once

#include "kernel_records.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace tracectl::consumer::kernel {

class ConversionTable {
public:
    /// Adds decoded conversions (kernel_records::decode). One for an
    /// ftraceId already present replaces it for later lookups; the replaced
    /// one stays alive (pointers handed out before remain valid) until the
    /// table is destroyed. Events enabled while tracing are added this way.
    void add(std::vector<kernel_records::EventConversion> conversions);

    /// The conversion of `ftraceId`, or nullptr when none was added.
    const kernel_records::EventConversion* find(std::uint16_t ftraceId) const noexcept {
        return ftraceId < byId_.size() ? byId_[ftraceId] : nullptr;
    }

    /// Distinct ftrace ids that have a conversion.
    std::size_t size() const noexcept { return count_; }

private:
    std::vector<std::unique_ptr<const kernel_records::EventConversion>> storage_;
    std::vector<const kernel_records::EventConversion*> byId_;
    std::size_t count_ = 0;
};

} // namespace tracectl::consumer::kernel
