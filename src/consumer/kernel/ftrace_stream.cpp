#include "ftrace_stream.hpp"

#include <algorithm>
#include <cstring>

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

    ContextValues ctx;
    std::memcpy(&ctx.tid, record.payload + 4, 4);
    ctx.cpuId = static_cast<std::int32_t>(config_.cpuId);
    if (needsProcess_ && processes_ != nullptr) {
        const ProcessDetails d = processes_->lookup(ctx.tid);
        ctx.pid = d.pid;
        std::memcpy(ctx.procname, d.procname.data(), sizeof ctx.procname);
        ctx.prio = d.prio;
    } else {
        ctx.pid = ctx.tid;
    }

    const std::uint64_t malformedBefore = builder_.malformedRecords();
    if (appendOrStartNext(
            builder_, ts,
            [&] { return builder_.append(ts, *conversion, record.payload, record.length, ctx); },
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
