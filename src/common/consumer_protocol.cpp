#include "consumer_protocol.hpp"

#include "fd_passing.hpp"

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <type_traits>

namespace tracectl::consumer_protocol {

namespace {

constexpr std::uint64_t kMinSubbufSize = 4096;
constexpr std::uint64_t kMaxSubbufSize = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxSubbufCount = std::uint64_t{1} << 20;

bool isPowerOfTwo(std::uint64_t v) noexcept {
    return v != 0 && (v & (v - 1)) == 0;
}

bool isControl(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

bool hasNul(std::string_view s) noexcept {
    return s.find('\0') != std::string_view::npos;
}

// ---- encoding -------------------------------------------------------------

class Writer {
public:
    void u8(std::uint8_t v) { out_.push_back(static_cast<std::byte>(v)); }
    void u16(std::uint16_t v) { le(v, 2); }
    void u32(std::uint32_t v) { le(v, 4); }
    void u64(std::uint64_t v) { le(v, 8); }
    void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
    void boolean(bool v) { u8(v ? 1 : 0); }
    void string(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        for (char c : s)
            out_.push_back(static_cast<std::byte>(c));
    }
    /// u32 count then the raw bytes (NUL allowed).
    void blob(std::string_view s) { string(s); }
    void raw(const std::array<std::uint8_t, 16>& bytes) {
        for (std::uint8_t b : bytes)
            u8(b);
    }
    std::vector<std::byte>& bytes() { return out_; }

private:
    void le(std::uint64_t v, int width) {
        for (int i = 0; i < width; ++i)
            out_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
    }
    std::vector<std::byte> out_;
};

// ---- decoding -------------------------------------------------------------

class Reader {
public:
    Reader(const std::byte* data, std::size_t size) : data_(data), size_(size) {}

    std::uint8_t u8() { return static_cast<std::uint8_t>(le(1)); }
    std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
    std::uint64_t u64() { return le(8); }
    std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
    bool boolean(const char* field) {
        const std::uint8_t v = u8();
        if (v > 1)
            throw ProtocolError(std::string(field) + ": boolean must be 0 or 1");
        return v == 1;
    }
    std::string string(const char* field, std::size_t maxBytes) {
        std::string s = blob(field, maxBytes);
        if (hasNul(s))
            throw ProtocolError(std::string(field) + ": contains a NUL byte");
        return s;
    }
    /// u32 count then the raw bytes; NUL bytes allowed.
    std::string blob(const char* field, std::size_t maxBytes) {
        const std::uint32_t n = u32();
        if (n > maxBytes)
            throw ProtocolError(std::string(field) + ": longer than " + std::to_string(maxBytes) +
                                " bytes");
        need(n);
        std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
        pos_ += n;
        return s;
    }
    std::array<std::uint8_t, 16> raw16() {
        std::array<std::uint8_t, 16> a{};
        for (auto& b : a)
            b = u8();
        return a;
    }
    void finish() const {
        if (pos_ != size_)
            throw ProtocolError(std::to_string(size_ - pos_) + " trailing payload bytes");
    }

private:
    void need(std::size_t n) const {
        if (size_ - pos_ < n)
            throw ProtocolError("payload too short");
    }
    std::uint64_t le(std::size_t width) {
        need(width);
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < width; ++i)
            v |= std::to_integer<std::uint64_t>(data_[pos_ + i]) << (8 * i);
        pos_ += width;
        return v;
    }
    const std::byte* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

// ---- validation shared by both directions ----------------------------------

void checkText(std::string_view s, const char* field, std::size_t maxBytes) {
    if (s.size() > maxBytes)
        throw ProtocolError(std::string(field) + ": longer than " + std::to_string(maxBytes) +
                            " bytes");
    if (hasNul(s))
        throw ProtocolError(std::string(field) + ": contains a NUL byte");
}

void validate(const Hello& m) {
    checkText(m.version, "Hello.version", kMaxText);
}
void validate(const HelloReply& m) {
    checkText(m.version, "HelloReply.version", kMaxText);
}
void validate(const Adopt& m) {
    checkText(m.version, "Adopt.version", kMaxText);
}
void validate(const AdoptReply& m) {
    checkText(m.version, "AdoptReply.version", kMaxText);
    if (!m.chunk.empty() && !isSafeRelativeDir(m.chunk))
        throw ProtocolError("AdoptReply.chunk: not a safe relative directory");
    checkText(m.relayOutputPath, "AdoptReply.relayOutputPath", kMaxOutputDir);
}
void validate(const CreateChannel& m) {
    if (m.kind != ChannelKind::Data && m.kind != ChannelKind::Metadata)
        throw ProtocolError("CreateChannel.kind: unknown value");
    if (!isSafeRelativeDir(m.outputDir))
        throw ProtocolError("CreateChannel.outputDir: not a safe relative directory");
    if (!isSafeChannelName(m.name))
        throw ProtocolError("CreateChannel.name: not an acceptable channel name");
    if (!isPowerOfTwo(m.subbufSize) || m.subbufSize < kMinSubbufSize ||
        m.subbufSize > kMaxSubbufSize)
        throw ProtocolError("CreateChannel.subbufSize: not a power of two in [4096, 2^32]");
    if (!isPowerOfTwo(m.subbufCount) || m.subbufCount > kMaxSubbufCount)
        throw ProtocolError("CreateChannel.subbufCount: not a power of two in [1, 2^20]");
    if (m.blockingTimeoutUsec < -1)
        throw ProtocolError("CreateChannel.blockingTimeoutUsec: below -1");
}
void validate(const CreateKernelChannel& m) {
    if (m.kind != ChannelKind::Data && m.kind != ChannelKind::Metadata)
        throw ProtocolError("CreateKernelChannel.kind: unknown value");
    if (!isSafeRelativeDir(m.outputDir))
        throw ProtocolError("CreateKernelChannel.outputDir: not a safe relative directory");
    if (!isSafeChannelName(m.name))
        throw ProtocolError("CreateKernelChannel.name: not an acceptable channel name");
    if (!isPowerOfTwo(m.pageSize) || m.pageSize < 4096 || m.pageSize > (1u << 24))
        throw ProtocolError("CreateKernelChannel.pageSize: not a power of two in [4096, 2^24]");
    if (!isPowerOfTwo(m.packetSize) || m.packetSize < m.pageSize || m.packetSize > kMaxSubbufSize)
        throw ProtocolError(
            "CreateKernelChannel.packetSize: not a power of two in [pageSize, 2^32]");
    const auto inPage = [&](std::uint32_t offset, std::uint32_t size, const char* field) {
        if (size != 4 && size != 8)
            throw ProtocolError(std::string("CreateKernelChannel.") + field + "Size: not 4 or 8");
        if (offset > m.pageSize || m.pageSize - offset < size)
            throw ProtocolError(std::string("CreateKernelChannel.") + field +
                                "Offset: outside the page");
    };
    inPage(m.timestampOffset, m.timestampSize, "timestamp");
    inPage(m.commitOffset, m.commitSize, "commit");
    if (m.dataOffset >= m.pageSize)
        throw ProtocolError("CreateKernelChannel.dataOffset: outside the page");
    if (m.readTimerUsec < 1000 || m.readTimerUsec > 10'000'000)
        throw ProtocolError("CreateKernelChannel.readTimerUsec: not in [1000, 10^7]");
    if (m.contextMask > 0x1F)
        throw ProtocolError("CreateKernelChannel.contextMask: unknown bits");
    if (m.cpus.size() > kMaxKernelCpus)
        throw ProtocolError("CreateKernelChannel.cpus: more than " +
                            std::to_string(kMaxKernelCpus));
    if (m.kind == ChannelKind::Metadata && !m.cpus.empty())
        throw ProtocolError("CreateKernelChannel.cpus: a metadata channel has none");
    if (m.kind == ChannelKind::Data && m.cpus.empty())
        throw ProtocolError("CreateKernelChannel.cpus: a data channel needs one at least");
    for (std::size_t i = 1; i < m.cpus.size(); ++i)
        if (m.cpus[i] <= m.cpus[i - 1])
            throw ProtocolError("CreateKernelChannel.cpus: not in increasing order");
}
void validate(const DeclareKernelEvents& m) {
    if (m.conversions.size() > kMaxConversionBytes)
        throw ProtocolError("DeclareKernelEvents.conversions: longer than " +
                            std::to_string(kMaxConversionBytes) + " bytes");
}
void validate(const AttachIpProbes& m) {
    if (m.sendId == m.receiveId)
        throw ProtocolError("AttachIpProbes: sendId and receiveId are the same");
    if (m.sendId == 0xFFFF || m.receiveId == 0xFFFF)
        throw ProtocolError("AttachIpProbes: an event id of 65535 (the extended header's mark)");
}
void validate(const AttachRelayd& m) {
    if (m.relayMinor < 4)
        throw ProtocolError("AttachRelayd.relayMinor: below 2.4, which has no live mode");
}
void validate(const RecordSnapshotToRelay& m) {
    if (m.relayMinor < 4)
        throw ProtocolError("RecordSnapshotToRelay.relayMinor: below 2.4");
    if (!isSafeRelativeDir(m.chunkName) || m.chunkName.find('/') != std::string::npos)
        throw ProtocolError("RecordSnapshotToRelay.chunkName: not one safe folder name");
}
void validate(const OutputFailed& m) {
    checkText(m.message, "OutputFailed.message", kMaxText);
}
void validate(const ChannelCreated&) {}
void validate(const PushMetadata& m) {
    checkText(m.bytes, "PushMetadata.bytes", kMaxMetadataChunk);
}
void validate(const FlushChannel&) {}
void validate(const DestroyChannel&) {}
void validate(const Shutdown&) {}
void validate(const WatchChunkSize&) {}
void validate(const AttachSyscallStrings&) {}
void validate(const ProducerGone&) {}
void validate(const Rotate& m) {
    if (!m.oldChunk.empty() && !isSafeRelativeDir(m.oldChunk))
        throw ProtocolError("Rotate.oldChunk: not \"\" or a safe relative directory");
    if (!isSafeRelativeDir(m.newChunk))
        throw ProtocolError("Rotate.newChunk: not a safe relative directory");
    if (!isSafeRelativeDir(m.archive))
        throw ProtocolError("Rotate.archive: not a safe relative directory");
    if (m.newChunk == m.oldChunk || m.archive == m.newChunk || m.archive == m.oldChunk)
        throw ProtocolError("Rotate: old chunk, new chunk and archive must differ");
}
void validate(const RecordSnapshot&) {}
void validate(const RotateMetadata&) {}
void validate(const ClearBuffers&) {}
void validate(const SnapshotMetadata&) {}
void validate(const RotationCompleted& m) {
    checkText(m.message, "RotationCompleted.message", kMaxText);
}
void validate(const LayoutAbi& a) {
    const auto alignment = [](std::uint32_t v, const char* field) {
        if (v != 8 && v != 16 && v != 32 && v != 64)
            throw ProtocolError(std::string("DeclareLayouts.") + field + ": not 8, 16, 32 or 64");
    };
    if (a.bitsPerLong != 32 && a.bitsPerLong != 64)
        throw ProtocolError("DeclareLayouts.bitsPerLong: not 32 or 64");
    alignment(a.uint8Alignment, "uint8Alignment");
    alignment(a.uint16Alignment, "uint16Alignment");
    alignment(a.uint32Alignment, "uint32Alignment");
    alignment(a.uint64Alignment, "uint64Alignment");
    alignment(a.longAlignment, "longAlignment");
}
void validate(const DeclareLayouts& m) {
    validate(m.abi);
    if (m.layouts.size() > kMaxLayouts)
        throw ProtocolError("DeclareLayouts.layouts: longer than " + std::to_string(kMaxLayouts) +
                            " bytes");
}
void validate(const Statistics& m) {
    if (m.channels.size() > kMaxFiguresPerMessage)
        throw ProtocolError("Statistics: more than " + std::to_string(kMaxFiguresPerMessage) +
                            " channels");
}
void validate(const Ok&) {}
void validate(const ErrorReply& m) {
    switch (m.code) {
    case ErrorKind::Protocol:
    case ErrorKind::VersionMismatch:
    case ErrorKind::UnknownChannel:
    case ErrorKind::ChannelExists:
    case ErrorKind::InvalidArgument:
    case ErrorKind::Io:
    case ErrorKind::Tracer:
    case ErrorKind::Resources:
        break;
    default:
        throw ProtocolError("Error.code: unknown value");
    }
    checkText(m.message, "Error.message", kMaxText);
}

// ---- per-message payload codecs --------------------------------------------

void put(Writer& w, const Hello& m) {
    w.u32(m.protocolVersion);
    w.string(m.version);
}
void put(Writer& w, const HelloReply& m) {
    w.u32(m.protocolVersion);
    w.u32(m.pid);
    w.string(m.version);
}
void put(Writer& w, const Adopt& m) {
    w.u32(m.protocolVersion);
    w.string(m.version);
}
void put(Writer& w, const AdoptReply& m) {
    w.u32(m.protocolVersion);
    w.u32(m.pid);
    w.string(m.version);
    w.u64(m.nextKey);
    w.u64(m.chunkIndex);
    w.string(m.chunk);
    w.u64(m.chunkBegin);
    w.u32(m.channelsClosed);
    w.string(m.relayOutputPath);
}
void put(Writer& w, const CreateChannel& m) {
    w.u64(m.key);
    w.u8(static_cast<std::uint8_t>(m.kind));
    w.string(m.outputDir);
    w.string(m.name);
    w.u64(m.subbufSize);
    w.u64(m.subbufCount);
    w.boolean(m.overwrite);
    w.u32(m.switchTimerUsec);
    w.u32(m.readTimerUsec);
    w.u32(m.monitorTimerUsec);
    w.i64(m.blockingTimeoutUsec);
    w.u32(m.chanId);
    w.raw(m.traceUuid);
}
void put(Writer& w, const CreateKernelChannel& m) {
    w.u64(m.key);
    w.u8(static_cast<std::uint8_t>(m.kind));
    w.string(m.outputDir);
    w.string(m.name);
    w.u64(m.packetSize);
    w.u32(m.streamId);
    w.u32(m.contextMask);
    w.boolean(m.statedump);
    w.raw(m.traceUuid);
    for (const std::uint32_t v : {m.pageSize, m.timestampOffset, m.timestampSize, m.commitOffset,
                                  m.commitSize, m.dataOffset, m.readTimerUsec})
        w.u32(v);
    w.u32(static_cast<std::uint32_t>(m.cpus.size()));
    for (const std::uint32_t cpu : m.cpus)
        w.u32(cpu);
}
void put(Writer& w, const DeclareKernelEvents& m) {
    w.u64(m.key);
    w.blob(m.conversions);
}
void put(Writer& w, const AttachIpProbes& m) {
    w.u64(m.key);
    w.u16(m.sendId);
    w.u16(m.receiveId);
}
void put(Writer& w, const AttachRelayd& m) {
    w.u64(m.relaySessionId);
    w.u32(m.relayMinor);
    w.u64(m.liveTimerUsec);
    w.u64(m.chunkId);
    w.u64(m.chunkCreationTime);
    w.string(m.outputPath);
}
void put(Writer& w, const RecordSnapshotToRelay& m) {
    w.u64(m.id);
    w.u64(m.packetsPerStream);
    w.u64(m.relaySessionId);
    w.u32(m.relayMinor);
    w.u64(m.chunkId);
    w.u64(m.chunkCreationTime);
    w.string(m.chunkName);
}
void put(Writer& w, const OutputFailed& m) {
    w.string(m.message);
}
void put(Writer& w, const ChannelCreated& m) {
    w.u64(m.key);
    w.u32(m.streamCount);
}
void put(Writer& w, const PushMetadata& m) {
    w.u64(m.key);
    w.u64(m.offset);
    w.string(m.bytes);
}
void put(Writer& w, const FlushChannel& m) {
    w.u64(m.key);
}
void put(Writer& w, const DestroyChannel& m) {
    w.u64(m.key);
}
void put(Writer&, const Shutdown&) {}
void put(Writer& w, const WatchChunkSize& m) {
    w.u64(m.bytes);
}
void put(Writer& w, const AttachSyscallStrings& m) {
    w.u64(m.key);
}
void put(Writer& w, const ProducerGone& m) {
    w.u64(m.key);
    w.u32(m.pid);
}
void put(Writer& w, const Rotate& m) {
    w.u64(m.id);
    w.string(m.oldChunk);
    w.string(m.newChunk);
    w.string(m.archive);
    w.boolean(m.discard);
    w.u64(m.chunkIndex);
    w.u64(m.boundaryTime);
}
void put(Writer&, const ClearBuffers&) {}
void put(Writer& w, const RecordSnapshot& m) {
    w.u64(m.id);
    w.u64(m.packetsPerStream);
}
void put(Writer& w, const RotateMetadata& m) {
    w.u64(m.id);
}
void put(Writer& w, const SnapshotMetadata& m) {
    w.u64(m.id);
}
void put(Writer& w, const RotationCompleted& m) {
    w.u64(m.id);
    w.boolean(m.ok);
    w.string(m.message);
}
void put(Writer& w, const DeclareLayouts& m) {
    w.u64(m.key);
    for (const std::uint32_t v :
         {m.abi.bitsPerLong, m.abi.uint8Alignment, m.abi.uint16Alignment, m.abi.uint32Alignment,
          m.abi.uint64Alignment, m.abi.longAlignment})
        w.u8(static_cast<std::uint8_t>(v)); // validated: all fit

    w.boolean(m.abi.bigEndian);
    w.blob(m.layouts);
}
void put(Writer& w, const Statistics& m) {
    w.u64(m.sampledAtUsec);
    w.u32(static_cast<std::uint32_t>(m.channels.size()));
    for (const ChannelFigures& c : m.channels) {
        w.u64(c.key);
        w.u64(c.eventsRecorded);
        w.u64(c.eventsDiscarded);
        w.u64(c.packetsLost);
        w.u64(c.bytesWritten);
        w.u64(c.chunkBytes);
        w.u64(c.bytesProduced);
    }
}
void put(Writer&, const Ok&) {}
void put(Writer& w, const ErrorReply& m) {
    w.u32(static_cast<std::uint32_t>(m.code));
    w.string(m.message);
}

Message getHello(Reader& r) {
    Hello m;
    m.protocolVersion = r.u32();
    m.version = r.string("Hello.version", kMaxText);
    return m;
}
Message getHelloReply(Reader& r) {
    HelloReply m;
    m.protocolVersion = r.u32();
    m.pid = r.u32();
    m.version = r.string("HelloReply.version", kMaxText);
    return m;
}
Message getAdopt(Reader& r) {
    Adopt m;
    m.protocolVersion = r.u32();
    m.version = r.string("Adopt.version", kMaxText);
    return m;
}
Message getAdoptReply(Reader& r) {
    AdoptReply m;
    m.protocolVersion = r.u32();
    m.pid = r.u32();
    m.version = r.string("AdoptReply.version", kMaxText);
    m.nextKey = r.u64();
    m.chunkIndex = r.u64();
    m.chunk = r.string("AdoptReply.chunk", kMaxOutputDir);
    m.chunkBegin = r.u64();
    m.channelsClosed = r.u32();
    m.relayOutputPath = r.string("AdoptReply.relayOutputPath", kMaxOutputDir);
    return m;
}
Message getCreateChannel(Reader& r) {
    CreateChannel m;
    m.key = r.u64();
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(ChannelKind::Metadata))
        throw ProtocolError("CreateChannel.kind: unknown value");
    m.kind = static_cast<ChannelKind>(kind);
    m.outputDir = r.string("CreateChannel.outputDir", kMaxOutputDir);
    m.name = r.string("CreateChannel.name", kMaxChannelName);
    m.subbufSize = r.u64();
    m.subbufCount = r.u64();
    m.overwrite = r.boolean("CreateChannel.overwrite");
    m.switchTimerUsec = r.u32();
    m.readTimerUsec = r.u32();
    m.monitorTimerUsec = r.u32();
    m.blockingTimeoutUsec = r.i64();
    m.chanId = r.u32();
    m.traceUuid = r.raw16();
    return m;
}
Message getCreateKernelChannel(Reader& r) {
    CreateKernelChannel m;
    m.key = r.u64();
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(ChannelKind::Metadata))
        throw ProtocolError("CreateKernelChannel.kind: unknown value");
    m.kind = static_cast<ChannelKind>(kind);
    m.outputDir = r.string("CreateKernelChannel.outputDir", kMaxOutputDir);
    m.name = r.string("CreateKernelChannel.name", kMaxChannelName);
    m.packetSize = r.u64();
    m.streamId = r.u32();
    m.contextMask = r.u32();
    m.statedump = r.boolean("CreateKernelChannel.statedump");
    m.traceUuid = r.raw16();
    for (std::uint32_t* v : {&m.pageSize, &m.timestampOffset, &m.timestampSize, &m.commitOffset,
                             &m.commitSize, &m.dataOffset, &m.readTimerUsec})
        *v = r.u32();
    const std::uint32_t n = r.u32();
    if (n > kMaxKernelCpus)
        throw ProtocolError("CreateKernelChannel.cpus: more than " +
                            std::to_string(kMaxKernelCpus));
    m.cpus.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i)
        m.cpus.push_back(r.u32());
    return m;
}
Message getDeclareKernelEvents(Reader& r) {
    DeclareKernelEvents m;
    m.key = r.u64();
    m.conversions = r.blob("DeclareKernelEvents.conversions", kMaxConversionBytes);
    return m;
}
Message getAttachIpProbes(Reader& r) {
    AttachIpProbes m;
    m.key = r.u64();
    m.sendId = r.u16();
    m.receiveId = r.u16();
    return m;
}
Message getAttachRelayd(Reader& r) {
    AttachRelayd m;
    m.relaySessionId = r.u64();
    m.relayMinor = r.u32();
    m.liveTimerUsec = r.u64();
    m.chunkId = r.u64();
    m.chunkCreationTime = r.u64();
    m.outputPath = r.string("AttachRelayd.outputPath", kMaxOutputDir);
    return m;
}
Message getRecordSnapshotToRelay(Reader& r) {
    RecordSnapshotToRelay m;
    m.id = r.u64();
    m.packetsPerStream = r.u64();
    m.relaySessionId = r.u64();
    m.relayMinor = r.u32();
    m.chunkId = r.u64();
    m.chunkCreationTime = r.u64();
    m.chunkName = r.string("RecordSnapshotToRelay.chunkName", kMaxOutputDir);
    return m;
}
Message getOutputFailed(Reader& r) {
    OutputFailed m;
    m.message = r.string("OutputFailed.message", kMaxText);
    return m;
}
Message getChannelCreated(Reader& r) {
    ChannelCreated m;
    m.key = r.u64();
    m.streamCount = r.u32();
    return m;
}
Message getPushMetadata(Reader& r) {
    PushMetadata m;
    m.key = r.u64();
    m.offset = r.u64();
    m.bytes = r.string("PushMetadata.bytes", kMaxMetadataChunk);
    return m;
}
Message getRotate(Reader& r) {
    Rotate m;
    m.id = r.u64();
    m.oldChunk = r.string("Rotate.oldChunk", kMaxOutputDir);
    m.newChunk = r.string("Rotate.newChunk", kMaxOutputDir);
    m.archive = r.string("Rotate.archive", kMaxOutputDir);
    m.discard = r.boolean("Rotate.discard");
    m.chunkIndex = r.u64();
    m.boundaryTime = r.u64();
    return m;
}
Message getRotationCompleted(Reader& r) {
    RotationCompleted m;
    m.id = r.u64();
    m.ok = r.boolean("RotationCompleted.ok");
    m.message = r.string("RotationCompleted.message", kMaxText);
    return m;
}
Message getDeclareLayouts(Reader& r) {
    DeclareLayouts m;
    m.key = r.u64();
    for (std::uint32_t* v : {&m.abi.bitsPerLong, &m.abi.uint8Alignment, &m.abi.uint16Alignment,
                             &m.abi.uint32Alignment, &m.abi.uint64Alignment, &m.abi.longAlignment})
        *v = r.u8();
    m.abi.bigEndian = r.boolean("DeclareLayouts.bigEndian");
    validate(m.abi);
    m.layouts = r.blob("DeclareLayouts.layouts", kMaxLayouts);
    return m;
}
Message getStatistics(Reader& r) {
    Statistics m;
    m.sampledAtUsec = r.u64();
    const std::uint32_t n = r.u32();
    if (n > kMaxFiguresPerMessage)
        throw ProtocolError("Statistics: more than " + std::to_string(kMaxFiguresPerMessage) +
                            " channels");
    m.channels.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        ChannelFigures c;
        c.key = r.u64();
        c.eventsRecorded = r.u64();
        c.eventsDiscarded = r.u64();
        c.packetsLost = r.u64();
        c.bytesWritten = r.u64();
        c.chunkBytes = r.u64();
        c.bytesProduced = r.u64();
        m.channels.push_back(c);
    }
    return m;
}
Message getErrorReply(Reader& r) {
    ErrorReply m;
    m.code = static_cast<ErrorKind>(r.u32());
    m.message = r.string("Error.message", kMaxText);
    return m;
}

bool isKnownType(std::uint16_t t) noexcept {
    switch (static_cast<MessageType>(t)) {
    case MessageType::Hello:
    case MessageType::CreateChannel:
    case MessageType::PushMetadata:
    case MessageType::FlushChannel:
    case MessageType::DestroyChannel:
    case MessageType::Shutdown:
    case MessageType::Ok:
    case MessageType::Error:
    case MessageType::HelloReply:
    case MessageType::ChannelCreated:
    case MessageType::Rotate:
    case MessageType::RotationCompleted:
    case MessageType::RecordSnapshot:
    case MessageType::RotateMetadata:
    case MessageType::SnapshotMetadata:
    case MessageType::DeclareLayouts:
    case MessageType::Statistics:
    case MessageType::CreateKernelChannel:
    case MessageType::DeclareKernelEvents:
    case MessageType::AttachIpProbes:
    case MessageType::ClearBuffers:
    case MessageType::AttachRelayd:
    case MessageType::RecordSnapshotToRelay:
    case MessageType::OutputFailed:
    case MessageType::Adopt:
    case MessageType::AdoptReply:
    case MessageType::WatchChunkSize:
    case MessageType::AttachSyscallStrings:
    case MessageType::ProducerGone:
        return true;
    }
    return false;
}

std::uint32_t readLe32(const std::byte* p) noexcept {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v |= std::to_integer<std::uint32_t>(p[i]) << (8 * i);
    return v;
}

std::uint16_t readLe16(const std::byte* p) noexcept {
    return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) |
                                      (std::to_integer<unsigned>(p[1]) << 8));
}

} // namespace

MessageType typeOf(const Message& m) noexcept {
    return std::visit(
        [](const auto& v) -> MessageType {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, Hello>)
                return MessageType::Hello;
            else if constexpr (std::is_same_v<T, HelloReply>)
                return MessageType::HelloReply;
            else if constexpr (std::is_same_v<T, CreateChannel>)
                return MessageType::CreateChannel;
            else if constexpr (std::is_same_v<T, ChannelCreated>)
                return MessageType::ChannelCreated;
            else if constexpr (std::is_same_v<T, PushMetadata>)
                return MessageType::PushMetadata;
            else if constexpr (std::is_same_v<T, FlushChannel>)
                return MessageType::FlushChannel;
            else if constexpr (std::is_same_v<T, DestroyChannel>)
                return MessageType::DestroyChannel;
            else if constexpr (std::is_same_v<T, Shutdown>)
                return MessageType::Shutdown;
            else if constexpr (std::is_same_v<T, Ok>)
                return MessageType::Ok;
            else if constexpr (std::is_same_v<T, Rotate>)
                return MessageType::Rotate;
            else if constexpr (std::is_same_v<T, RotationCompleted>)
                return MessageType::RotationCompleted;
            else if constexpr (std::is_same_v<T, RecordSnapshot>)
                return MessageType::RecordSnapshot;
            else if constexpr (std::is_same_v<T, RotateMetadata>)
                return MessageType::RotateMetadata;
            else if constexpr (std::is_same_v<T, ClearBuffers>)
                return MessageType::ClearBuffers;
            else if constexpr (std::is_same_v<T, SnapshotMetadata>)
                return MessageType::SnapshotMetadata;
            else if constexpr (std::is_same_v<T, DeclareLayouts>)
                return MessageType::DeclareLayouts;
            else if constexpr (std::is_same_v<T, Statistics>)
                return MessageType::Statistics;
            else if constexpr (std::is_same_v<T, CreateKernelChannel>)
                return MessageType::CreateKernelChannel;
            else if constexpr (std::is_same_v<T, DeclareKernelEvents>)
                return MessageType::DeclareKernelEvents;
            else if constexpr (std::is_same_v<T, AttachIpProbes>)
                return MessageType::AttachIpProbes;
            else if constexpr (std::is_same_v<T, AttachRelayd>)
                return MessageType::AttachRelayd;
            else if constexpr (std::is_same_v<T, OutputFailed>)
                return MessageType::OutputFailed;
            else if constexpr (std::is_same_v<T, RecordSnapshotToRelay>)
                return MessageType::RecordSnapshotToRelay;
            else if constexpr (std::is_same_v<T, Adopt>)
                return MessageType::Adopt;
            else if constexpr (std::is_same_v<T, AdoptReply>)
                return MessageType::AdoptReply;
            else if constexpr (std::is_same_v<T, WatchChunkSize>)
                return MessageType::WatchChunkSize;
            else if constexpr (std::is_same_v<T, AttachSyscallStrings>)
                return MessageType::AttachSyscallStrings;
            else if constexpr (std::is_same_v<T, ProducerGone>)
                return MessageType::ProducerGone;
            else
                return MessageType::Error;
        },
        m);
}

std::string_view messageName(MessageType type) noexcept {
    switch (type) {
    case MessageType::Hello:
        return "Hello";
    case MessageType::CreateChannel:
        return "CreateChannel";
    case MessageType::PushMetadata:
        return "PushMetadata";
    case MessageType::FlushChannel:
        return "FlushChannel";
    case MessageType::DestroyChannel:
        return "DestroyChannel";
    case MessageType::Shutdown:
        return "Shutdown";
    case MessageType::Ok:
        return "Ok";
    case MessageType::Error:
        return "Error";
    case MessageType::HelloReply:
        return "HelloReply";
    case MessageType::ChannelCreated:
        return "ChannelCreated";
    case MessageType::Rotate:
        return "Rotate";
    case MessageType::RotationCompleted:
        return "RotationCompleted";
    case MessageType::RecordSnapshot:
        return "RecordSnapshot";
    case MessageType::RotateMetadata:
        return "RotateMetadata";
    case MessageType::ClearBuffers:
        return "ClearBuffers";
    case MessageType::SnapshotMetadata:
        return "SnapshotMetadata";
    case MessageType::DeclareLayouts:
        return "DeclareLayouts";
    case MessageType::Statistics:
        return "Statistics";
    case MessageType::CreateKernelChannel:
        return "CreateKernelChannel";
    case MessageType::DeclareKernelEvents:
        return "DeclareKernelEvents";
    case MessageType::AttachIpProbes:
        return "AttachIpProbes";
    case MessageType::AttachRelayd:
        return "AttachRelayd";
    case MessageType::OutputFailed:
        return "OutputFailed";
    case MessageType::RecordSnapshotToRelay:
        return "RecordSnapshotToRelay";
    case MessageType::Adopt:
        return "Adopt";
    case MessageType::AdoptReply:
        return "AdoptReply";
    case MessageType::WatchChunkSize:
        return "WatchChunkSize";
    case MessageType::AttachSyscallStrings:
        return "AttachSyscallStrings";
    case MessageType::ProducerGone:
        return "ProducerGone";
    }
    return "unknown";
}

ErrorCode toErrorCode(ErrorKind kind) noexcept {
    switch (kind) {
    case ErrorKind::InvalidArgument:
        return ErrorCode::InvalidArgument;
    case ErrorKind::Resources:
        return ErrorCode::LimitExceeded;
    default:
        return ErrorCode::Failed;
    }
}

bool isSafeRelativeDir(std::string_view dir) noexcept {
    if (dir.empty() || dir.size() > kMaxOutputDir || dir.front() == '/')
        return false;
    std::size_t start = 0;
    while (start <= dir.size()) {
        std::size_t end = dir.find('/', start);
        if (end == std::string_view::npos)
            end = dir.size();
        const std::string_view part = dir.substr(start, end - start);
        if (part.empty() || part == "." || part == "..")
            return false;
        if (std::any_of(part.begin(), part.end(), isControl))
            return false;
        start = end + 1;
    }
    return true;
}

bool isSafeChannelName(std::string_view name) noexcept {
    if (name.empty() || name.size() > kMaxChannelName || name.front() == '.')
        return false;
    return std::none_of(name.begin(), name.end(), [](char c) { return c == '/' || isControl(c); });
}

std::vector<std::byte> encode(const Message& m, std::uint32_t request) {
    Writer w;
    w.u32(kMagic);
    w.u16(static_cast<std::uint16_t>(typeOf(m)));
    w.u16(0);
    w.u32(0); // length, patched below
    w.u32(request);
    std::visit(
        [&](const auto& v) {
            validate(v);
            put(w, v);
        },
        m);
    std::vector<std::byte>& out = w.bytes();
    const std::size_t length = out.size() - kHeaderSize;
    if (length > kMaxPayload)
        throw ProtocolError("payload larger than kMaxPayload");
    for (int i = 0; i < 4; ++i)
        out[8 + static_cast<std::size_t>(i)] = static_cast<std::byte>((length >> (8 * i)) & 0xff);
    return std::move(out);
}

FrameHeader decodeHeader(const std::byte* header) {
    if (readLe32(header) != kMagic)
        throw ProtocolError("bad frame magic");
    const std::uint16_t type = readLe16(header + 4);
    if (!isKnownType(type))
        throw ProtocolError("unknown message type " + std::to_string(type));
    if (readLe16(header + 6) != 0)
        throw ProtocolError("non-zero frame flags");
    const std::uint32_t length = readLe32(header + 8);
    if (length > kMaxPayload)
        throw ProtocolError("payload length " + std::to_string(length) + " above the maximum");
    return FrameHeader{static_cast<MessageType>(type), length, readLe32(header + 12)};
}

Message decodePayload(MessageType type, const std::byte* payload, std::size_t length) {
    Reader r(payload, length);
    Message m;
    switch (type) {
    case MessageType::Hello:
        m = getHello(r);
        break;
    case MessageType::HelloReply:
        m = getHelloReply(r);
        break;
    case MessageType::CreateChannel:
        m = getCreateChannel(r);
        break;
    case MessageType::ChannelCreated:
        m = getChannelCreated(r);
        break;
    case MessageType::PushMetadata:
        m = getPushMetadata(r);
        break;
    case MessageType::FlushChannel:
        m = FlushChannel{r.u64()};
        break;
    case MessageType::DestroyChannel:
        m = DestroyChannel{r.u64()};
        break;
    case MessageType::WatchChunkSize:
        m = WatchChunkSize{r.u64()};
        break;
    case MessageType::AttachSyscallStrings:
        m = AttachSyscallStrings{r.u64()};
        break;
    case MessageType::ProducerGone: {
        ProducerGone g;
        g.key = r.u64();
        g.pid = r.u32();
        m = g;
        break;
    }
    case MessageType::Shutdown:
        m = Shutdown{};
        break;
    case MessageType::Ok:
        m = Ok{};
        break;
    case MessageType::Error:
        m = getErrorReply(r);
        break;
    case MessageType::Rotate:
        m = getRotate(r);
        break;
    case MessageType::RotationCompleted:
        m = getRotationCompleted(r);
        break;
    case MessageType::RotateMetadata:
        m = RotateMetadata{r.u64()};
        break;
    case MessageType::ClearBuffers:
        m = ClearBuffers{};
        break;
    case MessageType::SnapshotMetadata:
        m = SnapshotMetadata{r.u64()};
        break;
    case MessageType::DeclareLayouts:
        m = getDeclareLayouts(r);
        break;
    case MessageType::Statistics:
        m = getStatistics(r);
        break;
    case MessageType::CreateKernelChannel:
        m = getCreateKernelChannel(r);
        break;
    case MessageType::DeclareKernelEvents:
        m = getDeclareKernelEvents(r);
        break;
    case MessageType::AttachIpProbes:
        m = getAttachIpProbes(r);
        break;
    case MessageType::AttachRelayd:
        m = getAttachRelayd(r);
        break;
    case MessageType::OutputFailed:
        m = getOutputFailed(r);
        break;
    case MessageType::RecordSnapshotToRelay:
        m = getRecordSnapshotToRelay(r);
        break;
    case MessageType::Adopt:
        m = getAdopt(r);
        break;
    case MessageType::AdoptReply:
        m = getAdoptReply(r);
        break;
    case MessageType::RecordSnapshot: {
        RecordSnapshot snap;
        snap.id = r.u64();
        snap.packetsPerStream = r.u64();
        m = snap;
        break;
    }
    default:
        throw ProtocolError("unknown message type");
    }
    r.finish();
    std::visit([](const auto& v) { validate(v); }, m);
    return m;
}

Message decode(const std::vector<std::byte>& frame) {
    if (frame.size() < kHeaderSize)
        throw ProtocolError("frame shorter than its header");
    const FrameHeader h = decodeHeader(frame.data());
    if (frame.size() - kHeaderSize != h.length)
        throw ProtocolError("frame size does not match its header");
    return decodePayload(h.type, frame.data() + kHeaderSize, h.length);
}

void writeMessage(int sock, const Message& m, std::uint32_t request) {
    const std::vector<std::byte> frame = encode(m, request);
    sendWithFds(sock, frame);
}

namespace {

// recvExactWithFds with "no fd allowed" turned into a ProtocolError.
std::size_t readExact(int sock, std::span<std::byte> buffer) {
    std::vector<UniqueFd> fds;
    try {
        return recvExactWithFds(sock, buffer, fds, 0);
    } catch (const std::system_error& e) {
        if (e.code().value() == EPROTO)
            throw ProtocolError("file descriptors or foreign control data attached to a frame");
        throw;
    }
}

} // namespace

std::optional<Message> readMessage(int sock) {
    auto frame = readFrame(sock);
    if (!frame)
        return std::nullopt;
    return std::move(frame->message);
}

std::optional<Frame> readFrame(int sock) {
    std::array<std::byte, kHeaderSize> header{};
    const std::size_t got = readExact(sock, header);
    if (got == 0)
        return std::nullopt;
    if (got < kHeaderSize)
        throw TruncatedFrame("EOF inside a frame header");
    const FrameHeader h = decodeHeader(header.data());
    std::vector<std::byte> payload(h.length);
    if (readExact(sock, payload) != h.length)
        throw TruncatedFrame("EOF inside a frame payload");
    return Frame{h.request, decodePayload(h.type, payload.data(), payload.size())};
}

MessageReader::Status MessageReader::readFrom(int sock) {
    for (;;) {
        const std::size_t want = header_ ? kHeaderSize + header_->length : kHeaderSize;
        if (filled_ < want) {
            Received r;
            try {
                r = recvWithFds(sock, std::span(buffer_).subspan(filled_, want - filled_), 0, true);
            } catch (const std::system_error& e) {
                if (e.code().value() == EPROTO)
                    throw ProtocolError(
                        "file descriptors or foreign control data attached to a frame");
                throw;
            }
            if (r.wouldBlock)
                return Status::WouldBlock;
            if (r.bytes == 0) {
                if (filled_ == 0)
                    return Status::Eof;
                throw TruncatedFrame("EOF inside a frame");
            }
            filled_ += r.bytes;
            continue;
        }
        if (!header_) {
            header_ = decodeHeader(buffer_.data());
            buffer_.resize(kHeaderSize + header_->length);
            continue;
        }
        ready_ = decodePayload(header_->type, buffer_.data() + kHeaderSize, header_->length);
        readyRequest_ = header_->request;
        header_.reset();
        filled_ = 0;
        buffer_.assign(kHeaderSize, std::byte{0});
        return Status::Complete;
    }
}

Message MessageReader::take() {
    if (!ready_)
        throw std::logic_error("MessageReader::take without a complete message");
    Message m = std::move(*ready_);
    ready_.reset();
    return m;
}

Frame MessageReader::takeFrame() {
    const std::uint32_t request = readyRequest_;
    return Frame{request, take()};
}

} // namespace tracectl::consumer_protocol
