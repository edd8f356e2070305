// RecordCounter's speed (issue 14): the consumer walks every packet it
// writes to count its records, at up to ~8M events/s. Builds a few MB of
// 256 KiB packets as lttng-ust lays them out (64-bit little-endian ABI,
// event_header_large), compiles the layouts with the daemon's compiler, and
// times RecordCounter::count over them.
//
//   (a) fixed:   payload { int32_t a; int32_t b; }, no context
//   (b) typical: context { int32_t vtid; }, payload { string msg (12 chars);
//                uint32_t _data_length; uint8_t data[_data_length] (8);
//                int64_t x; }
//
// Usage: tracectl-bench-record-counter [SECONDS per case, default 1]
// Prints one line per case: events, then ns/event, events/s and MB/s in
// wall time, ns/event and events/s in CPU time.
#include "record_counter.hpp"

#include "metadata/record_layout_compiler.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace tracectl;

namespace {

constexpr std::size_t kPacketBytes = 256 * 1024;
constexpr std::size_t kTotalBytes = 4 * 1024 * 1024;

// Little-endian bytes with byte alignment (every field here is whole bytes).
class Writer {
public:
    void align(std::size_t bytes) {
        while (data_.size() % bytes != 0)
            data_.push_back(std::byte{0});
    }
    void le(std::uint64_t v, std::size_t bytes) {
        align(bytes);
        for (std::size_t i = 0; i < bytes; ++i)
            data_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
    }
    void raw(const char* s, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i)
            data_.push_back(static_cast<std::byte>(s[i]));
    }
    std::size_t size() const { return data_.size(); }
    std::vector<std::byte>& data() { return data_; }

private:
    std::vector<std::byte> data_;
};

metadata::Field integer(const char* id, std::uint32_t bits, bool isSigned) {
    metadata::IntegerType t;
    t.size = bits;
    t.alignment = bits;
    t.isSigned = isSigned;
    return metadata::Field{id, t};
}

struct Packet {
    std::vector<std::byte> bytes;
    std::uint64_t contentBits;
    std::uint64_t records;
};

// Packets filled with records written by `record` until the next would not
// fit.
template <typename Record>
std::vector<Packet> makePackets(const record_layout::PacketFormat& f, std::size_t maxRecordBytes,
                                Record record) {
    std::vector<Packet> out;
    for (std::size_t total = 0; total < kTotalBytes; total += kPacketBytes) {
        Writer w;
        w.le(0xC1FC1FC1, 4);
        for (int i = 0; i < 16; ++i)
            w.le(0, 1);
        w.le(0, 4);
        w.le(0, 8);
        for (int i = 0; i < 6; ++i)
            w.le(0, 8); // timestamps, sizes, seq num, events_discarded
        w.le(0, 4);
        std::uint64_t records = 0;
        while (w.size() + maxRecordBytes <= kPacketBytes) {
            record(w, records);
            ++records;
        }
        const std::uint64_t content = w.size() * 8;
        w.data().resize(kPacketBytes, std::byte{0});
        std::memcpy(w.data().data() + f.contentSizeBit / 8, &content, 8); // little-endian host
        out.push_back(Packet{std::move(w.data()), content, records});
    }
    return out;
}

void header(Writer& w, std::uint16_t id, std::uint32_t ts) {
    w.le(id, 2);
    w.le(ts, 4);
}

void run(const char* name, const consumer::RecordCounter& counter,
         const std::vector<Packet>& packets, double seconds) {
    using Clock = std::chrono::steady_clock;
    const std::clock_t cpuStart = std::clock();
    std::uint64_t events = 0;
    std::uint64_t bytes = 0;
    std::uint64_t rounds = 0;
    const auto start = Clock::now();
    auto now = start;
    do {
        for (const Packet& p : packets) {
            const consumer::CountResult r = counter.count(p.bytes, 0, p.contentBits);
            if (r.stop != consumer::CountResult::Stop::End || r.records != p.records) {
                std::fprintf(stderr, "%s: counted %llu of %llu (%s)\n", name,
                             static_cast<unsigned long long>(r.records),
                             static_cast<unsigned long long>(p.records), r.why.c_str());
                std::exit(1);
            }
            events += r.records;
            bytes += p.contentBits / 8;
        }
        ++rounds;
        now = Clock::now();
    } while (std::chrono::duration<double>(now - start).count() < seconds);
    // CPU time as well as wall time: the machine may be shared.
    const double cpu = static_cast<double>(std::clock() - cpuStart) / CLOCKS_PER_SEC;
    const double s = std::chrono::duration<double>(now - start).count();
    const auto n = static_cast<double>(events);
    std::printf("%-8s %4.1f MB of packets x %llu rounds: %llu events; wall %.2f ns/event "
                "(%.1f M events/s, %.0f MB/s); cpu %.2f ns/event (%.1f M events/s)\n",
                name, static_cast<double>(packets.size() * kPacketBytes) / 1e6,
                static_cast<unsigned long long>(rounds), static_cast<unsigned long long>(events),
                s * 1e9 / n, n / s / 1e6, static_cast<double>(bytes) / s / 1e6, cpu * 1e9 / n,
                n / cpu / 1e6);
}

} // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    const record_layout::PacketFormat format =
        record_layout::PacketFormat::fromAbi(record_layout::Abi{});

    { // (a) two ints, no context
        consumer::RecordCounter counter(format);
        record_layout::ChannelLayouts l;
        l.context = metadata::compileFields({});
        l.events.emplace_back(
            0, metadata::compileFields({integer("_a", 32, true), integer("_b", 32, true)}));
        counter.declare(record_layout::decode(record_layout::encode(l)));
        const auto packets = makePackets(format, 16, [](Writer& w, std::uint64_t i) {
            header(w, 0, static_cast<std::uint32_t>(i));
            w.le(i, 4);
            w.le(7, 4);
        });
        run("fixed", counter, packets, seconds);
    }
    { // (b) vtid context; string, sequence, int64 payload
        consumer::RecordCounter counter(format);
        record_layout::ChannelLayouts l;
        l.context = metadata::compileFields({integer("_vtid", 32, true)});
        metadata::IntegerType byte;
        byte.size = 8;
        byte.alignment = 8;
        l.events.emplace_back(
            0, metadata::compileFields(
                   {metadata::Field{"_msg", metadata::StringType{}},
                    integer("__data_length", 32, false),
                    metadata::Field{"_data", metadata::SequenceType{byte, "__data_length"}},
                    integer("_x", 64, true)}));
        counter.declare(record_layout::decode(record_layout::encode(l)));
        const auto packets = makePackets(format, 64, [](Writer& w, std::uint64_t i) {
            header(w, 0, static_cast<std::uint32_t>(i));
            w.le(1234, 4); // vtid
            w.align(8);    // the payload's largest member is 64-bit
            w.raw("hello world!", 13);
            w.le(8, 4);
            w.raw("abcdefgh", 8);
            w.le(i, 8);
        });
        run("typical", counter, packets, seconds);
    }
    return 0;
}
