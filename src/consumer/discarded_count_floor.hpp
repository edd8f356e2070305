// A stream's events_discarded count never goes down, whatever lttng-ust
// 2.13 wrote.
//
// A packet's events_discarded is the stream's running count of discarded
// event records when the packet ended: CTF readers subtract one packet's
// count from the next one's to tell how many were lost between them
// (babeltrace2's "Discarded events" messages), so a count that goes down
// reads as a loss of about 2^64 events.
//
// lttng-ust 2.13 (Debian 12 ships 2.13.5) writes a stale count into a packet
// that a writer delivers after another party switched its sub-buffer: the
// consumer's flush (switch timer, live timer, an app's exit, a snapshot)
// while the writer's reservation in it was still open. The writer then
// ends the packet with the counts its reservation context last sampled,
// which its fast path does not refresh: the counts of its own last
// sub-buffer switch, 0 for a thread that never made one
// (ring_buffer_frontend.c, lib_ring_buffer_check_deliver_slow calling
// client_buffer_end with the committing writer's context). Fixed in
// lttng-ust 2.15 by "Fix: Populate events losts on fast path for lazy
// padding" (28bc0e2e).
//
// Every such count is one the buffer had reached earlier, so it is at most
// the true one. The highest count written so far on the stream is then a
// count the buffer had reached by this packet's end too: raising a packet's
// count to it keeps the running count exact wherever lttng-ust wrote it
// fresh (the last packet of a stopped session always is: the consumer's own
// flush ends it) and makes it never go down in between.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tracectl::consumer {

/// One stream's events_discarded floor, as its packets are read in order.
class DiscardedCountFloor {
public:
    /// The count to record for the stream's next packet, whose header says
    /// `count`: the higher of it and every count recorded before.
    std::uint64_t next(std::uint64_t count) noexcept {
        if (count < highest_) {
            ++raised_;
            return highest_;
        }
        highest_ = count;
        return count;
    }

    /// The highest count recorded so far: the last packet's, as recorded.
    std::uint64_t highest() const noexcept { return highest_; }
    /// Packets whose count next() raised.
    std::uint64_t raised() const noexcept { return raised_; }

private:
    std::uint64_t highest_ = 0;
    std::uint64_t raised_ = 0;
};

} // namespace tracectl::consumer
