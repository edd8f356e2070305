// A CTF 1.8 trace written byte by byte for the tracectl dtrace tests, so that what the
// reader reads is known exactly: LTTng's layout (a packet context with cpu_id, an event
// header with the id and a 64-bit timestamp, a stream event context with vtid, vpid and
// procname) and five event classes: demo:entry (int64 fd), demo:return (int64 ret),
// demo:note (string text, int64 value), and ip:send / ip:receive with the ip provider's
// flat fields (src/common/ip_event_fields.cpp: ip_ver, ip_plength, ip_saddr, ip_daddr,
// if_name, ipv4_protostr, ipv6_nextstr). One stream (one packet) per CPU.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tracectl::aggregate::testing {

inline constexpr const char* kDtraceMetadata = R"(/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 32; align = 8; signed = true; } := int32_t;
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
    event.context := struct { int32_t vtid; int32_t vpid; string procname; };
};
event { name = "demo:entry"; id = 0; fields := struct { int64_t fd; }; };
event { name = "demo:return"; id = 1; fields := struct { int64_t ret; }; };
event { name = "demo:note"; id = 2; fields := struct { string text; int64_t value; }; };
event { name = "ip:send"; id = 3; fields := struct { uint8_t ip_ver; uint32_t ip_plength;
    string ip_saddr; string ip_daddr; string if_name; string ipv4_protostr;
    string ipv6_nextstr; }; };
event { name = "ip:receive"; id = 4; fields := struct { uint8_t ip_ver; uint32_t ip_plength;
    string ip_saddr; string ip_daddr; string if_name; string ipv4_protostr;
    string ipv6_nextstr; }; };
)";

/// Event records added in any order; write() puts each CPU's in one packet, by time.
class DtraceTraceWriter {
public:
    struct Thread {
        std::int32_t tid = 1;
        std::int32_t pid = 1;
        std::string name = "app";
    };

    void entry(std::uint32_t cpu, std::uint64_t time, const Thread& t, std::int64_t fd) {
        Record r = start(cpu, time, 0, t);
        r.i64(static_cast<std::uint64_t>(fd));
        add(cpu, time, std::move(r));
    }
    void exit(std::uint32_t cpu, std::uint64_t time, const Thread& t, std::int64_t ret) {
        Record r = start(cpu, time, 1, t);
        r.i64(static_cast<std::uint64_t>(ret));
        add(cpu, time, std::move(r));
    }
    void note(std::uint32_t cpu, std::uint64_t time, const Thread& t, const std::string& text,
              std::int64_t value) {
        Record r = start(cpu, time, 2, t);
        r.str(text);
        r.i64(static_cast<std::uint64_t>(value));
        add(cpu, time, std::move(r));
    }
    /// An ip:send (send) or ip:receive datagram of `bytes` payload bytes.
    void packet(bool send, std::uint32_t cpu, std::uint64_t time, const Thread& t, int version,
                std::uint32_t bytes, const std::string& source, const std::string& destination,
                const std::string& interface, const std::string& protocol) {
        Record r = start(cpu, time, send ? 3 : 4, t);
        r.u8(static_cast<std::uint8_t>(version));
        r.u32(bytes);
        r.str(source);
        r.str(destination);
        r.str(interface);
        r.str(version == 4 ? protocol : "");
        r.str(version == 6 ? protocol : "");
        add(cpu, time, std::move(r));
    }

    /// The trace's domain, and event classes renamed ("demo:note" -> "sched_switch"): a
    /// kernel trace's lttng-modules names.
    std::string domain = "ust";
    std::vector<std::pair<std::string, std::string>> renames;

    void write(const std::filesystem::path& dir) const {
        std::filesystem::create_directories(dir);
        std::string metadata = kDtraceMetadata;
        const auto replace = [&metadata](const std::string& from, const std::string& to) {
            const std::size_t at = metadata.find(from);
            if (at != std::string::npos) {
                metadata.replace(at, from.size(), to);
            }
        };
        replace("domain = \"ust\"", "domain = \"" + domain + "\"");
        for (const auto& [from, to] : renames) {
            replace("name = \"" + from + "\"", "name = \"" + to + "\"");
        }
        std::ofstream(dir / "metadata") << metadata;
        for (const auto& [cpu, records] : streams_) {
            Record events;
            for (const auto& [time, record] : records) {
                events.bytes.insert(events.bytes.end(), record.bytes.begin(), record.bytes.end());
            }
            const std::uint64_t header = 4 + 8 + 8 + 4;
            const std::uint64_t bits = (header + events.bytes.size()) * 8;
            Record packet;
            packet.u32(0xC1FC1FC1);
            packet.i64(bits);
            packet.i64(bits);
            packet.u32(cpu);
            packet.bytes.insert(packet.bytes.end(), events.bytes.begin(), events.bytes.end());
            std::ofstream(dir / ("chan_" + std::to_string(cpu)), std::ios::binary)
                .write(packet.bytes.data(), static_cast<std::streamsize>(packet.bytes.size()));
        }
    }

private:
    struct Record {
        std::vector<char> bytes;
        void put(std::uint64_t v, int n) {
            for (int i = 0; i < n; ++i) {
                bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
            }
        }
        void u8(std::uint8_t v) { put(v, 1); }
        void u32(std::uint32_t v) { put(v, 4); }
        void i64(std::uint64_t v) { put(v, 8); }
        void str(const std::string& s) {
            bytes.insert(bytes.end(), s.begin(), s.end());
            bytes.push_back('\0');
        }
    };

    static Record start(std::uint32_t, std::uint64_t time, std::uint32_t id, const Thread& t) {
        Record r;
        r.u32(id);
        r.i64(time);
        r.u32(static_cast<std::uint32_t>(t.tid));
        r.u32(static_cast<std::uint32_t>(t.pid));
        r.str(t.name);
        return r;
    }
    void add(std::uint32_t cpu, std::uint64_t time, Record&& r) {
        streams_[cpu].emplace(time, std::move(r));
    }

    std::map<std::uint32_t, std::multimap<std::uint64_t, Record>> streams_;
};

} // namespace tracectl::aggregate::testing
