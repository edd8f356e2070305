// The babeltrace2 reader of tracectl aggregate (src/aggregate/trace_reader.cpp) on a CTF
// 1.8 trace written here byte by byte (TSDL metadata and one packet per stream), so that
// what it reads is known exactly: find_traces, payload fields, the packet's cpu_id, the
// timestamp, several streams and several traces (read in parallel and merged), and the
// errors it reports while reading (unknown field, type mismatch, unreadable trace).
#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/parser.hpp"
#include "aggregate/trace_reader.hpp"

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tracectl::aggregate {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMetadata = R"(/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = true; } := int64_t;
trace {
    major = 1;
    minor = 8;
    byte_order = le;
    packet.header := struct { uint32_t magic; };
};
env { domain = "ust"; };
clock { name = "monotonic"; freq = 1000000000; offset = 0; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := clock_ts;
stream {
    packet.context := struct { uint64_t content_size; uint64_t packet_size; uint32_t cpu_id; };
    event.header := struct { uint32_t id; clock_ts timestamp; };
};
event { name = "demo:tick"; id = 0; fields := struct { int64_t value; string text; }; };
event { name = "demo:other"; id = 1; fields := struct { uint32_t n; }; };
)";

class Bytes {
public:
    void u32(std::uint32_t v) { put(v, 4); }
    void u64(std::uint64_t v) { put(v, 8); }
    void str(const std::string& s) {
        data_.insert(data_.end(), s.begin(), s.end());
        data_.push_back('\0');
    }
    std::vector<char>& data() { return data_; }

private:
    void put(std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) {
            data_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        }
    }
    std::vector<char> data_;
};

/// A stream of one packet on `cpu`: tick i (i = 0..9) has value = i - 2 + offset,
/// text "a" for even i and "b" for odd, time 1000 + i; other i has n = i.
void writeStream(const fs::path& file, std::uint32_t cpu, std::int64_t offset) {
    Bytes events;
    for (std::uint32_t i = 0; i < 10; ++i) {
        events.u32(0);
        events.u64(1000 + i);
        events.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(i) - 2 + offset));
        events.str(i % 2 == 0 ? "a" : "b");
        events.u32(1);
        events.u64(1000 + i);
        events.u32(i);
    }
    const std::uint64_t header = 4 + 8 + 8 + 4;
    const std::uint64_t bits = (header + events.data().size()) * 8;
    Bytes packet;
    packet.u32(0xC1FC1FC1);
    packet.u64(bits);
    packet.u64(bits);
    packet.u32(cpu);
    auto& all = packet.data();
    all.insert(all.end(), events.data().begin(), events.data().end());
    std::ofstream(file, std::ios::binary)
        .write(all.data(), static_cast<std::streamsize>(all.size()));
}

void writeTrace(const fs::path& dir, int streams) {
    fs::create_directories(dir);
    std::ofstream(dir / "metadata") << kMetadata;
    for (int s = 0; s < streams; ++s) {
        writeStream(dir / ("chan_" + std::to_string(s)), static_cast<std::uint32_t>(s), 0);
    }
}

class AggregateReader : public ::testing::Test {
protected:
    void SetUp() override {
        const char* tmp = std::getenv("TMPDIR");
        std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/aggregate-reader-XXXXXX";
        ASSERT_NE(mkdtemp(templ.data()), nullptr);
        root_ = templ;
    }
    void TearDown() override { fs::remove_all(root_); }

    /// The JSON-free way to look: value of the entry with `key` in aggregation `a`.
    static std::int64_t value(const AggregationSet& set, std::size_t a, const Key& key) {
        for (const auto& e : set.sorted(a)) {
            if (*e.key == key) {
                return e.state->value();
            }
        }
        return -12345;
    }

    AggregationSet run(const std::string& path, const Program& program) {
        Binder binder(program);
        AggregationSet set(program);
        readTraces(findTraces(path), program, binder, set);
        return set;
    }

    fs::path root_;
};

TEST_F(AggregateReader, FindsEveryTraceBelowAFolder) {
    writeTrace(root_ / "a" / "ust" / "uid" / "0" / "64-bit", 1);
    writeTrace(root_ / "b", 1);
    fs::create_directories(root_ / "empty");
    const auto traces = findTraces(root_.string());
    ASSERT_EQ(traces.size(), 2u);
    EXPECT_EQ(traces[0], (root_ / "a" / "ust" / "uid" / "0" / "64-bit").string());
    EXPECT_EQ(traces[1], (root_ / "b").string());
    EXPECT_EQ(findTraces((root_ / "b").string()).size(), 1u);
    EXPECT_THROW(findTraces((root_ / "empty").string()), TraceReadError);
    EXPECT_THROW(findTraces((root_ / "missing").string()), TraceReadError);
}

TEST_F(AggregateReader, ReadsFieldsCpuAndTimestamp) {
    writeTrace(root_ / "t", 1);
    const Program p = parseProgram(
        "demo:tick { @s[text] = sum(value); @q = quantize(value); @t = max(timestamp);\n"
        "  @c[cpu] = count(); }\n"
        "demo:other /n > 4/ { @n = sum(n); }");
    const AggregationSet set = run(root_.string(), p);
    // values -2..7: even i (a): -2, 0, 2, 4, 6 = 10; odd (b): -1, 1, 3, 5, 7 = 15
    EXPECT_EQ(value(set, 0, {std::string("a")}), 10);
    EXPECT_EQ(value(set, 0, {std::string("b")}), 15);
    const auto& buckets = set.sorted(1)[0].state->buckets();
    EXPECT_EQ(buckets[static_cast<std::size_t>(quantizeBucket(-2))], 1);
    EXPECT_EQ(buckets[static_cast<std::size_t>(quantizeBucket(0))], 1);
    EXPECT_EQ(buckets[static_cast<std::size_t>(quantizeBucket(4))], 4); // 4, 5, 6, 7
    EXPECT_EQ(value(set, 2, {}), 1009);
    EXPECT_EQ(value(set, 3, {std::int64_t{0}}), 10);
    EXPECT_EQ(value(set, 4, {}), 5 + 6 + 7 + 8 + 9);
}

TEST_F(AggregateReader, SeveralStreamsAndTracesAreMerged) {
    writeTrace(root_ / "one", 3);
    writeTrace(root_ / "two", 2);
    const Program p = parseProgram("demo:* { @c[cpu] = count(); } demo:tick { @m = min(value); }");
    const AggregationSet set = run(root_.string(), p);
    EXPECT_EQ(value(set, 0, {std::int64_t{0}}), 40); // 2 traces x 20 records on cpu 0
    EXPECT_EQ(value(set, 0, {std::int64_t{1}}), 40);
    EXPECT_EQ(value(set, 0, {std::int64_t{2}}), 20);
    EXPECT_EQ(value(set, 1, {}), -2);
}

/// A trace whose stream has two packets of one tick each; the packet context counts the
/// events the tracer discarded: 0 in the first packet, `discarded` in the second.
void writeTraceWithDiscarded(const fs::path& dir, std::uint64_t discarded) {
    std::string metadata = kMetadata;
    const std::string context = "packet.context := struct { uint64_t content_size; uint64_t "
                                "packet_size; uint32_t cpu_id; };";
    const auto at = metadata.find(context);
    metadata.replace(at, context.size(),
                     "packet.context := struct { uint64_t content_size; uint64_t packet_size; "
                     "clock_ts timestamp_begin; clock_ts timestamp_end; uint64_t "
                     "events_discarded; uint32_t cpu_id; };");
    fs::create_directories(dir);
    std::ofstream(dir / "metadata") << metadata;
    std::vector<char> stream;
    for (std::uint64_t p = 0; p < 2; ++p) {
        Bytes events;
        events.u32(0);
        events.u64(1000 + 100 * p);
        events.u64(5);
        events.str("a");
        const std::uint64_t header = 4 + 8 + 8 + 8 + 8 + 8 + 4;
        const std::uint64_t bits = (header + events.data().size()) * 8;
        Bytes packet;
        packet.u32(0xC1FC1FC1);
        packet.u64(bits);
        packet.u64(bits);
        packet.u64(1000 + 100 * p);
        packet.u64(1050 + 100 * p);
        packet.u64(p == 0 ? 0 : discarded);
        packet.u32(0);
        stream.insert(stream.end(), packet.data().begin(), packet.data().end());
        stream.insert(stream.end(), events.data().begin(), events.data().end());
    }
    std::ofstream(dir / "chan_0", std::ios::binary)
        .write(stream.data(), static_cast<std::streamsize>(stream.size()));
}

TEST_F(AggregateReader, CountsDiscardedEventRecords) {
    writeTraceWithDiscarded(root_ / "t", 7);
    const Program p = parseProgram("demo:tick { @ = count(); }");
    Binder binder(p);
    AggregationSet set(p);
    const ReadStatistics statistics = readTraces(findTraces(root_.string()), p, binder, set);
    EXPECT_EQ(value(set, 0, {}), 2);
    EXPECT_EQ(statistics.discardedEvents, 7u);
    EXPECT_TRUE(statistics.discardedExact);
    // And none where none were.
    writeTrace(root_ / "u", 1);
    Binder otherBinder(p);
    AggregationSet other(p);
    EXPECT_EQ(readTraces(findTraces((root_ / "u").string()), p, otherBinder, other).discardedEvents,
              0u);
}

TEST_F(AggregateReader, ErrorsWhileReading) {
    writeTrace(root_ / "one", 2);
    writeTrace(root_ / "two", 2);
    const auto error = [&](const std::string& source) -> std::string {
        try {
            run(root_.string(), parseProgram(source));
        } catch (const ProgramError& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_EQ(error("demo:tick { @[valu] = count(); }"),
              "1:15: unknown field 'valu': no event record matched by demo:tick has it");
    EXPECT_EQ(error("demo:tick {\n @ = quantize(text); }"),
              "2:15: quantize() needs an integer argument, not a string (in event class "
              "'demo:tick')");
    // A field one matched class has is not unknown.
    EXPECT_EQ(error("demo:* { @[n] = count(); }"), "no error");
    fs::create_directories(root_ / "bad");
    std::ofstream(root_ / "bad" / "metadata") << "/* CTF 1.8 */ this is not TSDL";
    EXPECT_THROW(run((root_ / "bad").string(), parseProgram("demo:tick { @ = count(); }")),
                 TraceReadError);
}

} // namespace
} // namespace tracectl::aggregate
