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
#include <string>
#include <sys/wait.h>
#include <vector>

using tracectl::ip::appendIpEventFields;
using tracectl::ip::ipEventFields;
using tracectl::ip::ipEventTsdlFields;

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
