// Counts the event records of a UST packet (issue 14: per-channel "events
// recorded"), by walking them with the layouts the daemon compiled from its
// metadata (common/record_layout.hpp): lttng-ust's packet context has no
// event count, and its ring buffer's own counting
// (LTTNG_RING_BUFFER_COUNT_EVENTS) is compiled out.
//
// The packet bytes come from a ring buffer the traced app can write to:
// count() treats them as hostile. It reads nothing outside the span nor
// past content_size, ends on every input (each record advances by at least
// its 48-bit header), allocates nothing and calls nothing virtual.
//
// Not thread-safe for declare(); count() is const and may run concurrently
// with other count() calls.
#pragma once

#include "record_layout.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tracectl::consumer {

struct CountResult {
    enum class Stop {
        /// Every record up to content_size was counted; stopBit ==
        /// content_size.
        End,
        /// The record at stopBit has an event id (or the channel a context)
        /// that has no layout yet. Count again from stopBit once declare()
        /// has brought it: the app may write an event before its layout
        /// reaches the consumer. Also what a corrupt event id looks like.
        UnknownEvent,
        /// The bytes do not follow the layouts: `why` says how; stopBit is
        /// the start of the record at fault (or fromBit when the arguments
        /// themselves are wrong).
        Malformed,
    };

    std::uint64_t records = 0; ///< records counted from fromBit to stopBit
    Stop stop = Stop::End;
    std::uint64_t stopBit = 0; ///< bits from the start of the packet
    std::string why;           ///< for Malformed, empty otherwise
};

/// The layouts of one channel (stream class) of one trace.
class RecordCounter {
public:
    /// `format`: from record_layout::PacketFormat::fromAbi(the trace's ABI).
    explicit RecordCounter(const record_layout::PacketFormat& format) : format_(format) {}

    /// Adds what the daemon sent: the context program (once; the same one
    /// again is accepted and changes nothing) and new event programs (an
    /// id already known with the same program changes nothing). Throws
    /// record_layout::LayoutError, changing nothing, for a program
    /// validate() refuses, a different context or event program for a
    /// known one, or an event id >= kMaxEventIds.
    void declare(const record_layout::ChannelLayouts& layouts);

    /// Counts the records of `packet` between `fromBit` and
    /// `contentSizeBits` (packet_context.content_size, in bits).
    /// `fromBit` = 0 starts at the first record (after the packet header
    /// and context, PacketFormat::firstRecordBit); any other value must be
    /// a record's start: a previous result's stopBit (UnknownEvent).
    /// Malformed if contentSizeBits is past the span or before the first
    /// record, or fromBit past contentSizeBits.
    CountResult count(std::span<const std::byte> packet, std::uint64_t fromBit,
                      std::uint64_t contentSizeBits) const;

    /// packet_context.content_size of `packet` (bits, in the trace's byte
    /// order), or nullopt if the span is too short to hold it. The value is
    /// the app's: count() checks it against the span.
    std::optional<std::uint64_t> contentSize(std::span<const std::byte> packet) const noexcept;

    const record_layout::PacketFormat& format() const noexcept { return format_; }
    bool hasContext() const noexcept { return context_.has_value(); }
    /// Whether event `id` has a layout.
    bool knows(std::uint32_t id) const noexcept {
        return id < steps_.size() && steps_[id].kind != Step::Unknown;
    }

    /// Largest event id + 1 declare() accepts (lttng-sessiond's and our
    /// registry's default bound on events per channel).
    static constexpr std::uint32_t kMaxEventIds = 1u << 20;

private:
    // How to step over one program: a fixed one (empty, or one Skip) is
    // stepped over inline, without walking its ops.
    struct Step {
        enum Kind : std::uint8_t { Unknown, Fixed, Walk } kind = Unknown;
        std::uint32_t alignment = 1; // Fixed
        std::uint64_t bits = 0;      // Fixed
    };
    static Step stepFor(const record_layout::Program& p) noexcept;

    record_layout::PacketFormat format_;
    std::optional<record_layout::Program> context_;
    Step contextStep_;
    std::vector<Step> steps_;                      // index == event id
    std::vector<record_layout::Program> programs_; // index == event id
    std::uint16_t registers_ = 0;                  // the most any program uses
};

} // namespace tracectl::consumer
