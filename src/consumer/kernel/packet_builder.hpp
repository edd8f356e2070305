// One CTF 1.8 packet of a kernel stream, built in a reusable buffer as
// common/kernel_records.hpp lays it out: packet header, packet context
// (filled in at close), then events (event header, the channel's event
// context, the fields an EventConversion writes from an ftrace record).
#pragma once

#include "index_writer.hpp"
#include "kernel_records.hpp"
#include "process_info.hpp"
#include "user_string_source.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace tracectl::consumer::kernel {

/// The stream event context values of one event; only the fields the
/// builder's context mask enables are written (kernel_records ContextField).
struct ContextValues {
    std::int32_t tid = 0;
    std::int32_t pid = 0;
    char procname[16] = {}; ///< written as 16 bytes, as is (NUL padded)
    std::int32_t prio = 0;
    std::int32_t cpuId = 0;
    /// The call stacks (return addresses, innermost first), written as
    /// sequences when the mask enables callstack-kernel / callstack-user;
    /// views valid until the append returns.
    std::span<const std::uint64_t> kernelStack;
    std::span<const std::uint64_t> userStack;
};

/// Where closed packets go: the packet's bytes (valid until the producer
/// builds its next packet) and its index entry (offset 0: the receiver
/// knows where it writes the packet).
using PacketSink = std::function<void(std::span<const std::byte> packet, const IndexEntry&)>;

/// A closed packet: a view of the builder's buffer (valid until the next
/// open or append) and its index entry (offset left 0 for the caller).
struct ClosedPacket {
    std::span<const std::byte> bytes;
    IndexEntry index;
};

using Uuid = std::array<std::byte, 16>;

class PacketBuilder {
public:
    /// `maxPacketBytes`: the channel's sub-buffer size, the most a packet
    /// may take (at least kPacketPreambleSize, else std::invalid_argument).
    /// `contextMask`: kernel_records ContextField bits. No packet is open.
    PacketBuilder(const Uuid& uuid, std::uint32_t streamId, std::uint64_t streamInstanceId,
                  std::uint32_t cpuId, std::size_t maxPacketBytes, std::uint32_t contextMask);

    /// Starts the next packet (an open one's events are thrown away: close
    /// it first). `timestampBegin` in ns; lowered to the first event's
    /// timestamp if that one is earlier.
    void open(std::uint64_t timestampBegin);
    bool isOpen() const noexcept { return open_; }

    /// Appends the event that `conversion` makes of `record` (`length`
    /// bytes from common_type on). Opens a packet at `timestamp` if none is.
    /// Returns false, having written nothing, when the event does not fit
    /// in maxPacketBytes (close, open, retry; if it fails in an empty packet
    /// too, drop it: eventFits() says so up front). A record shorter than
    /// conversion.minSize writes nothing, is counted in malformedRecords()
    /// and returns true. Locations outside the record write an empty string
    /// or a zero-length sequence; a Copy reaching past the record (a
    /// conversion at odds with its minSize) is zero-filled. `processes`
    /// answers the Tgid, PidNsInum and Vtids steps (none: a tid is its own
    /// tgid, namespace inode 0, vtids [tid]); it is asked only by them.
    bool append(std::uint64_t timestamp, const kernel_records::EventConversion& conversion,
                const std::byte* record, std::uint32_t length, const ContextValues& context,
                ProcessInfo* processes = nullptr);

    /// Appends an event whose fields are already laid out (the statedump):
    /// event header `ctfId`/`timestamp`, the context, then `fields` as is.
    /// Opens a packet if none is; false (nothing written) when it does not fit.
    bool appendRaw(std::uint16_t ctfId, std::uint64_t timestamp, const ContextValues& context,
                   std::span<const std::byte> fields);

    /// Closes the packet (opening an empty one at `timestampEnd` if none
    /// is): timestamp_begin as open() says, timestamp_end =
    /// max(timestampEnd, last event's, begin), content_size == packet_size
    /// == bytes * 8, packet_seq_num (then incremented), events_discarded
    /// (the running count). The view is valid until the next open/append.
    ClosedPacket close(std::uint64_t timestampEnd);

    /// Where UserString steps take their strings (none: they write "").
    /// `source` outlives the builder.
    void setUserStrings(UserStringSource* source) noexcept { userStrings_ = source; }

    /// Adds `n` to the running events_discarded count (written at close).
    void addDiscarded(std::uint64_t n) noexcept { discarded_ += n; }

    /// Bytes an event of `fieldBytes` field bytes takes (header + context,
    /// its call stacks empty).
    std::size_t eventBytes(std::size_t fieldBytes) const noexcept {
        return kernel_records::kEventHeaderSize + contextBytes_ + fieldBytes;
    }
    std::size_t maxPacketBytes() const noexcept { return buffer_.size(); }
    /// Bytes of the open packet so far (kPacketPreambleSize when empty).
    std::size_t size() const noexcept { return pos_; }
    std::uint32_t eventsInPacket() const noexcept { return events_; }
    /// The running events_discarded count.
    std::uint64_t eventsDiscarded() const noexcept { return discarded_; }
    /// Records skipped for being shorter than their conversion's minSize.
    std::uint64_t malformedRecords() const noexcept { return malformed_; }
    /// packet_seq_num of the next packet closed.
    std::uint64_t nextSeqNum() const noexcept { return seq_; }
    /// The open packet's latest event timestamp (its begin when empty), ns.
    std::uint64_t lastTimestamp() const noexcept { return lastTs_; }

private:
    void noteEvent(std::uint64_t timestamp) noexcept;

    std::vector<std::byte> buffer_;
    std::size_t pos_ = 0;
    Uuid uuid_;
    std::uint32_t streamId_;
    std::uint64_t instance_;
    std::uint32_t cpuId_;
    std::uint32_t mask_;
    std::size_t contextBytes_;
    bool open_ = false;
    std::uint64_t begin_ = 0;
    std::uint64_t firstTs_ = 0;
    std::uint64_t lastTs_ = 0;
    std::uint32_t events_ = 0;
    std::uint64_t seq_ = 0;
    std::uint64_t discarded_ = 0;
    std::uint64_t malformed_ = 0;
    UserStringSource* userStrings_ = nullptr;
    /// The strings the last record took, by argument: an append that did
    /// not fit is retried in the next packet with them (a string is taken
    /// once from its source).
    struct TakenStrings {
        const std::byte* record = nullptr;
        std::uint64_t timestamp = 0;
        std::uint8_t have = 0; ///< bit i: views[i] holds argument i's
        std::array<std::string_view, 6> views{};
    };
    TakenStrings taken_;

    std::string_view userString(const kernel_records::Step& step, const std::byte* record,
                                std::uint32_t length, std::uint64_t timestamp) noexcept;
};

/// Appends an event with `append` (a call of builder.append() or
/// appendRaw(), true when it fit); when it does not fit in a packet that
/// holds events, closes that one with `emit(timestamp)`, opens the next at
/// `timestamp` and appends again. False when not even an empty packet holds
/// the event (the caller counts it as discarded).
template <typename Append, typename Emit>
bool appendOrStartNext(PacketBuilder& builder, std::uint64_t timestamp, Append&& append,
                       Emit&& emit) {
    if (append())
        return true;
    if (builder.eventsInPacket() == 0)
        return false;
    emit(timestamp);
    builder.open(timestamp);
    return append();
}

} // namespace tracectl::consumer::kernel
