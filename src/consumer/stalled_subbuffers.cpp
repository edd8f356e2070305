#include "stalled_subbuffers.hpp"

#include "ring_buffer_guard.hpp"
#include "ust_packet_header.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstring>
#include <lttng/ust-ctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tracectl::consumer {

namespace {

// lttng-ust 2.13 on a 64-bit little-endian host. Offsets from the start of
// a stream's shm, where lib_ring_buffer_create() puts its
// `struct lttng_ust_ring_buffer` (the first allocation of the object).
//
// `struct lttng_crash_abi` (packed), the struct's first member:
constexpr std::size_t kCrashMagic = 0; // 16 bytes
constexpr std::size_t kCrashMmapLength = 16;
constexpr std::size_t kCrashEndian = 24;
constexpr std::size_t kCrashMajor = 26;
constexpr std::size_t kCrashWordSize = 30;
constexpr std::size_t kCrashLayoutType = 31;
constexpr std::size_t kCrashOffsetProd = 32;
constexpr std::size_t kCrashOffsetConsumed = 36;
constexpr std::size_t kCrashOffsetCommitHotArray = 40;
constexpr std::size_t kCrashOffsetCommitHotSeq = 44;
constexpr std::size_t kCrashOffsetWsbArray = 48;
constexpr std::size_t kCrashOffsetWsbId = 52;
constexpr std::size_t kCrashOffsetSbArray = 56;
constexpr std::size_t kCrashOffsetSbShmpOffset = 60;
constexpr std::size_t kCrashOffsetSbBackendP = 64;
constexpr std::size_t kCrashOffsetContentSize = 68;
constexpr std::size_t kCrashOffsetPacketSize = 72;
constexpr std::size_t kCrashStrideCommitHot = 84;
constexpr std::size_t kCrashStrideWsb = 88;
constexpr std::size_t kCrashStrideSb = 92;
constexpr std::size_t kCrashBufSize = 96;
constexpr std::size_t kCrashSubbufSize = 104;
constexpr std::size_t kCrashNumSubbuf = 112;
constexpr std::size_t kCrashMode = 120; // 0: overwrite, 1: discard
constexpr unsigned char kCrashMagicBytes[16] = {0x17, 0x7B, 0xF1, 0x77, 0xBF, 0x17, 0x7B, 0xF1,
                                                0x77, 0xBF, 0x17, 0x7B, 0xF1, 0x77, 0xBF, 0x17};

// The rest of `struct lttng_ust_ring_buffer`. A DECLARE_SHMP member is a
// `struct shm_ref { ssize_t index; ssize_t offset; }`: its offset field,
// 8 bytes in, is where the array lies in the same shm.
constexpr std::size_t kBufOffset = 128;            // union v_atomic offset (write position)
constexpr std::size_t kBufCommitHot = 136;         // shmp commit_hot
constexpr std::size_t kBufConsumed = 152;          // long consumed
constexpr std::size_t kBufBackendWsb = 176;        // backend.buf_wsb
constexpr std::size_t kBufBackendCnt = 176 + 24;   // backend.buf_cnt
constexpr std::size_t kBufBackendArray = 176 + 40; // backend.array
constexpr std::size_t kBufCommitCold = 352;        // shmp commit_cold
constexpr std::size_t kBufTsEnd = 368;             // shmp ts_end
constexpr std::size_t kBufLostFull = 392;          // records_lost_full
constexpr std::size_t kBufLostWrap = 400;          // records_lost_wrap
constexpr std::size_t kBufLostBig = 408;           // records_lost_big
constexpr std::size_t kShmRefOffset = 8;

// `struct lttng_ust_ring_buffer_backend_pages`: data_size, then shmp p.
constexpr std::size_t kPagesDataSize = 24;
constexpr std::size_t kPagesP = 32;
constexpr std::size_t kPagesSize = 64;

// commit_counters_hot { cc, seq, ... }: cc first, seq as the crash ABI says.
constexpr std::size_t kHotCc = 0;
constexpr std::size_t kHotSeq = 8;

// The sub-buffer id (backend_internal.h, 64-bit): offset above bit 33,
// "noref" bit 32, index below.
constexpr unsigned kIdOffsetShift = 33;
constexpr unsigned long kIdNoref = 1UL << 32;
constexpr unsigned long kIdIndexMask = kIdNoref - 1;
constexpr unsigned long kIdOffsetMask = ~((1UL << kIdOffsetShift) - 1);

// The packet header (ust_packet_header.hpp).
using Header = UstPacketHeaderLayout;
constexpr std::size_t kHeaderTimestampBegin = Header::kTimestampBegin;
constexpr std::size_t kHeaderTimestampEnd = Header::kTimestampEnd;
constexpr std::size_t kHeaderContentSize = Header::kContentSize;
constexpr std::size_t kHeaderPacketSize = Header::kPacketSize;
constexpr std::size_t kHeaderEventsDiscarded = Header::kEventsDiscarded;
constexpr std::size_t kHeaderSize = Header::kSize; // the first record's start

/// Everything the fix-up touches, as plain data: it runs under
/// runGuarded(), which may leave it by a jump.
struct Work {
    unsigned char* base = nullptr;
    std::size_t size = 0;
    unsigned long produced = 0;
    unsigned long consumed = 0;
    unsigned long page = 4096;
    StalledFixUp* result = nullptr;
    const char* refused = nullptr;
    /// Listing only (shortSubbuffers()): where they go, and how many.
    ShortSubbuffer* list = nullptr;
    std::size_t listed = 0;
    /// Listing: whether the sub-buffer writers are in holds a reservation
    /// not committed yet.
    bool openReservation = false;
    /// Fixing only these (fixUpStalledSubbuffers(..., only)).
    const ShortSubbuffer* only = nullptr;
    std::size_t onlyCount = 0;
};

constexpr std::size_t kMaxListed = 64;

bool inBounds(const Work& w, std::size_t off, std::size_t len) {
    return off <= w.size && w.size - off >= len;
}

template <typename T>
bool load(const Work& w, std::size_t off, T& out) {
    if (!inBounds(w, off, sizeof(T)) || off % alignof(T) != 0)
        return false;
    std::memcpy(&out, w.base + off, sizeof(T));
    return true;
}

template <typename T>
bool store(Work& w, std::size_t off, T value) {
    if (!inBounds(w, off, sizeof(T)) || off % alignof(T) != 0)
        return false;
    std::memcpy(w.base + off, &value, sizeof(T));
    return true;
}

/// The word at `off`, to update atomically; null if out of bounds.
unsigned long* word(Work& w, std::size_t off) {
    if (!inBounds(w, off, sizeof(unsigned long)) || off % alignof(unsigned long) != 0)
        return nullptr;
    return reinterpret_cast<unsigned long*>(w.base + off);
}

using Atomic = std::atomic_ref<unsigned long>;

/// Where the array a shmp member at `ref` points to lies, if its
/// `count` elements of `stride` bytes are inside the mapping.
bool arrayAt(const Work& w, std::size_t ref, std::size_t count, std::size_t stride,
             std::size_t& out) {
    long offset = 0;
    if (!load(w, ref + kShmRefOffset, offset) || offset < 0)
        return false;
    if (stride != 0 && count > (w.size / stride))
        return false;
    if (!inBounds(w, static_cast<std::size_t>(offset), count * stride))
        return false;
    out = static_cast<std::size_t>(offset);
    return true;
}

struct Layout {
    unsigned long subbufSize = 0;
    unsigned long numSubbuf = 0;
    unsigned subbufOrder = 0;
    unsigned bufOrder = 0;
    unsigned long countMask = 0; // commit_count_mask
    std::size_t hot = 0, hotStride = 0;
    std::size_t cold = 0;
    std::size_t wsb = 0;
    std::size_t cnt = 0;
    std::size_t sbArray = 0;
    std::size_t tsEnd = 0;
    bool overwrite = false;
};

template <typename T>
bool expect(const Work& w, std::size_t off, T value) {
    T v{};
    return load(w, off, v) && v == value;
}

/// Checks the crash-dump ABI block against the layout above; fills `l`.
const char* readLayout(const Work& w, Layout& l) {
    if (!inBounds(w, 0, 512) || std::memcmp(w.base + kCrashMagic, kCrashMagicBytes, 16) != 0)
        return "no lttng-ust ring buffer at the start of the shm";
    std::uint64_t mmapLength = 0, bufSize = 0, subbuf = 0, num = 0;
    std::uint32_t hotArray = 0, wsbArray = 0, sbArray = 0, hotStride = 0;
    if (!expect<std::uint16_t>(w, kCrashEndian, 0x1234) ||
        !expect<std::uint16_t>(w, kCrashMajor, 0) || !expect<std::uint8_t>(w, kCrashWordSize, 8) ||
        !expect<std::uint8_t>(w, kCrashLayoutType, 0))
        return "not a 64-bit lttng-ust buffer of crash-dump ABI 0";
    if (!expect<std::uint32_t>(w, kCrashOffsetProd, kBufOffset) ||
        !expect<std::uint32_t>(w, kCrashOffsetConsumed, kBufConsumed) ||
        !expect<std::uint32_t>(w, kCrashOffsetCommitHotSeq, kHotSeq) ||
        !expect<std::uint32_t>(w, kCrashOffsetWsbId, 0) ||
        !expect<std::uint32_t>(w, kCrashStrideWsb, 8) ||
        !expect<std::uint32_t>(w, kCrashStrideSb, 16) ||
        !expect<std::uint32_t>(w, kCrashOffsetSbShmpOffset, kShmRefOffset) ||
        !expect<std::uint32_t>(w, kCrashOffsetSbBackendP, kPagesP + kShmRefOffset) ||
        !expect<std::uint32_t>(w, kCrashOffsetContentSize, kHeaderContentSize) ||
        !expect<std::uint32_t>(w, kCrashOffsetPacketSize, kHeaderPacketSize))
        return "the buffer's layout is not lttng-ust 2.13's";
    if (!load(w, kCrashMmapLength, mmapLength) || !load(w, kCrashBufSize, bufSize) ||
        !load(w, kCrashSubbufSize, subbuf) || !load(w, kCrashNumSubbuf, num) ||
        !load(w, kCrashOffsetCommitHotArray, hotArray) ||
        !load(w, kCrashOffsetWsbArray, wsbArray) || !load(w, kCrashOffsetSbArray, sbArray) ||
        !load(w, kCrashStrideCommitHot, hotStride))
        return "the buffer's crash-dump block is cut short";
    if (mmapLength > w.size || !std::has_single_bit(subbuf) || !std::has_single_bit(num) ||
        subbuf < kHeaderSize || subbuf > (1UL << 31) || num > 65536 || bufSize != subbuf * num ||
        hotStride < 16 || hotStride > 4096)
        return "the buffer's sizes do not hold together";
    l.subbufSize = subbuf;
    l.numSubbuf = num;
    l.subbufOrder = static_cast<unsigned>(std::countr_zero(subbuf));
    l.bufOrder = static_cast<unsigned>(std::countr_zero(bufSize));
    l.countMask = ~0UL >> std::countr_zero(num);
    l.hotStride = hotStride;
    std::uint32_t mode = 0;
    if (!load(w, kCrashMode, mode) || mode > 1)
        return "the buffer's mode is neither overwrite nor discard";
    l.overwrite = mode == 0;
    // Our own reading of the struct must land where the crash block says.
    if (!arrayAt(w, kBufCommitHot, num, hotStride, l.hot) || l.hot != hotArray ||
        !arrayAt(w, kBufBackendWsb, num, 8, l.wsb) || l.wsb != wsbArray ||
        !arrayAt(w, kBufBackendArray, num + 1, 16, l.sbArray) || l.sbArray != sbArray)
        return "the buffer's arrays are not where lttng-ust 2.13 puts them";
    if (!arrayAt(w, kBufCommitCold, num, hotStride, l.cold) ||
        !arrayAt(w, kBufBackendCnt, num, 8, l.cnt) || !arrayAt(w, kBufTsEnd, num, 8, l.tsEnd))
        return "the buffer's commit or packet counters lie outside it";
    return nullptr;
}

/// Where the packet of writer sub-buffer `idx` lies (its header), and its
/// backend pages, through the sub-buffer's id as lttng-ust resolves it.
bool packetOf(const Work& w, const Layout& l, unsigned long idx, std::size_t& pages,
              std::size_t& packet) {
    unsigned long id = 0;
    if (!load(w, l.wsb + idx * 8, id))
        return false;
    const unsigned long index = id & kIdIndexMask;
    if (index > l.numSubbuf) // one extra reader sub-buffer in overwrite mode
        return false;
    long pagesOff = 0, p = 0;
    if (!load(w, l.sbArray + index * 16 + kShmRefOffset, pagesOff) || pagesOff < 0 ||
        !inBounds(w, static_cast<std::size_t>(pagesOff), kPagesSize))
        return false;
    pages = static_cast<std::size_t>(pagesOff);
    if (!load(w, pages + kPagesP + kShmRefOffset, p) || p < 0 ||
        !inBounds(w, static_cast<std::size_t>(p), l.subbufSize))
        return false;
    packet = static_cast<std::size_t>(p);
    return true;
}

void fixUp(void* arg) {
    Work& w = *static_cast<Work*>(arg);
    Layout l;
    if ((w.refused = readLayout(w, l)) != nullptr)
        return;
    // Overwrite mode is left alone: its writers push the read position and
    // swap sub-buffers with the reader, and a fix-up there spoiled the
    // discarded counts under load (statistics suite). Not done yet.
    if (l.overwrite)
        return;
    const unsigned long s = l.subbufSize;
    const unsigned long end = w.produced & ~(s - 1); // the sub-buffer writers are in
    if (w.list != nullptr && (w.produced & (s - 1)) != 0) {
        // The current sub-buffer: its commit count lags the write position
        // while a reservation in it is not committed (live or dead).
        const unsigned long idx = (w.produced >> l.subbufOrder) & (l.numSubbuf - 1);
        const unsigned long base = ((w.produced >> l.bufOrder) << l.subbufOrder) & l.countMask;
        unsigned long hotNow = 0;
        if (load(w, l.hot + idx * l.hotStride + kHotCc, hotNow))
            w.openReservation = ((hotNow - base) & l.countMask) != (w.produced & (s - 1));
    }
    // The positions are the apps' to write: no more than one buffer's worth
    // of sub-buffers lies between them, whatever they say.
    unsigned long visited = 0;
    for (unsigned long pos = w.consumed & ~(s - 1);
         static_cast<long>(end - pos) > 0 && visited < l.numSubbuf; pos += s, ++visited) {
        const unsigned long idx = (pos >> l.subbufOrder) & (l.numSubbuf - 1);
        const unsigned long turn = pos >> l.bufOrder;
        const unsigned long base = (turn << l.subbufOrder) & l.countMask; // cc at this turn's start
        unsigned long* hotWord = word(w, l.hot + idx * l.hotStride + kHotCc);
        unsigned long* coldWord = word(w, l.cold + idx * l.hotStride);
        unsigned long seq = 0;
        if (hotWord == nullptr || coldWord == nullptr ||
            !load(w, l.hot + idx * l.hotStride + kHotSeq, seq))
            return;
        Atomic hot(*hotWord);
        Atomic cold(*coldWord);
        unsigned long coldNow = cold.load();
        if (((coldNow - s) & l.countMask) == base)
            continue; // delivered: the reader gets it
        if ((coldNow & l.countMask) == ((base + 1) & l.countMask)) {
            // A writer is delivering it, or died doing so, holding it
            // exclusively. Only once no writer is left is it the latter:
            // then undo that mark (as lttng-ust 2.14 does).
            if (w.list != nullptr || w.only != nullptr)
                continue;
            cold.store(coldNow - 1);
            coldNow -= 1;
        }
        if ((coldNow & l.countMask) != base) {
            w.refused = "a sub-buffer's commit counters are out of step";
            return;
        }
        const unsigned long hotNow = hot.load();
        const unsigned long missing = (base + s - hotNow) & l.countMask;
        if (missing >= s) {
            w.refused = "a sub-buffer's commit counter is out of range";
            return;
        }
        if (w.list != nullptr) {
            if (w.listed < kMaxListed)
                w.list[w.listed++] = ShortSubbuffer{pos, hotNow};
            continue;
        }
        if (w.only != nullptr) {
            bool suspect = false;
            for (std::size_t i = 0; i < w.onlyCount; ++i)
                suspect = suspect || (w.only[i].position == pos && w.only[i].commitCount == hotNow);
            if (!suspect)
                continue; // not short then, or its writer went on since: alive
        }
        std::size_t pages = 0, packet = 0;
        unsigned long dataSize = 0;
        std::uint64_t tsBegin = 0, tsEnd = 0;
        if (!packetOf(w, l, idx, pages, packet) || !load(w, pages + kPagesDataSize, dataSize) ||
            !load(w, l.tsEnd + idx * 8, tsEnd) ||
            !load(w, packet + kHeaderTimestampBegin, tsBegin)) {
            w.refused = "a sub-buffer's packet lies outside the buffer";
            return;
        }
        // Exclusive access, as the delivering writer takes it.
        unsigned long expected = base;
        if (!cold.compare_exchange_strong(expected, base + 1))
            continue; // someone is delivering it right now
        if (dataSize == 0 || dataSize > s)
            dataSize = s;
        // The records committed in a row from the start: up to the dead
        // reservation. Before this turn's header commit: no record.
        unsigned long kept = (seq - base) & l.countMask;
        if (kept < kHeaderSize || kept > dataSize)
            kept = kHeaderSize;
        const unsigned long lost = missing != 0 ? 1 : 0;
        unsigned long* lostWord = word(w, kBufLostFull);
        unsigned long wrap = 0, big = 0;
        if (lostWord == nullptr || !load(w, kBufLostWrap, wrap) || !load(w, kBufLostBig, big)) {
            cold.store(base); // give it back as it was
            w.refused = "the buffer's lost-record counters lie outside it";
            return;
        }
        const unsigned long total = Atomic(*lostWord).fetch_add(lost) + lost + wrap + big;
        // events_discarded must not exceed the next packet's, read after
        // this one if it was delivered already: the loss then shows in the
        // packets written from now on.
        unsigned long discarded = total;
        if (static_cast<long>(end - (pos + s)) > 0) {
            const unsigned long next = (idx + 1) & (l.numSubbuf - 1);
            unsigned long* nextCold = word(w, l.cold + next * l.hotStride);
            const unsigned long nextBase = ((pos + s) >> l.bufOrder << l.subbufOrder) & l.countMask;
            std::size_t nextPages = 0, nextPacket = 0;
            std::uint64_t nextDiscarded = 0;
            if (nextCold != nullptr && ((Atomic(*nextCold).load() - s) & l.countMask) == nextBase &&
                packetOf(w, l, next, nextPages, nextPacket) &&
                load(w, nextPacket + kHeaderEventsDiscarded, nextDiscarded) &&
                nextDiscarded < discarded)
                discarded = nextDiscarded;
        }
        const unsigned long padded = (dataSize + w.page - 1) & ~(w.page - 1);
        store<std::uint64_t>(w, packet + kHeaderTimestampEnd, tsEnd < tsBegin ? tsBegin : tsEnd);
        store<std::uint64_t>(w, packet + kHeaderContentSize, std::uint64_t{kept} * 8);
        store<std::uint64_t>(w, packet + kHeaderPacketSize, std::uint64_t{padded} * 8);
        store<std::uint64_t>(w, packet + kHeaderEventsDiscarded, discarded);
        // The packet counter (its packet_seq_num next turn), the id's
        // "delivered at this turn" mark, the commit count made whole, and
        // the end of exclusive access: as lib_ring_buffer_check_deliver_slow.
        std::uint64_t count = 0;
        if (load(w, l.cnt + idx * 8, count))
            store<std::uint64_t>(w, l.cnt + idx * 8, count + 1);
        unsigned long id = 0;
        if (l.overwrite && load(w, l.wsb + idx * 8, id)) // what the reader swaps in
            store<unsigned long>(w, l.wsb + idx * 8,
                                 (id & ~kIdOffsetMask) | (turn << kIdOffsetShift) | kIdNoref);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        hot.fetch_add(missing);
        cold.store(base + s);
        w.result->packets += 1;
        w.result->eventsLost += lost;
        w.result->bytesCut += dataSize - kept;
    }
}

/// The stream's shm mapped read-write, unmapped on scope exit.
class Mapping {
public:
    explicit Mapping(int fd) {
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0)
            return;
        void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ | PROT_WRITE,
                         MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            return;
        base_ = static_cast<unsigned char*>(p);
        size_ = static_cast<std::size_t>(st.st_size);
    }
    ~Mapping() {
        if (base_ != nullptr)
            ::munmap(base_, size_);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    unsigned char* base() const noexcept { return base_; }
    std::size_t size() const noexcept { return size_; }

private:
    unsigned char* base_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace

namespace {

/// Runs fixUp() on `stream`'s shm with `w`'s mode filled in.
StalledFixUp run(lttng_ust_ctl_consumer_stream* stream, int shmFd, Work& w) noexcept {
    StalledFixUp result;
    unsigned long produced = 0, consumed = 0;
    if (stream == nullptr || guarded(&lttng_ust_ctl_snapshot_sample_positions, stream) < 0 ||
        guarded(&lttng_ust_ctl_snapshot_get_produced, stream, &produced) < 0 ||
        guarded(&lttng_ust_ctl_snapshot_get_consumed, stream, &consumed) < 0) {
        result.refused = "its positions cannot be sampled";
        return result;
    }
    if (produced == consumed)
        return result;
    Mapping map(shmFd);
    if (map.base() == nullptr) {
        result.refused = "its shm cannot be mapped";
        return result;
    }
    w.base = map.base();
    w.size = map.size();
    w.produced = produced;
    w.consumed = consumed;
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0)
        w.page = static_cast<unsigned long>(page);
    w.result = &result;
    if (!runGuarded(&fixUp, &w))
        result.refused = "its shm faulted";
    else if (w.refused != nullptr)
        result.refused = w.refused;
    return result;
}

} // namespace

std::vector<ShortSubbuffer> shortSubbuffers(lttng_ust_ctl_consumer_stream* stream, int shmFd,
                                            std::string& refused, bool* openReservation) noexcept {
    ShortSubbuffer list[kMaxListed];
    Work w;
    w.list = list;
    refused = run(stream, shmFd, w).refused;
    if (openReservation != nullptr)
        *openReservation = w.openReservation;
    try {
        return std::vector<ShortSubbuffer>(list, list + w.listed);
    } catch (const std::bad_alloc&) {
        refused = "out of memory";
        return {};
    }
}

StalledFixUp fixUpStalledSubbuffers(lttng_ust_ctl_consumer_stream* stream, int shmFd,
                                    const std::vector<ShortSubbuffer>* only) noexcept {
    Work w;
    if (only != nullptr && only->empty())
        return {};
    if (only != nullptr) {
        w.only = only->data();
        w.onlyCount = only->size();
    }
    return run(stream, shmFd, w);
}

} // namespace tracectl::consumer
