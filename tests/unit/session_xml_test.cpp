// LTTng 2.13's session files (src/session_file): lttng save's own files
// (data/session_files) read with their values, written back byte for byte,
// the writer's documents validated against lttng-tools' session.xsd, and
// the documents the reader refuses, each with the line and element it names.
#include "session_file/session_xml.hpp"
#include "test_data_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

using namespace tracectl::session_file;

namespace {

constexpr const char* kSchemaPath = "/usr/share/xml/lttng/session.xsd";

std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot open " + path.string() + " (set SESSION_FILES_DIR)");
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

/// Where lttng save's sample files are ($SESSION_FILES_DIR under meson test).
std::filesystem::path samplesDir() {
    return tracectl::test::testDataDir("SESSION_FILES_DIR", "session_files");
}

/// One of lttng save's files: "s1", "sn", "lv" or "nt".
std::string sample(const std::string& name) {
    return readText(samplesDir() / ("lttng-2.13-" + name + ".lttng"));
}

/// readSessionFile()'s SessionFileError message for `text` ("" if it
/// reads).
std::string errorOf(std::string_view text) {
    try {
        readSessionFile(text);
    } catch (const SessionFileError& e) {
        return e.what();
    }
    return "";
}

/// `text` with the one occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    if (at == std::string::npos || text.find(from, at + 1) != std::string::npos)
        throw std::logic_error("not exactly one '" + from + "'");
    return text.replace(at, from.size(), to);
}

/// A document of one session whose body is `body`.
std::string oneSession(const std::string& body) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sessions>\n<session>\n" + body +
           "\n</session>\n</sessions>\n";
}

// --- xmlSchema -----------------------------------------------------------

struct SchemaParserCtxtDeleter {
    void operator()(xmlSchemaParserCtxt* c) const noexcept { xmlSchemaFreeParserCtxt(c); }
};
struct SchemaDeleter {
    void operator()(xmlSchema* s) const noexcept { xmlSchemaFree(s); }
};
struct SchemaValidCtxtDeleter {
    void operator()(xmlSchemaValidCtxt* c) const noexcept { xmlSchemaFreeValidCtxt(c); }
};
struct DocDeleter {
    void operator()(xmlDoc* d) const noexcept { xmlFreeDoc(d); }
};

/// Appends each libxml2 error to the std::string at `ctx`.
constexpr auto kCollectError = [](void* ctx, auto* error) {
    auto& out = *static_cast<std::string*>(ctx);
    out += "line " + std::to_string(error->line) + ": " +
           (error->message != nullptr ? error->message : "?");
};

/// The schema's complaints about `document` ("" when it is valid).
std::string schemaErrors(const std::string& document) {
    std::string errors;
    std::unique_ptr<xmlSchemaParserCtxt, SchemaParserCtxtDeleter> parser(
        xmlSchemaNewParserCtxt(kSchemaPath));
    if (!parser)
        return "cannot read the schema";
    xmlSchemaSetParserStructuredErrors(parser.get(), kCollectError, &errors);
    std::unique_ptr<xmlSchema, SchemaDeleter> schema(xmlSchemaParse(parser.get()));
    if (!schema)
        return "cannot parse the schema: " + errors;
    std::unique_ptr<xmlSchemaValidCtxt, SchemaValidCtxtDeleter> validator(
        xmlSchemaNewValidCtxt(schema.get()));
    if (!validator)
        return "cannot make a schema validator";
    xmlSchemaSetValidStructuredErrors(validator.get(), kCollectError, &errors);
    std::unique_ptr<xmlDoc, DocDeleter> doc(
        xmlReadMemory(document.data(), static_cast<int>(document.size()), nullptr, nullptr,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    if (!doc)
        return "not well-formed";
    const int rc = xmlSchemaValidateDoc(validator.get(), doc.get());
    if (rc != 0 && errors.empty())
        return "xmlSchemaValidateDoc: " + std::to_string(rc);
    return errors;
}

bool haveSchema() {
    return std::filesystem::exists(kSchemaPath);
}

// --- A description with every field -----------------------------------

Event tracepoint(std::string name) {
    Event e;
    e.name = std::move(name);
    return e;
}

/// Two sessions between them use every field the writer writes: a
/// snapshot session (kernel domain, SPLICE, a global buffer, every
/// tracker with ids and names, legacy pid targets, perf and app contexts,
/// blocking timeout -1, snapshot outputs to a path and a relay) and a live
/// network session.
std::vector<SessionDescription> everything() {
    SessionDescription s;
    s.name = "every-field";
    s.sharedMemoryPath = "/dev/shm/every field";
    s.started = true;
    s.snapshotMode = true;
    s.periodicRotationsUs = {1000000, 2000000};
    s.sizeRotationsBytes = {1048576};

    Domain kernel;
    kernel.type = DomainType::Kernel;
    kernel.bufferType = BufferType::Global;
    Channel k;
    k.name = "kchan";
    k.enabled = false;
    k.overwrite = true;
    k.subbufSize = 262144;
    k.subbufCount = 2;
    k.switchTimerUs = 5;
    k.readTimerUs = 200000;
    k.blockingTimeoutUs = -1;
    k.outputType = "SPLICE";
    k.tracefileSize = 1 << 24;
    k.tracefileCount = 3;
    k.monitorTimerUs = 1000000;
    Event openat = tracepoint("openat");
    openat.type = "SYSCALL";
    Event sched = tracepoint("sched_switch");
    sched.enabled = false;
    sched.filter = "prev_tid == 0 && next_comm != \"a<b>&'c'\"";
    Event all = tracepoint("");
    all.type = "ALL";
    k.events = {openat, sched, all};
    Context tid;
    tid.type = "TID";
    Context perf;
    perf.perf = PerfContext{0, 1, "perf_cpu_instructions"};
    k.contexts = {tid, perf};
    kernel.channels = {k};
    kernel.trackers = {
        {"pid", {{1, std::nullopt}, {2, std::nullopt}}},
        {"vpid", {}},
        {"uid", {{std::nullopt, "root"}, {1000, std::nullopt}}},
        {"vuid", {{std::nullopt, "nobody"}}},
        {"gid", {{std::nullopt, "adm"}}},
        {"vgid", {{0, std::nullopt}}},
    };
    kernel.legacyPidTargets = std::vector<int64_t>{42, -1};

    Domain ust;
    ust.type = DomainType::Ust;
    ust.bufferType = BufferType::PerPid;
    Channel u;
    u.name = "uchan";
    u.liveTimerUs = 0;
    Event range = tracepoint("app:*");
    range.loglevelType = LoglevelType::Range;
    range.loglevel = 4;
    range.exclusions = {"app:noisy", "app:chatty"};
    Event single = tracepoint("app:one");
    single.loglevelType = LoglevelType::Single;
    single.loglevel = -2147483647 - 1;
    u.events = {range, single};
    Context app;
    app.app = AppContext{"myprovider", "my ctx"};
    Context vpid;
    vpid.type = "VPID";
    u.contexts = {app, vpid};
    Channel quiet;
    quiet.name = "quiet";
    ust.channels = {u, quiet};
    ust.trackers = {{"vuid", {{std::nullopt, "élodie"}, {0, std::nullopt}}}};

    Domain jul;
    jul.type = DomainType::Jul;
    Domain python;
    python.type = DomainType::Python;
    python.bufferType = BufferType::PerUid;
    s.domains = {kernel, ust, jul, python};

    SnapshotOutput local{"local", 0, ConsumerOutput{true, "/tmp/snap", {}, {}}};
    SnapshotOutput relay{
        "relay", 1 << 30,
        ConsumerOutput{false, std::nullopt, "tcp4://10.0.0.1:5342/", "tcp6://[::1]:5343/"}};
    s.snapshotOutputs = {local, relay};

    SessionDescription live;
    live.name = "live";
    live.liveTimerUs = 2000000;
    live.output = ConsumerOutput{true, std::nullopt, "net://relay", "net://relay:5343"};
    Domain log4j;
    log4j.type = DomainType::Log4j;
    log4j.bufferType = BufferType::PerUid;
    Channel lc;
    lc.name = "lchan";
    lc.blockingTimeoutUs = 2147483648000;
    lc.liveTimerUs = 4294967295U;
    lc.events = {tracepoint("org.example.Logger")};
    log4j.channels = {lc};
    live.domains = {log4j};

    return {s, live};
}

// --- Reading lttng save's files ------------------------------------------

TEST(SessionXmlRead, NormalSession) {
    ParsedSessions parsed = readSessionFile(sample("s1"));
    EXPECT_TRUE(parsed.warnings.empty());
    ASSERT_EQ(parsed.sessions.size(), 1U);
    const SessionDescription& s = parsed.sessions[0];
    EXPECT_EQ(s.name, "s1");
    EXPECT_FALSE(s.sharedMemoryPath);
    EXPECT_TRUE(s.started);
    EXPECT_FALSE(s.snapshotMode);
    EXPECT_EQ(s.liveTimerUs, 0U);
    EXPECT_EQ(s.periodicRotationsUs, std::vector<uint64_t>{10000000});
    EXPECT_EQ(s.sizeRotationsBytes, std::vector<uint64_t>{4194304});
    ASSERT_TRUE(s.output);
    EXPECT_TRUE(s.output->enabled);
    EXPECT_EQ(s.output->path, "/tmp/lh/out");
    EXPECT_FALSE(s.output->controlUri);
    EXPECT_FALSE(s.output->dataUri);
    EXPECT_TRUE(s.snapshotOutputs.empty());

    ASSERT_EQ(s.domains.size(), 4U);
    EXPECT_EQ(s.domains[0].type, DomainType::Ust);
    EXPECT_EQ(s.domains[1].type, DomainType::Jul);
    EXPECT_EQ(s.domains[2].type, DomainType::Log4j);
    EXPECT_EQ(s.domains[3].type, DomainType::Python);
    for (const Domain& d : s.domains)
        EXPECT_EQ(d.bufferType, BufferType::PerUid);
    for (std::size_t i = 1; i < 4; ++i) {
        EXPECT_TRUE(s.domains[i].channels.empty());
        EXPECT_TRUE(s.domains[i].trackers.empty());
    }

    const Domain& ust = s.domains[0];
    EXPECT_FALSE(ust.legacyPidTargets);
    ASSERT_EQ(ust.trackers.size(), 1U);
    EXPECT_EQ(ust.trackers[0].attribute, "vpid");
    ASSERT_EQ(ust.trackers[0].values.size(), 2U);
    EXPECT_EQ(ust.trackers[0].values[0].id, 13);
    EXPECT_EQ(ust.trackers[0].values[1].id, 12);
    EXPECT_FALSE(ust.trackers[0].values[0].name);

    ASSERT_EQ(ust.channels.size(), 2U);
    const Channel& b = ust.channels[0];
    EXPECT_EQ(b.name, "chB");
    EXPECT_TRUE(b.enabled);
    EXPECT_FALSE(b.overwrite);
    EXPECT_EQ(b.subbufSize, 524288U);
    EXPECT_EQ(b.subbufCount, 4U);
    EXPECT_EQ(b.switchTimerUs, 0U);
    EXPECT_EQ(b.readTimerUs, 0U);
    EXPECT_EQ(b.outputType, "MMAP");
    EXPECT_EQ(b.blockingTimeoutUs, 0);
    EXPECT_EQ(b.monitorTimerUs, 1000000U);
    EXPECT_EQ(b.tracefileSize, 0U);
    EXPECT_EQ(b.tracefileCount, 0U);
    EXPECT_EQ(b.liveTimerUs, 0U);
    EXPECT_TRUE(b.contexts.empty());
    ASSERT_EQ(b.events.size(), 1U);
    EXPECT_EQ(b.events[0].name, "a:b");
    EXPECT_TRUE(b.events[0].enabled);
    EXPECT_EQ(b.events[0].type, "TRACEPOINT");
    EXPECT_EQ(b.events[0].loglevelType, LoglevelType::Single);
    EXPECT_EQ(b.events[0].loglevel, 14);
    EXPECT_FALSE(b.events[0].filter);
    EXPECT_TRUE(b.events[0].exclusions.empty());
    EXPECT_FALSE(b.events[0].hasProbeAttributes);

    const Channel& a = ust.channels[1];
    EXPECT_EQ(a.name, "chA");
    EXPECT_TRUE(a.overwrite);
    EXPECT_EQ(a.subbufSize, 8192U);
    EXPECT_EQ(a.subbufCount, 8U);
    EXPECT_EQ(a.switchTimerUs, 1000U);
    ASSERT_EQ(a.events.size(), 1U);
    const Event& e = a.events[0];
    EXPECT_EQ(e.name, "tp:*");
    EXPECT_EQ(e.loglevelType, LoglevelType::Range);
    EXPECT_EQ(e.loglevel, 6);
    EXPECT_EQ(e.filter, "x > 3");
    EXPECT_EQ(e.exclusions, (std::vector<std::string>{"tp:bad", "tp:worse"}));
    ASSERT_EQ(a.contexts.size(), 2U);
    EXPECT_EQ(a.contexts[0].type, "VPID");
    EXPECT_EQ(a.contexts[1].type, "PROCNAME");
    EXPECT_FALSE(a.contexts[0].perf);
    EXPECT_FALSE(a.contexts[0].app);
}

TEST(SessionXmlRead, SnapshotSession) {
    ParsedSessions parsed = readSessionFile(sample("sn"));
    EXPECT_TRUE(parsed.warnings.empty());
    ASSERT_EQ(parsed.sessions.size(), 1U);
    const SessionDescription& s = parsed.sessions[0];
    EXPECT_EQ(s.name, "sn");
    EXPECT_TRUE(s.snapshotMode);
    EXPECT_FALSE(s.started);
    EXPECT_FALSE(s.output);
    ASSERT_EQ(s.snapshotOutputs.size(), 1U);
    EXPECT_EQ(s.snapshotOutputs[0].name, "snapshot-1");
    EXPECT_EQ(s.snapshotOutputs[0].maxSize, 0U);
    EXPECT_TRUE(s.snapshotOutputs[0].output.enabled);
    EXPECT_EQ(s.snapshotOutputs[0].output.path, "/tmp/lh/snap");
    EXPECT_FALSE(s.snapshotOutputs[0].output.controlUri);
    ASSERT_EQ(s.domains.size(), 4U);
    ASSERT_EQ(s.domains[0].channels.size(), 1U);
    EXPECT_TRUE(s.domains[0].channels[0].overwrite);
    EXPECT_EQ(s.domains[0].channels[0].events[0].name, "*");
    EXPECT_EQ(s.domains[0].channels[0].events[0].loglevelType, LoglevelType::All);
    EXPECT_EQ(s.domains[0].channels[0].events[0].loglevel, -1);
}

TEST(SessionXmlRead, LiveSession) {
    ParsedSessions parsed = readSessionFile(sample("lv"));
    ASSERT_EQ(parsed.sessions.size(), 1U);
    const SessionDescription& s = parsed.sessions[0];
    EXPECT_EQ(s.name, "lv");
    EXPECT_EQ(s.liveTimerUs, 2000000U);
    EXPECT_FALSE(s.snapshotMode);
    EXPECT_EQ(s.domains[0].channels[0].liveTimerUs, 2000000U);
    ASSERT_TRUE(s.output);
    EXPECT_FALSE(s.output->path);
    EXPECT_EQ(s.output->controlUri, "tcp4://127.0.0.1:5342/");
    EXPECT_EQ(s.output->dataUri, "tcp4://127.0.0.1:5343/");
}

TEST(SessionXmlRead, NetworkSession) {
    ParsedSessions parsed = readSessionFile(sample("nt"));
    ASSERT_EQ(parsed.sessions.size(), 1U);
    const SessionDescription& s = parsed.sessions[0];
    EXPECT_EQ(s.name, "nt");
    EXPECT_EQ(s.liveTimerUs, 0U);
    EXPECT_EQ(s.domains[0].channels[0].liveTimerUs, 0U);
    EXPECT_TRUE(s.periodicRotationsUs.empty());
    ASSERT_TRUE(s.output);
    EXPECT_TRUE(s.output->enabled);
    EXPECT_EQ(s.output->controlUri, "tcp4://127.0.0.1:5342/");
    EXPECT_EQ(s.output->dataUri, "tcp4://127.0.0.1:5343/");
}

// --- Writing -------------------------------------------------------------

class LttngFile : public testing::TestWithParam<std::string> {};

TEST_P(LttngFile, WritesBackByteForByte) {
    const std::string text = sample(GetParam());
    EXPECT_EQ(writeSessionFile(readSessionFile(text).sessions), text);
}

TEST_P(LttngFile, WrittenDocumentIsSchemaValid) {
    if (!haveSchema())
        GTEST_SKIP() << kSchemaPath << " is absent (Debian's lttng-tools ships it)";
    EXPECT_EQ(schemaErrors(sample(GetParam())), "") << "the sample itself";
    EXPECT_EQ(schemaErrors(writeSessionFile(readSessionFile(sample(GetParam())).sessions)), "");
}

INSTANTIATE_TEST_SUITE_P(SessionXml, LttngFile, testing::Values("s1", "sn", "lv", "nt"));

TEST(SessionXmlWrite, EveryFieldIsSchemaValid) {
    if (!haveSchema())
        GTEST_SKIP() << kSchemaPath << " is absent (Debian's lttng-tools ships it)";
    const std::string text = writeSessionFile(everything());
    EXPECT_EQ(schemaErrors(text), "") << text;
}

TEST(SessionXmlWrite, EveryFieldReadsBack) {
    const std::vector<SessionDescription> sessions = everything();
    const std::string text = writeSessionFile(sessions);
    ParsedSessions parsed = readSessionFile(text);
    EXPECT_TRUE(parsed.warnings.empty());
    EXPECT_EQ(parsed.sessions, sessions) << text;
    EXPECT_EQ(writeSessionFile(parsed.sessions), text);
}

TEST(SessionXmlWrite, Layout) {
    const std::string text = writeSessionFile(everything());
    EXPECT_EQ(
        text.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sessions>\n\t<session>\n", 0), 0U);
    EXPECT_EQ(text.back(), '\n');
    EXPECT_NE(text.find("\t\t<shared_memory_path>/dev/shm/every field</shared_memory_path>\n"),
              std::string::npos);
    // Escaped by libxml2, as lttng save does.
    EXPECT_NE(
        text.find("<filter>prev_tid == 0 &amp;&amp; next_comm != &quot;a&lt;b&gt;&amp;'c'&quot;"
                  "</filter>"),
        std::string::npos);
    EXPECT_NE(text.find("<output_type>SPLICE</output_type>\n\t\t\t\t\t\t<blocking_timeout>-1<"),
              std::string::npos);
    EXPECT_NE(text.find("<pid_process_attr_tracker>\n\t\t\t\t\t\t<process_attr_values>\n"
                        "\t\t\t\t\t\t\t<pid>\n\t\t\t\t\t\t\t\t<id>1</id>\n"),
              std::string::npos);
    EXPECT_NE(text.find("<uid>\n\t\t\t\t\t\t\t\t<name>root</name>\n"), std::string::npos);
    EXPECT_NE(text.find("<vpid_process_attr_tracker>\n\t\t\t\t\t\t<process_attr_values/>\n"),
              std::string::npos);
    EXPECT_NE(text.find("<trackers>\n\t\t\t\t\t<pid_tracker>\n\t\t\t\t\t\t<targets>\n"
                        "\t\t\t\t\t\t\t<pid_target>\n\t\t\t\t\t\t\t\t<pid>42</pid>\n"),
              std::string::npos);
    // An agent domain without trackers has no <process_attr_trackers>; the
    // quiet channel has <events/> and no <subbuffer_size>.
    EXPECT_NE(text.find("<type>JUL</type>\n\t\t\t\t<buffer_type>PER_UID</buffer_type>\n"
                        "\t\t\t\t<channels/>\n\t\t\t</domain>"),
              std::string::npos);
    EXPECT_NE(text.find("<name>quiet</name>\n\t\t\t\t\t\t<enabled>true</enabled>\n"
                        "\t\t\t\t\t\t<overwrite_mode>DISCARD</overwrite_mode>\n"
                        "\t\t\t\t\t\t<subbuffer_count>4</subbuffer_count>\n"),
              std::string::npos);
    EXPECT_NE(text.find("<events/>\n\t\t\t\t\t\t<contexts/>\n"), std::string::npos);
    // A snapshot session writes its snapshot outputs only; the live one its
    // consumer output.
    EXPECT_NE(text.find("<attributes>\n\t\t\t<snapshot_mode>true</snapshot_mode>\n"
                        "\t\t\t<rotation_schedules>\n\t\t\t\t<periodic>\n"
                        "\t\t\t\t\t<time_us>1000000</time_us>\n"),
              std::string::npos);
    EXPECT_NE(text.find("<attributes>\n\t\t\t<live_timer_interval>2000000</live_timer_interval>\n"
                        "\t\t</attributes>\n\t\t<output>\n\t\t\t<consumer_output>\n"),
              std::string::npos);
}

TEST(SessionXmlWrite, ProbeAttributesAreNotWritten) {
    // The reader keeps only the fact that an event had <attributes>; the
    // writer cannot write what it never kept.
    std::vector<SessionDescription> sessions = everything();
    sessions[0].domains[0].channels[0].events[0].hasProbeAttributes = true;
    const std::string text = writeSessionFile(sessions);
    EXPECT_EQ(text.find("\t\t\t\t\t\t\t\t<attributes>"), std::string::npos);
    EXPECT_EQ(text, writeSessionFile(everything()));
}

TEST(SessionXmlWrite, RefusesWhatTheSchemaCannotHold) {
    auto refused = [](const std::vector<SessionDescription>& sessions, const std::string& what) {
        try {
            writeSessionFile(sessions);
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
            return;
        }
        ADD_FAILURE() << "written: " << what;
    };
    refused({}, "at least one session");
    auto s = everything();
    s[0].name.clear();
    refused(s, "name may not be empty");
    s = everything();
    s[0].name = std::string(256, 'n');
    refused(s, "longer than 255 bytes");
    s = everything();
    s[0].domains[0].channels[0].outputType = "PIPE";
    refused(s, "session 'every-field': domain KERNEL: channel 'kchan': <output_type>: 'PIPE' is "
               "not SPLICE or MMAP");
    s = everything();
    s[0].domains[0].channels[0].events[0].type = "tracepoint";
    refused(s, "'tracepoint' is not ALL, TRACEPOINT");
    s = everything();
    s[0].domains[0].channels[0].contexts[0].type = "vpid";
    refused(s, "'vpid' is not PID, PROCNAME");
    s = everything();
    s[0].domains[0].channels[0].contexts[0].perf = PerfContext{};
    refused(s, "exactly one");
    s = everything();
    s[0].domains[0].channels[0].contexts[0] = Context{};
    refused(s, "exactly one");
    s = everything();
    s[0].domains[0].channels[0].blockingTimeoutUs = -2;
    refused(s, "<blocking_timeout>: -2 is out of range");
    s = everything();
    s[0].domains[0].trackers[0].values[0].name = "root";
    refused(s, "an id or a name");
    s = everything();
    s[0].domains[0].trackers[0].values = {{std::nullopt, "root"}};
    refused(s, "no names for pid");
    s = everything();
    s[0].domains[0].trackers[0].attribute = "tid";
    refused(s, "'tid' is not a tracker's attribute");
    s = everything();
    s[0].domains[0].trackers[1].attribute = "pid";
    refused(s, "two pid trackers");
    s = everything();
    s[0].domains[0].channels[0].events[1].filter = std::string("a\x01", 2);
    refused(s, "<filter>: the value is not UTF-8 text");
    s = everything();
    s[0].sharedMemoryPath = "\xff\xfe";
    refused(s, "<shared_memory_path>: the value is not UTF-8 text");
    s = everything();
    s[1].output->path = std::string("a\0b", 3);
    s[1].output->controlUri.reset();
    s[1].output->dataUri.reset();
    refused(s, "<path>: the value is not UTF-8 text");
}

TEST(SessionXmlWrite, Enumerations) {
    EXPECT_STREQ(toString(DomainType::Kernel), "KERNEL");
    EXPECT_STREQ(toString(DomainType::Ust), "UST");
    EXPECT_STREQ(toString(DomainType::Jul), "JUL");
    EXPECT_STREQ(toString(DomainType::Log4j), "LOG4J");
    EXPECT_STREQ(toString(DomainType::Python), "PYTHON");
    EXPECT_STREQ(toString(BufferType::PerPid), "PER_PID");
    EXPECT_STREQ(toString(BufferType::PerUid), "PER_UID");
    EXPECT_STREQ(toString(BufferType::Global), "GLOBAL");
    EXPECT_STREQ(toString(LoglevelType::All), "ALL");
    EXPECT_STREQ(toString(LoglevelType::Range), "RANGE");
    EXPECT_STREQ(toString(LoglevelType::Single), "SINGLE");
}

// --- What the reader tolerates -----------------------------------------

TEST(SessionXmlRead, UnknownElementsAreWarnings) {
    std::string text =
        replaced(sample("s1"), "<name>chA</name>",
                 "<name>chA</name>\n<foo><subbuffer_count>1</subbuffer_count></foo>");
    text = replaced(text, "<started>true</started>", "<started>true</started><bar/>");
    ParsedSessions parsed = readSessionFile(text);
    EXPECT_EQ(parsed.warnings,
              (std::vector<std::string>{"line 37: unknown element <foo> in <channel> ignored",
                                        "line 103: unknown element <bar> in <session> ignored"}));
    ASSERT_EQ(parsed.sessions.size(), 1U);
    EXPECT_EQ(parsed.sessions[0].domains[0].channels[1].subbufCount, 8U);
    EXPECT_TRUE(parsed.sessions[0].started);
}

// LTTng 2.14 saves a LOG4J2 domain: the file loads, without it, saying so
// (tracectl(1), load), instead of being refused whole.
TEST(SessionXmlRead, ADomainOfATypeUnknownHereIsLeftOutWithAWarning) {
    ParsedSessions parsed = readSessionFile(oneSession(R"(<name>t</name><domains>
<domain><type>LOG4J2</type><buffer_type>PER_UID</buffer_type><channels/></domain>
<domain><type>UST</type><buffer_type>PER_UID</buffer_type></domain>
</domains>)"));
    ASSERT_EQ(parsed.sessions.size(), 1U);
    ASSERT_EQ(parsed.sessions[0].domains.size(), 1U);
    EXPECT_EQ(parsed.sessions[0].domains[0].type, DomainType::Ust);
    EXPECT_EQ(parsed.warnings,
              std::vector<std::string>{"line 5: domain of type 'LOG4J2' left out: tracectl "
                                       "knows KERNEL, UST, JUL, LOG4J and PYTHON"});
    // A domain without a type is still malformed, whatever else it holds.
    EXPECT_THROW(readSessionFile(oneSession("<name>t</name><domains><domain>"
                                            "<buffer_type>PER_UID</buffer_type></domain>"
                                            "</domains>")),
                 SessionFileError);
}

TEST(SessionXmlRead, NamespacedElementsAreNotTheSchemas) {
    ParsedSessions parsed =
        readSessionFile(oneSession("<name>n</name><x:name xmlns:x=\"urn:other\">m</x:name>"));
    EXPECT_EQ(parsed.sessions[0].name, "n");
    EXPECT_EQ(parsed.warnings,
              std::vector<std::string>{"line 4: unknown element <x:name> in <session> ignored"});
}

TEST(SessionXmlRead, ToleratesWhitespaceDefaultsAndXmlForms) {
    ParsedSessions parsed = readSessionFile(oneSession(R"(
	<!-- a comment -->
	<name>
		spaced name
	</name>
	<domains>
		<domain>
			<type> KERNEL </type>
			<buffer_type>GLOBAL</buffer_type>
			<channels>
				<channel>
					<name>c</name>
					<read_timer_interval>
						+200
					</read_timer_interval>
					<output_type>SPLICE</output_type>
					<blocking_timeout>-1</blocking_timeout>
					<events>
						<event>
							<name>e</name>
							<enabled>0</enabled>
							<filter><![CDATA[a < 3 && b == "x"]]></filter>
							<attributes><probe_attributes><symbol_name>f</symbol_name></probe_attributes></attributes>
						</event>
					</events>
				</channel>
			</channels>
			<trackers><pid_tracker><targets>
				<pid_target><pid>7</pid></pid_target>
			</targets></pid_tracker></trackers>
		</domain>
	</domains>
	<started>1</started>
	<output><consumer_output><destination><path>/p</path></destination></consumer_output></output>)"));
    EXPECT_TRUE(parsed.warnings.empty());
    const SessionDescription& s = parsed.sessions[0];
    EXPECT_EQ(s.name, "spaced name");
    EXPECT_TRUE(s.started);
    ASSERT_TRUE(s.output);
    EXPECT_TRUE(s.output->enabled); // the schema's default
    EXPECT_EQ(s.output->path, "/p");
    const Domain& d = s.domains.at(0);
    EXPECT_EQ(d.type, DomainType::Kernel);
    EXPECT_EQ(d.bufferType, BufferType::Global);
    EXPECT_EQ(d.legacyPidTargets, std::vector<int64_t>{7});
    const Channel& c = d.channels.at(0);
    EXPECT_TRUE(c.enabled);
    EXPECT_FALSE(c.subbufSize);
    EXPECT_EQ(c.subbufCount, 4U);
    EXPECT_EQ(c.readTimerUs, 200U);
    EXPECT_EQ(c.blockingTimeoutUs, -1);
    EXPECT_EQ(c.outputType, "SPLICE");
    const Event& e = c.events.at(0);
    EXPECT_FALSE(e.enabled);
    EXPECT_EQ(e.type, "TRACEPOINT");
    EXPECT_EQ(e.filter, "a < 3 && b == \"x\"");
    EXPECT_TRUE(e.hasProbeAttributes);
}

TEST(SessionXmlRead, Utf8Forms) {
    // A byte-order mark, the encoding named in any case, single quotes.
    ParsedSessions parsed = readSessionFile(
        "\xEF\xBB\xBF<?xml version='1.0' encoding='utf-8'?>\n<sessions><session><name>\xC3\xA9t"
        "\xC3\xA9</name></session></sessions>");
    EXPECT_EQ(parsed.sessions.at(0).name, "\xC3\xA9t\xC3\xA9");
    EXPECT_EQ(readSessionFile("<?xml version=\"1.0\" encoding=\"UTF8\" standalone=\"yes\"?>"
                              "<sessions><session><name>a</name></session></sessions>")
                  .sessions.at(0)
                  .name,
              "a");
}

TEST(SessionXmlRead, SessionsInDocumentOrder) {
    const std::string text = "<sessions><session><name>b</name></session>"
                             "<session><name>a</name><started>false</started></session></sessions>";
    ParsedSessions parsed = readSessionFile(text);
    ASSERT_EQ(parsed.sessions.size(), 2U);
    EXPECT_EQ(parsed.sessions[0].name, "b");
    EXPECT_EQ(parsed.sessions[1].name, "a");
    EXPECT_FALSE(parsed.sessions[0].started);
    EXPECT_TRUE(parsed.sessions[0].domains.empty());
    EXPECT_FALSE(parsed.sessions[0].output);
}

TEST(SessionXmlRead, TrackerNames) {
    ParsedSessions parsed = readSessionFile(oneSession(R"(<name>t</name><domains><domain>
<type>UST</type><buffer_type>PER_UID</buffer_type><process_attr_trackers>
<vuid_process_attr_tracker><process_attr_values>
<vuid><name>alice</name></vuid><vuid><id>0</id></vuid>
</process_attr_values></vuid_process_attr_tracker>
<vgid_process_attr_tracker/>
</process_attr_trackers></domain></domains>)"));
    const Domain& d = parsed.sessions[0].domains.at(0);
    ASSERT_EQ(d.trackers.size(), 2U);
    EXPECT_EQ(d.trackers[0].attribute, "vuid");
    ASSERT_EQ(d.trackers[0].values.size(), 2U);
    EXPECT_EQ(d.trackers[0].values[0].name, "alice");
    EXPECT_FALSE(d.trackers[0].values[0].id);
    EXPECT_EQ(d.trackers[0].values[1].id, 0);
    EXPECT_EQ(d.trackers[1].attribute, "vgid");
    EXPECT_TRUE(d.trackers[1].values.empty()); // an empty inclusion set
}

TEST(SessionXmlRead, SizeBound) {
    // Exactly the bound reads (lttng save's file, padded with whitespace).
    std::string text = sample("s1");
    text.append(kMaxSessionFileBytes - text.size(), '\n');
    ASSERT_EQ(text.size(), kMaxSessionFileBytes);
    EXPECT_EQ(readSessionFile(text).sessions.at(0).name, "s1");
    text.push_back('\n');
    EXPECT_EQ(errorOf(text), "the document is 4194305 bytes long, more than the 4194304 bytes "
                             "a session file may have");
}

// --- What the reader refuses ---------------------------------------------

struct Refused {
    std::string what;
    std::string text;
    std::string message;
};

std::vector<Refused> refusedDocuments() {
    const std::string s1 = sample("s1");
    const std::string billionLaughs = R"(<?xml version="1.0"?>
<!DOCTYPE sessions [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<sessions><session><name>&lol9;</name></session></sessions>
)";
    const std::string external = "<?xml version=\"1.0\"?>\n"
                                 "<!DOCTYPE sessions SYSTEM \"http://127.0.0.1:1/session.dtd\">\n"
                                 "<sessions><session><name>x</name></session></sessions>\n";
    return {
        {"truncated", s1.substr(0, s1.find("<events>")),
         "line 24: Premature end of data in tag channel line 10"},
        {"not XML", "this is not XML\n", "line 1: Start tag expected, '<' not found"},
        {"empty", "", "line 1: Document is empty"},
        {"mismatched tags", "<sessions>\n<session>\n</sessions>\n",
         "line 3: Opening and ending tag mismatch: session line 2 and sessions"},
        {"undeclared entity", oneSession("<name>&foo;</name>"), "line 4: Entity 'foo' not defined"},
        {"wrong root", "<?xml version=\"1.0\"?>\n<session><name>x</name></session>\n",
         "line 2: <session>: the root element is not <sessions>"},
        {"no session", "<sessions>\n</sessions>", "line 1: <sessions>: has no <session>"},
        {"session without name", oneSession("<started>true</started>"),
         "line 3: <session>: has no <name>"},
        {"empty name", oneSession("<name> </name>"),
         "line 4: <name>: a session's name may not be empty"},
        {"long name", oneSession("<name>" + std::string(256, 'x') + "</name>"),
         "line 4: <name>: '" + std::string(64, 'x') +
             "...' is 256 bytes long, more than the 255 a name may have"},
        {"not a number", replaced(s1, "<subbuffer_count>8<", "<subbuffer_count>x<"),
         "line 40: <subbuffer_count>: 'x' is not an unsigned integer"},
        {"negative unsigned", replaced(s1, "<subbuffer_count>8<", "<subbuffer_count>-8<"),
         "line 40: <subbuffer_count>: '-8' is not an unsigned integer"},
        {"hex", replaced(s1, "<subbuffer_count>8<", "<subbuffer_count>0x8<"),
         "line 40: <subbuffer_count>: '0x8' is not an unsigned integer"},
        {"uint32 out of range",
         replaced(s1, "<switch_timer_interval>1000<", "<switch_timer_interval>4294967296<"),
         "line 41: <switch_timer_interval>: '4294967296' is out of range (0 to 4294967295)"},
        {"uint64 out of range",
         replaced(s1, "<subbuffer_size>8192<", "<subbuffer_size>18446744073709551616<"),
         "line 39: <subbuffer_size>: '18446744073709551616' is out of range (0 to "
         "18446744073709551615)"},
        {"blocking timeout below -1",
         replaced(s1,
                  "<blocking_timeout>0</blocking_timeout>\n\t\t\t\t\t\t<monitor_timer_interval>"
                  "1000000</monitor_timer_interval>\n\t\t\t\t\t\t<tracefile_size>0</"
                  "tracefile_size>\n\t\t\t\t\t\t<tracefile_count>0</tracefile_count>\n"
                  "\t\t\t\t\t\t<live_timer_interval>0</live_timer_interval>\n\t\t\t\t\t\t<"
                  "events>\n\t\t\t\t\t\t\t<event>\n\t\t\t\t\t\t\t\t<name>tp:*",
                  "<blocking_timeout>-2</blocking_timeout>\n<events><event><name>tp:*"),
         "line 44: <blocking_timeout>: '-2' is out of range (-1 to 2147483648000)"},
        {"blocking timeout too long",
         oneSession("<name>s</name><domains><domain><type>UST</type><buffer_type>PER_UID</"
                    "buffer_type><channels><channel><name>c</name>\n<blocking_timeout>"
                    "2147483648001</blocking_timeout></channel></channels></domain></domains>"),
         "line 5: <blocking_timeout>: '2147483648001' is out of range (-1 to 2147483648000)"},
        {"loglevel out of range", replaced(s1, "<loglevel>14<", "<loglevel>2147483648<"),
         "line 30: <loglevel>: '2147483648' is out of range (-2147483648 to 2147483647)"},
        {"bad overwrite mode",
         replaced(s1, "<overwrite_mode>OVERWRITE<", "<overwrite_mode>overwrite<"),
         "line 38: <overwrite_mode>: 'overwrite' is not DISCARD or OVERWRITE"},
        {"bad buffer type",
         replaced(s1, "<type>JUL</type>\n\t\t\t\t<buffer_type>PER_UID<",
                  "<type>JUL</type>\n\t\t\t\t<buffer_type>PER_USER<"),
         "line 88: <buffer_type>: 'PER_USER' is not PER_PID, PER_UID or GLOBAL"},
        {"bad context type", replaced(s1, "<type>VPID<", "<type>vpid<"),
         "line 65: <type>: 'vpid' is not PID, PROCNAME, PRIO, NICE, VPID, TID, VTID, PPID, "
         "VPPID, PTHREAD_ID, HOSTNAME, IP, APP, INTERRUPTIBLE, PREEMPTIBLE, NEED_RESCHEDULE, "
         "MIGRATABLE, CALLSTACK_USER or CALLSTACK_KERNEL"},
        {"bad boolean", replaced(s1, "<started>true<", "<started>yes<"),
         "line 102: <started>: 'yes' is not a boolean (true, false, 1 or 0)"},
        {"duplicate element", replaced(s1, "<name>chA</name>", "<name>chA</name><name>chC</name>"),
         "line 36: <name>: appears twice in <channel>"},
        {"channel without name",
         oneSession("<name>s</name><domains><domain><type>UST</type><buffer_type>PER_UID</"
                    "buffer_type><channels>\n<channel></channel></channels></domain></domains>"),
         "line 5: <channel>: has no <name>"},
        {"domain without type",
         oneSession("<name>s</name><domains>\n<domain><buffer_type>PER_UID</buffer_type>"
                    "</domain></domains>"),
         "line 5: <domain>: has no <type>"},
        {"vpid by name", replaced(s1, "<id>13</id>", "<name>root</name>"),
         "line 76: <vpid>: has no <id>"},
        {"context of two kinds",
         replaced(s1, "<type>VPID</type>", "<type>VPID</type><type>TID</type>"),
         "line 65: <type>: appears twice in <context>"},
        {"net output without data uri",
         replaced(sample("nt"), "<data_uri>tcp4://127.0.0.1:5343/</data_uri>", ""),
         "line 58: <net_output>: has no <data_uri>"},
        {"consumer output without destination",
         oneSession("<name>s</name><output>\n<consumer_output><enabled>true</enabled>"
                    "</consumer_output></output>"),
         "line 5: <consumer_output>: has no <destination>"},
        {"billion laughs", billionLaughs, "line 2: <!DOCTYPE sessions>: DTDs are not accepted"},
        {"external DTD", external, "line 2: <!DOCTYPE sessions>: DTDs are not accepted"},
        {"UTF-16", std::string("\xFF\xFE<\0s\0e\0s\0s\0i\0o\0n\0s\0/\0>\0", 24),
         "line 1: the document is not UTF-8, which session files are"},
        {"Latin-1", "<?xml version=\"1.0\" encoding = 'ISO-8859-1'?>\n<sessions/>",
         "line 1: the document is in 'ISO-8859-1', not UTF-8, which session files are"},
        {"not UTF-8", oneSession("<name>\xE9t\xE9</name>"),
         "line 4: Input is not proper UTF-8, indicate encoding ! Bytes: 0xE9 0x74 0xE9 0x3C"},
        {"bare DOCTYPE",
         "<!DOCTYPE sessions>\n<sessions><session><name>x</name></session></sessions>",
         "line 1: <!DOCTYPE sessions>: DTDs are not accepted"},
    };
}

TEST(SessionXmlRead, RefusedDocuments) {
    for (const Refused& r : refusedDocuments())
        EXPECT_EQ(errorOf(r.text), r.message) << r.what;
}

TEST(SessionXmlRead, NothingIsPrintedOnErrors) {
    std::vector<Refused> documents = refusedDocuments();
    documents.push_back({"bad encoding name",
                         "<?xml version=\"1.0\" encoding=\"NO-SUCH-ENCODING\"?>\n<sessions/>", ""});
    documents.push_back(
        {"bad UTF-8", "<sessions><session><name>\xff\xfe</name></session></sessions>", ""});
    documents.push_back({"bad Latin-1 declaration",
                         "<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?>\n<sessions>"
                         "<session><name>\x1b$B\xff\xff</name></session></sessions>",
                         ""});
    documents.push_back({"namespace warning", "<sessions xmlns=\"not a uri\"/>", ""});
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    std::vector<std::string> messages;
    for (const Refused& r : documents)
        messages.push_back(errorOf(r.text));
    const std::string printedOut = testing::internal::GetCapturedStdout();
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_EQ(printed, "");
    EXPECT_EQ(printedOut, "");
    for (std::size_t i = 0; i < documents.size(); ++i)
        EXPECT_NE(messages[i].rfind("line ", 0), std::string::npos)
            << documents[i].what << ": " << messages[i];
}

} // namespace
