// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A minimal lttng-live viewer for the streaming suite: it speaks the
// viewer protocol of lttng-relayd 2.13 (lttng-tools
// src/bin/lttng-relayd/lttng-viewer-abi.h, big-endian, packed) only as far
// as learning which streams the relay publishes: CONNECT, CREATE_SESSION,
// LIST_SESSIONS, ATTACH_SESSION, GET_NEW_STREAMS and GET_METADATA. It
// never reads an index or a packet, so it asks for new streams as fast as
// the relay answers: what it sees after each answer is what a viewer
// (babeltrace2's lttng-live) would hold at that moment.
#pragma once

#include "common/unique_fd.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tracectl::test {

class LiveStreamProbe {
public:
    /// One stream as the relay announces it (struct lttng_viewer_stream).
    struct Stream {
        std::uint64_t id = 0;
        std::uint64_t ctfTraceId = 0;
        bool metadata = false;
        std::string pathName;    ///< its trace's folder on the relay
        std::string channelName; ///< "metadata", "channel0_1", ...
    };

    /// Connects to 127.0.0.1:`livePort` and creates a viewer session.
    /// Throws std::runtime_error.
    explicit LiveStreamProbe(std::uint16_t livePort);

    /// The relay's id of session `name` (LIST_SESSIONS), 0 if it lists no
    /// such session. Throws std::runtime_error.
    std::uint64_t findSession(const std::string& name);
    /// ATTACH_SESSION from the beginning; returns the streams published
    /// so far. Throws std::runtime_error (also when the relay refuses).
    std::vector<Stream> attach(std::uint64_t sessionId);
    /// GET_NEW_STREAMS of the attached session: the streams published
    /// since the last call; `hungUp` set when the relay answers that the
    /// session is closed. Throws std::runtime_error.
    std::vector<Stream> newStreams(bool& hungUp);
    /// GET_METADATA of metadata stream `streamId` until the relay has no
    /// more: the metadata bytes (packetized CTF) a viewer holds now.
    /// Throws std::runtime_error.
    std::string metadata(std::uint64_t streamId);

private:
    void send(std::uint32_t command, const std::vector<std::uint8_t>& payload);
    std::vector<std::uint8_t> receive(std::size_t bytes);
    std::vector<Stream> receiveStreams(std::uint32_t count);

    UniqueFd fd_;
    std::uint64_t sessionId_ = 0;
};

} // namespace tracectl::test
