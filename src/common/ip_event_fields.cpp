#include "ip_event_fields.hpp"

#include <arpa/inet.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tracectl::ip {
namespace {

enum class Kind { U8, U16, U32, U64, String, Bytes16 };

// What one record says, decoded once per event.
/// The text fields of the half that does not apply (IPv4's for an IPv6
/// packet and the reverse): "<null>", as oracle/dtrace-utils' ip.d
/// translators write them. Never an empty string: babeltrace2 2.0.4 (Debian
/// 12) reads an empty string as the previous event's value of that field
/// (its CTF reader skips the clear of a zero-length string).
constexpr const char* kAbsent = "<null>";

struct Decoded {
    const tracectl_ip_record* r;
    bool v4, v6;
    std::uint32_t plength;
    char saddr[INET6_ADDRSTRLEN];
    char daddr[INET6_ADDRSTRLEN];
    char ifName[TRACECTL_IP_IFNAMSIZ + 1];
    char protoText[4]; // a number as text when the protocol has no name
    const char* protoName;
    std::uint16_t frag;
    std::uint32_t v6word;
    bool udp, tcp;
};

std::uint16_t be16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}
std::uint32_t be32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
           std::uint32_t{p[3]};
}

// oracle/dtrace-utils libdtrace/ip.d, ipv4_protostr / ipv6_nextstr.
const char* protocolName(std::uint8_t p) {
    switch (p) {
    case 6:
        return "TCP";
    case 17:
        return "UDP";
    case 0:
        return "IP";
    case 1:
        return "ICMP";
    case 2:
        return "IGMP";
    case 8:
        return "EGP";
    case 41:
        return "IPv6";
    case 43:
        return "ROUTE";
    case 50:
        return "ESP";
    case 51:
        return "AH";
    case 58:
        return "ICMPv6";
    case 89:
        return "OSPF";
    case 132:
        return "SCTP";
    case 255:
        return "RAW";
    default:
        return nullptr;
    }
}

using Num = std::uint64_t (*)(const Decoded&);
using Str = const char* (*)(const Decoded&);
using Arr = const std::uint8_t* (*)(const Decoded&);

/// Bytes of a record (ipFieldRecordMask): what one field's formula reads,
/// for each IP version (IpRecordMask's encoding: 0x01 IPv4, 0x02 IPv6).
struct Reads {
    IpRecordMask mask{};

    constexpr Reads operator|(const Reads& other) const {
        Reads out;
        for (std::size_t i = 0; i < mask.size(); ++i)
            out.mask[i] = static_cast<std::uint8_t>(mask[i] | other.mask[i]);
        return out;
    }
};

constexpr std::uint8_t kBoth = kIpRecordMaskV4 | kIpRecordMaskV6;

/// Bytes [offset, offset + size) of the record, kept for the versions `versions`.
constexpr Reads bytesAt(std::size_t offset, std::size_t size, std::uint8_t versions = kBoth) {
    Reads out;
    for (std::size_t i = offset; i < offset + size; ++i)
        out.mask[i] = versions;
    return out;
}

/// Header bytes [from, from + size) that both versions' formulas read.
constexpr Reads hdr(std::size_t from, std::size_t size = 1) {
    return bytesAt(offsetof(tracectl_ip_record, header) + from, size);
}
/// Header bytes [from, from + size) read for IPv4 records only.
constexpr Reads v4hdr(std::size_t from, std::size_t size = 1) {
    return bytesAt(offsetof(tracectl_ip_record, header) + from, size, kIpRecordMaskV4);
}
/// Header bytes [from, from + size) read for IPv6 records only.
constexpr Reads v6hdr(std::size_t from, std::size_t size = 1) {
    return bytesAt(offsetof(tracectl_ip_record, header) + from, size, kIpRecordMaskV6);
}

constexpr Reads kSkb = bytesAt(offsetof(tracectl_ip_record, skb), sizeof(__u64));
constexpr Reads kSk = bytesAt(offsetof(tracectl_ip_record, sk), sizeof(__u64));
constexpr Reads kNetnsIno = bytesAt(offsetof(tracectl_ip_record, netns_ino), sizeof(__u64));
constexpr Reads kProbe = bytesAt(offsetof(tracectl_ip_record, probe), sizeof(__u8));
constexpr Reads kIpVer = bytesAt(offsetof(tracectl_ip_record, ip_ver), sizeof(__u8));
constexpr Reads kIfLocal = bytesAt(offsetof(tracectl_ip_record, if_local), sizeof(__u8));
constexpr Reads kHeaderLen = bytesAt(offsetof(tracectl_ip_record, header_len), sizeof(__u8));
constexpr Reads kSport = bytesAt(offsetof(tracectl_ip_record, sport), sizeof(__u16));
constexpr Reads kDport = bytesAt(offsetof(tracectl_ip_record, dport), sizeof(__u16));
constexpr Reads kIfName = bytesAt(offsetof(tracectl_ip_record, if_name), TRACECTL_IP_IFNAMSIZ);

// What decode() reads for its derived values (keep in step with it; each
// version's header bytes for that version only):
// - which half holds (d.v4, d.v6), part of every field's mask, both versions;
constexpr Reads kHalf = kIpVer | kHeaderLen | hdr(0);
// - d.plength: IPv4 ihl and total length, IPv6 payload length;
constexpr Reads kPlength = v4hdr(0) | v4hdr(2, 2) | v6hdr(4, 2);
// - d.saddr, d.daddr: IPv4's and IPv6's addresses;
constexpr Reads kSaddr = v4hdr(12, 4) | v6hdr(8, 16);
constexpr Reads kDaddr = v4hdr(16, 4) | v6hdr(24, 16);
// - d.udp, d.tcp: the protocol (IPv4 protocol, IPv6 next header) and
//   IPv4's fragment offset (d.frag; 0 for IPv6).
constexpr Reads kPorts =
    v4hdr(9) /* protocol */ | v4hdr(6, 2) /* frag_off */ | v6hdr(6) /* next header */;

struct Entry {
    IpEventField field;
    Kind kind;
    int base;
    Reads reads; // besides kHalf
    Num num = nullptr;
    Str str = nullptr;
    Arr arr = nullptr;
};

constexpr const std::uint8_t* kZero16 = nullptr; // replaced by zeroes on output

const std::uint8_t* h(const Decoded& d) {
    return d.r->header;
}
std::uint64_t v4(const Decoded& d, std::uint64_t v) {
    return d.v4 ? v : 0;
}
std::uint64_t v6(const Decoded& d, std::uint64_t v) {
    return d.v6 ? v : 0;
}

// The one table: payload order, names, types, what each field reads (its
// key mask; kHalf is added to every one; a header byte is v4hdr or v6hdr
// when only that version's formula reads it) and how it is computed.
const std::array<Entry, 39> kEntries{{
    {{"pkt_addr", "u64"},
     Kind::U64,
     16,
     kSkb,
     [](const Decoded& d) -> std::uint64_t { return d.r->skb; }},
    {{"cs_addr", "u64"},
     Kind::U64,
     16,
     kSk,
     [](const Decoded& d) -> std::uint64_t { return d.r->sk; }},
    {{"ip_ver", "u8"},
     Kind::U8,
     10,
     kIpVer,
     [](const Decoded& d) -> std::uint64_t { return d.r->ip_ver; }},
    {{"ip_plength", "u32"},
     Kind::U32,
     10,
     kPlength,
     [](const Decoded& d) -> std::uint64_t { return d.plength; }},
    {{"ip_saddr", "string"},
     Kind::String,
     10,
     kSaddr,
     nullptr,
     [](const Decoded& d) -> const char* { return d.saddr; }},
    {{"ip_daddr", "string"},
     Kind::String,
     10,
     kDaddr,
     nullptr,
     [](const Decoded& d) -> const char* { return d.daddr; }},
    {{"if_name", "string"},
     Kind::String,
     10,
     kIfName,
     nullptr,
     [](const Decoded& d) -> const char* { return d.ifName; }},
    {{"if_local", "u8"},
     Kind::U8,
     10,
     kIfLocal,
     [](const Decoded& d) -> std::uint64_t { return d.r->if_local; }},
    {{"if_ipstack", "u64"},
     Kind::U64,
     10, // as readlink /proc/PID/ns/net prints it
     kNetnsIno,
     [](const Decoded& d) -> std::uint64_t { return d.r->netns_ino; }},
    {{"ipv4_ver", "u8"},
     Kind::U8,
     10,
     v4hdr(0),
     [](const Decoded& d) -> std::uint64_t { return v4(d, h(d)[0] >> 4); }},
    {{"ipv4_ihl", "u8"},
     Kind::U8,
     10,
     v4hdr(0),
     [](const Decoded& d) -> std::uint64_t { return v4(d, (h(d)[0] & 0xfU) * 4); }},
    {{"ipv4_tos", "u8"},
     Kind::U8,
     10,
     v4hdr(1),
     [](const Decoded& d) -> std::uint64_t { return v4(d, h(d)[1]); }},
    {{"ipv4_length", "u16"},
     Kind::U16,
     10,
     v4hdr(2, 2),
     [](const Decoded& d) -> std::uint64_t { return v4(d, be16(h(d) + 2)); }},
    {{"ipv4_ident", "u16"},
     Kind::U16,
     10,
     v4hdr(4, 2),
     [](const Decoded& d) -> std::uint64_t { return v4(d, be16(h(d) + 4)); }},
    {{"ipv4_flags", "u8"},
     Kind::U8,
     10,
     v4hdr(6), // frag & 0xe000: the first byte of frag_off
     [](const Decoded& d) -> std::uint64_t { return v4(d, (d.frag & 0xe000U) >> 8); }},
    {{"ipv4_offset", "u16"},
     Kind::U16,
     10,
     v4hdr(6, 2),
     [](const Decoded& d) -> std::uint64_t { return v4(d, d.frag & 0x1fffU); }},
    {{"ipv4_ttl", "u8"},
     Kind::U8,
     10,
     v4hdr(8),
     [](const Decoded& d) -> std::uint64_t { return v4(d, h(d)[8]); }},
    {{"ipv4_protocol", "u8"},
     Kind::U8,
     10,
     v4hdr(9),
     [](const Decoded& d) -> std::uint64_t { return v4(d, h(d)[9]); }},
    {{"ipv4_protostr", "string"},
     Kind::String,
     10,
     v4hdr(9),
     nullptr,
     [](const Decoded& d) -> const char* { return d.v4 ? d.protoName : kAbsent; }},
    {{"ipv4_checksum", "u16"},
     Kind::U16,
     16,
     v4hdr(10, 2),
     [](const Decoded& d) -> std::uint64_t { return v4(d, be16(h(d) + 10)); }},
    {{"ipv4_src", "u32"},
     Kind::U32,
     16,
     v4hdr(12, 4),
     [](const Decoded& d) -> std::uint64_t { return v4(d, be32(h(d) + 12)); }},
    {{"ipv4_dst", "u32"},
     Kind::U32,
     16,
     v4hdr(16, 4),
     [](const Decoded& d) -> std::uint64_t { return v4(d, be32(h(d) + 16)); }},
    {{"ipv4_saddr", "string"},
     Kind::String,
     10,
     v4hdr(12, 4),
     nullptr,
     [](const Decoded& d) -> const char* { return d.v4 ? d.saddr : kAbsent; }},
    {{"ipv4_daddr", "string"},
     Kind::String,
     10,
     v4hdr(16, 4),
     nullptr,
     [](const Decoded& d) -> const char* { return d.v4 ? d.daddr : kAbsent; }},
    {{"ipv6_ver", "u8"},
     Kind::U8,
     10,
     v6hdr(0),
     [](const Decoded& d) -> std::uint64_t { return v6(d, d.v6word >> 28); }},
    {{"ipv6_tclass", "u8"},
     Kind::U8,
     10,
     v6hdr(0, 2),
     [](const Decoded& d) -> std::uint64_t { return v6(d, (d.v6word >> 20) & 0xffU); }},
    {{"ipv6_flow", "u32"},
     Kind::U32,
     10,
     v6hdr(1, 3),
     [](const Decoded& d) -> std::uint64_t { return v6(d, d.v6word & 0xfffffU); }},
    {{"ipv6_plen", "u16"},
     Kind::U16,
     10,
     v6hdr(4, 2),
     [](const Decoded& d) -> std::uint64_t { return v6(d, be16(h(d) + 4)); }},
    {{"ipv6_nexthdr", "u8"},
     Kind::U8,
     10,
     v6hdr(6),
     [](const Decoded& d) -> std::uint64_t { return v6(d, h(d)[6]); }},
    {{"ipv6_nextstr", "string"},
     Kind::String,
     10,
     v6hdr(6),
     nullptr,
     [](const Decoded& d) -> const char* { return d.v6 ? d.protoName : kAbsent; }},
    {{"ipv6_hlim", "u8"},
     Kind::U8,
     10,
     v6hdr(7),
     [](const Decoded& d) -> std::uint64_t { return v6(d, h(d)[7]); }},
    {{"ipv6_src", "u8[16]"},
     Kind::Bytes16,
     16,
     v6hdr(8, 16),
     nullptr,
     nullptr,
     [](const Decoded& d) -> const std::uint8_t* { return d.v6 ? h(d) + 8 : kZero16; }},
    {{"ipv6_dst", "u8[16]"},
     Kind::Bytes16,
     16,
     v6hdr(24, 16),
     nullptr,
     nullptr,
     [](const Decoded& d) -> const std::uint8_t* { return d.v6 ? h(d) + 24 : kZero16; }},
    {{"ipv6_saddr", "string"},
     Kind::String,
     10,
     v6hdr(8, 16),
     nullptr,
     [](const Decoded& d) -> const char* { return d.v6 ? d.saddr : kAbsent; }},
    {{"ipv6_daddr", "string"},
     Kind::String,
     10,
     v6hdr(24, 16),
     nullptr,
     [](const Decoded& d) -> const char* { return d.v6 ? d.daddr : kAbsent; }},
    {{"udp_sport", "u16"},
     Kind::U16,
     10,
     kSport | kPorts,
     [](const Decoded& d) -> std::uint64_t { return d.udp ? d.r->sport : 0; }},
    {{"udp_dport", "u16"},
     Kind::U16,
     10,
     kDport | kPorts,
     [](const Decoded& d) -> std::uint64_t { return d.udp ? d.r->dport : 0; }},
    {{"tcp_sport", "u16"},
     Kind::U16,
     10,
     kSport | kPorts,
     [](const Decoded& d) -> std::uint64_t { return d.tcp ? d.r->sport : 0; }},
    {{"tcp_dport", "u16"},
     Kind::U16,
     10,
     kDport | kPorts,
     [](const Decoded& d) -> std::uint64_t { return d.tcp ? d.r->dport : 0; }},
}};

const std::array<IpEventField, kEntries.size()> kFields = [] {
    std::array<IpEventField, kEntries.size()> out{};
    for (std::size_t i = 0; i < kEntries.size(); ++i)
        out[i] = kEntries[i].field;
    return out;
}();

unsigned sizeBits(Kind k) {
    switch (k) {
    case Kind::U8:
        return 8;
    case Kind::U16:
        return 16;
    case Kind::U32:
        return 32;
    case Kind::U64:
        return 64;
    default:
        return 8;
    }
}

void decode(const tracectl_ip_record& r, Decoded& d) {
    d.r = &r;
    const std::uint8_t* hd = r.header;
    const std::uint8_t ver = hd[0] >> 4;
    d.v4 = r.ip_ver == 4 && ver == 4 && r.header_len >= 20;
    d.v6 = r.ip_ver == 6 && ver == 6 && r.header_len >= 40;
    d.saddr[0] = d.daddr[0] = '\0';
    d.plength = 0;
    d.frag = 0;
    d.v6word = 0;
    std::uint8_t proto = 0;
    if (d.v4) {
        const unsigned ihl = (hd[0] & 0xfU) * 4;
        const unsigned total = be16(hd + 2);
        d.plength = total > ihl ? total - ihl : 0;
        d.frag = be16(hd + 6);
        proto = hd[9];
        ::inet_ntop(AF_INET, hd + 12, d.saddr, sizeof d.saddr);
        ::inet_ntop(AF_INET, hd + 16, d.daddr, sizeof d.daddr);
    } else if (d.v6) {
        d.plength = be16(hd + 4);
        d.v6word = be32(hd);
        proto = hd[6];
        ::inet_ntop(AF_INET6, hd + 8, d.saddr, sizeof d.saddr);
        ::inet_ntop(AF_INET6, hd + 24, d.daddr, sizeof d.daddr);
    }
    std::memcpy(d.ifName, r.if_name, TRACECTL_IP_IFNAMSIZ);
    d.ifName[TRACECTL_IP_IFNAMSIZ] = '\0';
    d.protoName = protocolName(proto);
    if (!d.protoName) {
        // Up to three decimal digits.
        char* p = d.protoText;
        if (proto >= 100)
            *p++ = static_cast<char>('0' + proto / 100);
        if (proto >= 10)
            *p++ = static_cast<char>('0' + proto / 10 % 10);
        *p++ = static_cast<char>('0' + proto % 10);
        *p = '\0';
        d.protoName = d.protoText;
    }
    const bool ports = (d.v4 || d.v6) && (d.frag & 0x1fffU) == 0;
    d.udp = ports && proto == 17;
    d.tcp = ports && proto == 6;
}

} // namespace

std::span<const IpEventField> ipEventFields() {
    return kFields;
}

std::optional<IpRecordMask> ipFieldRecordMask(std::string_view name) {
    for (const Entry& e : kEntries)
        if (e.field.name == name)
            return (e.reads | kHalf).mask;
    return std::nullopt;
}

IpRecordMask ipRecordProbeMask() {
    return kProbe.mask;
}

IpRecordMask ipRecordMaskFor(const IpRecordMask& mask, unsigned ipVer) {
    const std::uint8_t bit = ipVer == 6 ? kIpRecordMaskV6 : kIpRecordMaskV4;
    IpRecordMask out{};
    for (std::size_t i = 0; i < mask.size(); ++i)
        out[i] = (mask[i] & bit) ? 0xff : 0x00;
    return out;
}

std::string ipEventTsdlFields() {
    std::string out;
    for (const Entry& e : kEntries) {
        out += "\t\t";
        if (e.kind == Kind::String) {
            out += "string";
        } else {
            out += "integer { size = " + std::to_string(sizeBits(e.kind)) +
                   "; align = 8; signed = 0; encoding = none; base = " + std::to_string(e.base) +
                   "; }";
        }
        out += " _";
        out += e.field.name;
        if (e.kind == Kind::Bytes16)
            out += "[16]";
        out += ";\n";
    }
    return out;
}

void appendIpEventFields(const tracectl_ip_record& r, std::vector<std::byte>& out) {
    Decoded d;
    decode(r, d);
    for (const Entry& e : kEntries) {
        switch (e.kind) {
        case Kind::String: {
            const char* s = e.str(d);
            const std::size_t n = std::strlen(s) + 1;
            const std::size_t at = out.size();
            out.resize(at + n);
            std::memcpy(out.data() + at, s, n);
            break;
        }
        case Kind::Bytes16: {
            const std::uint8_t* a = e.arr(d);
            const std::size_t at = out.size();
            out.resize(at + 16);
            if (a)
                std::memcpy(out.data() + at, a, 16);
            else
                std::memset(out.data() + at, 0, 16);
            break;
        }
        default: {
            // Little-endian, the trace's byte order (x86).
            std::uint64_t v = e.num(d);
            const std::size_t n = sizeBits(e.kind) / 8;
            const std::size_t at = out.size();
            out.resize(at + n);
            for (std::size_t i = 0; i < n; ++i, v >>= 8)
                out[at + i] = static_cast<std::byte>(v & 0xff);
        }
        }
    }
}

} // namespace tracectl::ip
