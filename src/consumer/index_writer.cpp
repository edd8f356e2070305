#include "index_writer.hpp"

#include <string>

namespace tracectl::consumer {

namespace {

template <std::size_t N>
void putBe(std::array<std::byte, N>& out, std::size_t at, std::uint64_t v, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i)
        out[at + i] = static_cast<std::byte>((v >> (8 * (width - 1 - i))) & 0xff);
}

} // namespace

std::array<std::byte, kIndexHeaderSize> encodeIndexHeader() noexcept {
    std::array<std::byte, kIndexHeaderSize> h{};
    putBe(h, 0, kIndexMagic, 4);
    putBe(h, 4, kIndexMajor, 4);
    putBe(h, 8, kIndexMinor, 4);
    putBe(h, 12, kIndexEntrySize, 4);
    return h;
}

std::array<std::byte, kIndexEntrySize> encodeIndexEntry(const IndexEntry& e) noexcept {
    std::array<std::byte, kIndexEntrySize> out{};
    const std::uint64_t fields[] = {e.offset,         e.packetSizeBits,   e.contentSizeBits,
                                    e.timestampBegin, e.timestampEnd,     e.eventsDiscarded,
                                    e.streamId,       e.streamInstanceId, e.packetSeqNum};
    std::size_t at = 0;
    for (std::uint64_t v : fields) {
        putBe(out, at, v, 8);
        at += 8;
    }
    return out;
}

IndexWriter::IndexWriter(const OutputDir& channelDir, std::string_view streamName)
    : file_(channelDir.subdir("index"), std::string(streamName) + ".idx") {
    const auto header = encodeIndexHeader();
    file_.write(header.data(), header.size());
}

void IndexWriter::append(const IndexEntry& e) {
    const auto entry = encodeIndexEntry(e);
    file_.write(entry.data(), entry.size());
}

} // namespace tracectl::consumer
