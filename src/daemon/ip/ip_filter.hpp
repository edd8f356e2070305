// The `ip` provider's in-kernel filter: the session's ip rules (LTTng 2.13
// filter expressions, src/daemon/filter/) compiled into the configuration
// the BPF program evaluates (struct tracectl_ip_filter,
// src/common/ip_probe_abi.h): a disjunction of at most
// TRACECTL_IP_MAX_CONJ conjunctions of at most TRACECTL_IP_MAX_ATOMS atoms.
#pragma once

#include "ip_probe_abi.h"

#include <cstdint>
#include <linux/types.h>
#include <string>
#include <vector>

namespace tracectl::ip {

/// One enabled ip rule of a session: the probes it covers and its filter.
struct IpRuleFilter {
    /// 1 << TRACECTL_IP_SEND | 1 << TRACECTL_IP_RECEIVE (bits of the probes).
    std::uint32_t probeMask = 0;
    /// LTTng filter text; "" = every packet of those probes.
    std::string expression;
};

/// The compiled filter, as the BPF program's `config` map holds it. A
/// default-constructed program passes nothing (no conjunction).
struct IpFilterProgram {
    tracectl_ip_filter filter{};
};

/// Compiles the union (OR) of `rules` into disjunctive normal form, with the
/// negations pushed into the atoms. Fields (the payload names of
/// ip_event_fields.hpp): ip_ver, ip_plength, udp_sport, udp_dport,
/// tcp_sport, tcp_dport, ipv4_protocol, ipv6_nexthdr, if_local, if_ipstack,
/// ipv4_ttl, ipv6_hlim (integers: == != < <= > >= against an integer
/// constant, either side); ip_saddr, ip_daddr (== != against a string
/// holding an IPv4 or IPv6 address, inet_pton(3)); if_name (== != against a
/// string, at most 15 bytes, optionally ending in a `*` glob). Operators
/// `&&`, `||`, `!`, parentheses. Throws filter::FilterError (the column of
/// the offending token) for a syntax error, any other field, operator or
/// constant ("cannot be evaluated in the kernel"), an unparsable address,
/// and for more than TRACECTL_IP_MAX_CONJ conjunctions or
/// TRACECTL_IP_MAX_ATOMS atoms in one conjunction (column 0).
IpFilterProgram compileIpFilter(const std::vector<IpRuleFilter>& rules);

} // namespace tracectl::ip
