// CTF packet index files, version 1.1, as LTTng writes them
// (lttng-tools src/common/index/ctf-index.h): `<channel dir>/index/<stream>.idx`
// = a 16-byte header then one 72-byte entry per packet of the stream file,
// every integer big-endian. babeltrace2 and Trace Compass use them to seek.
#pragma once

#include "stream_file.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tracectl::consumer {

inline constexpr std::uint32_t kIndexMagic = 0xC1F1DCC1;
inline constexpr std::uint32_t kIndexMajor = 1;
inline constexpr std::uint32_t kIndexMinor = 1;
inline constexpr std::size_t kIndexHeaderSize = 16; ///< magic, major, minor, entry size (u32 each)
inline constexpr std::size_t kIndexEntrySize = 72;  ///< nine u64

/// One packet, as struct ctf_packet_index (ctf-index.h) describes it. The
/// values come from the lttng_ust_ctl_get_* getters of the sub-buffer.
struct IndexEntry {
    std::uint64_t offset = 0;           ///< bytes: where the packet starts in the stream file
    std::uint64_t packetSizeBits = 0;   ///< packet size with padding, in bits
    std::uint64_t contentSizeBits = 0;  ///< meaningful bits of the packet
    std::uint64_t timestampBegin = 0;   ///< clock cycles, as in the packet context
    std::uint64_t timestampEnd = 0;     ///< clock cycles
    std::uint64_t eventsDiscarded = 0;  ///< running count, as in the packet context
    std::uint64_t streamId = 0;         ///< CTF stream class id (the channel's chan_id)
    std::uint64_t streamInstanceId = 0; ///< which stream of the class (CPU / instance)
    std::uint64_t packetSeqNum = 0;     ///< per-stream packet sequence number
};

/// The file header: magic 0xC1F1DCC1, major 1, minor 1, entry size 72.
std::array<std::byte, kIndexHeaderSize> encodeIndexHeader() noexcept;

/// One entry: the nine fields of `e` in declaration order, big-endian u64.
std::array<std::byte, kIndexEntrySize> encodeIndexEntry(const IndexEntry& e) noexcept;

/// Writes one stream's index file. Move-only.
class IndexWriter {
public:
    /// Creates `<channelDir>/index/` (if missing) and `<streamName>.idx` in it
    /// (new file, EEXIST if present), and writes the header.
    /// Throws std::system_error.
    IndexWriter(const OutputDir& channelDir, std::string_view streamName);

    /// Appends one entry. Throws std::system_error.
    void append(const IndexEntry& e);

    /// Entries written so far.
    std::uint64_t entries() const noexcept {
        return (file_.size() - kIndexHeaderSize) / kIndexEntrySize;
    }
    void close() noexcept { file_.close(); }

private:
    StreamFile file_;
};

} // namespace tracectl::consumer
