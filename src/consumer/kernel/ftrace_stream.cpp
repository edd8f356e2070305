#include "ftrace_stream.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace tracectl::consumer::kernel {

namespace kr = kernel_records;

FtraceStream::FtraceStream(const FtraceStreamConfig& config, const ConversionTable& table,
                           ProcessInfo* processes, PacketSink sink)
    : config_(config), table_(table), processes_(processes), sink_(std::move(sink)),
      builder_(config.uuid, config.streamId, config.cpuId, config.cpuId, config.maxPacketBytes,
               config.contextMask),
      needsProcess_(
          (config.contextMask & (kr::kContextPid | kr::kContextProcname | kr::kContextPrio)) != 0),
      last_(config.beginTimestamp) {
    builder_.setUserStrings(config.userStrings);
}

void FtraceStream::consumePage(std::span<const std::byte> page) {
    ++counters_.pages;
    // The header first: lost events came before this page's records.
    if (const auto header = readPageHeader(page.data(), page.size(), config_.pageFormat);
        header && header->missedEvents) {
        const std::uint64_t missed = header->missedStored ? header->missedCount : 1;
        if (header->missedStored)
            counters_.missedStored += missed;
        else
            ++counters_.missedUnknown;
        counters_.eventsDiscarded += missed;
        builder_.addDiscarded(missed);
    }
    const PageWalk walk = walkPage(page.data(), page.size(), config_.pageFormat,
                                   [this](const FtraceRecord& r) { onRecord(r); });
    if (walk.malformed)
        ++counters_.malformedPages;
    counters_.malformedRecords = builder_.malformedRecords() + malformedBase_;
}

void FtraceStream::onRecord(const FtraceRecord& record) {
    if (record.length < kr::kFtraceCommonSize) {
        ++malformedBase_;
        return;
    }
    std::uint16_t type;
    std::memcpy(&type, record.payload, 2);
    const kr::EventConversion* conversion = table_.find(type);
    if (conversion == nullptr) {
        ++counters_.unknownIds;
        return;
    }
    const std::uint64_t ts = std::max(record.timestamp, last_);
    last_ = ts;

    const bool learns =
        conversion->task.role != kr::TaskRole::None && record.length >= conversion->minSize;
    if (learns)
        learn(conversion->task, record, true);
    std::int32_t tid;
    std::memcpy(&tid, record.payload + 4, 4);
    const ContextValues ctx = contextOf(tid);
    if (learns)
        learn(conversion->task, record, false);

    const std::uint64_t malformedBefore = builder_.malformedRecords();
    openFirstPacket();
    if (appendOrStartNext(
            builder_, ts,
            [&] {
                return builder_.append(ts, *conversion, record.payload, record.length, ctx,
                                       processes_);
            },
            [this](std::uint64_t end) { emit(end); })) {
        if (builder_.malformedRecords() == malformedBefore)
            ++counters_.eventsWritten;
        return;
    }
    // Not even an empty packet holds it.
    ++counters_.tooLarge;
    ++counters_.eventsDiscarded;
    builder_.addDiscarded(1);
}

bool FtraceStream::appendEvent(std::uint16_t ctfId, std::uint64_t timestamp,
                               const ContextValues& context, std::span<const std::byte> fields) {
    const std::uint64_t ts = std::max(timestamp, last_);
    last_ = ts;
    openFirstPacket();
    if (appendOrStartNext(
            builder_, ts, [&] { return builder_.appendRaw(ctfId, ts, context, fields); },
            [this](std::uint64_t end) { emit(end); })) {
        ++counters_.eventsWritten;
        return true;
    }
    ++counters_.tooLarge;
    ++counters_.eventsDiscarded;
    builder_.addDiscarded(1);
    return false;
}

ContextValues FtraceStream::contextOf(std::int32_t tid) {
    ContextValues ctx;
    ctx.tid = tid;
    ctx.pid = tid;
    ctx.cpuId = static_cast<std::int32_t>(config_.cpuId);
    if (needsProcess_ && processes_ != nullptr) {
        const ProcessDetails d = processes_->lookup(tid);
        ctx.pid = d.pid;
        std::memcpy(ctx.procname, d.procname.data(), sizeof ctx.procname);
        ctx.prio = d.prio;
    }
    // The trace's word on the running thread over /proc's.
    if (running_.tid == tid && tid >= 0) {
        std::memcpy(ctx.procname, running_.procname.data(), sizeof ctx.procname);
        ctx.prio = running_.prio;
    }
    return ctx;
}

namespace {

std::int32_t i32At(const FtraceRecord& r, std::uint16_t at) noexcept {
    std::int32_t v;
    std::memcpy(&v, r.payload + at, 4);
    return v;
}

// MAX_RT_PRIO (include/linux/sched/prio.h): task_prio() = p->prio - 100.
constexpr std::int32_t kMaxRtPrio = 100;

} // namespace

void FtraceStream::learn(const kr::TaskFields& task, const FtraceRecord& record, bool before) {
    switch (task.role) {
    case kr::TaskRole::SchedSwitch:
        if (before)
            return;
        running_.tid = i32At(record, task.at[1]);
        std::memcpy(running_.procname.data(), record.payload + task.at[2], 16);
        running_.procname[15] = '\0';
        running_.prio = i32At(record, task.at[3]) - kMaxRtPrio;
        return;
    case kr::TaskRole::ProcessExec: {
        if (!before)
            return;
        std::uint32_t loc;
        std::memcpy(&loc, record.payload + task.at[1], 4);
        const std::uint32_t offset = loc & 0xffff, length = loc >> 16;
        if (offset > record.length || length > record.length - offset)
            return; // a location outside the record: nothing learned
        std::string_view file(reinterpret_cast<const char*>(record.payload) + offset, length);
        file = file.substr(0, file.find('\0'));
        if (const auto slash = file.rfind('/'); slash != std::string_view::npos)
            file.remove_prefix(slash + 1);
        std::array<char, 16> name{};
        std::memcpy(name.data(), file.data(), std::min<std::size_t>(file.size(), 15));
        const std::int32_t tid = i32At(record, task.at[0]);
        if (running_.tid == tid)
            running_.procname = name;
        if (needsProcess_ && processes_ != nullptr)
            processes_->renamed(tid, name);
        return;
    }
    case kr::TaskRole::TaskRename: {
        if (before)
            return;
        std::array<char, 16> name{};
        std::memcpy(name.data(), record.payload + task.at[1], 15);
        const std::int32_t tid = i32At(record, task.at[0]);
        if (running_.tid == tid)
            running_.procname = name;
        if (needsProcess_ && processes_ != nullptr)
            processes_->renamed(tid, name);
        return;
    }
    case kr::TaskRole::None:
        return;
    }
}

void FtraceStream::openFirstPacket() {
    // The stream's first packet begins when the stream does, not at its
    // first event: every CPU's stream then spans the session from its
    // start, and the statedump at the head of one lies within the time
    // all streams share (LTTng's analyses read only that intersection).
    if (!builder_.isOpen() && counters_.packets == 0 && config_.beginTimestamp != 0)
        builder_.open(config_.beginTimestamp);
}

void FtraceStream::setDropped(std::uint64_t total) {
    if (total <= dropped_)
        return;
    const std::uint64_t grown = total - dropped_;
    dropped_ = total;
    counters_.eventsDiscarded += grown;
    builder_.addDiscarded(grown);
}

void FtraceStream::emit(std::uint64_t end) {
    const ClosedPacket packet = builder_.close(end);
    ++counters_.packets;
    sink_(packet.bytes, packet.index);
}

void FtraceStream::flush(std::uint64_t now) {
    const std::uint64_t end = std::max(now, last_);
    if (!builder_.isOpen()) // an empty packet from the last one's end to `end`
        builder_.open(counters_.packets != 0 || config_.beginTimestamp != 0 ? last_ : end);
    emit(end);
    last_ = end;
}

} // namespace tracectl::consumer::kernel
