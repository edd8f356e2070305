// How a domain other than the one that starts a session's consumer reaches
// it: the session has one consumer unit (DESIGN.md, "Consumers"), started by
// the UST tracer at the session's first start, and the kernel domain
// creates its channels in the same consumer, over the same connection, so
// that one Rotate or RecordSnapshot covers both domains' streams.
//
// Threads: the main loop only; callbacks come there.
#pragma once

#include "common/consumer_protocol.hpp"
#include "common/error.hpp"

#include <functional>
#include <optional>
#include <string>

namespace tracectl {

class ConsumerConnection;

class SessionConsumers {
public:
    virtual ~SessionConsumers() = default;

    /// `ready` once session `idHex`'s consumer has answered Hello (at once
    /// if it has), or with why it never will (not being started, failed,
    /// destroyed). Call after the session's start was given to the tracer.
    virtual void whenConsumerReady(const std::string& idHex,
                                   std::function<void(std::optional<Error>)> ready) = 0;
    /// The session's live consumer connection, or nullptr. Never keep it:
    /// ask again after each callback (it goes with the session).
    virtual ConsumerConnection* consumerOf(const std::string& idHex) = 0;
    /// CLOCK_REALTIME - CLOCK_MONOTONIC (ns) that every trace of session
    /// `idHex` describes its clock with (measured once, at its first
    /// start), or nullopt if the session is not known.
    virtual std::optional<int64_t> clockOffsetOf(const std::string& idHex) = 0;
    /// What session `idHex`'s trace folders get after their name
    /// (restartSuffix(): a live session a restarted daemon took over), or "".
    virtual std::string traceDirSuffixOf(const std::string& idHex) = 0;
    /// Consumer channel keys from `kForeignKeyBase` on belong to other
    /// domains: their figures go to `handler` (told on the loop).
    using FiguresHandler =
        std::function<void(const std::string& idHex, const consumer_protocol::Statistics&)>;
    virtual void onForeignStatistics(FiguresHandler handler) = 0;
    /// Told before session `idHex`'s consumer is asked to shut down or is
    /// let go (Destroy, failure): other domains release what the consumer
    /// holds of theirs now.
    using ReleaseHandler = std::function<void(const std::string& idHex)>;
    virtual void onConsumerGone(ReleaseHandler handler) = 0;
};

/// The first consumer channel key of other domains (the UST tracer counts
/// its own from 1).
inline constexpr std::uint64_t kForeignKeyBase = std::uint64_t{1} << 62;

} // namespace tracectl
