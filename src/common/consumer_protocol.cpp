#include "consumer_protocol.hpp"

#include "fd_passing.hpp"
#include "kernel_records.hpp"

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <type_traits>
#include <utility>

namespace tracectl::consumer_protocol {

namespace {

constexpr std::uint64_t kMinSubbufSize = 4096;
constexpr std::uint64_t kMaxSubbufSize = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxSubbufCount = std::uint64_t{1} << 20;
/// Room encode() makes at once: most payloads fit (one allocation a frame).
constexpr std::size_t kTypicalPayload = 112;

bool isPowerOfTwo(std::uint64_t v) noexcept {
    return v != 0 && (v & (v - 1)) == 0;
}

bool isControl(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

using Writer = wire::Writer<std::endian::little>;
using Reader = wire::Reader<std::endian::little, ProtocolError>;

// ---- semantic checks, both directions ----------------------------------------
// What the field list's bounds (the header's kFields) cannot say. A message
// without an overload here has none.

template <class T>
void validate(const T&) {}

void validate(const AdoptReply& m) {
    if (!m.chunk.empty() && !isSafeRelativeDir(m.chunk))
        throw ProtocolError("AdoptReply.chunk: not a safe relative directory");
}
void validate(const CreateChannel& m) {
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
    if ((m.contextMask & ~kernel_records::kAllContexts) != 0)
        throw ProtocolError("CreateKernelChannel.contextMask: unknown bits");
    if ((m.kernelStackType != 0) != ((m.contextMask & kernel_records::ContextCallstackKernel) != 0))
        throw ProtocolError("CreateKernelChannel.kernelStackType: given without callstack-kernel, "
                            "or missing");
    if ((m.userStackType != 0) != ((m.contextMask & kernel_records::ContextCallstackUser) != 0))
        throw ProtocolError("CreateKernelChannel.userStackType: given without callstack-user, "
                            "or missing");
    if (m.kind == ChannelKind::Metadata && !m.cpus.empty())
        throw ProtocolError("CreateKernelChannel.cpus: a metadata channel has none");
    if (m.kind == ChannelKind::Data && m.cpus.empty())
        throw ProtocolError("CreateKernelChannel.cpus: a data channel needs one at least");
    for (std::size_t i = 1; i < m.cpus.size(); ++i)
        if (m.cpus[i] <= m.cpus[i - 1])
            throw ProtocolError("CreateKernelChannel.cpus: not in increasing order");
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
void validate(const DeclareLayouts& m) {
    const LayoutAbi& a = m.abi;
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

// ---- the generic part: one message type, any message type ----------------------

template <class T>
void put(Writer& w, const T& m) {
    validate(m);
    wire::putFields<ProtocolError>(w, m, T::kFields, T::kName);
}

/// Decodes a payload of type T into a Message made in place (no move).
template <class T>
Message get(Reader& r) {
    Message m(std::in_place_type<T>);
    T& v = *std::get_if<T>(&m);
    wire::getFields(r, v, T::kFields, T::kName);
    r.finish();
    validate(v);
    return m;
}

/// What the wire type of each message gives, by its value (every type is
/// below 0x100): its decoder and its name; no decoder for a value that is
/// no type.
struct TypeEntry {
    Message (*decode)(Reader&) = nullptr;
    std::string_view name = "unknown";
};
constexpr std::size_t kTypeValues = 0x100;

template <std::size_t... I>
consteval std::array<TypeEntry, kTypeValues> makeTypeTable(std::index_sequence<I...>) {
    std::array<TypeEntry, kTypeValues> table{};
    const auto add = [&]<class T>() {
        const auto value = static_cast<std::size_t>(T::kType);
        if (value >= kTypeValues || table[value].decode != nullptr)
            throw "a MessageType above 0xFF, or two messages of one MessageType";
        table[value] = TypeEntry{&get<T>, T::kName};
    };
    (add.template operator()<std::variant_alternative_t<I, Message>>(), ...);
    return table;
}
constexpr std::array<TypeEntry, kTypeValues> kTypes =
    makeTypeTable(std::make_index_sequence<std::variant_size_v<Message>>{});

const TypeEntry& entryOf(MessageType type) noexcept {
    static constexpr TypeEntry kUnknown{};
    const auto value = static_cast<std::size_t>(type);
    return value < kTypeValues ? kTypes[value] : kUnknown;
}

} // namespace

MessageType typeOf(const Message& m) noexcept {
    return std::visit([](const auto& v) { return std::decay_t<decltype(v)>::kType; }, m);
}

std::string_view messageName(MessageType type) noexcept {
    return entryOf(type).name;
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
    std::vector<std::byte> out;
    out.reserve(kHeaderSize + kTypicalPayload);
    Writer w(out);
    w.integer(kMagic);
    w.integer(static_cast<std::uint16_t>(typeOf(m)));
    w.integer(std::uint16_t{0});
    w.integer(std::uint32_t{0}); // length, patched below
    w.integer(request);
    std::visit([&](const auto& v) { put(w, v); }, m);
    const std::size_t length = out.size() - kHeaderSize;
    if (length > kMaxPayload)
        throw ProtocolError("payload larger than kMaxPayload");
    for (int i = 0; i < 4; ++i)
        out[8 + static_cast<std::size_t>(i)] = static_cast<std::byte>((length >> (8 * i)) & 0xff);
    return out;
}

FrameHeader decodeHeader(const std::byte* header) {
    Reader r(header, kHeaderSize);
    if (r.integer<std::uint32_t>() != kMagic)
        throw ProtocolError("bad frame magic");
    const auto type = static_cast<MessageType>(r.integer<std::uint16_t>());
    if (entryOf(type).decode == nullptr)
        throw ProtocolError("unknown message type " +
                            std::to_string(static_cast<std::uint16_t>(type)));
    if (r.integer<std::uint16_t>() != 0)
        throw ProtocolError("non-zero frame flags");
    const auto length = r.integer<std::uint32_t>();
    if (length > kMaxPayload)
        throw ProtocolError("payload length " + std::to_string(length) + " above the maximum");
    return FrameHeader{type, length, r.integer<std::uint32_t>()};
}

Message decodePayload(MessageType type, const std::byte* payload, std::size_t length) {
    Reader r(payload, length);
    const auto decode = entryOf(type).decode;
    if (decode == nullptr)
        throw ProtocolError("unknown message type");
    return decode(r);
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
