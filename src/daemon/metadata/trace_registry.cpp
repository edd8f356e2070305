#include "trace_registry.hpp"

#include "field_decoder.hpp"
#include "metadata_error.hpp"
#include "record_layout_compiler.hpp"
#include "trace_environment.hpp"
#include "tsdl_text.hpp"
#include "tsdl_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>

namespace tracectl::metadata {

namespace {

// Members of an event's `fields` or a stream's `event.context` sit two tabs
// in, as in lttng-sessiond's text.
constexpr unsigned kMemberIndent = 2;

// Largest event id: 65535 is the large header's "extended" marker, but the
// extended header carries 32 bits, so only UINT32_MAX itself is out.
constexpr std::size_t kMaxEventIds = std::numeric_limits<std::uint32_t>::max();

std::string streamBlock(std::uint32_t chanId, const std::string& contextTsdl, bool hasContext) {
    std::string b = substitute("stream {\n"
                               "\tid = {};\n"
                               "\tevent.header := struct event_header_large;\n"
                               "\tpacket.context := struct packet_context;\n",
                               {std::to_string(chanId)});
    if (hasContext)
        b += substitute("\tevent.context := struct {\n{}\t};\n", {contextTsdl});
    b += "};\n\n";
    return b;
}

std::string eventBlock(std::uint32_t chanId, std::uint32_t eventId, std::string_view name,
                       int loglevel, std::string_view modelEmfUri, const std::string& fieldsTsdl) {
    std::string b =
        substitute("event {\n"
                   "\tname = {};\n"
                   "\tid = {};\n"
                   "\tstream_id = {};\n",
                   {stringLiteral(name), std::to_string(eventId), std::to_string(chanId)});
    // babeltrace2 reads loglevel as unsigned and rejects the whole trace for
    // a negative one (lttng-sessiond writes it anyway): leave it out then.
    if (loglevel >= 0)
        b += substitute("\tloglevel = {};\n", {std::to_string(loglevel)});
    if (!modelEmfUri.empty())
        b += substitute("\tmodel.emf.uri = {};\n", {stringLiteral(modelEmfUri)});
    b += substitute("\tfields := struct {\n{}\t};\n};\n\n", {fieldsTsdl});
    return b;
}

// Makes room for `extra` more elements, growing geometrically (an exact
// reserve() at each call would copy the whole container every time).
template <typename Container>
void makeRoom(Container& c, std::size_t extra) {
    const std::size_t needed = c.size() + extra;
    if (needed > c.capacity())
        c.reserve(std::max(needed, 2 * c.capacity()));
}

record_layout::Program compileLayout(const std::vector<Field>& fields, const char* what) {
    try {
        return compileFields(fields);
    } catch (const record_layout::LayoutError& e) {
        throw MetadataError(E2BIG, std::string(what) + ": " + e.what());
    }
}

void checkText(std::string_view s, std::size_t max, const char* what) {
    if (s.size() > max)
        throw MetadataError(E2BIG, std::string(what) + " too long");
    if (s.find('\0') != std::string_view::npos)
        throw MetadataError(EINVAL, std::string(what) + " holds a NUL byte");
}

} // namespace

TraceRegistry::TraceRegistry(TraceInfo info, RegistryLimits limits)
    : info_(std::move(info)), limits_(limits), enums_(limits_) {
    validateTraceInfo(info_);
    text_ = tracePreamble(info_);
    if (text_.size() > limits_.maxMetadataBytes)
        throw MetadataError(E2BIG, "trace preamble larger than the metadata bound");
}

std::uint32_t TraceRegistry::createChannel() {
    if (channels_.size() >= limits_.maxChannels)
        throw MetadataError(E2BIG, "too many channels in this trace");
    channels_.emplace_back();
    return static_cast<std::uint32_t>(channels_.size() - 1);
}

TraceRegistry::Channel& TraceRegistry::channel(std::uint32_t chanId) {
    if (chanId >= channels_.size())
        throw MetadataError(ENOENT, "unknown channel " + std::to_string(chanId));
    return channels_[chanId];
}

void TraceRegistry::reserveText(std::size_t bytes) const {
    if (bytes > limits_.maxMetadataBytes ||
        text_.size() + waitingBytes_ > limits_.maxMetadataBytes - bytes)
        throw MetadataError(E2BIG, "trace metadata would exceed its bound");
}

ChannelReply TraceRegistry::registerChannel(std::uint32_t chanId,
                                            std::span<const lttng_ust_ctl_field> contextFields) {
    Channel& chan = channel(chanId);
    std::string contextTsdl;
    const std::vector<Field> decoded = decodeFields(contextFields, enums_, limits_);
    appendFields(contextTsdl, decoded, kMemberIndent, info_.abi.byteOrder);
    const ChannelReply reply{chanId, LTTNG_UST_CTL_CHANNEL_HEADER_LARGE};
    if (chan.registered) {
        if (contextTsdl != chan.contextTsdl)
            throw MetadataError(EINVAL, "channel " + std::to_string(chanId) +
                                            ": context fields differ from the first app's");
        return reply;
    }

    record_layout::Program layout = compileLayout(decoded, "channel context");
    const std::string block = streamBlock(chanId, contextTsdl, !contextFields.empty());
    reserveText(block.size());
    std::size_t waiting = 0;
    for (const std::string& b : chan.waitingBlocks)
        waiting += b.size();
    makeRoom(text_, block.size() + waiting);
    text_ += block;
    for (const std::string& b : chan.waitingBlocks)
        text_ += b;
    waitingBytes_ -= waiting;
    chan.waitingBlocks.clear();
    chan.waitingBlocks.shrink_to_fit();
    chan.contextTsdl = std::move(contextTsdl);
    chan.contextLayout = std::move(layout);
    chan.registered = true;
    return reply;
}

std::size_t TraceRegistry::declareUnregisteredChannels() {
    std::size_t declared = 0;
    for (std::uint32_t id = 0; id < channels_.size(); ++id)
        if (!channel(id).registered) {
            registerChannel(id, {});
            ++declared;
        }
    return declared;
}

std::uint32_t TraceRegistry::registerEvent(std::uint32_t chanId, std::string_view name,
                                           int loglevel, std::string_view signature,
                                           std::span<const lttng_ust_ctl_field> fields,
                                           std::string_view modelEmfUri) {
    Channel& chan = channel(chanId);
    checkText(name, limits_.maxNameBytes, "event name");
    checkText(signature, limits_.maxSignatureBytes, "event signature");
    checkText(modelEmfUri, limits_.maxUriBytes, "model.emf.uri");

    Event event{std::string(name), std::string(signature), loglevel, std::string(modelEmfUri), {}};
    const std::vector<Field> decoded = decodeFields(fields, enums_, limits_);
    appendFields(event.fieldsTsdl, decoded, kMemberIndent, info_.abi.byteOrder);

    if (const auto it = chan.idsByName.find(event.name); it != chan.idsByName.end()) {
        for (const std::uint32_t id : it->second) {
            if (chan.events[id] == event)
                return id;
        }
    }
    if (chan.events.size() >= std::min(limits_.maxEventsPerChannel, kMaxEventIds))
        throw MetadataError(E2BIG, "too many events in channel " + std::to_string(chanId));

    const auto eventId = static_cast<std::uint32_t>(chan.events.size());
    record_layout::Program layout = compileLayout(decoded, "event fields");
    std::string block = eventBlock(chanId, eventId, name, loglevel, modelEmfUri, event.fieldsTsdl);
    reserveText(block.size());

    // Allocate first, then change: a bad_alloc leaves nothing half done.
    makeRoom(chan.events, 1);
    makeRoom(chan.eventLayouts, 1);
    std::vector<std::uint32_t>& ids = chan.idsByName[event.name];
    makeRoom(ids, 1);
    if (chan.registered) {
        makeRoom(text_, block.size());
        text_ += block;
    } else {
        makeRoom(chan.waitingBlocks, 1);
        waitingBytes_ += block.size();
        chan.waitingBlocks.push_back(std::move(block));
    }
    chan.events.push_back(std::move(event));
    chan.eventLayouts.push_back(std::move(layout));
    ids.push_back(eventId);
    return eventId;
}

std::uint64_t TraceRegistry::registerEnum(std::string_view name,
                                          std::span<const lttng_ust_ctl_enum_entry> entries) {
    return enums_.registerEnum(name, entries);
}

std::vector<std::pair<std::uint32_t, record_layout::ChannelLayouts>>
TraceRegistry::takeNewLayouts() {
    std::vector<std::pair<std::uint32_t, record_layout::ChannelLayouts>> out;
    for (std::uint32_t id = 0; id < channels_.size(); ++id) {
        const Channel& chan = channels_[id];
        const bool newContext = chan.contextLayout && !chan.contextLayoutTaken;
        if (!newContext && chan.eventLayoutsTaken == chan.eventLayouts.size())
            continue;
        record_layout::ChannelLayouts layouts;
        if (newContext)
            layouts.context = chan.contextLayout;
        layouts.events.reserve(chan.eventLayouts.size() - chan.eventLayoutsTaken);
        for (std::size_t e = chan.eventLayoutsTaken; e < chan.eventLayouts.size(); ++e)
            layouts.events.emplace_back(static_cast<std::uint32_t>(e), chan.eventLayouts[e]);
        out.emplace_back(id, std::move(layouts));
    }
    // Everything is copied: now mark it taken (nothing below throws).
    for (const auto& [id, layouts] : out) {
        Channel& chan = channels_[id];
        chan.contextLayoutTaken = chan.contextLayout.has_value();
        chan.eventLayoutsTaken = chan.eventLayouts.size();
    }
    return out;
}

record_layout::ChannelLayouts TraceRegistry::layouts(std::uint32_t chanId) const {
    record_layout::ChannelLayouts out;
    if (chanId >= channels_.size())
        return out;
    const Channel& chan = channels_[chanId];
    out.context = chan.contextLayout;
    out.events.reserve(chan.eventLayouts.size());
    for (std::size_t e = 0; e < chan.eventLayouts.size(); ++e)
        out.events.emplace_back(static_cast<std::uint32_t>(e), chan.eventLayouts[e]);
    return out;
}

bool TraceRegistry::isChannelRegistered(std::uint32_t chanId) const noexcept {
    return chanId < channels_.size() && channels_[chanId].registered;
}

std::size_t TraceRegistry::eventCount(std::uint32_t chanId) const noexcept {
    return chanId < channels_.size() ? channels_[chanId].events.size() : 0;
}

} // namespace tracectl::metadata
