// Stalled sub-buffers: a writer that died inside a reservation (killed while
// copying a field, after lttng-ust reserved its record and before it
// committed it) leaves its sub-buffer's commit count short for ever. That
// sub-buffer is never delivered, so the reader cannot get past it: every
// packet written after it, by any app sharing the buffer, stays unread, and
// once the buffer is full every new event is discarded.
//
// lttng-ust 2.14 and lttng-consumerd fix this up with
// lttng_ust_ctl_fixup_stalled_stream() and per-sub-buffer owner ids, which
// 2.13 (Debian 12's liblttng-ust-ctl) has neither of. This does the same job
// on lttng-ust 2.13's ring-buffer memory: the consumer maps the stream's
// shm itself and delivers the sub-buffer as its last writer would have,
// with the packet cut at the end of the records committed in a row before
// the dead reservation (the commit counter's `seq`, which lttng-crash reads
// for the same reason) and the lost record counted as discarded.
//
// The layout comes from lttng-ust 2.13's `struct lttng_ust_ring_buffer`
// (src/common/ringbuffer/frontend_types.h, backend_types.h) and its packet
// header (ringbuffer-clients/template.h); the buffer's own crash-dump ABI
// block (`struct lttng_crash_abi`, at its start) is checked against it
// first, and a buffer whose layout is not that one is left alone. The
// memory is the apps' too: every offset read from it is bounded by the
// mapping, and every access runs under the ring-buffer guard (ring_buffer_guard.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct lttng_ust_ctl_consumer_stream;

namespace tracectl::consumer {

/// What fixUpStalledSubbuffers() did.
struct StalledFixUp {
    std::uint32_t packets = 0;    ///< stalled sub-buffers delivered
    std::uint64_t eventsLost = 0; ///< records counted as discarded for them
    std::uint64_t bytesCut = 0;   ///< bytes past the kept records, in those packets
    std::string refused;          ///< why nothing could be done ("" if nothing to refuse)
};

/// A sub-buffer that writers have left (the write position is past it) and
/// that is not delivered: its commit count is short of whole.
struct ShortSubbuffer {
    unsigned long position = 0;    ///< its start, free-running (bytes)
    unsigned long commitCount = 0; ///< its hot commit count then
    bool operator==(const ShortSubbuffer&) const = default;
};

/// The short sub-buffers of `stream` (shm `shmFd`) between the read and
/// the write position, oldest first (at most 64), and why none could be
/// listed ("" if the list is whole). With `openReservation`, also whether
/// the sub-buffer the writers are in holds a reservation not committed yet
/// (its commit count lags the write position). Reads only. Never throws.
std::vector<ShortSubbuffer> shortSubbuffers(lttng_ust_ctl_consumer_stream* stream, int shmFd,
                                            std::string& refused,
                                            bool* openReservation = nullptr) noexcept;

/// Delivers every sub-buffer of `stream` (whose shm is `shmFd`) between the
/// read and the write position that writers have left (the write position
/// is past it) but whose commit count is short: each becomes a packet
/// holding the records committed in a row from its start, its
/// timestamp_end the one its last reservation sampled, its events_discarded
/// counting one more lost record (added to the buffer's records_lost_full,
/// so every later packet counts it too). A sub-buffer whose last commit is
/// merely late cannot be told from one whose writer died: call this only
/// when no writer can be inside a reservation any more: every app that
/// shares the buffer is gone, or was stopped and made quiescent
/// (stop_session + wait_quiescent). Discard-mode buffers only: an
/// overwrite-mode one is left as it is (nothing done, nothing refused).
/// Call flush_buffer(stream, 0) first (so
/// the sub-buffer holding the dead reservation is switched out) and again
/// after (so that a packet carries the new discarded count). Never throws.
/// With `only`, just those of its sub-buffers that are still short with the
/// same commit count (a writer still alive would have moved it): what an
/// earlier shortSubbuffers() listed, a grace period ago.
StalledFixUp fixUpStalledSubbuffers(lttng_ust_ctl_consumer_stream* stream, int shmFd,
                                    const std::vector<ShortSubbuffer>* only = nullptr) noexcept;

} // namespace tracectl::consumer
