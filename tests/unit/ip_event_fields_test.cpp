// The `ip` events' CTF payload (src/common/ip_event_fields.hpp): records
// encoded by appendIpEventFields, framed into a one-packet CTF 1.8 trace
// whose metadata declares ipEventTsdlFields(), read back by babeltrace2.
#include "ip_event_fields.hpp"

#include <arpa/inet.h>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>
#include <string>
#include <sys/wait.h>
#include <vector>

using tracectl::ip::appendIpEventFields;
using tracectl::ip::ipEventFields;
using tracectl::ip::ipEventTsdlFields;
using tracectl::ip::ipFieldRecordMask;
using tracectl::ip::IpRecordMask;
using tracectl::ip::ipRecordMaskFor;
using tracectl::ip::ipRecordProbeMask;

namespace {

tracectl_ip_record ipv4Udp() {
    tracectl_ip_record r{};
    r.timestamp = 1000;
    r.skb = 0xffff888012345600ULL;
    r.sk = 0xffff888000abcd00ULL;
    r.netns_ino = 4026531840ULL;
    r.probe = TRACECTL_IP_SEND;
    r.ip_ver = 4;
    r.if_local = 1;
    r.header_len = 20;
    r.sport = 5353;
    r.dport = 40001;
    std::strcpy(r.if_name, "lo");
    const std::array<std::uint8_t, 20> h{0x45, 0x10, 0x00, 0x80, 0x12, 0x34, 0x40, 0x00, 64, 17,
                                         0xab, 0xcd, 127,  0,    0,    2,    127,  0,    0,  1};
    std::memcpy(r.header, h.data(), h.size());
    return r;
}

tracectl_ip_record ipv6Tcp() {
    tracectl_ip_record r{};
    r.skb = 0x1234;
    r.probe = TRACECTL_IP_RECEIVE;
    r.ip_ver = 6;
    r.header_len = 40;
    r.sport = 443;
    r.dport = 51000;
    std::strcpy(r.if_name, "eth0");
    // version 6, tclass 0x2a, flow 0x12345; payload 1200; TCP; hlim 63.
    const std::uint32_t w = 6U << 28 | 0x2aU << 20 | 0x12345U;
    r.header[0] = static_cast<std::uint8_t>(w >> 24);
    r.header[1] = static_cast<std::uint8_t>(w >> 16);
    r.header[2] = static_cast<std::uint8_t>(w >> 8);
    r.header[3] = static_cast<std::uint8_t>(w);
    r.header[4] = 0x04;
    r.header[5] = 0xb0;
    r.header[6] = 6;
    r.header[7] = 63;
    ::inet_pton(AF_INET6, "2001:db8::1", r.header + 8);
    ::inet_pton(AF_INET6, "fe80::2", r.header + 24);
    return r;
}

tracectl_ip_record ipv4Fragment() {
    tracectl_ip_record r = ipv4Udp();
    // MF set, offset 185 (x 8 bytes), protocol 47 (GRE: a number as text).
    r.header[6] = 0x20;
    r.header[7] = 185;
    r.header[9] = 47;
    r.sport = r.dport = 0;
    return r;
}

std::string run(const std::string& command) {
    std::string out;
    FILE* p = ::popen(command.c_str(), "r");
    if (!p)
        return out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    ::pclose(p);
    return out;
}

void put32(std::vector<std::byte>& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i, v >>= 8)
        out.push_back(static_cast<std::byte>(v & 0xff));
}

// babeltrace2's text of the events, one line each.
std::vector<std::string> readBack(const std::vector<tracectl_ip_record>& records) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("ip_event_fields_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "metadata") << "/* CTF 1.8 */\n"
                                       "typealias integer { size = 32; align = 8; signed = false; "
                                       "} := uint32_t;\n"
                                       "trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n"
                                       "\tpacket.header := struct {\n\t\tuint32_t magic;\n"
                                       "\t\tuint32_t stream_id;\n\t};\n};\n"
                                       "stream {\n\tid = 0;\n\tevent.header := struct {\n"
                                       "\t\tuint32_t id;\n\t};\n};\n"
                                       "event {\n\tname = \"ip:send\";\n\tid = 0;\n"
                                       "\tstream_id = 0;\n\tfields := struct {\n"
                                    << ipEventTsdlFields() << "\t};\n};\n";
    std::vector<std::byte> data;
    put32(data, 0xC1FC1FC1);
    put32(data, 0);
    for (const tracectl_ip_record& r : records) {
        put32(data, 0);
        appendIpEventFields(r, data);
    }
    std::ofstream(dir / "stream_0", std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()),
               static_cast<std::streamsize>(data.size()));
    const std::string text = run("babeltrace2 --no-delta " + dir.string() + " 2>&1");
    std::filesystem::remove_all(dir);
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        lines.push_back(text.substr(at, nl - at));
        if (nl == std::string::npos)
            break;
        at = nl + 1;
    }
    return lines;
}

void expectHas(const std::string& line, const std::string& what) {
    EXPECT_NE(line.find(what), std::string::npos) << "missing: " << what << "\nin: " << line;
}

} // namespace

TEST(IpEventFields, TableAndTsdl) {
    const auto fields = ipEventFields();
    ASSERT_EQ(fields.size(), 39U);
    EXPECT_EQ(fields.front().name, "pkt_addr");
    EXPECT_EQ(fields[3].name, "ip_plength");
    EXPECT_EQ(fields[3].ctype, "u32");
    EXPECT_EQ(fields[31].name, "ipv6_src");
    EXPECT_EQ(fields[31].ctype, "u8[16]");
    EXPECT_EQ(fields.back().name, "tcp_dport");
    const std::string tsdl = ipEventTsdlFields();
    EXPECT_NE(tsdl.find("\t\tinteger { size = 64; align = 8; signed = 0; encoding = none; base = "
                        "16; } _pkt_addr;\n"),
              std::string::npos);
    EXPECT_NE(tsdl.find("\t\tstring _ip_saddr;\n"), std::string::npos);
    EXPECT_NE(tsdl.find("\t\tinteger { size = 8; align = 8; signed = 0; encoding = none; base = "
                        "16; } _ipv6_dst[16];\n"),
              std::string::npos);
}

TEST(IpEventFields, Ipv4UdpIpv6TcpAndFragmentReadByBabeltrace) {
    const std::vector<std::string> lines = readBack({ipv4Udp(), ipv6Tcp(), ipv4Fragment()});
    ASSERT_GE(lines.size(), 3U);
    const std::string& a = lines[0];
    for (const char* s : {"pkt_addr = 0xFFFF888012345600",
                          "cs_addr = 0xFFFF888000ABCD00",
                          "ip_ver = 4,",
                          "ip_plength = 108,",
                          "ip_saddr = \"127.0.0.2\"",
                          "ip_daddr = \"127.0.0.1\"",
                          "if_name = \"lo\"",
                          "if_local = 1,",
                          "if_ipstack = 4026531840",
                          "ipv4_ver = 4,",
                          "ipv4_ihl = 20,",
                          "ipv4_tos = 16,",
                          "ipv4_length = 128,",
                          "ipv4_ident = 4660,",
                          "ipv4_flags = 64,",
                          "ipv4_offset = 0,",
                          "ipv4_ttl = 64,",
                          "ipv4_protocol = 17,",
                          "ipv4_protostr = \"UDP\"",
                          "ipv4_checksum = 0xABCD",
                          "ipv4_src = 0x7F000002",
                          "ipv4_dst = 0x7F000001",
                          "ipv4_saddr = \"127.0.0.2\"",
                          "ipv4_daddr = \"127.0.0.1\"",
                          "ipv6_ver = 0,",
                          "ipv6_tclass = 0,",
                          "ipv6_flow = 0,",
                          "ipv6_plen = 0,",
                          "ipv6_nexthdr = 0,",
                          "ipv6_nextstr = \"<null>\"",
                          "ipv6_hlim = 0,",
                          "ipv6_src = [ [0] = 0x0,",
                          "ipv6_saddr = \"<null>\"",
                          "ipv6_daddr = \"<null>\"",
                          "udp_sport = 5353,",
                          "udp_dport = 40001,",
                          "tcp_sport = 0,",
                          "tcp_dport = 0 }"})
        expectHas(a, s);
    const std::string& b = lines[1];
    for (const char* s : {"pkt_addr = 0x1234",
                          "cs_addr = 0x0",
                          "ip_ver = 6,",
                          "ip_plength = 1200,",
                          "ip_saddr = \"2001:db8::1\"",
                          "ip_daddr = \"fe80::2\"",
                          "if_name = \"eth0\"",
                          "if_local = 0,",
                          "ipv4_ver = 0,",
                          "ipv4_ihl = 0,",
                          "ipv4_length = 0,",
                          "ipv4_protostr = \"<null>\"",
                          "ipv4_src = 0x0",
                          "ipv4_saddr = \"<null>\"",
                          "ipv6_ver = 6,",
                          "ipv6_tclass = 42,",
                          "ipv6_flow = 74565,",
                          "ipv6_plen = 1200,",
                          "ipv6_nexthdr = 6,",
                          "ipv6_nextstr = \"TCP\"",
                          "ipv6_hlim = 63,",
                          "ipv6_src = [ [0] = 0x20, [1] = 0x1, [2] = 0xD, [3] = 0xB8,",
                          "ipv6_dst = [ [0] = 0xFE, [1] = 0x80,",
                          "ipv6_saddr = \"2001:db8::1\"",
                          "ipv6_daddr = \"fe80::2\"",
                          "udp_sport = 0,",
                          "udp_dport = 0,",
                          "tcp_sport = 443,",
                          "tcp_dport = 51000 }"})
        expectHas(b, s);
    const std::string& c = lines[2];
    for (const char* s :
         {"ipv4_flags = 32,", "ipv4_offset = 185,", "ipv4_protocol = 47,", "ipv4_protostr = \"47\"",
          "udp_sport = 0,", "udp_dport = 0,", "tcp_dport = 0 }"})
        expectHas(c, s);
}

namespace {

// Each payload field's bytes in appendIpEventFields' output, cut by
// ipEventFields()' C types.
std::vector<std::vector<std::byte>> fieldValues(const tracectl_ip_record& r) {
    std::vector<std::byte> out;
    appendIpEventFields(r, out);
    std::vector<std::vector<std::byte>> values;
    std::size_t at = 0;
    for (const auto& f : ipEventFields()) {
        std::size_t n = 0;
        if (f.ctype == "string") {
            while (at + n < out.size() && out[at + n] != std::byte{0})
                ++n;
            ++n; // the NUL
        } else if (f.ctype == "u8") {
            n = 1;
        } else if (f.ctype == "u16") {
            n = 2;
        } else if (f.ctype == "u32") {
            n = 4;
        } else if (f.ctype == "u64") {
            n = 8;
        } else if (f.ctype == "u8[16]") {
            n = 16;
        } else {
            ADD_FAILURE() << "unknown type " << f.ctype << " of " << f.name;
        }
        if (at + n > out.size()) {
            ADD_FAILURE() << "the payload ends inside " << f.name;
            break;
        }
        values.emplace_back(out.begin() + static_cast<std::ptrdiff_t>(at),
                            out.begin() + static_cast<std::ptrdiff_t>(at + n));
        at += n;
    }
    EXPECT_EQ(at, out.size());
    return values;
}

tracectl_ip_record masked(const tracectl_ip_record& r, const IpRecordMask& mask) {
    tracectl_ip_record out;
    auto* o = reinterpret_cast<unsigned char*>(&out);
    const auto* in = reinterpret_cast<const unsigned char*>(&r);
    for (std::size_t i = 0; i < sizeof out; ++i)
        o[i] = static_cast<unsigned char>(in[i] & mask[i]);
    return out;
}

IpRecordMask operator|(IpRecordMask a, const IpRecordMask& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
        a[i] = static_cast<std::uint8_t>(a[i] | b[i]);
    return a;
}

// A record of random bytes shaped like one of: IPv4 (usually 20 header
// bytes, ihl 5, sometimes options or a short header), IPv6, or neither
// (another ip_ver, a version nibble that disagrees); protocol UDP, TCP or
// another; IPv4 first fragments, later fragments or none.
tracectl_ip_record randomRecord(std::mt19937_64& rng) {
    tracectl_ip_record r;
    auto* bytes = reinterpret_cast<unsigned char*>(&r);
    for (std::size_t i = 0; i < sizeof r; ++i)
        bytes[i] = static_cast<unsigned char>(rng());
    const auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
    const unsigned kind = pick(10);
    const std::uint8_t protos[] = {17, 6, 1, 58, 47, 0, 255};
    const std::uint8_t proto = pick(4) == 0 ? static_cast<std::uint8_t>(rng()) : protos[pick(7)];
    if (kind < 5) {
        r.ip_ver = 4;
        r.header_len = pick(8) == 0 ? static_cast<__u8>(pick(41)) : 20;
        r.header[0] = static_cast<__u8>(0x40 | (pick(4) == 0 ? pick(16) : 5));
        r.header[9] = proto;
        switch (pick(3)) {
        case 0: // not a fragment, DF or not
            r.header[6] = static_cast<__u8>(pick(2) ? 0x40 : 0);
            r.header[7] = 0;
            break;
        case 1: // a first fragment (MF, offset 0)
            r.header[6] = 0x20;
            r.header[7] = 0;
            break;
        default: // a later fragment, or anything
            break;
        }
        if (pick(2))
            std::memset(r.header + 20, 0, 20); // as the program leaves them
    } else if (kind < 9) {
        r.ip_ver = 6;
        r.header_len = pick(8) == 0 ? static_cast<__u8>(pick(41)) : 40;
        r.header[0] = static_cast<__u8>(0x60 | pick(16));
        r.header[6] = proto;
    } else {
        r.ip_ver = static_cast<__u8>(pick(3) == 0 ? rng() : (pick(2) ? 4 : 6));
    }
    if (pick(2)) { // a NUL-terminated name, garbage after the NUL or not
        const std::size_t len = pick(TRACECTL_IP_IFNAMSIZ);
        r.if_name[len] = '\0';
        if (pick(2))
            std::memset(r.if_name + len, 0, TRACECTL_IP_IFNAMSIZ - len);
    }
    return r;
}

// The bytes `mask` (IpRecordMask's encoding) keeps in a record of IP
// version `ver`, through ipRecordMaskFor (whose bytes are 0 or 0xff).
std::set<std::size_t> keptBytes(const IpRecordMask& mask, unsigned ver) {
    for (std::size_t i = 0; i < mask.size(); ++i)
        EXPECT_EQ(mask[i] & ~0x03U, 0U) << "byte " << i << " has bits besides IPv4's and IPv6's";
    const IpRecordMask bytes = ipRecordMaskFor(mask, ver);
    std::set<std::size_t> out;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        EXPECT_TRUE(bytes[i] == 0 || bytes[i] == 0xff) << "byte " << i;
        if (bytes[i])
            out.insert(i);
    }
    return out;
}

std::set<std::size_t> range(std::size_t offset, std::size_t size) {
    std::set<std::size_t> out;
    for (std::size_t i = offset; i < offset + size; ++i)
        out.insert(i);
    return out;
}

std::set<std::size_t> header(std::size_t from, std::size_t size) {
    return range(offsetof(tracectl_ip_record, header) + from, size);
}

std::set<std::size_t> unite(std::initializer_list<std::set<std::size_t>> sets) {
    std::set<std::size_t> out;
    for (const auto& s : sets)
        out.insert(s.begin(), s.end());
    return out;
}

} // namespace

// The property the in-kernel aggregation relies on: a record ANDed with a
// field's mask (and the probe's) for the record's IP version gives that
// field the value the whole record gives it, for every field and every kind
// of record. And the converse that keeps keys few: every byte a version's
// mask keeps (besides ip_ver, header_len and header[0], which decide the
// half for every field) changes the field's value on some record of that
// version, so no byte only the other version reads splits the keys.
TEST(IpFieldRecordMask, AMaskedRecordGivesTheFieldItsValue) {
    const std::uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto fields = ipEventFields();
    std::vector<IpRecordMask> masks;
    for (const auto& f : fields) {
        const auto mask = ipFieldRecordMask(f.name);
        ASSERT_TRUE(mask.has_value()) << f.name;
        masks.push_back(*mask | ipRecordProbeMask());
    }
    std::vector<tracectl_ip_record> records = {ipv4Udp(), ipv6Tcp(), ipv4Fragment()};
    for (int i = 0; i < 1500; ++i)
        records.push_back(randomRecord(rng));
    int failures = 0;
    for (const tracectl_ip_record& r : records) {
        const auto whole = fieldValues(r);
        ASSERT_EQ(whole.size(), fields.size());
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const auto part = fieldValues(masked(r, ipRecordMaskFor(masks[f], r.ip_ver)));
            ASSERT_EQ(part.size(), fields.size());
            if (part[f] != whole[f] && ++failures <= 10)
                ADD_FAILURE() << fields[f].name << " differs on a record of ip_ver "
                              << int{r.ip_ver} << ", header_len " << int{r.header_len}
                              << ", header[0] " << int{r.header[0]} << ", protocol "
                              << int{r.ip_ver == 6 ? r.header[6] : r.header[9]};
        }
        // Several fields' masks together (what a program reading them uses).
        IpRecordMask some = ipRecordProbeMask();
        std::vector<std::size_t> chosen;
        for (std::size_t f = 0; f < fields.size(); ++f)
            if (rng() % 4 == 0) {
                some = some | masks[f];
                chosen.push_back(f);
            }
        const auto part = fieldValues(masked(r, ipRecordMaskFor(some, r.ip_ver)));
        for (const std::size_t f : chosen)
            if (part[f] != whole[f] && ++failures <= 10)
                ADD_FAILURE() << fields[f].name << " differs under a union of masks";
    }
    EXPECT_EQ(failures, 0);

    // Every kept byte is needed by its version: (field, version, byte) still
    // to be shown, until a record of that version whose field changes when
    // that byte alone changes.
    const std::set<std::size_t> half = {offsetof(tracectl_ip_record, ip_ver),
                                        offsetof(tracectl_ip_record, header_len),
                                        offsetof(tracectl_ip_record, header)};
    std::map<std::pair<std::size_t, unsigned>, std::set<std::size_t>> unproven;
    for (std::size_t f = 0; f < fields.size(); ++f)
        for (const unsigned ver : {4U, 6U})
            for (const std::size_t i : keptBytes(*ipFieldRecordMask(fields[f].name), ver))
                if (!half.contains(i))
                    unproven[{f, ver}].insert(i);
    for (const tracectl_ip_record& r : records) {
        if (r.ip_ver != 4 && r.ip_ver != 6)
            continue;
        const auto whole = fieldValues(r);
        for (auto& [fieldVer, bytes] : unproven) {
            if (fieldVer.second != r.ip_ver)
                continue;
            for (auto it = bytes.begin(); it != bytes.end();) {
                tracectl_ip_record changed = r;
                auto* b = reinterpret_cast<unsigned char*>(&changed);
                b[*it] = static_cast<unsigned char>(b[*it] ^ (1 + rng() % 255));
                if (fieldValues(changed)[fieldVer.first] != whole[fieldVer.first])
                    it = bytes.erase(it);
                else
                    ++it;
            }
        }
    }
    for (const auto& [fieldVer, bytes] : unproven)
        for (const std::size_t i : bytes)
            ADD_FAILURE() << fields[fieldVer.first].name << "'s IPv" << fieldVer.second
                          << " mask keeps record byte " << i << " (header["
                          << static_cast<long>(i) -
                                 static_cast<long>(offsetof(tracectl_ip_record, header))
                          << "]), which never changed its value on an IPv" << fieldVer.second
                          << " record";
}

// The masks keep only what the field needs, for each version: a key of few
// fields stays small (no timestamp, thread, CPU or ifindex ever; a field's
// own bytes of the record's version's header, none of the other's).
TEST(IpFieldRecordMask, KeepsOnlyWhatTheFieldReads) {
    const auto half = unite({range(offsetof(tracectl_ip_record, ip_ver), 1),
                             range(offsetof(tracectl_ip_record, header_len), 1), header(0, 1)});
    const auto both = [&](std::string_view name, const std::set<std::size_t>& v4,
                          const std::set<std::size_t>& v6) {
        SCOPED_TRACE(std::string(name));
        const auto mask = ipFieldRecordMask(name);
        ASSERT_TRUE(mask.has_value());
        EXPECT_EQ(keptBytes(*mask, 4), v4);
        EXPECT_EQ(keptBytes(*mask, 6), v6);
    };
    both("ip_saddr", unite({half, header(12, 4)}), unite({half, header(8, 16)}));
    both("ip_daddr", unite({half, header(16, 4)}), unite({half, header(24, 16)}));
    both("ip_ver", half, half);
    both("pkt_addr", unite({half, range(offsetof(tracectl_ip_record, skb), 8)}),
         unite({half, range(offsetof(tracectl_ip_record, skb), 8)}));
    both("cs_addr", unite({half, range(offsetof(tracectl_ip_record, sk), 8)}),
         unite({half, range(offsetof(tracectl_ip_record, sk), 8)}));
    both("if_ipstack", unite({half, range(offsetof(tracectl_ip_record, netns_ino), 8)}),
         unite({half, range(offsetof(tracectl_ip_record, netns_ino), 8)}));
    both("if_name",
         unite({half, range(offsetof(tracectl_ip_record, if_name), TRACECTL_IP_IFNAMSIZ)}),
         unite({half, range(offsetof(tracectl_ip_record, if_name), TRACECTL_IP_IFNAMSIZ)}));
    // IPv4: total length (and ihl, header[0]); IPv6: payload length.
    both("ip_plength", unite({half, header(2, 2)}), unite({half, header(4, 2)}));
    // IPv4: protocol and frag_off; IPv6: next header.
    both("udp_dport",
         unite({half, range(offsetof(tracectl_ip_record, dport), 2), header(9, 1), header(6, 2)}),
         unite({half, range(offsetof(tracectl_ip_record, dport), 2), header(6, 1)}));
    both("tcp_sport",
         unite({half, range(offsetof(tracectl_ip_record, sport), 2), header(9, 1), header(6, 2)}),
         unite({half, range(offsetof(tracectl_ip_record, sport), 2), header(6, 1)}));
    // One version's fields keep none of the other's header.
    both("ipv4_ttl", unite({half, header(8, 1)}), half);
    both("ipv4_length", unite({half, header(2, 2)}), half);
    both("ipv6_flow", half, unite({half, header(1, 3)}));
    both("ipv6_src", half, unite({half, header(8, 16)}));
    EXPECT_EQ(keptBytes(ipRecordProbeMask(), 4), range(offsetof(tracectl_ip_record, probe), 1));
    EXPECT_EQ(keptBytes(ipRecordProbeMask(), 6), range(offsetof(tracectl_ip_record, probe), 1));

    std::set<std::size_t> never = unite(
        {range(offsetof(tracectl_ip_record, timestamp), 8),
         range(offsetof(tracectl_ip_record, tid), 4),
         range(offsetof(tracectl_ip_record, ifindex), 4),
         range(offsetof(tracectl_ip_record, probe), 1), range(offsetof(tracectl_ip_record, cpu), 4),
         range(offsetof(tracectl_ip_record, header) + TRACECTL_IP_HEADER_MAX,
               sizeof(tracectl_ip_record) - offsetof(tracectl_ip_record, header) -
                   TRACECTL_IP_HEADER_MAX)});
    // An IPv4 record's header has 20 bytes: no field keeps more of it.
    const auto v4never = unite({never, header(20, TRACECTL_IP_HEADER_MAX - 20)});
    for (const auto& f : ipEventFields()) {
        for (const std::size_t i : keptBytes(*ipFieldRecordMask(f.name), 4))
            EXPECT_FALSE(v4never.contains(i)) << f.name << " keeps byte " << i << " for IPv4";
        for (const std::size_t i : keptBytes(*ipFieldRecordMask(f.name), 6))
            EXPECT_FALSE(never.contains(i)) << f.name << " keeps byte " << i << " for IPv6";
    }
}

// The bug the per-version masks fix, from the real layouts: IPv4's source
// address is header[12..15] (header[8..11] are its TTL, protocol and
// checksum, header[16..19] its destination), IPv6's is header[8..23]. An
// IPv4 key of ip_saddr keeping header[8..11] or header[16..23] would differ
// per packet (the checksum follows the ident), one key per datagram; an
// IPv6 key keeps exactly the 16 bytes of its source.
TEST(IpFieldRecordMask, SourceAddressKeepsOnlyItsVersionsBytes) {
    const IpRecordMask mask = *ipFieldRecordMask("ip_saddr");
    const IpRecordMask v4 = ipRecordMaskFor(mask, 4);
    const IpRecordMask v6 = ipRecordMaskFor(mask, 6);
    const std::size_t h = offsetof(tracectl_ip_record, header);
    for (std::size_t i = 8; i < 12; ++i)
        EXPECT_EQ(v4[h + i], 0) << "IPv4 key keeps header[" << i << "]";
    for (std::size_t i = 12; i < 16; ++i)
        EXPECT_EQ(v4[h + i], 0xff) << "IPv4 key drops header[" << i << "]";
    for (std::size_t i = 16; i < 24; ++i)
        EXPECT_EQ(v4[h + i], 0) << "IPv4 key keeps header[" << i << "]";
    for (std::size_t i = 8; i < 24; ++i)
        EXPECT_EQ(v6[h + i], 0xff) << "IPv6 key drops header[" << i << "]";
    for (std::size_t i = 1; i < 8; ++i)
        EXPECT_EQ(v6[h + i], 0) << "IPv6 key keeps header[" << i << "]";
    for (std::size_t i = 24; i < TRACECTL_IP_HEADER_MAX; ++i)
        EXPECT_EQ(v6[h + i], 0) << "IPv6 key keeps header[" << i << "]";
    // The encoding: header[12..15] both (IPv4's source, inside IPv6's),
    // header[8..11] and [16..23] IPv6 only, the version's bytes both.
    EXPECT_EQ(mask[h + 8], 0x02);
    EXPECT_EQ(mask[h + 12], 0x03);
    EXPECT_EQ(mask[h + 16], 0x02);
    EXPECT_EQ(mask[h], 0x03);
    EXPECT_EQ(mask[offsetof(tracectl_ip_record, ip_ver)], 0x03);
    EXPECT_EQ(mask[offsetof(tracectl_ip_record, header_len)], 0x03);

    // Two IPv4 datagrams of one source that differ in TTL, ident and
    // checksum are one key; their sources differ, two keys.
    tracectl_ip_record a = ipv4Udp();
    tracectl_ip_record b = a;
    b.header[4] ^= 0x12;  // ident
    b.header[8] ^= 0x01;  // TTL
    b.header[10] ^= 0x34; // checksum
    const tracectl_ip_record keyA = masked(a, v4);
    tracectl_ip_record keyB = masked(b, v4);
    EXPECT_EQ(std::memcmp(&keyA, &keyB, sizeof keyA), 0);
    b.header[15] ^= 0x01;
    keyB = masked(b, v4);
    EXPECT_NE(std::memcmp(&keyA, &keyB, sizeof keyA), 0);
}

TEST(IpFieldRecordMask, MaskForAVersion) {
    IpRecordMask mask{};
    mask[0] = 0x01;
    mask[1] = 0x02;
    mask[2] = 0x03;
    IpRecordMask v4{};
    v4[0] = v4[2] = 0xff;
    IpRecordMask v6{};
    v6[1] = v6[2] = 0xff;
    EXPECT_EQ(ipRecordMaskFor(mask, 4), v4);
    EXPECT_EQ(ipRecordMaskFor(mask, 6), v6);
    // Any other ip_ver: IPv4's, as the program picks key_mask[0].
    EXPECT_EQ(ipRecordMaskFor(mask, 0), v4);
    EXPECT_EQ(ipRecordMaskFor(mask, 5), v4);
}

TEST(IpFieldRecordMask, UnknownNameHasNoMask) {
    EXPECT_FALSE(ipFieldRecordMask("ip_src").has_value());
    EXPECT_FALSE(ipFieldRecordMask("").has_value());
    EXPECT_FALSE(ipFieldRecordMask("_ip_saddr").has_value());
    EXPECT_FALSE(ipFieldRecordMask("probe").has_value());
}
