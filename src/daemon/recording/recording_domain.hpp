// What a session's recording (recordings.hpp) asks of each domain that
// records into it (the UST tracer, the kernel domain): the domains own
// what is recorded (apps, tracefs instances, the metadata of their
// traces); the recording owns the consumer, its chunks and keys.
//
// Threads: called on the main loop, answered there.
#pragma once

#include "common/error.hpp"

#include <functional>
#include <optional>
#include <string>

namespace tracectl {

class RecordingDomain {
public:
    /// Nullopt: the chunk may close now; an error: it may not (the
    /// session ended meanwhile).
    using Ready = std::function<void(std::optional<Error>)>;

    virtual ~RecordingDomain() = default;

    /// Before session `idHex`'s chunk closes (a rotation, a clear) or its
    /// buffers are copied (a snapshot): once every stream of the domain
    /// has a stream class in the metadata pushed to the consumer, `ready`
    /// (at once if so already; later if buffers are being made). The
    /// recording sends its request right in `ready`.
    virtual void beforeChunkCloses(const std::string& idHex, Ready ready) = 0;
    /// The consumer took the boundary (a rotation began, a snapshot's data
    /// was copied): what the domain registered since goes to the consumer
    /// now, behind it; the recording then closes the metadata.
    virtual void afterChunkBoundary(const std::string& idHex) = 0;
    /// Session `idHex`'s consumer is gone or going (`why`): the domain
    /// releases what the consumer held of its own (fds) and reads nothing
    /// more. Not called when the session ends normally (the domain's own
    /// destroy() closed its channels before).
    virtual void recordingFailed(const std::string& idHex, const std::string& why) = 0;
};

} // namespace tracectl
