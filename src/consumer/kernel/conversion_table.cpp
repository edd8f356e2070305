#include "conversion_table.hpp"

namespace tracectl::consumer::kernel {

void ConversionTable::add(std::vector<kernel_records::EventConversion> conversions) {
    for (kernel_records::EventConversion& c : conversions) {
        const std::uint16_t id = c.ftraceId;
        if (id >= byId_.size())
            byId_.resize(static_cast<std::size_t>(id) + 1, nullptr);
        storage_.push_back(std::make_unique<const kernel_records::EventConversion>(std::move(c)));
        if (byId_[id] == nullptr)
            ++count_;
        byId_[id] = storage_.back().get();
    }
}

} // namespace tracectl::consumer::kernel
