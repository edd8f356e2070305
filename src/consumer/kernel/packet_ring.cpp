#include "kernel/packet_ring.hpp"

#include <algorithm>
#include <utility>

namespace tracectl::consumer::kernel {

void PacketRing::append(std::span<const std::byte> packet, const IndexEntry& entry) {
    Packet p{std::move(spare_), entry};
    spare_ = {};
    p.bytes.assign(packet.begin(), packet.end());
    bytes_ += p.bytes.size();
    packets_.push_back(std::move(p));
    while (bytes_ > budget_ && packets_.size() > 1) {
        bytes_ -= packets_.front().bytes.size();
        spare_ = std::move(packets_.front().bytes);
        packets_.pop_front();
        ++dropped_;
    }
}

void PacketRing::writeTo(StreamSink& sink, std::uint64_t most) const {
    const std::size_t skip =
        most == 0 || most >= packets_.size() ? 0 : packets_.size() - static_cast<std::size_t>(most);
    for (std::size_t i = skip; i < packets_.size(); ++i) {
        const Packet& p = packets_[i];
        IndexEntry entry = p.entry;
        sink.write(p.bytes.data(), p.bytes.size(), p.bytes.size(), &entry);
    }
}

void PacketRing::clear() noexcept {
    packets_.clear();
    bytes_ = 0;
}

} // namespace tracectl::consumer::kernel
