// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_stream_probe.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace tracectl::test {

namespace {

// lttng-viewer-abi.h (lttng-tools 2.13).
constexpr std::uint32_t kConnect = 1;
constexpr std::uint32_t kListSessions = 2;
constexpr std::uint32_t kAttachSession = 3;
constexpr std::uint32_t kGetNewStreams = 7;
constexpr std::uint32_t kCreateSession = 8;
constexpr std::uint32_t kGetMetadata = 6;
constexpr std::uint32_t kMetadataOk = 1;
constexpr std::uint32_t kNoNewMetadata = 2;
constexpr std::uint32_t kClientCommand = 1;
constexpr std::uint32_t kSeekBeginning = 1;
constexpr std::uint32_t kAttachOk = 1;
constexpr std::uint32_t kCreateSessionOk = 1;
constexpr std::uint32_t kNewStreamsOk = 1;
constexpr std::uint32_t kNewStreamsNoNew = 2;
constexpr std::uint32_t kNewStreamsHup = 4;
constexpr std::size_t kHostNameMax = 64;
constexpr std::size_t kNameMax = 255;
constexpr std::size_t kPathMax = 4096;
/// struct lttng_viewer_session: id, live_timer, clients, streams, hostname,
/// session_name.
constexpr std::size_t kSessionSize = 8 + 4 + 4 + 4 + kHostNameMax + kNameMax;
/// struct lttng_viewer_stream: id, ctf_trace_id, metadata_flag, path_name,
/// channel_name.
constexpr std::size_t kStreamSize = 8 + 8 + 4 + kPathMax + kNameMax;

void put(std::vector<std::uint8_t>& b, std::uint64_t v, int bytes) {
    for (int s = 8 * (bytes - 1); s >= 0; s -= 8)
        b.push_back(static_cast<std::uint8_t>((v >> s) & 0xff));
}

std::uint64_t get(const std::vector<std::uint8_t>& b, std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v = (v << 8) | b.at(at + static_cast<std::size_t>(i));
    return v;
}

std::string text(const std::vector<std::uint8_t>& b, std::size_t at, std::size_t max) {
    const auto* p = reinterpret_cast<const char*>(b.data() + at);
    return std::string(p, ::strnlen(p, max));
}

} // namespace

LiveStreamProbe::LiveStreamProbe(std::uint16_t livePort)
    : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    if (!fd_)
        throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(livePort);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0)
        throw std::runtime_error("connecting to the relay's live port " + std::to_string(livePort) +
                                 ": " + std::strerror(errno));
    std::vector<std::uint8_t> hello;
    put(hello, 0, 8); // viewer_session_id
    put(hello, 2, 4); // major
    put(hello, 4, 4); // minor (babeltrace2 2.0 asks for 2.4)
    put(hello, kClientCommand, 4);
    send(kConnect, hello);
    (void)receive(hello.size());
    send(kCreateSession, {});
    if (get(receive(4), 0, 4) != kCreateSessionOk)
        throw std::runtime_error("the relay refused to create a viewer session");
}

std::uint64_t LiveStreamProbe::findSession(const std::string& name) {
    send(kListSessions, {});
    const std::uint64_t count = get(receive(4), 0, 4);
    std::uint64_t found = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        const auto s = receive(kSessionSize);
        if (text(s, 8 + 4 + 4 + 4 + kHostNameMax, kNameMax) == name)
            found = get(s, 0, 8);
    }
    return found;
}

std::vector<LiveStreamProbe::Stream> LiveStreamProbe::attach(std::uint64_t sessionId) {
    std::vector<std::uint8_t> request;
    put(request, sessionId, 8);
    put(request, 0, 8); // offset, unused
    put(request, kSeekBeginning, 4);
    send(kAttachSession, request);
    const auto reply = receive(8);
    const std::uint64_t status = get(reply, 0, 4);
    const auto count = static_cast<std::uint32_t>(get(reply, 4, 4));
    if (status != kAttachOk)
        throw std::runtime_error("the relay refused the attach: status " + std::to_string(status));
    sessionId_ = sessionId;
    return receiveStreams(count);
}

std::vector<LiveStreamProbe::Stream> LiveStreamProbe::newStreams(bool& hungUp) {
    std::vector<std::uint8_t> request;
    put(request, sessionId_, 8);
    send(kGetNewStreams, request);
    const auto reply = receive(8);
    const std::uint64_t status = get(reply, 0, 4);
    const auto count = static_cast<std::uint32_t>(get(reply, 4, 4));
    hungUp = status == kNewStreamsHup;
    if (status != kNewStreamsOk && status != kNewStreamsNoNew && status != kNewStreamsHup)
        throw std::runtime_error("GET_NEW_STREAMS failed: status " + std::to_string(status));
    return receiveStreams(status == kNewStreamsOk ? count : 0);
}

std::string LiveStreamProbe::metadata(std::uint64_t streamId) {
    std::string text;
    for (;;) {
        std::vector<std::uint8_t> request;
        put(request, streamId, 8);
        send(kGetMetadata, request);
        const auto reply = receive(12);
        const std::uint64_t length = get(reply, 0, 8);
        const std::uint64_t status = get(reply, 8, 4);
        if (status == kNoNewMetadata)
            return text;
        if (status != kMetadataOk)
            throw std::runtime_error("GET_METADATA failed: status " + std::to_string(status));
        if (length == 0)
            return text; // lttng-relayd 2.13 after a clear: try later
        const auto bytes = receive(static_cast<std::size_t>(length));
        text.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
}

void LiveStreamProbe::send(std::uint32_t command, const std::vector<std::uint8_t>& payload) {
    std::vector<std::uint8_t> b;
    put(b, payload.size(), 8); // data_size
    put(b, command, 4);
    put(b, 0, 4); // cmd_version
    b.insert(b.end(), payload.begin(), payload.end());
    for (std::size_t done = 0; done < b.size();) {
        const ssize_t n = ::send(fd_.get(), b.data() + done, b.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            throw std::runtime_error(std::string("sending to the relay: ") + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
}

std::vector<std::uint8_t> LiveStreamProbe::receive(std::size_t bytes) {
    std::vector<std::uint8_t> b(bytes);
    for (std::size_t done = 0; done < bytes;) {
        const ssize_t n = ::recv(fd_.get(), b.data() + done, bytes - done, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            throw std::runtime_error("the relay closed the live connection");
        if (n < 0)
            throw std::runtime_error(std::string("receiving from the relay: ") +
                                     std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
    return b;
}

std::vector<LiveStreamProbe::Stream> LiveStreamProbe::receiveStreams(std::uint32_t count) {
    std::vector<Stream> streams;
    for (std::uint32_t i = 0; i < count; ++i) {
        const auto s = receive(kStreamSize);
        streams.push_back(Stream{get(s, 0, 8), get(s, 8, 8), get(s, 16, 4) != 0,
                                 text(s, 20, kPathMax), text(s, 20 + kPathMax, kNameMax)});
    }
    return streams;
}

} // namespace tracectl::test
