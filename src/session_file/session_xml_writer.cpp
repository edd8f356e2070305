// writeSessionFile(): libxml2's xmlTextWriter, indenting with tabs, in the
// element order of lttng-tools 2.13's `lttng save` (read from its output,
// tests/unit/data/session_files). Every value is checked first, so the
// document is valid against session.xsd and readSessionFile() reads it.
#include "session_file/schema_names.hpp"
#include "session_file/session_xml.hpp"

#include <cstdint>
#include <libxml/tree.h>
#include <libxml/xmlwriter.h>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::session_file {
namespace {

struct BufferDeleter {
    void operator()(xmlBuffer* b) const noexcept { xmlBufferFree(b); }
};
struct TextWriterDeleter {
    void operator()(xmlTextWriter* w) const noexcept { xmlFreeTextWriter(w); }
};

const xmlChar* xml(const char* s) {
    return reinterpret_cast<const xmlChar*>(s);
}

void check(int rc) {
    if (rc < 0)
        throw std::runtime_error("writeSessionFile: libxml2 could not write the document");
}

/// Whether `s` is UTF-8 made of XML 1.0 characters only (#x9, #xA, #xD,
/// #x20-#xD7FF, #xE000-#xFFFD, #x10000-#x10FFFF): what a text node can hold.
bool isXmlText(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto lead = static_cast<unsigned char>(s[i]);
        uint32_t cp = 0;
        std::size_t length = 0;
        if (lead < 0x80U) {
            cp = lead;
            length = 1;
        } else if ((lead & 0xE0U) == 0xC0U) {
            cp = lead & 0x1FU;
            length = 2;
        } else if ((lead & 0xF0U) == 0xE0U) {
            cp = lead & 0x0FU;
            length = 3;
        } else if ((lead & 0xF8U) == 0xF0U) {
            cp = lead & 0x07U;
            length = 4;
        } else {
            return false;
        }
        if (i + length > s.size())
            return false;
        for (std::size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(s[i + k]);
            if ((next & 0xC0U) != 0x80U)
                return false;
            cp = (cp << 6U) | (next & 0x3FU);
        }
        // Overlong forms.
        if ((length == 2 && cp < 0x80U) || (length == 3 && cp < 0x800U) ||
            (length == 4 && cp < 0x10000U))
            return false;
        const bool isChar = cp == 0x9U || cp == 0xAU || cp == 0xDU ||
                            (cp >= 0x20U && cp <= 0xD7FFU) || (cp >= 0xE000U && cp <= 0xFFFDU) ||
                            (cp >= 0x10000U && cp <= 0x10FFFFU);
        if (!isChar)
            return false;
        i += length;
    }
    return true;
}

class Writer {
public:
    explicit Writer(xmlTextWriter* w) : w_(w) {}

    void sessions(const std::vector<SessionDescription>& all) {
        start("sessions");
        for (const SessionDescription& s : all)
            session(s);
        end();
    }

private:
    xmlTextWriter* w_;
    /// Where the writer is, for messages: "session 's1'", "channel 'chA'".
    std::vector<std::string> where_;

    class Within {
    public:
        Within(Writer& w, std::string what) : w_(w) { w_.where_.push_back(std::move(what)); }
        ~Within() { w_.where_.pop_back(); }
        Within(const Within&) = delete;
        Within& operator=(const Within&) = delete;

    private:
        Writer& w_;
    };

    [[noreturn]] void invalid(const std::string& what) const {
        std::string message = "writeSessionFile: ";
        for (const std::string& w : where_)
            message += w + ": ";
        throw std::invalid_argument(message + what);
    }

    void start(const char* element) { check(xmlTextWriterStartElement(w_, xml(element))); }
    void end() { check(xmlTextWriterEndElement(w_)); }
    /// `<element/>`.
    void empty(const char* element) {
        start(element);
        end();
    }

    void text(const char* element, const std::string& value) {
        if (!isXmlText(value))
            invalid(std::string("<") + element +
                    ">: the value is not UTF-8 text that XML can hold");
        check(xmlTextWriterWriteElement(w_, xml(element), xml(value.c_str())));
    }
    /// `name_type`.
    void name(const char* element, const std::string& value) {
        if (value.size() > schema::kMaxNameBytes)
            invalid(std::string("<") + element + ">: '" + value + "' is longer than " +
                    std::to_string(schema::kMaxNameBytes) + " bytes");
        text(element, value);
    }
    void number(const char* element, uint64_t value) { text(element, std::to_string(value)); }
    void number(const char* element, int64_t value) { text(element, std::to_string(value)); }
    void number(const char* element, uint32_t value) { text(element, std::to_string(value)); }
    void number(const char* element, int32_t value) { text(element, std::to_string(value)); }
    void boolean(const char* element, bool value) { text(element, value ? "true" : "false"); }

    /// `element`, one of the schema's enumeration `names`.
    template <std::size_t N>
    void oneOf(const char* element, const std::string& value,
               const std::array<std::string_view, N>& names) {
        if (!schema::isOneOf(value, names))
            invalid(std::string("<") + element + ">: '" + value + "' is not " +
                    schema::listOf(names));
        text(element, value);
    }

    /// A model enumerator, by its toString() name.
    template <typename E>
    void enumerator(const char* element, E value) {
        const std::string s = toString(value);
        if (s == "?")
            invalid(std::string("<") + element + ">: not a valid enumerator (" +
                    std::to_string(static_cast<int>(value)) + ")");
        text(element, s);
    }

    void session(const SessionDescription& s) {
        Within within(*this, "session '" + s.name + "'");
        if (s.name.empty())
            invalid("a session's name may not be empty");
        start("session");
        name("name", s.name);
        if (s.sharedMemoryPath)
            text("shared_memory_path", *s.sharedMemoryPath);
        if (s.domains.empty()) {
            empty("domains");
        } else {
            start("domains");
            for (const Domain& d : s.domains)
                domain(d);
            end();
        }
        boolean("started", s.started);
        const bool hasRotations = !s.periodicRotationsUs.empty() || !s.sizeRotationsBytes.empty();
        if (s.snapshotMode || s.liveTimerUs != 0 || hasRotations) {
            start("attributes");
            if (s.snapshotMode)
                boolean("snapshot_mode", true);
            if (s.liveTimerUs != 0)
                number("live_timer_interval", s.liveTimerUs);
            if (hasRotations) {
                start("rotation_schedules");
                for (uint64_t us : s.periodicRotationsUs) {
                    start("periodic");
                    number("time_us", us);
                    end();
                }
                for (uint64_t bytes : s.sizeRotationsBytes) {
                    start("size_threshold");
                    number("bytes", bytes);
                    end();
                }
                end();
            }
            end();
        }
        if (s.snapshotMode || !s.snapshotOutputs.empty()) {
            start("output");
            if (s.snapshotOutputs.empty()) {
                empty("snapshot_outputs");
            } else {
                start("snapshot_outputs");
                for (const SnapshotOutput& o : s.snapshotOutputs)
                    snapshotOutput(o);
                end();
            }
            end();
        } else if (s.output) {
            start("output");
            consumerOutput(*s.output);
            end();
        }
        end();
    }

    void snapshotOutput(const SnapshotOutput& o) {
        Within within(*this, "snapshot output '" + o.name + "'");
        start("output");
        name("name", o.name);
        number("max_size", o.maxSize);
        consumerOutput(o.output);
        end();
    }

    void consumerOutput(const ConsumerOutput& o) {
        start("consumer_output");
        boolean("enabled", o.enabled);
        start("destination");
        if (o.controlUri || o.dataUri) {
            start("net_output");
            text("control_uri", o.controlUri.value_or(""));
            text("data_uri", o.dataUri.value_or(""));
            end();
        } else {
            text("path", o.path.value_or(""));
        }
        end();
        end();
    }

    void domain(const Domain& d) {
        Within within(*this, std::string("domain ") + toString(d.type));
        start("domain");
        enumerator("type", d.type);
        enumerator("buffer_type", d.bufferType);
        if (d.channels.empty()) {
            empty("channels");
        } else {
            start("channels");
            for (const Channel& c : d.channels)
                channel(c);
            end();
        }
        // save.c writes the element for the kernel and UST domains, which
        // have trackers, even when every process is tracked.
        const bool tracking = d.type == DomainType::Kernel || d.type == DomainType::Ust;
        if (!d.trackers.empty()) {
            start("process_attr_trackers");
            std::vector<std::string_view> seen;
            for (const ProcessAttrTracker& t : d.trackers) {
                for (std::string_view a : seen)
                    if (a == t.attribute)
                        invalid("two " + t.attribute + " trackers");
                seen.emplace_back(t.attribute);
                tracker(t);
            }
            end();
        } else if (tracking) {
            empty("process_attr_trackers");
        }
        if (d.legacyPidTargets) {
            start("trackers");
            start("pid_tracker");
            start("targets");
            for (int64_t pid : *d.legacyPidTargets) {
                start("pid_target");
                number("pid", pid);
                end();
            }
            end();
            end();
            end();
        }
        end();
    }

    void tracker(const ProcessAttrTracker& t) {
        if (!schema::isOneOf(t.attribute, schema::kTrackerAttributes))
            invalid("'" + t.attribute + "' is not a tracker's attribute (" +
                    schema::listOf(schema::kTrackerAttributes) + ")");
        Within within(*this, t.attribute + " tracker");
        const std::string element = t.attribute + "_process_attr_tracker";
        start(element.c_str());
        if (t.values.empty()) {
            empty("process_attr_values");
        } else {
            start("process_attr_values");
            for (const TrackerValue& v : t.values) {
                if (v.id.has_value() == v.name.has_value())
                    invalid("a value has to be an id or a name");
                start(t.attribute.c_str());
                if (v.id) {
                    number("id", *v.id);
                } else {
                    if (!schema::trackerTakesNames(t.attribute))
                        invalid("the schema has no names for " + t.attribute + " ('" + *v.name +
                                "')");
                    text("name", *v.name);
                }
                end();
            }
            end();
        }
        end();
    }

    void channel(const Channel& c) {
        Within within(*this, "channel '" + c.name + "'");
        start("channel");
        name("name", c.name);
        boolean("enabled", c.enabled);
        text("overwrite_mode", c.overwrite ? "OVERWRITE" : "DISCARD");
        if (c.subbufSize)
            number("subbuffer_size", *c.subbufSize);
        number("subbuffer_count", c.subbufCount);
        number("switch_timer_interval", c.switchTimerUs);
        number("read_timer_interval", c.readTimerUs);
        oneOf("output_type", c.outputType, schema::kOutputTypes);
        if (c.blockingTimeoutUs < schema::kMinBlockingTimeoutUs ||
            c.blockingTimeoutUs > schema::kMaxBlockingTimeoutUs)
            invalid("<blocking_timeout>: " + std::to_string(c.blockingTimeoutUs) +
                    " is out of range (" + std::to_string(schema::kMinBlockingTimeoutUs) + " to " +
                    std::to_string(schema::kMaxBlockingTimeoutUs) + ")");
        number("blocking_timeout", c.blockingTimeoutUs);
        number("monitor_timer_interval", c.monitorTimerUs);
        number("tracefile_size", c.tracefileSize);
        number("tracefile_count", c.tracefileCount);
        number("live_timer_interval", c.liveTimerUs);
        if (c.events.empty()) {
            empty("events");
        } else {
            start("events");
            for (const Event& e : c.events)
                event(e);
            end();
        }
        if (c.contexts.empty()) {
            empty("contexts");
        } else {
            start("contexts");
            for (const Context& x : c.contexts)
                context(x);
            end();
        }
        end();
    }

    // Event::hasProbeAttributes is not written: the attributes were never kept.
    void event(const Event& e) {
        Within within(*this, "event '" + e.name + "'");
        start("event");
        name("name", e.name);
        boolean("enabled", e.enabled);
        oneOf("type", e.type, schema::kEventTypes);
        enumerator("loglevel_type", e.loglevelType);
        if (e.loglevelType != LoglevelType::All)
            number("loglevel", e.loglevel);
        if (e.filter)
            text("filter", *e.filter);
        if (!e.exclusions.empty()) {
            start("exclusions");
            for (const std::string& x : e.exclusions)
                text("exclusion", x);
            end();
        }
        end();
    }

    void context(const Context& x) {
        const int set = int{x.type.has_value()} + int{x.perf.has_value()} + int{x.app.has_value()};
        if (set != 1)
            invalid("a context has to be exactly one of a type, a perf counter or an app "
                    "context");
        start("context");
        if (x.type) {
            oneOf("type", *x.type, schema::kContextTypes);
        } else if (x.perf) {
            start("perf");
            number("type", x.perf->type);
            number("config", x.perf->config);
            name("name", x.perf->name);
            end();
        } else {
            start("app");
            text("provider_name", x.app->providerName);
            text("ctx_name", x.app->contextName);
            end();
        }
        end();
    }
};

} // namespace

std::string writeSessionFile(const std::vector<SessionDescription>& sessions) {
    if (sessions.empty())
        throw std::invalid_argument("writeSessionFile: a session file has at least one session");
    std::unique_ptr<xmlBuffer, BufferDeleter> buffer(xmlBufferCreate());
    if (!buffer)
        throw std::bad_alloc();
    {
        std::unique_ptr<xmlTextWriter, TextWriterDeleter> w(
            xmlNewTextWriterMemory(buffer.get(), 0));
        if (!w)
            throw std::bad_alloc();
        check(xmlTextWriterSetIndent(w.get(), 1));
        check(xmlTextWriterSetIndentString(w.get(), xml("\t")));
        check(xmlTextWriterStartDocument(w.get(), nullptr, "UTF-8", nullptr));
        Writer(w.get()).sessions(sessions);
        check(xmlTextWriterEndDocument(w.get()));
        check(xmlTextWriterFlush(w.get()));
    } // the writer, freed, has flushed into the buffer
    return std::string(reinterpret_cast<const char*>(xmlBufferContent(buffer.get())),
                       static_cast<std::size_t>(xmlBufferLength(buffer.get())));
}

} // namespace tracectl::session_file
