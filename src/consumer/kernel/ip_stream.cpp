#include "ip_stream.hpp"

#include "ip_event_fields.hpp"

#include <algorithm>
#include <cstring>

namespace tracectl::consumer::kernel {

namespace kr = kernel_records;

IpStream::IpStream(const IpStreamConfig& config, ProcessInfo* processes, PacketSink sink)
    : config_(config), processes_(processes), sink_(std::move(sink)),
      builder_(config.uuid, config.streamId, kr::kIpProbesInstance, 0, config.maxPacketBytes,
               config.contextMask),
      needsProcess_(
          (config.contextMask & (kr::ContextPid | kr::ContextProcname | kr::ContextPrio)) != 0),
      last_(config.beginTimestamp) {
    fields_.reserve(512);
}

void IpStream::consume(const tracectl_ip_record& record) {
    std::uint16_t id = 0;
    if (record.probe == TRACECTL_IP_SEND)
        id = config_.sendId;
    else if (record.probe == TRACECTL_IP_RECEIVE)
        id = config_.receiveId;
    else {
        ++counters_.unknownProbes;
        return;
    }
    const std::uint64_t ts = std::max<std::uint64_t>(record.timestamp, last_);
    last_ = ts;

    ContextValues ctx;
    ctx.tid = static_cast<std::int32_t>(record.tid);
    ctx.cpuId = static_cast<std::int32_t>(record.cpu);
    if (needsProcess_ && processes_ != nullptr) {
        const ProcessDetails d = processes_->lookup(ctx.tid);
        ctx.pid = d.pid;
        std::memcpy(ctx.procname, d.procname.data(), sizeof ctx.procname);
        ctx.prio = d.prio;
    } else {
        ctx.pid = ctx.tid;
    }
    fields_.clear();
    ::tracectl::ip::appendIpEventFields(record, fields_);
    if (appendOrStartNext(
            builder_, ts, [&] { return builder_.appendRaw(id, ts, ctx, fields_); },
            [this](std::uint64_t end) { emit(end); })) {
        ++counters_.eventsWritten;
        return;
    }
    // Not even an empty packet holds it (a sub-buffer smaller than an event).
    ++counters_.eventsDiscarded;
    builder_.addDiscarded(1);
}

void IpStream::setDropped(std::uint64_t total) {
    if (total <= dropped_)
        return;
    const std::uint64_t grown = total - dropped_;
    dropped_ = total;
    counters_.eventsDiscarded += grown;
    builder_.addDiscarded(grown);
}

void IpStream::emit(std::uint64_t end) {
    const ClosedPacket packet = builder_.close(end);
    ++counters_.packets;
    sink_(packet.bytes, packet.index);
}

void IpStream::flush(std::uint64_t now) {
    const std::uint64_t end = std::max(now, last_);
    if (!builder_.isOpen())
        builder_.open(counters_.packets != 0 || config_.beginTimestamp != 0 ? last_ : end);
    emit(end);
    last_ = end;
}

} // namespace tracectl::consumer::kernel
