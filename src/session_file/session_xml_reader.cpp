// readSessionFile(): libxml2 parses the text into a tree (no DTD, no
// entities, no network; its errors go to the parser context, never to
// stderr), then one function per schema type walks that tree into the data
// model, checking each value against session.xsd's type.
#include "session_file/schema_names.hpp"
#include "session_file/session_xml.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace tracectl::session_file {
namespace {

struct ParserCtxtDeleter {
    void operator()(xmlParserCtxt* c) const noexcept { xmlFreeParserCtxt(c); }
};
struct DocDeleter {
    void operator()(xmlDoc* d) const noexcept { xmlFreeDoc(d); }
};
using ParserCtxtPtr = std::unique_ptr<xmlParserCtxt, ParserCtxtDeleter>;
using DocPtr = std::unique_ptr<xmlDoc, DocDeleter>;

using Node = const xmlNode*;

const char* chars(const xmlChar* s) {
    return reinterpret_cast<const char*>(s);
}

// --- Parsing -----------------------------------------------------------

/// What the parser's hooks saw, reached through xmlParserCtxt::_private.
struct ParseState {
    bool sawDtd = false;
    long dtdLine = 0;
    std::string dtdRoot;
    /// The first error libxml2 reported (the later ones tend to follow
    /// from it): its line and message.
    bool hasError = false;
    long errorLine = 0;
    std::string errorMessage;
};

ParseState& stateOf(void* ctx) {
    return *static_cast<ParseState*>(static_cast<xmlParserCtxt*>(ctx)->_private);
}

/// A <!DOCTYPE> (or, defensively, an entity declaration): stops the parser
/// before it reads the internal subset, so no entity is ever declared.
void refuseDtd(void* ctx, const xmlChar* root) {
    auto* ctxt = static_cast<xmlParserCtxt*>(ctx);
    ParseState& state = stateOf(ctx);
    if (!state.sawDtd) {
        state.sawDtd = true;
        state.dtdLine = ctxt->input != nullptr ? ctxt->input->line : 0;
        if (root != nullptr)
            state.dtdRoot = chars(root);
    }
    xmlStopParser(ctxt);
}

void onSubset(void* ctx, const xmlChar* name, const xmlChar*, const xmlChar*) {
    refuseDtd(ctx, name);
}

void onEntityDecl(void* ctx, const xmlChar*, int, const xmlChar*, const xmlChar*, xmlChar*) {
    refuseDtd(ctx, nullptr);
}

/// A libxml2 message on one line ("Input is not proper UTF-8, indicate
/// encoding ! Bytes: 0xE9 0x74").
std::string oneLine(const char* message) {
    std::string out = message != nullptr ? message : "malformed XML";
    std::replace(out.begin(), out.end(), '\n', ' ');
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

/// The parser context's structured error hook (xmlStructuredErrorFunc; a
/// generic lambda converts to either of its libxml2 2.9 and 2.12 forms).
constexpr auto kOnError = [](void* ctx, auto* error) {
    if (ctx == nullptr || error == nullptr || error->level < XML_ERR_ERROR)
        return;
    ParseState& state = stateOf(ctx);
    if (state.hasError)
        return;
    state.hasError = true;
    state.errorLine = error->line;
    state.errorMessage = oneLine(error->message);
};

std::string lineText(long line) {
    return "line " + std::to_string(line) + ": ";
}

/// `value` in single quotes, cut (on a UTF-8 boundary) when long.
std::string quoted(std::string_view value) {
    constexpr std::size_t kMaxShown = 64;
    if (value.size() <= kMaxShown)
        return "'" + std::string(value) + "'";
    std::size_t cut = kMaxShown;
    while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0U) == 0x80U)
        --cut;
    return "'" + std::string(value.substr(0, cut)) + "...'";
}

bool isXmlSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               auto lower = [](char c) {
                   return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
               };
               return lower(x) == lower(y);
           });
}

/// Session files are UTF-8 (lttng save writes nothing else). Refusing the
/// rest before libxml2 sees it means libxml2 never converts: its conversion
/// errors go to its global handler (stderr), not to the parser context.
/// Refuses UTF-16 and UCS-4 (a byte-order mark, or a NUL among the first
/// four bytes), EBCDIC ("<?xm" in code page 37), and an XML declaration
/// naming another encoding.
void requireUtf8(std::string_view text) {
    auto startsWith = [&](std::string_view prefix) {
        return text.substr(0, prefix.size()) == prefix;
    };
    if (startsWith("\xFE\xFF") || startsWith("\xFF\xFE") || startsWith("\x4C\x6F\xA7\x94") ||
        text.substr(0, 4).find('\0') != std::string_view::npos)
        throw SessionFileError("line 1: the document is not UTF-8, which session files are");
    std::string_view rest = text;
    if (startsWith("\xEF\xBB\xBF"))
        rest.remove_prefix(3);
    if (rest.size() < 6 || rest.substr(0, 5) != "<?xml" || !isXmlSpace(rest[5]))
        return;
    const std::string_view declaration = rest.substr(0, rest.find("?>"));
    std::size_t i = declaration.find("encoding");
    if (i == std::string_view::npos)
        return;
    i += 8;
    while (i < declaration.size() && isXmlSpace(declaration[i]))
        ++i;
    if (i >= declaration.size() || declaration[i] != '=')
        return; // malformed: libxml2 says so
    ++i;
    while (i < declaration.size() && isXmlSpace(declaration[i]))
        ++i;
    if (i >= declaration.size() || (declaration[i] != '"' && declaration[i] != '\''))
        return;
    const std::size_t end = declaration.find(declaration[i], i + 1);
    if (end == std::string_view::npos)
        return;
    const std::string_view encoding = declaration.substr(i + 1, end - i - 1);
    if (!equalsIgnoringCase(encoding, "UTF-8") && !equalsIgnoringCase(encoding, "UTF8"))
        throw SessionFileError("line 1: the document is in " + quoted(encoding) +
                               ", not UTF-8, which session files are");
}

DocPtr parse(std::string_view text) {
    requireUtf8(text);
    ParserCtxtPtr ctxt(xmlNewParserCtxt());
    if (!ctxt || ctxt->sax == nullptr)
        throw std::bad_alloc();
    ParseState state;
    ctxt->_private = &state;
    xmlSAXHandler& sax = *ctxt->sax;
    sax.internalSubset = onSubset;
    sax.externalSubset = onSubset;
    sax.entityDecl = onEntityDecl;
    sax.serror = kOnError;
    // Never the default handlers, which print.
    sax.warning = nullptr;
    sax.error = nullptr;
    sax.fatalError = nullptr;
    // No XML_PARSE_NOENT (entities stay unexpanded), no XML_PARSE_DTDLOAD
    // (nothing external is read), XML_PARSE_NONET (nor fetched); the text is
    // UTF-8 (requireUtf8()), so no declaration switches the decoder.
    const int options = XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR |
                        XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES | XML_PARSE_IGNORE_ENC;
    DocPtr doc(xmlCtxtReadMemory(ctxt.get(), text.empty() ? "" : text.data(),
                                 static_cast<int>(text.size()), nullptr, nullptr, options));
    if (state.sawDtd) {
        std::string what =
            state.dtdRoot.empty() ? "<!DOCTYPE>" : "<!DOCTYPE " + state.dtdRoot + ">";
        throw SessionFileError(lineText(state.dtdLine) + what + ": DTDs are not accepted");
    }
    if (!doc) {
        if (state.hasError)
            throw SessionFileError(lineText(state.errorLine) + state.errorMessage);
        const xmlError* last = xmlCtxtGetLastError(ctxt.get());
        if (last != nullptr && last->message != nullptr)
            throw SessionFileError(lineText(last->line) + oneLine(last->message));
        throw SessionFileError("line 1: not a well-formed XML document");
    }
    if (doc->intSubset != nullptr || doc->extSubset != nullptr)
        throw SessionFileError("line 1: <!DOCTYPE>: DTDs are not accepted");
    return doc;
}

// --- Values --------------------------------------------------------------

std::string trimmed(std::string s) {
    std::size_t end = s.size();
    while (end > 0 && isXmlSpace(s[end - 1]))
        --end;
    std::size_t begin = 0;
    while (begin < end && isXmlSpace(s[begin]))
        ++begin;
    return s.substr(begin, end - begin);
}

bool isBlank(const xmlChar* content) {
    if (content == nullptr)
        return true;
    for (const char* p = chars(content); *p != '\0'; ++p)
        if (!isXmlSpace(*p))
            return false;
    return true;
}

bool allDigits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

constexpr std::array<std::string_view, 2> kOverwriteModes{"DISCARD", "OVERWRITE"};
constexpr std::array<DomainType, 5> kDomainTypes{
    DomainType::Kernel, DomainType::Ust, DomainType::Jul, DomainType::Log4j, DomainType::Python};
constexpr std::array<BufferType, 3> kBufferTypes{BufferType::PerPid, BufferType::PerUid,
                                                 BufferType::Global};
constexpr std::array<LoglevelType, 3> kLoglevelTypes{LoglevelType::All, LoglevelType::Range,
                                                     LoglevelType::Single};

// --- The walk ------------------------------------------------------------

/// The element's name as written ("name", "x:name"; an element in a
/// default namespace shows it: "name xmlns=\"urn:x\"").
std::string nameOf(Node n) {
    std::string name;
    if (n->ns != nullptr && n->ns->prefix != nullptr) {
        name += chars(n->ns->prefix);
        name += ':';
    }
    name += chars(n->name);
    if (n->ns != nullptr && n->ns->prefix == nullptr && n->ns->href != nullptr)
        name += std::string(" xmlns=\"") + chars(n->ns->href) + "\"";
    return name;
}

/// Whether `n` is the schema's element `name` (which has no namespace).
bool is(Node n, std::string_view name) {
    return n->ns == nullptr && chars(n->name) == name;
}

long lineOf(Node n) {
    return xmlGetLineNo(n);
}

SessionFileError error(Node n, std::string_view reason) {
    return SessionFileError(lineText(lineOf(n)) + "<" + nameOf(n) + ">: " + std::string(reason));
}

class Reader {
public:
    ParsedSessions read(const xmlDoc* doc) {
        ParsedSessions out;
        Node root = xmlDocGetRootElement(doc);
        if (root == nullptr)
            throw SessionFileError("line 1: the document has no root element");
        if (!is(root, "sessions"))
            throw error(root, "the root element is not <sessions>");
        children(root, {}, [&](Node c) {
            if (!is(c, "session"))
                return false;
            out.sessions.push_back(session(c));
            return true;
        });
        if (out.sessions.empty())
            throw error(root, "has no <session>");
        out.warnings = std::move(warnings_);
        if (unwarned_ > 0)
            out.warnings.push_back("and " + std::to_string(unwarned_) +
                                   " more unknown elements or stray texts, ignored");
        return out;
    }

private:
    std::vector<std::string> warnings_;
    /// Warnings past kMaxReaderWarnings: counted, not kept (a document of a
    /// million unknown elements must not make a million lines).
    std::size_t unwarned_ = 0;

    void warn(std::string line) {
        if (warnings_.size() < kMaxReaderWarnings)
            warnings_.push_back(std::move(line));
        else
            ++unwarned_;
    }

    void unknown(Node child, Node parent) {
        warn(lineText(lineOf(child)) + "unknown element <" + nameOf(child) + "> in <" +
             nameOf(parent) + "> ignored");
    }

    /// Calls `handle` on each element child of `parent` in document order;
    /// `handle` returns false for an element that has no place there,
    /// which is skipped with a warning. The elements named in `once` (the
    /// members of an xs:all) may appear once at most.
    template <typename Handle>
    void children(Node parent, std::initializer_list<std::string_view> once, Handle&& handle) {
        std::vector<std::string_view> seen;
        for (Node c = parent->children; c != nullptr; c = c->next) {
            if (c->type == XML_ELEMENT_NODE) {
                if (c->ns == nullptr &&
                    std::find(once.begin(), once.end(), chars(c->name)) != once.end()) {
                    std::string_view name = chars(c->name);
                    if (std::find(seen.begin(), seen.end(), name) != seen.end())
                        throw error(c, "appears twice in <" + nameOf(parent) + ">");
                    seen.push_back(name);
                }
                if (!handle(c))
                    unknown(c, parent);
            } else if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) &&
                       !isBlank(c->content)) {
                warn(lineText(lineOf(c)) + "text in <" + nameOf(parent) + "> ignored");
            }
        }
    }

    /// The text of a leaf element, without the whitespace around it.
    std::string text(Node n) {
        std::string s;
        for (Node c = n->children; c != nullptr; c = c->next) {
            if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) &&
                c->content != nullptr)
                s += chars(c->content);
            else if (c->type == XML_ELEMENT_NODE)
                unknown(c, n);
        }
        return trimmed(std::move(s));
    }

    /// `name_type`.
    std::string name(Node n) {
        std::string s = text(n);
        if (s.size() > schema::kMaxNameBytes)
            throw error(n, quoted(s) + " is " + std::to_string(s.size()) +
                               " bytes long, more than the " +
                               std::to_string(schema::kMaxNameBytes) + " a name may have");
        return s;
    }

    bool boolean(Node n) {
        std::string s = text(n);
        if (s == "true" || s == "1")
            return true;
        if (s == "false" || s == "0")
            return false;
        throw error(n, quoted(s) + " is not a boolean (true, false, 1 or 0)");
    }

    /// A decimal xs:integer from 0 to `max`.
    template <typename T>
    T unsignedValue(Node n, T max = std::numeric_limits<T>::max()) {
        std::string s = text(n);
        std::string_view digits = s;
        if (!digits.empty() && digits.front() == '+')
            digits.remove_prefix(1);
        if (!allDigits(digits))
            throw error(n, quoted(s) + " is not an unsigned integer");
        T value{};
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (ec == std::errc::result_out_of_range || value > max)
            throw error(n, quoted(s) + " is out of range (0 to " + std::to_string(max) + ")");
        if (ec != std::errc() || end != digits.data() + digits.size())
            throw error(n, quoted(s) + " is not an unsigned integer");
        return value;
    }

    /// A decimal xs:integer from `min` to `max`.
    int64_t signedValue(Node n, int64_t min, int64_t max) {
        std::string s = text(n);
        std::string_view number = s;
        if (!number.empty() && number.front() == '+')
            number.remove_prefix(1);
        std::string_view digits = number;
        if (!digits.empty() && digits.front() == '-' && number.data() == s.data())
            digits.remove_prefix(1);
        if (!allDigits(digits))
            throw error(n, quoted(s) + " is not an integer");
        int64_t value = 0;
        auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (ec == std::errc::result_out_of_range || value < min || value > max)
            throw error(n, quoted(s) + " is out of range (" + std::to_string(min) + " to " +
                               std::to_string(max) + ")");
        if (ec != std::errc() || end != number.data() + number.size())
            throw error(n, quoted(s) + " is not an integer");
        return value;
    }

    int64_t int64Value(Node n) {
        return signedValue(n, std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max());
    }

    /// One of the enumeration `names`, as written.
    template <std::size_t N>
    std::string oneOf(Node n, const std::array<std::string_view, N>& names) {
        std::string s = text(n);
        if (!schema::isOneOf(s, names))
            throw error(n, quoted(s) + " is not " + schema::listOf(names));
        return s;
    }

    /// One of the data model's enumerators, by its toString() name.
    template <typename E, std::size_t N>
    E enumerator(Node n, const std::array<E, N>& values) {
        std::array<std::string_view, N> names{};
        for (std::size_t i = 0; i < N; ++i)
            names[i] = toString(values[i]);
        std::string s = oneOf(n, names);
        for (std::size_t i = 0; i < N; ++i)
            if (s == names[i])
                return values[i];
        throw error(n, quoted(s) + " is not " + schema::listOf(names)); // not reached
    }

    // `session_type`.
    SessionDescription session(Node n) {
        SessionDescription s;
        bool hasName = false;
        children(n, {"name", "shared_memory_path", "domains", "started", "attributes", "output"},
                 [&](Node c) {
                     if (is(c, "name")) {
                         s.name = name(c);
                         if (s.name.empty())
                             throw error(c, "a session's name may not be empty");
                         hasName = true;
                     } else if (is(c, "shared_memory_path")) {
                         s.sharedMemoryPath = text(c);
                     } else if (is(c, "domains")) {
                         children(c, {}, [&](Node d) {
                             if (!is(d, "domain"))
                                 return false;
                             if (std::optional<Domain> known = domain(d))
                                 s.domains.push_back(std::move(*known));
                             return true;
                         });
                     } else if (is(c, "started")) {
                         s.started = boolean(c);
                     } else if (is(c, "attributes")) {
                         attributes(c, s);
                     } else if (is(c, "output")) {
                         output(c, s);
                     } else {
                         return false;
                     }
                     return true;
                 });
        if (!hasName)
            throw error(n, "has no <name>");
        return s;
    }

    // `session_attributes_type`.
    void attributes(Node n, SessionDescription& s) {
        children(n, {"snapshot_mode", "live_timer_interval", "rotation_schedules"}, [&](Node c) {
            if (is(c, "snapshot_mode"))
                s.snapshotMode = boolean(c);
            else if (is(c, "live_timer_interval"))
                s.liveTimerUs = unsignedValue<uint32_t>(c);
            else if (is(c, "rotation_schedules"))
                rotationSchedules(c, s);
            else
                return false;
            return true;
        });
    }

    // `rotation_schedule_type`.
    void rotationSchedules(Node n, SessionDescription& s) {
        children(n, {}, [&](Node c) {
            const bool periodic = is(c, "periodic");
            if (!periodic && !is(c, "size_threshold"))
                return false;
            const char* member = periodic ? "time_us" : "bytes";
            std::optional<uint64_t> value;
            children(c, {member}, [&](Node v) {
                if (!is(v, member))
                    return false;
                value = unsignedValue<uint64_t>(v);
                return true;
            });
            if (!value)
                throw error(c, std::string("has no <") + member + ">");
            (periodic ? s.periodicRotationsUs : s.sizeRotationsBytes).push_back(*value);
            return true;
        });
    }

    // `session_output_type`.
    void output(Node n, SessionDescription& s) {
        bool any = false;
        children(n, {"snapshot_outputs", "consumer_output"}, [&](Node c) {
            const bool snapshot = is(c, "snapshot_outputs");
            if (!snapshot && !is(c, "consumer_output"))
                return false;
            if (any)
                throw error(c, "an <output> holds <snapshot_outputs> or <consumer_output>, not "
                               "both");
            any = true;
            if (!snapshot) {
                s.output = consumerOutput(c);
                return true;
            }
            children(c, {}, [&](Node o) {
                if (!is(o, "output"))
                    return false;
                s.snapshotOutputs.push_back(snapshotOutput(o));
                return true;
            });
            return true;
        });
    }

    // `snapshot_output_type`.
    SnapshotOutput snapshotOutput(Node n) {
        SnapshotOutput o;
        bool hasName = false;
        bool hasMaxSize = false;
        bool hasOutput = false;
        children(n, {"name", "max_size", "consumer_output"}, [&](Node c) {
            if (is(c, "name")) {
                o.name = name(c);
                hasName = true;
            } else if (is(c, "max_size")) {
                o.maxSize = unsignedValue<uint64_t>(c);
                hasMaxSize = true;
            } else if (is(c, "consumer_output")) {
                o.output = consumerOutput(c);
                hasOutput = true;
            } else {
                return false;
            }
            return true;
        });
        if (!hasName)
            throw error(n, "has no <name>");
        if (!hasMaxSize)
            throw error(n, "has no <max_size>");
        if (!hasOutput)
            throw error(n, "has no <consumer_output>");
        return o;
    }

    // `consumer_output_type`.
    ConsumerOutput consumerOutput(Node n) {
        ConsumerOutput o;
        bool hasDestination = false;
        children(n, {"enabled", "destination"}, [&](Node c) {
            if (is(c, "enabled")) {
                o.enabled = boolean(c);
            } else if (is(c, "destination")) {
                destination(c, o);
                hasDestination = true;
            } else {
                return false;
            }
            return true;
        });
        if (!hasDestination)
            throw error(n, "has no <destination>");
        return o;
    }

    // `destination_type`.
    void destination(Node n, ConsumerOutput& o) {
        bool any = false;
        children(n, {"path", "net_output"}, [&](Node c) {
            const bool path = is(c, "path");
            if (!path && !is(c, "net_output"))
                return false;
            if (any)
                throw error(c, "a <destination> holds <path> or <net_output>, not both");
            any = true;
            if (path)
                o.path = text(c);
            else
                netOutput(c, o);
            return true;
        });
        if (!any)
            throw error(n, "has neither <path> nor <net_output>");
    }

    // `net_output_type`.
    void netOutput(Node n, ConsumerOutput& o) {
        children(n, {"control_uri", "data_uri"}, [&](Node c) {
            if (is(c, "control_uri"))
                o.controlUri = text(c);
            else if (is(c, "data_uri"))
                o.dataUri = text(c);
            else
                return false;
            return true;
        });
        if (!o.controlUri)
            throw error(n, "has no <control_uri>");
        if (!o.dataUri)
            throw error(n, "has no <data_uri>");
    }

    // `domain_type`. A domain of a type the schema we know lacks (LTTng
    // 2.14's LOG4J2, later ones) is read as any other, then left out with a
    // warning, as an unknown element is: nullopt.
    std::optional<Domain> domain(Node n) {
        Domain d;
        bool hasType = false;
        bool hasBufferType = false;
        std::optional<std::string> unknownType;
        children(n, {"type", "buffer_type", "channels", "process_attr_trackers", "trackers"},
                 [&](Node c) {
                     if (is(c, "type")) {
                         const std::string type = text(c);
                         if (std::none_of(kDomainTypes.begin(), kDomainTypes.end(),
                                          [&](DomainType t) { return type == toString(t); }))
                             unknownType = type;
                         else
                             d.type = enumerator(c, kDomainTypes);
                         hasType = true;
                     } else if (is(c, "buffer_type")) {
                         d.bufferType = enumerator(c, kBufferTypes);
                         hasBufferType = true;
                     } else if (is(c, "channels")) {
                         children(c, {}, [&](Node ch) {
                             if (!is(ch, "channel"))
                                 return false;
                             d.channels.push_back(channel(ch));
                             return true;
                         });
                     } else if (is(c, "process_attr_trackers")) {
                         processAttrTrackers(c, d);
                     } else if (is(c, "trackers")) {
                         legacyTrackers(c, d);
                     } else {
                         return false;
                     }
                     return true;
                 });
        if (!hasType)
            throw error(n, "has no <type>");
        if (!hasBufferType)
            throw error(n, "has no <buffer_type>");
        if (unknownType) {
            warn(lineText(lineOf(n)) + "domain of type " + quoted(*unknownType) +
                 " left out: tracectl knows " + toString(DomainType::Kernel) + ", " +
                 toString(DomainType::Ust) + ", " + toString(DomainType::Jul) + ", " +
                 toString(DomainType::Log4j) + " and " + toString(DomainType::Python));
            return std::nullopt;
        }
        return d;
    }

    // `process_attr_tracker_type`.
    void processAttrTrackers(Node n, Domain& d) {
        children(n,
                 {"pid_process_attr_tracker", "vpid_process_attr_tracker",
                  "uid_process_attr_tracker", "vuid_process_attr_tracker",
                  "gid_process_attr_tracker", "vgid_process_attr_tracker"},
                 [&](Node c) {
                     for (std::string_view attribute : schema::kTrackerAttributes) {
                         if (is(c, std::string(attribute) + "_process_attr_tracker")) {
                             d.trackers.push_back(tracker(c, attribute));
                             return true;
                         }
                     }
                     return false;
                 });
    }

    // `*_process_attr_tracker_type`. Without <process_attr_values>: an
    // empty inclusion set.
    ProcessAttrTracker tracker(Node n, std::string_view attribute) {
        ProcessAttrTracker t{std::string(attribute), {}};
        children(n, {"process_attr_values"}, [&](Node values) {
            if (!is(values, "process_attr_values"))
                return false;
            children(values, {}, [&](Node v) {
                if (!is(v, attribute))
                    return false;
                t.values.push_back(trackerValue(v, attribute));
                return true;
            });
            return true;
        });
        return t;
    }

    // `*_value_type`.
    TrackerValue trackerValue(Node n, std::string_view attribute) {
        TrackerValue v;
        const bool takesNames = schema::trackerTakesNames(attribute);
        children(n, {"id", "name"}, [&](Node c) {
            if (is(c, "id"))
                v.id = int64Value(c);
            else if (takesNames && is(c, "name"))
                v.name = text(c);
            else
                return false;
            return true;
        });
        if (v.id && v.name)
            throw error(n, "has both <id> and <name>");
        if (!v.id && !v.name)
            throw error(n, takesNames ? "has neither <id> nor <name>" : "has no <id>");
        return v;
    }

    // `trackers_type` (legacy).
    void legacyTrackers(Node n, Domain& d) {
        children(n, {}, [&](Node tracker) {
            if (!is(tracker, "pid_tracker"))
                return false;
            if (!d.legacyPidTargets)
                d.legacyPidTargets.emplace(); // present: an inclusion set, maybe empty
            children(tracker, {"targets"}, [&](Node targets) {
                if (!is(targets, "targets"))
                    return false;
                children(targets, {}, [&](Node target) {
                    if (!is(target, "pid_target"))
                        return false;
                    std::optional<int64_t> pid;
                    children(target, {"pid"}, [&](Node p) {
                        if (!is(p, "pid"))
                            return false;
                        pid = int64Value(p);
                        return true;
                    });
                    if (!pid)
                        throw error(target, "has no <pid>");
                    d.legacyPidTargets->push_back(*pid);
                    return true;
                });
                return true;
            });
            return true;
        });
    }

    // `channel_type`.
    Channel channel(Node n) {
        Channel ch;
        bool hasName = false;
        children(n,
                 {"name", "enabled", "overwrite_mode", "subbuffer_size", "subbuffer_count",
                  "switch_timer_interval", "read_timer_interval", "blocking_timeout", "output_type",
                  "tracefile_size", "tracefile_count", "live_timer_interval", "events", "contexts",
                  "monitor_timer_interval"},
                 [&](Node c) {
                     if (is(c, "name")) {
                         ch.name = name(c);
                         hasName = true;
                     } else if (is(c, "enabled")) {
                         ch.enabled = boolean(c);
                     } else if (is(c, "overwrite_mode")) {
                         ch.overwrite = oneOf(c, kOverwriteModes) == "OVERWRITE";
                     } else if (is(c, "subbuffer_size")) {
                         ch.subbufSize = unsignedValue<uint64_t>(c);
                     } else if (is(c, "subbuffer_count")) {
                         ch.subbufCount = unsignedValue<uint64_t>(c);
                     } else if (is(c, "switch_timer_interval")) {
                         ch.switchTimerUs = unsignedValue<uint32_t>(c);
                     } else if (is(c, "read_timer_interval")) {
                         ch.readTimerUs = unsignedValue<uint32_t>(c);
                     } else if (is(c, "blocking_timeout")) {
                         ch.blockingTimeoutUs = signedValue(c, schema::kMinBlockingTimeoutUs,
                                                            schema::kMaxBlockingTimeoutUs);
                     } else if (is(c, "output_type")) {
                         ch.outputType = oneOf(c, schema::kOutputTypes);
                     } else if (is(c, "tracefile_size")) {
                         ch.tracefileSize = unsignedValue<uint64_t>(c);
                     } else if (is(c, "tracefile_count")) {
                         ch.tracefileCount = unsignedValue<uint64_t>(c);
                     } else if (is(c, "live_timer_interval")) {
                         ch.liveTimerUs = unsignedValue<uint32_t>(c);
                     } else if (is(c, "monitor_timer_interval")) {
                         ch.monitorTimerUs = unsignedValue<uint64_t>(c);
                     } else if (is(c, "events")) {
                         children(c, {}, [&](Node e) {
                             if (!is(e, "event"))
                                 return false;
                             ch.events.push_back(event(e));
                             return true;
                         });
                     } else if (is(c, "contexts")) {
                         children(c, {}, [&](Node x) {
                             if (!is(x, "context"))
                                 return false;
                             ch.contexts.push_back(context(x));
                             return true;
                         });
                     } else {
                         return false;
                     }
                     return true;
                 });
        if (!hasName)
            throw error(n, "has no <name>");
        return ch;
    }

    // `event_type`.
    Event event(Node n) {
        Event e;
        children(n,
                 {"name", "enabled", "type", "loglevel_type", "loglevel", "filter", "exclusions",
                  "attributes"},
                 [&](Node c) {
                     if (is(c, "name")) {
                         e.name = name(c);
                     } else if (is(c, "enabled")) {
                         e.enabled = boolean(c);
                     } else if (is(c, "type")) {
                         e.type = oneOf(c, schema::kEventTypes);
                     } else if (is(c, "loglevel_type")) {
                         e.loglevelType = enumerator(c, kLoglevelTypes);
                     } else if (is(c, "loglevel")) {
                         e.loglevel = static_cast<int32_t>(
                             signedValue(c, std::numeric_limits<int32_t>::min(),
                                         std::numeric_limits<int32_t>::max()));
                     } else if (is(c, "filter")) {
                         e.filter = text(c);
                     } else if (is(c, "exclusions")) {
                         children(c, {}, [&](Node x) {
                             if (!is(x, "exclusion"))
                                 return false;
                             e.exclusions.push_back(text(x));
                             return true;
                         });
                     } else if (is(c, "attributes")) {
                         // Kept as a fact only: its content is not read.
                         e.hasProbeAttributes = true;
                     } else {
                         return false;
                     }
                     return true;
                 });
        return e;
    }

    // `event_context_type`.
    Context context(Node n) {
        Context x;
        bool any = false;
        children(n, {"type", "perf", "app"}, [&](Node c) {
            const bool known = is(c, "type") || is(c, "perf") || is(c, "app");
            if (!known)
                return false;
            if (any)
                throw error(c, "a <context> holds one of <type>, <perf> or <app>");
            any = true;
            if (is(c, "type"))
                x.type = oneOf(c, schema::kContextTypes);
            else if (is(c, "perf"))
                x.perf = perfContext(c);
            else
                x.app = appContext(c);
            return true;
        });
        if (!any)
            throw error(n, "has none of <type>, <perf> or <app>");
        return x;
    }

    // `event_perf_context_type`.
    PerfContext perfContext(Node n) {
        PerfContext p;
        bool hasType = false;
        bool hasConfig = false;
        bool hasName = false;
        children(n, {"type", "config", "name"}, [&](Node c) {
            if (is(c, "type")) {
                p.type = unsignedValue<uint32_t>(c);
                hasType = true;
            } else if (is(c, "config")) {
                p.config = unsignedValue<uint64_t>(c);
                hasConfig = true;
            } else if (is(c, "name")) {
                p.name = name(c);
                hasName = true;
            } else {
                return false;
            }
            return true;
        });
        if (!hasType)
            throw error(n, "has no <type>");
        if (!hasConfig)
            throw error(n, "has no <config>");
        if (!hasName)
            throw error(n, "has no <name>");
        return p;
    }

    // `event_app_context_type`.
    AppContext appContext(Node n) {
        std::optional<std::string> provider;
        std::optional<std::string> context;
        children(n, {"provider_name", "ctx_name"}, [&](Node c) {
            if (is(c, "provider_name"))
                provider = text(c);
            else if (is(c, "ctx_name"))
                context = text(c);
            else
                return false;
            return true;
        });
        if (!provider)
            throw error(n, "has no <provider_name>");
        if (!context)
            throw error(n, "has no <ctx_name>");
        return AppContext{*provider, *context};
    }
};

} // namespace

ParsedSessions readSessionFile(std::string_view text) {
    if (text.size() > kMaxSessionFileBytes)
        throw SessionFileError(
            "the document is " + std::to_string(text.size()) + " bytes long, more than the " +
            std::to_string(kMaxSessionFileBytes) + " bytes a session file may have");
    DocPtr doc = parse(text);
    return Reader().read(doc.get());
}

} // namespace tracectl::session_file
