// The metadata registry of one trace: one per (session, uid, bitness) in
// per-UID buffering, one per app in per-PID buffering. It keeps the
// channels, events and enums the apps register over their notify sockets,
// answers with the ids they must use, and grows the trace's CTF 1.8 TSDL.
//
// The text only ever grows (append-only): the daemon pushes
// text().substr(pushed) to the consumer's metadata stream after each
// registration. A channel's `stream` block comes before any of its `event`
// blocks: lttng-ust registers a session's events (lttng_session_enable ->
// lttng_session_sync_event_enablers) before its channels, so the blocks of
// events registered before their channel wait and follow the stream block
// when the channel registers. (lttng-sessiond appends them at once, so its
// text names stream ids before declaring them; whole-file readers cope,
// readers of metadata increments do not.)
//
// Not thread-safe: its caller serializes every call. In the daemon the
// tracer (ust/ust_tracer.hpp) keeps one registry per trace and calls it
// only under that trace's own mutex (UstTracer::Trace::registryMutex): the
// notify thread to register channels, events and enums, the main loop to
// take text() for the consumer and to declare unregistered channels. The
// mutex is held for in-memory work only, never across a round trip to an
// app or a consumer. (The main loop also creates the registry and its
// channels before any app of the trace is routed to the notify thread.)
//
// Record layouts (issue 14): besides the text, the registry keeps the skip
// program (common/record_layout.hpp, record_layout_compiler.hpp) of each
// channel's context and of each event, for the consumer to count records.
// Like the text they only grow, and takeNewLayouts() hands out what was
// added since its last call, for the daemon to send as increments.
// Errors are MetadataError exceptions whose
// errnoValue() is the code to answer the app with (negated); a refused call
// leaves the registry and its text unchanged.
#pragma once

#include "common/record_layout.hpp"
#include "enum_registry.hpp"
#include "limits.hpp"
#include "trace_info.hpp"

#include <cstdint>
#include <lttng/ust-ctl.h>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tracectl::metadata {

/// What lttng_ust_ctl_reply_register_channel sends back.
struct ChannelReply {
    std::uint32_t chanId;
    lttng_ust_ctl_channel_header headerType;
};

class TraceRegistry {
public:
    /// Starts the text with the preamble (trace_environment.hpp). Throws
    /// MetadataError(EINVAL) for an invalid `info` (validateTraceInfo).
    explicit TraceRegistry(TraceInfo info, RegistryLimits limits = {});

    TraceRegistry(const TraceRegistry&) = delete;
    TraceRegistry& operator=(const TraceRegistry&) = delete;

    /// A new channel of this trace, when the daemon creates it: the id to
    /// put in lttng_ust_ctl_consumer_channel_attr.chan_id (lttng-ust refuses
    /// a channel registration reply with any other id). Ids count from 0.
    /// E2BIG past RegistryLimits::maxChannels.
    std::uint32_t createChannel();

    /// Notify command CHANNEL: an app's channel `chanId` (found by the
    /// daemon from the app's channel object) with the app's context fields.
    /// The first registration writes the channel's stream block (with
    /// `event.context` from `contextFields`, if any) followed by the events
    /// waiting for it; later ones (other apps of a per-UID trace) must send
    /// the same context (same TSDL), else EINVAL. Always answers the large
    /// event header, as lttng-sessiond 2.13 does (ust-app.c
    /// reply_ust_register_channel; it never answers COMPACT). ENOENT for an
    /// unknown chanId; field errors as in field_decoder.hpp; E2BIG for a
    /// context whose record layout is past record_layout's limits. The first
    /// registration also keeps the context's record layout (an empty
    /// program for no context fields) for takeNewLayouts().
    ChannelReply registerChannel(std::uint32_t chanId,
                                 std::span<const lttng_ust_ctl_field> contextFields);

    /// For a trace no app will register channels in any more (its app
    /// exited, or the session is destroyed): writes the stream block, with no
    /// event context, of every channel never registered, followed by the
    /// events waiting for it. The consumer still flushes such a channel's
    /// streams (packets without events) into the trace; without the block,
    /// readers refuse the whole trace (babeltrace2: "No stream class with
    /// ID"). Returns how many channels it declared. A later registerChannel
    /// with context fields then fails with EINVAL. Each declared channel's
    /// record layout gets an empty context program.
    std::size_t declareUnregisteredChannels();

    /// Notify command EVENT. Returns the event id: per channel, from 0. An
    /// event equal to one already registered in the channel (same name,
    /// signature, loglevel, model.emf.uri and field layout) gets that id
    /// back: every app of a per-UID trace registers the same events, and an
    /// app that unloads and reloads a provider registers them again.
    /// `modelEmfUri` empty = none. A negative `loglevel` (lttng-ust's are
    /// 0..14) is kept but not written: CTF readers refuse it. ENOENT for an unknown chanId; E2BIG
    /// for a name, signature, uri or event count past the limits; EINVAL for a name with a NUL
    /// byte; field errors as in field_decoder.hpp; E2BIG for fields whose
    /// record layout is past record_layout's limits. A new id also keeps
    /// its record layout for takeNewLayouts(); an id given back adds
    /// nothing.
    std::uint32_t registerEvent(std::uint32_t chanId, std::string_view name, int loglevel,
                                std::string_view signature,
                                std::span<const lttng_ust_ctl_field> fields,
                                std::string_view modelEmfUri);

    /// Notify command ENUM. Returns the enum id: one counter per registry,
    /// from 0; an equal enum (same name and entries) gets its id back.
    /// Errors as in EnumRegistry::registerEnum.
    std::uint64_t registerEnum(std::string_view name,
                               std::span<const lttng_ust_ctl_enum_entry> entries);

    /// The TSDL so far. Only grows; its size() is the version to compare
    /// with what was pushed.
    const std::string& text() const noexcept { return text_; }

    /// The record layouts added since the last call (all of them at the
    /// first), by channel id, in increasing id order; channels with nothing
    /// new are left out. Per channel: the context program once (when the
    /// channel registered or was declared), then the new event ids with
    /// their programs, in id order. Event programs may come before their
    /// channel's context (events registered before the channel). Send each
    /// to the consumer's RecordCounter of that channel (the stream class
    /// `chanId`), split with record_layout::encodeChunks.
    std::vector<std::pair<std::uint32_t, record_layout::ChannelLayouts>> takeNewLayouts();

    /// Every record layout of `chanId` so far (empty for an unknown
    /// channel): for a consumer that starts over.
    record_layout::ChannelLayouts layouts(std::uint32_t chanId) const;

    const TraceInfo& info() const noexcept { return info_; }
    std::size_t channelCount() const noexcept { return channels_.size(); }
    /// Whether `chanId` exists and its stream block is in text().
    bool isChannelRegistered(std::uint32_t chanId) const noexcept;
    /// Distinct events of `chanId` (0 for an unknown channel).
    std::size_t eventCount(std::uint32_t chanId) const noexcept;
    std::size_t enumCount() const noexcept { return enums_.size(); }

private:
    struct Event {
        std::string name;
        std::string signature;
        int loglevel;
        std::string modelEmfUri;
        std::string fieldsTsdl;
        bool operator==(const Event&) const = default;
    };
    struct Channel {
        bool registered = false;
        std::string contextTsdl;   // the event.context members, once registered
        std::vector<Event> events; // index == event id
        std::unordered_map<std::string, std::vector<std::uint32_t>> idsByName;
        std::vector<std::string> waitingBlocks;              // event blocks before registration
        std::optional<record_layout::Program> contextLayout; // once registered
        std::vector<record_layout::Program> eventLayouts;    // index == event id
        bool contextLayoutTaken = false;
        std::size_t eventLayoutsTaken = 0;
    };

    Channel& channel(std::uint32_t chanId);
    void reserveText(std::size_t bytes) const;

    TraceInfo info_;
    RegistryLimits limits_;
    EnumRegistry enums_;
    std::vector<Channel> channels_; // index == chan id
    std::string text_;
    std::size_t waitingBytes_ = 0;
};

} // namespace tracectl::metadata
