#include "restart/session_record.hpp"

#include "common/error.hpp"
#include "filter/event_filter.hpp"
#include "session/context_type.hpp"
#include "session/output_path.hpp"
#include "session/session_name.hpp"

#include <nlohmann/json.hpp>

namespace tracectl {

namespace {

using nlohmann::json;

const char* matchName(LoglevelMatch m) {
    return m == LoglevelMatch::All               ? "all"
           : m == LoglevelMatch::AtLeastAsSevere ? "at-least"
                                                 : "exactly";
}

[[noreturn]] void bad(const std::string& why) {
    throw StateFileError(why);
}

const json& member(const json& o, const char* key) {
    if (!o.is_object() || !o.contains(key))
        bad(std::string("no member \"") + key + "\"");
    return o.at(key);
}

template <class T>
T get(const json& o, const char* key) {
    const json& v = member(o, key);
    try {
        if constexpr (std::is_same_v<T, bool>) {
            if (!v.is_boolean())
                throw std::invalid_argument("");
        } else if constexpr (std::is_integral_v<T>) {
            if (!v.is_number_integer())
                throw std::invalid_argument("");
            if constexpr (std::is_unsigned_v<T>) {
                if (v.is_number_unsigned())
                    return static_cast<T>(v.get<uint64_t>()) == v.get<uint64_t>()
                               ? static_cast<T>(v.get<uint64_t>())
                               : throw std::invalid_argument("");
                if (v.get<int64_t>() < 0)
                    throw std::invalid_argument("");
            }
        } else if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string())
                throw std::invalid_argument("");
        }
        return v.get<T>();
    } catch (const std::exception&) {
        bad(std::string("member \"") + key + "\" has the wrong type or range");
    }
}

std::vector<std::string> strings(const json& o, const char* key) {
    const json& v = member(o, key);
    if (!v.is_array())
        bad(std::string("member \"") + key + "\" is not a list");
    std::vector<std::string> out;
    for (const json& s : v) {
        if (!s.is_string())
            bad(std::string("member \"") + key + "\" holds something else than strings");
        out.push_back(s.get<std::string>());
    }
    return out;
}

const json& list(const json& o, const char* key) {
    const json& v = member(o, key);
    if (!v.is_array())
        bad(std::string("member \"") + key + "\" is not a list");
    return v;
}

json channelJson(const ChannelConfig& c, TracingDomain d) {
    return {{"domain", toString(d)},
            {"name", c.name},
            {"subbuf_size", c.subbufSize},
            {"subbuf_count", c.subbufCount},
            {"overwrite", c.overwrite},
            {"switch_timer_us", c.switchTimerUs},
            {"read_timer_us", c.readTimerUs},
            {"contexts", c.contexts},
            {"enabled", c.enabled}};
}

json ruleJson(const EventRule& r) {
    json o = {{"domain", toString(r.domain)},
              {"channel", r.channel},
              {"syscall", r.syscall},
              {"pattern", r.pattern},
              {"loglevel_match", matchName(r.loglevelMatch)},
              {"loglevel", r.loglevel},
              {"exclusions", r.exclusions},
              {"filter", r.filter},
              {"enabled", r.enabled}};
    if (r.userspaceProbe) // its location; the file a restarted daemon no longer has open
        o["userspace_probe"] = formatUserspaceProbeLocation(*r.userspaceProbe);
    return o;
}

TracingDomain domainOf(const json& o) {
    const auto d = domainFromName(get<std::string>(o, "domain"));
    if (!d)
        bad("unknown domain \"" + get<std::string>(o, "domain") + "\"");
    return *d;
}

ChannelConfig channelOf(const json& o) {
    ChannelConfig c;
    c.name = get<std::string>(o, "name");
    c.subbufSize = get<uint64_t>(o, "subbuf_size");
    c.subbufCount = get<uint64_t>(o, "subbuf_count");
    c.overwrite = get<bool>(o, "overwrite");
    c.switchTimerUs = get<uint32_t>(o, "switch_timer_us");
    c.readTimerUs = get<uint32_t>(o, "read_timer_us");
    c.contexts = strings(o, "contexts");
    c.enabled = get<bool>(o, "enabled");
    try {
        checkChannelName(c.name);
        checkChannelConfig(c);
    } catch (const Error& e) {
        bad(std::string("channel: ") + e.what());
    }
    const TracingDomain d = domainOf(o);
    for (const std::string& type : c.contexts)
        if (d == TracingDomain::Ust ? !ustContextType(type) : kernelContextBit(type) == 0)
            bad("channel " + quoteForMessage(c.name) + ": unknown context " +
                quoteForMessage(type));
    return c;
}

EventRule ruleOf(const json& o) {
    EventRule r;
    r.domain = domainOf(o);
    r.channel = get<std::string>(o, "channel");
    r.syscall = get<bool>(o, "syscall");
    r.pattern = get<std::string>(o, "pattern");
    const std::string match = get<std::string>(o, "loglevel_match");
    if (match == "all")
        r.loglevelMatch = LoglevelMatch::All;
    else if (match == "at-least")
        r.loglevelMatch = LoglevelMatch::AtLeastAsSevere;
    else if (match == "exactly")
        r.loglevelMatch = LoglevelMatch::Exactly;
    else
        bad("unknown loglevel_match \"" + match + "\"");
    r.loglevel = get<int32_t>(o, "loglevel");
    r.exclusions = strings(o, "exclusions");
    r.enabled = get<bool>(o, "enabled");
    if (const auto it = o.find("userspace_probe"); it != o.end()) {
        std::string why;
        if (!it->is_string() ||
            !(r.userspaceProbe = parseUserspaceProbeLocation(it->get<std::string>(), why)))
            bad("event rule: userspace_probe: " + why);
    }
    try {
        const std::string filter = get<std::string>(o, "filter");
        if (!filter.empty())
            setEventFilter(r, filter); // compiled again, and checked as a client's would be
        checkEventRule(r);
    } catch (const Error& e) {
        bad(std::string("event rule: ") + e.what());
    }
    return r;
}

} // namespace

std::string consumerUnitOf(const SessionId& id) {
    return "tracectl-consumer-" + id.hex() + ".service";
}

SessionRecord recordOf(const Session& session) {
    SessionRecord r;
    r.id = session.id();
    r.config = session.config();
    r.created = session.creationTime();
    r.restored = session.restorable();
    if (r.restored.everStarted)
        r.consumerUnit = consumerUnitOf(r.id);
    return r;
}

std::string toStateDocument(const SessionRecord& record) {
    const SessionConfig& c = record.config;
    const RestoredSession& s = record.restored;
    json channels = json::array();
    for (const ChannelConfig& ch : s.channels)
        channels.push_back(channelJson(ch, TracingDomain::Ust));
    for (const ChannelConfig& ch : s.kernelChannels)
        channels.push_back(channelJson(ch, TracingDomain::Kernel));
    json rules = json::array();
    for (const EventRule& r : s.rules)
        rules.push_back(ruleJson(r));
    for (const EventRule& r : s.kernelRules)
        rules.push_back(ruleJson(r));
    json trackers = json::array();
    for (const ProcessTracker& t : s.trackers.all())
        trackers.push_back({{"attribute", toString(t.attribute)},
                            {"all", t.all},
                            {"values", std::vector<uint32_t>(t.values.begin(), t.values.end())}});
    json relay = nullptr;
    if (c.relay)
        relay = {{"control", "tcp://" + c.relay->control.text()},
                 {"data", "tcp://" + c.relay->data.text()}};
    const json doc = {
        {"format", kStateFormat},
        {"version", kStateVersion},
        {"id", record.id.hex()},
        {"name", c.name},
        {"owner", c.owner},
        {"created_us",
         std::chrono::duration_cast<std::chrono::microseconds>(record.created.time_since_epoch())
             .count()},
        {"output_path", c.outputPath},
        {"relay", relay},
        {"live_timer_us", c.liveTimerUs},
        {"mode", toString(c.mode)},
        {"buffer_ownership", toString(c.bufferOwnership)},
        {"count_events", c.countEvents},
        {"state", toString(s.state)},
        {"error_reason", s.errorReason},
        {"ever_started", s.everStarted},
        {"all_users", s.allUsers},
        {"channels", channels},
        {"rules", rules},
        {"trackers", trackers},
        {"rotation_schedule",
         {{"timer_us", s.schedule.timerUs}, {"size_bytes", s.schedule.sizeBytes}}},
        {"consumer_unit", record.consumerUnit},
    };
    return doc.dump();
}

SessionRecord fromStateDocument(const std::string& text) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        bad(std::string("not JSON (") + e.what() + ")");
    }
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != kStateFormat)
        bad("not a tracectl session state document");
    if (get<int>(doc, "version") != kStateVersion)
        bad("version " + std::to_string(get<int>(doc, "version")) + ", this tracectld reads " +
            std::to_string(kStateVersion));
    SessionRecord r;
    const auto id = SessionId::parseHex(get<std::string>(doc, "id"));
    if (!id)
        bad("the id is not 32 hex digits");
    r.id = *id;
    SessionConfig& c = r.config;
    c.name = get<std::string>(doc, "name");
    if (const auto problem = sessionNameProblem(c.name))
        bad("invalid session name " + quoteForMessage(c.name) + ": " + *problem);
    c.owner = get<uint32_t>(doc, "owner");
    const auto createdUs = get<int64_t>(doc, "created_us");
    if (createdUs < 0)
        bad("created_us is before 1970");
    r.created = std::chrono::system_clock::time_point(std::chrono::microseconds(createdUs));
    c.outputPath = get<std::string>(doc, "output_path");
    const json& relay = member(doc, "relay");
    try {
        if (!relay.is_null())
            c.relay = relayAddressOf(std::nullopt, get<std::string>(relay, "control"),
                                     get<std::string>(relay, "data"));
    } catch (const Error& e) {
        bad(e.what());
    }
    if (!c.relay) {
        try {
            if (checkedOutputPath(c.outputPath) != c.outputPath)
                bad("output path " + quoteForMessage(c.outputPath) + " is not in normal form");
        } catch (const Error& e) {
            bad(e.what());
        }
    } else if (!c.outputPath.empty()) {
        bad("a network session with an output path");
    }
    c.liveTimerUs = get<uint64_t>(doc, "live_timer_us");
    const std::string mode = get<std::string>(doc, "mode");
    if (mode == "normal")
        c.mode = SessionMode::Normal;
    else if (mode == "snapshot")
        c.mode = SessionMode::Snapshot;
    else if (mode == "live")
        c.mode = SessionMode::Live;
    else
        bad("unknown mode \"" + mode + "\"");
    const std::string buffers = get<std::string>(doc, "buffer_ownership");
    if (buffers != "per-uid" && buffers != "per-pid")
        bad("unknown buffer_ownership \"" + buffers + "\"");
    c.bufferOwnership = buffers == "per-pid" ? BufferOwnership::PerPid : BufferOwnership::PerUid;
    c.countEvents = get<bool>(doc, "count_events");

    RestoredSession& s = r.restored;
    const std::string state = get<std::string>(doc, "state");
    if (state == "created")
        s.state = SessionState::Created;
    else if (state == "active")
        s.state = SessionState::Active;
    else if (state == "stopped")
        s.state = SessionState::Stopped;
    else if (state == "error")
        s.state = SessionState::Error;
    else
        bad("unknown state \"" + state + "\"");
    s.errorReason = get<std::string>(doc, "error_reason");
    if (s.errorReason.size() > kMaxErrorReasonBytes)
        bad("error_reason is longer than " + std::to_string(kMaxErrorReasonBytes) + " bytes");
    s.everStarted = get<bool>(doc, "ever_started");
    s.allUsers = get<bool>(doc, "all_users");
    for (const json& ch : list(doc, "channels")) {
        const ChannelConfig cfg = channelOf(ch);
        auto& into = domainOf(ch) == TracingDomain::Ust ? s.channels : s.kernelChannels;
        for (const ChannelConfig& other : into)
            if (other.name == cfg.name)
                bad("two channels named " + quoteForMessage(cfg.name));
        into.push_back(cfg);
    }
    if (s.channels.size() + s.kernelChannels.size() > 2 * kMaxChannels)
        bad("too many channels");
    for (const json& rule : list(doc, "rules")) {
        EventRule e = ruleOf(rule);
        const auto& channels = e.domain == TracingDomain::Ust ? s.channels : s.kernelChannels;
        if (std::none_of(channels.begin(), channels.end(),
                         [&](const ChannelConfig& ch) { return ch.name == e.channel; }))
            bad("an event rule names channel " + quoteForMessage(e.channel) +
                ", which the session does not have");
        (e.domain == TracingDomain::Ust ? s.rules : s.kernelRules).push_back(std::move(e));
    }
    if (s.rules.size() + s.kernelRules.size() > 2 * kMaxEventRules)
        bad("too many event rules");
    for (const json& t : list(doc, "trackers")) {
        const auto attribute = processAttributeFromName(get<std::string>(t, "attribute"));
        if (!attribute)
            bad("unknown tracker \"" + get<std::string>(t, "attribute") + "\"");
        const json& values = list(t, "values");
        std::vector<uint32_t> ids;
        for (const json& v : values) {
            if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
                bad("a tracker value is not a 32-bit id");
            ids.push_back(v.get<uint32_t>());
        }
        try {
            if (!get<bool>(t, "all")) {
                if (ids.empty())
                    s.trackers.untrack(*attribute, {}, true);
                else
                    s.trackers.track(*attribute, ids, false);
            } else if (!ids.empty()) {
                bad("a tracker of every process lists values");
            }
        } catch (const Error& e) {
            bad(std::string("tracker: ") + e.what());
        }
    }
    const json& schedule = member(doc, "rotation_schedule");
    s.schedule.timerUs = get<uint64_t>(schedule, "timer_us");
    s.schedule.sizeBytes = get<uint64_t>(schedule, "size_bytes");
    r.consumerUnit = get<std::string>(doc, "consumer_unit");
    if (!r.consumerUnit.empty() && r.consumerUnit != consumerUnitOf(r.id))
        bad("consumer unit " + quoteForMessage(r.consumerUnit) + " is not this session's (" +
            consumerUnitOf(r.id) + ")");
    return r;
}

} // namespace tracectl
