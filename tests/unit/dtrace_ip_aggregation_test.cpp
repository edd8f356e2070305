// An aggregation-only program of the ip provider over an in-kernel aggregation
// (src/aggregate/ip_aggregation.hpp): which programs may run so (ip_aggregation_plan), that a
// weighted add is `weight` adds for every aggregating function, and that rows of masked
// records, each with its count, give the program's output that running it on every record
// gives.
#include "aggregate/aggregating_functions.hpp"
#include "aggregate/interpreter.hpp"
#include "aggregate/ip_aggregation.hpp"
#include "aggregate/parser.hpp"
#include "ip_event_fields.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <sstream>

namespace tracectl::aggregate {
namespace {

TEST(IpAggregationPlan, TakesAggregationOnlyProgramsOfTheIpProvider) {
    const auto plan = ipAggregationPlan(parseProgram(
        "BEGIN { printf(\"go\\n\"); } "
        "ip:::send,ip:::receive /args[2]->ip_plength > 10/ { "
        "  this->p = args[2]->ip_ver == 4 ? args[4]->ipv4_protostr : args[5]->ipv6_nextstr; "
        "  @[args[2]->ip_saddr, this->p, probename] = count(); @q = quantize(args[2]->ip_plength); "
        "} "
        "END { printa(@); }"));
    ASSERT_TRUE(plan);
    EXPECT_TRUE(plan->send);
    EXPECT_TRUE(plan->receive);
    EXPECT_EQ(plan->fields, (std::vector<std::string>{"ip_plength", "ip_saddr", "ip_ver",
                                                      "ipv4_protostr", "ipv6_nextstr"}));
    const auto receive = ipAggregationPlan(parseProgram("ip:::receive { @ = count(); }"));
    ASSERT_TRUE(receive);
    EXPECT_FALSE(receive->send);
    EXPECT_TRUE(receive->fields.empty());
}

TEST(IpAggregationPlan, RefusesWhatNeedsEachRecord) {
    for (const char* program : {
             "ip:::receive { printf(\"%s\\n\", args[2]->ip_saddr); }", // an action
             "ip:::receive { @[timestamp] = count(); }",               // a built-in
             "ip:::receive { @[cpu] = count(); }",                     // a built-in
             "ip:::receive { n = 1; }",                                // a global
             "ip:::receive { self->n = 1; }",                          // thread-local
             "BEGIN { n = 1; } ip:::receive { @[n] = count(); }",      // reads a global
             "ip:::receive { @ = count(); } tick-1s { printa(@); }",   // a timer
             "ip:::receive { @ = count(); } ERROR { @e = count(); }",  // ERROR
             "ip:::receive { @ = count(); } syscalls:sys_enter_read { @r = count(); }",
             "ip:::receive, BEGIN { @ = count(); }", // BEGIN in an ip clause
             "ip:::receive",                         // the default action: a line each
             "ip:::receive {}",                      // the same
             "BEGIN { exit(0); }",                   // no ip probe
             "*:receive { @ = count(); }",           // not only the provider
         }) {
        EXPECT_FALSE(ipAggregationPlan(parseProgram(program))) << program;
    }
}

TEST(WeightedAdd, IsThatManyAddsForEveryFunction) {
    std::mt19937_64 random(42);
    const LinearParameters linear{-100, 100, 10};
    const LogLinearParameters logLinear{10, 0, 6, 10};
    for (const Function f :
         {Function::Count, Function::Sum, Function::Avg, Function::Stddev, Function::Min,
          Function::Max, Function::Quantize, Function::Lquantize, Function::Llquantize}) {
        AggregationState weighted(f, linear, logLinear);
        AggregationState repeated(f, linear, logLinear);
        for (int i = 0; i < 50; ++i) {
            // Large magnitudes too, so that sum wraps and stddev's squares carry.
            const auto value = static_cast<std::int64_t>(random()) >> (random() % 64);
            const std::uint64_t weight = random() % 40;
            weighted.add(value, weight);
            for (std::uint64_t w = 0; w < weight; ++w) {
                repeated.add(value);
            }
        }
        EXPECT_EQ(weighted.count(), repeated.count()) << functionName(f);
        EXPECT_EQ(weighted.value(), repeated.value()) << functionName(f);
        EXPECT_EQ(weighted.buckets(), repeated.buckets()) << functionName(f);
        EXPECT_EQ(weighted.sortValue(), repeated.sortValue()) << functionName(f);
    }
}

/// A record as the BPF program fills it: an IPv4 or IPv6 UDP datagram of `payload` bytes.
tracectl_ip_record datagram(std::uint8_t probe, int version, const char* from, const char* to,
                            std::uint16_t payload) {
    tracectl_ip_record r{};
    r.probe = probe;
    r.ip_ver = static_cast<std::uint8_t>(version);
    std::memcpy(r.if_name, "lo", 3);
    r.if_local = 1;
    r.sport = 40000;
    r.dport = 9999;
    static std::uint16_t ident = 1;
    ++ident;
    if (version == 4) {
        r.header_len = 20;
        r.header[0] = 0x45;
        const std::uint16_t total = static_cast<std::uint16_t>(20 + 8 + payload);
        r.header[2] = static_cast<std::uint8_t>(total >> 8);
        r.header[3] = static_cast<std::uint8_t>(total);
        r.header[4] = static_cast<std::uint8_t>(ident >> 8); // varies per packet
        r.header[5] = static_cast<std::uint8_t>(ident);
        r.header[6] = 0x40; // DF
        r.header[8] = 64;
        r.header[9] = 17;
        r.header[10] = static_cast<std::uint8_t>(ident * 7); // a checksum that varies too
        inet_pton(AF_INET, from, &r.header[12]);
        inet_pton(AF_INET, to, &r.header[16]);
    } else {
        r.header_len = 40;
        r.header[0] = 0x60;
        r.header[3] = static_cast<std::uint8_t>(ident); // flow label varies
        const std::uint16_t plen = static_cast<std::uint16_t>(8 + payload);
        r.header[4] = static_cast<std::uint8_t>(plen >> 8);
        r.header[5] = static_cast<std::uint8_t>(plen);
        r.header[6] = 17;
        r.header[7] = 64;
        inet_pton(AF_INET6, from, &r.header[8]);
        inet_pton(AF_INET6, to, &r.header[24]);
    }
    r.timestamp = 1000 + ident;
    r.tid = 77;
    r.skb = 0xffff000000000000ULL + ident;
    return r;
}

/// `record` as the kernel keeps it for `plan`: only the probe's and the fields' bytes.
tracectl_ip_record masked(const tracectl_ip_record& record, const IpAggregationPlan& plan) {
    ip::IpRecordMask mask = ip::ipRecordProbeMask();
    for (const std::string& f : plan.fields) {
        const auto m = ip::ipFieldRecordMask(f);
        for (std::size_t i = 0; i < mask.size(); ++i) {
            mask[i] |= (*m)[i];
        }
    }
    tracectl_ip_record out{};
    const auto* in = reinterpret_cast<const std::uint8_t*>(&record);
    auto* kept = reinterpret_cast<std::uint8_t*>(&out);
    for (std::size_t i = 0; i < sizeof out; ++i) {
        kept[i] = mask[i] != 0 ? in[i] : 0; // every version's bytes: the widest key
    }
    return out;
}

TEST(IpRowFeeder, RowsGiveTheOutputOfEveryRecord) {
    const Program program = parseProgram(
        "ip:::send,ip:::receive /args[2]->ip_plength > 10/ { "
        "  this->p = args[2]->ip_ver == 4 ? args[4]->ipv4_protostr : args[5]->ipv6_nextstr; "
        "  @n[args[2]->ip_saddr, args[2]->ip_daddr, this->p, probename] = count(); "
        "  @b[probename] = quantize(args[2]->ip_plength); @s = sum(args[2]->ip_plength); }");
    const auto plan = ipAggregationPlan(program);
    ASSERT_TRUE(plan);
    std::vector<tracectl_ip_record> records;
    for (int i = 0; i < 40; ++i) {
        records.push_back(datagram(TRACECTL_IP_SEND, 4, "127.0.0.1", "127.0.0.2", 100));
        records.push_back(datagram(TRACECTL_IP_RECEIVE, 4, "127.0.0.2", "127.0.0.1",
                                   static_cast<std::uint16_t>(i % 3 == 0 ? 1 : 3000)));
        records.push_back(datagram(TRACECTL_IP_SEND, 6, "::1", "fe80::1", 20));
    }
    // Every record on its own, as the recording path would run them.
    std::ostringstream eachOut;
    {
        Interpreter each(program, {}, eachOut);
        IpRowFeeder feeder(each);
        for (const auto& r : records) {
            feeder.feed(r, 1, 5);
        }
        each.end();
    }
    // The kernel's rows: equal masked records counted together.
    std::map<std::vector<std::uint8_t>, std::pair<tracectl_ip_record, std::uint64_t>> rows;
    for (const auto& r : records) {
        const tracectl_ip_record m = masked(r, *plan);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(&m);
        auto& row = rows[std::vector<std::uint8_t>(bytes, bytes + sizeof m)];
        row.first = m;
        ++row.second;
    }
    std::ostringstream rowsOut;
    {
        Interpreter summed(program, {}, rowsOut);
        IpRowFeeder feeder(summed);
        for (const auto& [key, row] : rows) {
            feeder.feed(row.first, row.second, 5);
        }
        summed.end();
    }
    EXPECT_FALSE(eachOut.str().empty());
    EXPECT_NE(eachOut.str().find("127.0.0.1"), std::string::npos) << eachOut.str();
    EXPECT_NE(eachOut.str().find("UDP"), std::string::npos) << eachOut.str();
    EXPECT_EQ(rowsOut.str(), eachOut.str());
}

} // namespace
} // namespace tracectl::aggregate
