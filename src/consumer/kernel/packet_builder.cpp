#include "packet_builder.hpp"

#include "syscall_string_abi.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tracectl::consumer::kernel {

namespace kr = kernel_records;

namespace {

// Bounded little-endian writes (x86-64: native order) into [p, end): a
// write that does not fit writes nothing and fails every later one.
class Cursor {
public:
    Cursor(std::byte* p, std::byte* end) noexcept : p_(p), end_(end) {}

    void put(const void* src, std::size_t n) noexcept {
        if (!room(n))
            return;
        if (n != 0)
            std::memcpy(p_, src, n);
        p_ += n;
    }
    void zeros(std::size_t n) noexcept {
        if (!room(n))
            return;
        std::memset(p_, 0, n);
        p_ += n;
    }
    template <typename T>
    void le(T v) noexcept {
        put(&v, sizeof v);
    }
    bool ok() const noexcept { return ok_; }
    std::byte* position() const noexcept { return p_; }

private:
    bool room(std::size_t n) noexcept {
        if (!ok_ || n > static_cast<std::size_t>(end_ - p_))
            ok_ = false;
        return ok_;
    }

    std::byte* p_;
    std::byte* end_;
    bool ok_ = true;
};

void putContext(Cursor& c, std::uint32_t mask, const ContextValues& v) noexcept {
    if (mask & kr::ContextTid)
        c.le<std::int32_t>(v.tid);
    if (mask & kr::ContextPid)
        c.le<std::int32_t>(v.pid);
    if (mask & kr::ContextProcname)
        c.put(v.procname, sizeof v.procname);
    if (mask & kr::ContextPrio)
        c.le<std::int32_t>(v.prio);
    if (mask & kr::ContextCpuId)
        c.le<std::int32_t>(v.cpuId);
    if (mask & kr::ContextCallstackKernel) {
        c.le<std::uint32_t>(static_cast<std::uint32_t>(v.kernelStack.size()));
        c.put(v.kernelStack.data(), v.kernelStack.size_bytes());
    }
    if (mask & kr::ContextCallstackUser) {
        c.le<std::uint32_t>(static_cast<std::uint32_t>(v.userStack.size()));
        c.put(v.userStack.data(), v.userStack.size_bytes());
    }
}

struct Located {
    const std::byte* bytes = nullptr;
    std::uint32_t length = 0;
};

// The bytes a __data_loc / __rel_loc at `step.offset` designates, or none
// when the u32 or its bytes fall outside the record.
Located locate(const kr::Step& step, const std::byte* record, std::uint32_t length,
               bool relative) noexcept {
    if (static_cast<std::uint32_t>(step.offset) + 4 > length)
        return {};
    std::uint32_t loc;
    std::memcpy(&loc, record + step.offset, 4);
    const std::uint32_t bytes = loc >> 16;
    const std::uint32_t offset = (loc & 0xffff) + (relative ? step.offset + 4u : 0u);
    if (offset > length || bytes > length - offset)
        return {};
    return {record + offset, bytes};
}

// The i32 at `offset`, 0 when it reaches past the record.
std::int32_t readI32(const std::byte* record, std::uint32_t length, std::uint16_t offset) noexcept {
    std::int32_t v = 0;
    if (static_cast<std::uint32_t>(offset) + 4 <= length)
        std::memcpy(&v, record + offset, 4);
    return v;
}

// The string a __data_loc at step.offset designates, up to its first NUL.
std::string_view locatedText(const kr::Step& step, const std::byte* record,
                             std::uint32_t length) noexcept {
    const Located s = locate(step, record, length, false);
    const auto* chars = reinterpret_cast<const char*>(s.bytes);
    const void* nul = s.length != 0 ? std::memchr(chars, 0, s.length) : nullptr;
    const std::size_t n =
        nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - chars) : s.length;
    return {chars, n};
}

// The steps that ask `processes` about a tid.
void putProcessStep(Cursor& c, const kr::Step& step, const std::byte* record, std::uint32_t length,
                    ProcessInfo* processes) {
    const std::int32_t tid = readI32(record, length, step.offset);
    const ProcessDetails d = processes != nullptr ? processes->lookup(tid) : ProcessDetails{};
    switch (step.kind) {
    case kr::StepKind::Tgid:
        c.le<std::int32_t>(processes != nullptr ? d.pid : tid);
        return;
    case kr::StepKind::PidNsInum:
        c.le<std::uint32_t>(d.pidNsInum);
        return;
    default: { // Vtids
        if (d.nsLevels == 0) {
            c.le<std::uint8_t>(1);
            c.le<std::int32_t>(tid);
            return;
        }
        const std::uint8_t n =
            std::min<std::uint8_t>(d.nsLevels, static_cast<std::uint8_t>(d.nsTids.size()));
        c.le<std::uint8_t>(n);
        c.put(d.nsTids.data(), std::size_t{n} * 4);
        return;
    }
    }
}

void putStep(Cursor& c, const kr::Step& step, const std::byte* record, std::uint32_t length,
             ProcessInfo* processes) {
    switch (step.kind) {
    case kr::StepKind::UserString: // append() writes it (PacketBuilder::userString())
        c.zeros(1);
        return;
    case kr::StepKind::Copy: {
        if (static_cast<std::uint32_t>(step.offset) + step.size <= length) { // the usual case
            c.put(record + step.offset, step.size);
            return;
        }
        const std::uint32_t available =
            step.offset >= length ? 0u : std::min<std::uint32_t>(step.size, length - step.offset);
        if (available != 0)
            c.put(record + step.offset, available);
        c.zeros(step.size - available);
        return;
    }
    case kr::StepKind::DataLocString:
    case kr::StepKind::RelLocString: {
        const Located s = locate(step, record, length, step.kind == kr::StepKind::RelLocString);
        const void* nul = s.length != 0 ? std::memchr(s.bytes, 0, s.length) : nullptr;
        const std::size_t n =
            nul ? static_cast<std::size_t>(static_cast<const std::byte*>(nul) - s.bytes) : s.length;
        c.put(s.bytes, n);
        c.zeros(1);
        return;
    }
    case kr::StepKind::DataLocSequence:
    case kr::StepKind::RelLocSequence: {
        const Located s = locate(step, record, length, step.kind == kr::StepKind::RelLocSequence);
        const std::uint32_t count = s.length / step.elementSize;
        c.le<std::uint32_t>(count);
        c.put(s.bytes, static_cast<std::size_t>(count) * step.elementSize);
        return;
    }
    case kr::StepKind::RwbsFlags: {
        const std::uint32_t available =
            step.offset >= length ? 0u : std::min<std::uint32_t>(step.size, length - step.offset);
        c.le<std::uint32_t>(
            available == 0
                ? kr::rwbsFlags({})
                : kr::rwbsFlags({reinterpret_cast<const char*>(record) + step.offset, available}));
        return;
    }
    case kr::StepKind::PrioFromKernel:
        c.le<std::int32_t>(readI32(record, length, step.offset) - kr::kMaxRtPrio);
        return;
    case kr::StepKind::Tgid:
    case kr::StepKind::PidNsInum:
    case kr::StepKind::Vtids:
        putProcessStep(c, step, record, length, processes);
        return;
    case kr::StepKind::DataLocFixedText: {
        if (step.elementSize == 0) // decode() refuses it; a hand-made one writes nothing
            return;
        const std::string_view text = locatedText(step, record, length);
        const std::size_t n = std::min<std::size_t>(text.size(), step.elementSize - 1u);
        c.put(text.data(), n);
        c.zeros(step.elementSize - n);
        return;
    }
    }
}

} // namespace

PacketBuilder::PacketBuilder(const Uuid& uuid, std::uint32_t streamId,
                             std::uint64_t streamInstanceId, std::uint32_t cpuId,
                             std::size_t maxPacketBytes, std::uint32_t contextMask)
    : uuid_(uuid), streamId_(streamId), instance_(streamInstanceId), cpuId_(cpuId),
      mask_(contextMask & kr::kAllContexts), contextBytes_(kr::contextSize(mask_)) {
    if (maxPacketBytes < kr::kPacketPreambleSize)
        throw std::invalid_argument("kernel packet: " + std::to_string(maxPacketBytes) +
                                    " bytes cannot hold the packet header and context");
    buffer_.resize(maxPacketBytes);
}

void PacketBuilder::open(std::uint64_t timestampBegin) {
    Cursor c(buffer_.data(), buffer_.data() + buffer_.size());
    c.le<std::uint32_t>(kr::kPacketMagic);
    c.put(uuid_.data(), uuid_.size());
    c.le<std::uint32_t>(streamId_);
    c.le<std::uint64_t>(instance_);
    c.zeros(kr::kPacketContextSize); // filled in at close
    pos_ = kr::kPacketPreambleSize;
    open_ = true;
    begin_ = timestampBegin;
    firstTs_ = lastTs_ = timestampBegin;
    events_ = 0;
}

void PacketBuilder::noteEvent(std::uint64_t timestamp) noexcept {
    if (events_ == 0)
        firstTs_ = timestamp;
    lastTs_ = events_ == 0 ? timestamp : std::max(lastTs_, timestamp);
    ++events_;
}

bool PacketBuilder::append(std::uint64_t timestamp, const kr::EventConversion& conversion,
                           const std::byte* record, std::uint32_t length,
                           const ContextValues& context, ProcessInfo* processes) {
    if (length < conversion.minSize) {
        ++malformed_;
        return true;
    }
    if (!open_)
        open(timestamp);
    Cursor c(buffer_.data() + pos_, buffer_.data() + buffer_.size());
    c.le<std::uint16_t>(conversion.ctfId);
    c.le<std::uint64_t>(timestamp);
    putContext(c, mask_, context);
    for (const kr::Step& step : conversion.steps) {
        if (step.kind == kr::StepKind::UserString) {
            // A copy holds no NUL (bpf_probe_read_user_str stops at the first).
            const std::string_view s = userString(step, record, length, timestamp);
            c.put(s.data(), s.size());
            c.zeros(1);
        } else {
            putStep(c, step, record, length, processes);
        }
    }
    if (!c.ok())
        return false;
    taken_.record = nullptr; // its strings are written
    pos_ = static_cast<std::size_t>(c.position() - buffer_.data());
    noteEvent(timestamp);
    return true;
}

std::string_view PacketBuilder::userString(const kr::Step& step, const std::byte* record,
                                           std::uint32_t length, std::uint64_t timestamp) noexcept {
    // "" without a source, or when the record is too short to hold the
    // argument and the system call's number.
    if (userStrings_ == nullptr || static_cast<std::uint32_t>(step.offset) + 8 > length ||
        length < TRACECTL_SYSCALL_NR_OFFSET + 4)
        return {};
    UserStringQuery q;
    std::memcpy(&q.tid, record + 4, 4); // common_pid
    std::memcpy(&q.nr, record + TRACECTL_SYSCALL_NR_OFFSET, 4);
    std::memcpy(&q.pointer, record + step.offset, 8);
    q.arg = static_cast<std::uint8_t>((step.offset - TRACECTL_SYSCALL_ARGS_OFFSET) / 8);
    q.timestamp = timestamp;
    if (taken_.record != record || taken_.timestamp != timestamp) {
        taken_.record = record;
        taken_.timestamp = timestamp;
        taken_.have = 0;
    }
    const auto bit = static_cast<std::uint8_t>(1u << q.arg);
    if ((taken_.have & bit) == 0) { // not taken by an append of this record that did not fit
        taken_.views[q.arg] = userStrings_->take(q);
        taken_.have |= bit;
    }
    return taken_.views[q.arg];
}

bool PacketBuilder::appendRaw(std::uint16_t ctfId, std::uint64_t timestamp,
                              const ContextValues& context, std::span<const std::byte> fields) {
    if (!open_)
        open(timestamp);
    Cursor c(buffer_.data() + pos_, buffer_.data() + buffer_.size());
    c.le<std::uint16_t>(ctfId);
    c.le<std::uint64_t>(timestamp);
    putContext(c, mask_, context);
    c.put(fields.data(), fields.size());
    if (!c.ok())
        return false;
    pos_ = static_cast<std::size_t>(c.position() - buffer_.data());
    noteEvent(timestamp);
    return true;
}

ClosedPacket PacketBuilder::close(std::uint64_t timestampEnd) {
    if (!open_)
        open(timestampEnd);
    const std::uint64_t begin = events_ != 0 ? std::min(begin_, firstTs_) : begin_;
    const std::uint64_t end = std::max({timestampEnd, events_ != 0 ? lastTs_ : begin, begin});
    const std::uint64_t bits = static_cast<std::uint64_t>(pos_) * 8;
    Cursor c(buffer_.data() + kr::kPacketHeaderSize, buffer_.data() + kr::kPacketPreambleSize);
    c.le<std::uint64_t>(begin);
    c.le<std::uint64_t>(end);
    c.le<std::uint64_t>(bits); // content_size
    c.le<std::uint64_t>(bits); // packet_size: no padding after the last event
    c.le<std::uint64_t>(seq_);
    c.le<std::uint64_t>(discarded_);
    c.le<std::uint32_t>(cpuId_);

    ClosedPacket out;
    out.bytes = std::span<const std::byte>(buffer_.data(), pos_);
    out.index.offset = 0;
    out.index.packetSizeBits = bits;
    out.index.contentSizeBits = bits;
    out.index.timestampBegin = begin;
    out.index.timestampEnd = end;
    out.index.eventsDiscarded = discarded_;
    out.index.streamId = streamId_;
    out.index.streamInstanceId = instance_;
    out.index.packetSeqNum = seq_;
    ++seq_;
    open_ = false;
    return out;
}

} // namespace tracectl::consumer::kernel
