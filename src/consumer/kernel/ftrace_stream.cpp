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
          (config.contextMask & (kr::ContextPid | kr::ContextProcname | kr::ContextPrio)) != 0),
      last_(config.beginTimestamp),
      wantKernel_((config.contextMask & kr::ContextCallstackKernel) != 0 &&
                  config.kernelStackType != 0),
      wantUser_((config.contextMask & kr::ContextCallstackUser) != 0 && config.userStackType != 0) {
    builder_.setUserStrings(config.userStrings);
    if (config.kernelSymbols != nullptr && wantKernel_)
        symbolWritten_.assign(config.kernelSymbols->size(), false);
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
    if (wantKernel_ && type == config_.kernelStackType) {
        attachStack(record, false);
        return;
    }
    if (wantUser_ && type == config_.userStackType) {
        attachStack(record, true);
        return;
    }
    const kr::EventConversion* conversion = table_.find(type);
    if (conversion == nullptr) {
        ++counters_.unknownIds;
        if (wantKernel_ || wantUser_) { // its stacks follow it: they are not another's
            ContextValues ctx;
            std::memcpy(&ctx.tid, record.payload + 4, 4);
            hold(nullptr, last_, ctx, record);
        }
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
    if (wantKernel_ || wantUser_)
        hold(conversion, ts, ctx, record);
    else
        write(ts, *conversion, record.payload, record.length, ctx);
}

void FtraceStream::write(std::uint64_t ts, const kr::EventConversion& conversion,
                         const std::byte* record, std::uint32_t length, const ContextValues& ctx) {
    const std::uint64_t malformedBefore = builder_.malformedRecords();
    openFirstPacket();
    if (appendOrStartNext(
            builder_, ts,
            [&] { return builder_.append(ts, conversion, record, length, ctx, processes_); },
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

void FtraceStream::hold(const kr::EventConversion* conversion, std::uint64_t ts,
                        const ContextValues& ctx, const FtraceRecord& record) {
    if (pendingCount_ == kMaxPending) { // the oldest waited long enough
        Pending& oldest = pending_[pendingHead_];
        if (oldest.conversion != nullptr)
            oldest.hasKernel = oldest.hasUser = true;
        release(false);
    }
    Pending& p = pending_[(pendingHead_ + pendingCount_) % kMaxPending];
    ++pendingCount_;
    p.conversion = conversion;
    p.timestamp = ts;
    p.context = ctx;
    if (conversion != nullptr)
        p.record.assign(record.payload, record.payload + record.length);
    p.kernelStack.clear();
    p.userStack.clear();
    p.userPid = 0;
    p.hasKernel = p.hasUser = false;
}

namespace {

// ftrace's stack entries (the kernel's kernel/trace/trace_entries.h):
// kernel_stack: i32 size at 8, then `size` u64 callers at 16;
// user_stack: u32 tgid at 8, then FTRACE_STACK_ENTRIES u64 callers at 16,
// the unused ones 0. Frames past the record are not read.
void readFrames(const FtraceRecord& record, bool user, std::vector<std::uint64_t>& out,
                std::int32_t& tgid) {
    constexpr std::uint32_t kCallers = 16;
    if (record.length < kCallers)
        return;
    std::size_t n = (record.length - kCallers) / 8;
    if (user) {
        std::memcpy(&tgid, record.payload + 8, 4);
        n = std::min(n, kr::kMaxUserStackFrames);
    } else {
        std::int32_t size;
        std::memcpy(&size, record.payload + 8, 4);
        n = std::min({n, static_cast<std::size_t>(std::max(size, 0)), kr::kMaxKernelStackFrames});
    }
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t address;
        std::memcpy(&address, record.payload + kCallers + 8 * i, 8);
        if (address == 0 || address == UINT64_MAX) // the end (older kernels' ULONG_MAX)
            break;
        out.push_back(address);
    }
}

} // namespace

void FtraceStream::attachStack(const FtraceRecord& record, bool user) {
    std::int32_t tid;
    std::memcpy(&tid, record.payload + 4, 4);
    for (std::size_t i = pendingCount_; i-- > 0;) {
        Pending& p = pending_[(pendingHead_ + i) % kMaxPending];
        bool& has = user ? p.hasUser : p.hasKernel;
        if (has || p.context.tid != tid)
            continue;
        has = true;
        if (p.conversion != nullptr)
            readFrames(record, user, user ? p.userStack : p.kernelStack, p.userPid);
        release(false);
        return;
    }
    ++counters_.orphanStacks;
}

bool FtraceStream::complete(const Pending& p) const noexcept {
    return (!wantKernel_ || p.hasKernel) && (!wantUser_ || p.hasUser);
}

void FtraceStream::release(bool all) {
    while (pendingCount_ != 0) {
        Pending& p = pending_[pendingHead_];
        if (!all && !complete(p))
            return;
        if (p.conversion != nullptr) {
            if (p.userPid > 0) // the kernel's word on the thread's process, over /proc's
                p.context.pid = p.userPid;
            ContextValues ctx = p.context;
            ctx.kernelStack = p.kernelStack;
            ctx.userStack = p.userStack;
            if (!symbolWritten_.empty())
                writeSymbols(p.timestamp, p.context, p.kernelStack);
            if (config_.userMaps != nullptr && !p.userStack.empty()) {
                writeMaps(p.timestamp, p.context, p.userPid, p.userStack);
                writeThread(p.timestamp, p.context, p.context.tid, p.userPid);
            }
            write(p.timestamp, *p.conversion, p.record.data(),
                  static_cast<std::uint32_t>(p.record.size()), ctx);
        }
        pendingHead_ = (pendingHead_ + 1) % kMaxPending;
        --pendingCount_;
    }
}

void FtraceStream::writeSymbols(std::uint64_t ts, const ContextValues& ctx,
                                std::span<const std::uint64_t> stack) {
    for (const std::uint64_t address : stack) {
        const std::size_t i = config_.kernelSymbols->find(address);
        if (i == KernelSymbols::kNpos || symbolWritten_[i])
            continue;
        const KernelSymbols::Symbol& s = config_.kernelSymbols->at(i);
        symbolFields_.resize(16 + s.name.size() + 1 + s.module.size() + 1);
        std::byte* p = symbolFields_.data();
        std::memcpy(p, &s.address, 8);
        std::memcpy(p + 8, &s.end, 8);
        std::memcpy(p + 16, s.name.c_str(), s.name.size() + 1);
        std::memcpy(p + 16 + s.name.size() + 1, s.module.c_str(), s.module.size() + 1);
        if (appendRawNow(kr::kKernelSymbolId, ts, ctx, symbolFields_))
            symbolWritten_[i] = true;
    }
}

namespace {

bool holds(const std::vector<UserMapping>& mappings, std::uint64_t address) {
    return std::any_of(mappings.begin(), mappings.end(), [address](const UserMapping& m) {
        return address >= m.start && address < m.end;
    });
}

} // namespace

void FtraceStream::writeMaps(std::uint64_t ts, const ContextValues& ctx, std::int32_t pid,
                             std::span<const std::uint64_t> stack) {
    const auto seen = mapsWritten_.find(pid);
    if (seen != mapsWritten_.end()) {
        MapsWritten& w = seen->second;
        const bool unheld = std::any_of(stack.begin(), stack.end(),
                                        [&](std::uint64_t a) { return !holds(w.mappings, a); });
        if (!unheld || w.readAgain)
            return;
        w.readAgain = true;
    }
    MapsWritten& w = mapsWritten_[pid];
    for (UserMapping& m : config_.userMaps->read(pid)) {
        if (std::find(w.mappings.begin(), w.mappings.end(), m) != w.mappings.end())
            continue;
        // kernel_records kVmMapId: u64 start, end, pgoff, i32 pid, string path.
        symbolFields_.resize(28 + m.path.size() + 1);
        std::byte* p = symbolFields_.data();
        std::memcpy(p, &m.start, 8);
        std::memcpy(p + 8, &m.end, 8);
        std::memcpy(p + 16, &m.pgoff, 8);
        std::memcpy(p + 24, &pid, 4);
        std::memcpy(p + 28, m.path.c_str(), m.path.size() + 1);
        if (appendRawNow(kr::kVmMapId, ts, ctx, symbolFields_))
            w.mappings.push_back(std::move(m));
    }
}

void FtraceStream::writeThread(std::uint64_t ts, const ContextValues& ctx, std::int32_t tid,
                               std::int32_t pid) {
    if (tid <= 0 || pid <= 0)
        return;
    const auto told = threadsWritten_.find(tid);
    if (told == threadsWritten_.end() ? tid == pid : told->second == pid)
        return; // a main thread, or told already
    // kernel_records kThreadId: i32 tid, i32 pid.
    std::array<std::byte, 8> fields;
    std::memcpy(fields.data(), &tid, 4);
    std::memcpy(fields.data() + 4, &pid, 4);
    if (appendRawNow(kr::kThreadId, ts, ctx, fields))
        threadsWritten_[tid] = pid;
}

bool FtraceStream::appendEvent(std::uint16_t ctfId, std::uint64_t timestamp,
                               const ContextValues& context, std::span<const std::byte> fields) {
    release(true); // in order
    const std::uint64_t ts = std::max(timestamp, last_);
    last_ = ts;
    return appendRawNow(ctfId, ts, context, fields);
}

bool FtraceStream::appendRawNow(std::uint16_t ctfId, std::uint64_t ts, const ContextValues& context,
                                std::span<const std::byte> fields) {
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
    release(true);
    const std::uint64_t end = std::max(now, last_);
    if (!builder_.isOpen()) // an empty packet from the last one's end to `end`
        builder_.open(counters_.packets != 0 || config_.beginTimestamp != 0 ? last_ : end);
    emit(end);
    last_ = end;
}

} // namespace tracectl::consumer::kernel
