// The CTF payload of the `ip` provider's events (ip:send, ip:receive): DTrace's
// ip provider arguments args[0..5] (pktinfo_t, csinfo_t, ipinfo_t, ifinfo_t,
// ipv4info_t, ipv6info_t; oracle/dtrace-utils libdtrace/ip.d, illumos ip.d)
// flattened into one struct, then the udp/tcp providers' port members. The
// half that does not apply (IPv4 or IPv6) holds zeroes and "<null>" strings (as DTrace's ip.d);
// ip_ver says which half holds. ONE table (ip_event_fields.cpp) drives the
// three uses below, so they cannot disagree.
#pragma once

#include "ip_probe_abi.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::ip {

/// One payload field: its name (without lttng-modules' `_` prefix) and its C
/// type as ListTracepoints shows it ("u8", "u16", "u32", "u64", "string",
/// "u8[16]").
struct IpEventField {
    std::string_view name;
    std::string_view ctype;
};

/// The payload fields, in payload order: pkt_addr, cs_addr, ip_ver,
/// ip_plength, ip_saddr, ip_daddr, if_name, if_local, if_ipstack, ipv4_ver,
/// ipv4_ihl, ipv4_tos, ipv4_length, ipv4_ident, ipv4_flags, ipv4_offset,
/// ipv4_ttl, ipv4_protocol, ipv4_protostr, ipv4_checksum, ipv4_src,
/// ipv4_dst, ipv4_saddr, ipv4_daddr, ipv6_ver, ipv6_tclass, ipv6_flow,
/// ipv6_plen, ipv6_nexthdr, ipv6_nextstr, ipv6_hlim, ipv6_src, ipv6_dst,
/// ipv6_saddr, ipv6_daddr, udp_sport, udp_dport, tcp_sport, tcp_dport.
std::span<const IpEventField> ipEventFields();

/// The TSDL 1.8 declarations of the payload fields, one per line, each line
/// starting with two tabs (inside an event's `fields := struct {`), in the
/// form kernel_metadata.cpp writes (src/daemon/metadata/tsdl_writer.cpp):
/// `integer { size = N; align = 8; signed = 0; encoding = none; base = B; } _name;`
/// (the trace's byte order, little-endian; base 16 for pkt_addr, cs_addr,
/// ipv4_checksum, ipv4_src, ipv4_dst and the u8[16] address
/// arrays), `string _name;` for strings.
std::string ipEventTsdlFields();

/// Appends the payload of record `r` to `out`: exactly ipEventTsdlFields()'
/// layout (byte-aligned little-endian integers, NUL-terminated strings, 16
/// bytes per address array). Derived values: ip_plength = IPv4 total length
/// - ihl*4 (0 if negative) or IPv6 payload_len; ipv4_ihl in bytes (ihl*4, as
/// DTrace); ipv4_flags = (frag_off & 0xe000) >> 8 (DF 0x40, MF 0x20, as
/// illumos ip.d); ipv4_offset = frag_off & 0x1fff (8-byte units);
/// ipv4_src/dst in host byte order; ipv6_tclass/flow from the first word;
/// *_protostr/nextstr as oracle/dtrace-utils ip.d names them ("TCP", "UDP",
/// "ICMP", "ICMPv6", ...; the number in decimal otherwise); addresses as
/// inet_ntop(3) writes them; udp_* (resp. tcp_*) ports only when the
/// protocol is UDP (resp. TCP), 0 otherwise (and 0 for non-first
/// fragments: the record has no ports then). No allocation besides `out`'s
/// growth.
void appendIpEventFields(const tracectl_ip_record& r, std::vector<std::byte>& out);

/// Which bytes of a struct tracectl_ip_record a key keeps, for each IP
/// version: bit 0 (kIpRecordMaskV4, 0x01) keeps the byte in an IPv4 record's
/// key, bit 1 (kIpRecordMaskV6, 0x02) in an IPv6 record's; 0x03 in both, 0 in
/// neither. One mask cannot be ANDed with records of both versions: their
/// headers differ (IPv6's source address, header[8..23], is IPv4's TTL,
/// protocol, checksum and addresses), so a byte one version's field needs
/// would split the other version's keys. Masks combine with bitwise OR;
/// ipRecordMaskFor() gives the AND mask of one version.
using IpRecordMask = std::array<std::uint8_t, sizeof(tracectl_ip_record)>;

inline constexpr std::uint8_t kIpRecordMaskV4 = 0x01;
inline constexpr std::uint8_t kIpRecordMaskV6 = 0x02;

/// The bytes of a record that payload field `name` (ipEventFields()' names)
/// is computed from by appendIpEventFields, in IpRecordMask's encoding: a
/// record of either version ANDed with ipRecordMaskFor(mask, its ip_ver)
/// (also for the OR of several fields' masks) gives that field the same
/// value as the whole record does. The bytes that decide the half (ip_ver,
/// header_len and header[0], the version nibble's byte) are in every
/// field's mask, for both versions (0x03), as are the version-independent
/// bytes a field reads (skb, sk, netns_ino, if_name, if_local, the ports);
/// a header byte only one version's formula reads is kept for that version
/// alone (0x01 or 0x02). nullopt for an unknown name. The `probe` byte is
/// not included: ipRecordProbeMask() is.
std::optional<IpRecordMask> ipFieldRecordMask(std::string_view name);

/// The mask of the record's `probe` byte alone (send or receive), for both
/// versions (0x03).
IpRecordMask ipRecordProbeMask();

/// The byte mask (0xff: kept, 0x00: not) that `mask` (IpRecordMask's
/// encoding) means for a record of ip_ver `ipVer`: bit 1 for 6, bit 0 for
/// any other value (as the BPF program picks tracectl_ip_config's
/// key_mask[1] for ip_ver 6, key_mask[0] otherwise).
IpRecordMask ipRecordMaskFor(const IpRecordMask& mask, unsigned ipVer);

} // namespace tracectl::ip
