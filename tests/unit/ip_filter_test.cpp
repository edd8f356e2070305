// The `ip` provider's in-kernel filter compiler (src/daemon/ip/ip_filter.hpp):
// the compiled DNF of representative expressions and every refusal with its
// column. The semantics against real packets: ip_probes_live_test.cpp.
#include "filter/filter_error.hpp"
#include "ip/ip_filter.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <gtest/gtest.h>
#include <string>

using tracectl::filter::FilterError;
using tracectl::ip::compileIpFilter;
using tracectl::ip::IpFilterProgram;

namespace {

constexpr std::uint32_t kSend = 1U << TRACECTL_IP_SEND;
constexpr std::uint32_t kReceive = 1U << TRACECTL_IP_RECEIVE;
constexpr std::uint32_t kBoth = kSend | kReceive;

tracectl_ip_filter compile(const std::string& expr, std::uint32_t mask = kBoth) {
    return compileIpFilter({{mask, expr}}).filter;
}

void expectAtom(const tracectl_ip_atom& a, tracectl_ip_field field, tracectl_ip_op op,
                std::uint64_t value) {
    EXPECT_EQ(a.field, field);
    EXPECT_EQ(a.op, op);
    EXPECT_EQ(a.value, value);
}

// Refused, at the column of the first occurrence of `token` in `expr`.
void expectRefused(const std::string& expr, const std::string& token, const std::string& reason) {
    SCOPED_TRACE(expr);
    try {
        compile(expr);
        ADD_FAILURE() << "accepted";
    } catch (const FilterError& e) {
        ASSERT_NE(expr.find(token), std::string::npos);
        EXPECT_EQ(e.column(), expr.find(token) + 1) << e.what();
        EXPECT_NE(e.reason().find(reason), std::string::npos) << e.what();
    }
}

std::string chain(const char* op, int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
        s += (i ? std::string(" ") + op + " " : "") + "udp_dport == " + std::to_string(i);
    return s;
}

} // namespace

TEST(IpFilter, NoRulesPassNothingAndAnEmptyExpressionPassesAll) {
    EXPECT_EQ(compileIpFilter({}).filter.n_conj, 0U);
    EXPECT_EQ(IpFilterProgram{}.filter.n_conj, 0U);
    const tracectl_ip_filter f = compile("", kSend);
    ASSERT_EQ(f.n_conj, 1U);
    EXPECT_EQ(f.conj[0].probe_mask, kSend);
    EXPECT_EQ(f.conj[0].n_atoms, 0U);
    EXPECT_EQ(compile("  ").n_conj, 1U);
    EXPECT_EQ(compile("1").n_conj, 1U);
    EXPECT_EQ(compile("1").conj[0].n_atoms, 0U);
    EXPECT_EQ(compile("0").n_conj, 0U);
    EXPECT_EQ(compile("!1").n_conj, 0U);
    // A rule without probes contributes nothing (but is still checked).
    EXPECT_EQ(compileIpFilter({{0, "ip_ver == 4"}}).filter.n_conj, 0U);
    EXPECT_THROW(compileIpFilter({{0, "nope == 4"}}), FilterError);
}

TEST(IpFilter, IntegerComparisons) {
    tracectl_ip_filter f = compile("ip_ver == 4");
    ASSERT_EQ(f.n_conj, 1U);
    EXPECT_EQ(f.conj[0].probe_mask, kBoth);
    ASSERT_EQ(f.conj[0].n_atoms, 1U);
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IP_VER, TRACECTL_IP_OP_EQ, 4);
    // A constant on the left mirrors the operator.
    f = compile("100 < ip_plength");
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IP_PLENGTH, TRACECTL_IP_OP_GT, 100);
    f = compile("53 >= udp_sport");
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_UDP_SPORT, TRACECTL_IP_OP_LE, 53);
    const struct {
        const char* name;
        tracectl_ip_field field;
    } fields[] = {{"ip_ver", TRACECTL_IP_F_IP_VER},
                  {"ip_plength", TRACECTL_IP_F_IP_PLENGTH},
                  {"udp_sport", TRACECTL_IP_F_UDP_SPORT},
                  {"udp_dport", TRACECTL_IP_F_UDP_DPORT},
                  {"tcp_sport", TRACECTL_IP_F_TCP_SPORT},
                  {"tcp_dport", TRACECTL_IP_F_TCP_DPORT},
                  {"ipv4_protocol", TRACECTL_IP_F_IPV4_PROTOCOL},
                  {"ipv6_nexthdr", TRACECTL_IP_F_IPV6_NEXTHDR},
                  {"if_local", TRACECTL_IP_F_IF_LOCAL},
                  {"if_ipstack", TRACECTL_IP_F_IF_IPSTACK},
                  {"ipv4_ttl", TRACECTL_IP_F_IPV4_TTL},
                  {"ipv6_hlim", TRACECTL_IP_F_IPV6_HLIM}};
    const struct {
        const char* text;
        tracectl_ip_op op;
    } ops[] = {{"==", TRACECTL_IP_OP_EQ}, {"!=", TRACECTL_IP_OP_NE}, {"<", TRACECTL_IP_OP_LT},
               {"<=", TRACECTL_IP_OP_LE}, {">", TRACECTL_IP_OP_GT},  {">=", TRACECTL_IP_OP_GE}};
    for (const auto& fd : fields)
        for (const auto& op : ops) {
            f = compile(std::string(fd.name) + " " + op.text + " 4026531840");
            ASSERT_EQ(f.n_conj, 1U);
            expectAtom(f.conj[0].atoms[0], fd.field, op.op, 4026531840ULL);
        }
    // A field alone is `field != 0`.
    f = compile("if_local");
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IF_LOCAL, TRACECTL_IP_OP_NE, 0);
    f = compile("!if_local");
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IF_LOCAL, TRACECTL_IP_OP_EQ, 0);
    f = compile("0x10 == ipv4_protocol");
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IPV4_PROTOCOL, TRACECTL_IP_OP_EQ, 16);
}

TEST(IpFilter, NegationsArePushedIntoTheAtoms) {
    tracectl_ip_filter f = compile("!(ip_ver == 4 && udp_dport != 53)");
    ASSERT_EQ(f.n_conj, 2U);
    ASSERT_EQ(f.conj[0].n_atoms, 1U);
    ASSERT_EQ(f.conj[1].n_atoms, 1U);
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IP_VER, TRACECTL_IP_OP_NE, 4);
    expectAtom(f.conj[1].atoms[0], TRACECTL_IP_F_UDP_DPORT, TRACECTL_IP_OP_EQ, 53);
    f = compile("!(ip_plength < 10 || ip_plength >= 20)");
    ASSERT_EQ(f.n_conj, 1U);
    ASSERT_EQ(f.conj[0].n_atoms, 2U);
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IP_PLENGTH, TRACECTL_IP_OP_GE, 10);
    expectAtom(f.conj[0].atoms[1], TRACECTL_IP_F_IP_PLENGTH, TRACECTL_IP_OP_LT, 20);
    f = compile("!!(ip_plength <= 1) && !(ip_plength > 2)");
    ASSERT_EQ(f.n_conj, 1U);
    expectAtom(f.conj[0].atoms[0], TRACECTL_IP_F_IP_PLENGTH, TRACECTL_IP_OP_LE, 1);
    expectAtom(f.conj[0].atoms[1], TRACECTL_IP_F_IP_PLENGTH, TRACECTL_IP_OP_LE, 2);
    f = compile("!(ip_saddr == \"127.0.0.1\")");
    EXPECT_EQ(f.conj[0].atoms[0].op, TRACECTL_IP_OP_NE);
}

TEST(IpFilter, DistributesAndOverOr) {
    const tracectl_ip_filter f =
        compile("(ip_ver == 4 || ip_ver == 6) && (udp_dport == 53 || tcp_dport == 80)");
    ASSERT_EQ(f.n_conj, 4U);
    const std::uint64_t vers[] = {4, 4, 6, 6};
    for (unsigned i = 0; i < 4; ++i) {
        ASSERT_EQ(f.conj[i].n_atoms, 2U);
        expectAtom(f.conj[i].atoms[0], TRACECTL_IP_F_IP_VER, TRACECTL_IP_OP_EQ, vers[i]);
        if (i % 2 == 0)
            expectAtom(f.conj[i].atoms[1], TRACECTL_IP_F_UDP_DPORT, TRACECTL_IP_OP_EQ, 53);
        else
            expectAtom(f.conj[i].atoms[1], TRACECTL_IP_F_TCP_DPORT, TRACECTL_IP_OP_EQ, 80);
    }
}

TEST(IpFilter, Addresses) {
    tracectl_ip_filter f = compile("ip_saddr == \"127.0.0.2\"");
    const tracectl_ip_atom& a = f.conj[0].atoms[0];
    EXPECT_EQ(a.field, TRACECTL_IP_F_IP_SADDR);
    EXPECT_EQ(a.op, TRACECTL_IP_OP_EQ);
    EXPECT_EQ(a.addr_ver, 4);
    const std::uint8_t v4[16] = {127, 0, 0, 2};
    EXPECT_EQ(std::memcmp(a.bytes, v4, 16), 0);
    f = compile("\"2001:db8::1\" != ip_daddr");
    const tracectl_ip_atom& b = f.conj[0].atoms[0];
    EXPECT_EQ(b.field, TRACECTL_IP_F_IP_DADDR);
    EXPECT_EQ(b.op, TRACECTL_IP_OP_NE);
    EXPECT_EQ(b.addr_ver, 6);
    std::uint8_t v6[16];
    ::inet_pton(AF_INET6, "2001:db8::1", v6);
    EXPECT_EQ(std::memcmp(b.bytes, v6, 16), 0);
}

TEST(IpFilter, InterfaceNames) {
    tracectl_ip_filter f = compile("if_name == \"lo\"");
    const tracectl_ip_atom& a = f.conj[0].atoms[0];
    EXPECT_EQ(a.field, TRACECTL_IP_F_IF_NAME);
    EXPECT_EQ(a.name_len, 3); // "lo" and its NUL
    EXPECT_EQ(std::memcmp(a.bytes, "lo\0", 3), 0);
    f = compile("if_name != \"eth*\"");
    const tracectl_ip_atom& b = f.conj[0].atoms[0];
    EXPECT_EQ(b.op, TRACECTL_IP_OP_NE);
    EXPECT_EQ(b.name_len, 3); // the prefix "eth"
    EXPECT_EQ(std::memcmp(b.bytes, "eth", 3), 0);
    EXPECT_EQ(b.bytes[3], 0);
    EXPECT_EQ(compile("if_name == \"*\"").conj[0].atoms[0].name_len, 0);
    EXPECT_EQ(compile("if_name == \"abcdefghijklmno\"").conj[0].atoms[0].name_len, 16);
}

TEST(IpFilter, RulesAreUnitedWithTheirProbes) {
    const tracectl_ip_filter f =
        compileIpFilter({{kSend, ""}, {kReceive, "ip_ver == 6 || if_local"}, {kBoth, "0"}}).filter;
    ASSERT_EQ(f.n_conj, 3U);
    EXPECT_EQ(f.conj[0].probe_mask, kSend);
    EXPECT_EQ(f.conj[0].n_atoms, 0U);
    EXPECT_EQ(f.conj[1].probe_mask, kReceive);
    EXPECT_EQ(f.conj[2].probe_mask, kReceive);
    expectAtom(f.conj[2].atoms[0], TRACECTL_IP_F_IF_LOCAL, TRACECTL_IP_OP_NE, 0);
    // Unknown probe bits are ignored.
    EXPECT_EQ(compileIpFilter({{0xff, ""}}).filter.conj[0].probe_mask, kBoth);
}

TEST(IpFilter, RefusesWhatTheKernelCannotEvaluate) {
    const std::string kernel = "cannot be evaluated in the kernel";
    expectRefused("udp_dport == 53 && foo == 1", "foo", "field 'foo' " + kernel);
    // LTTng's own checks (filter_check.hpp) refuse some first, in its words.
    expectRefused("ip_ver + 1 == 5", "+", "binary operation '+' not supported");
    expectRefused("(ip_ver & 4) == 4", "&", "operator '&' in a comparison " + kernel);
    expectRefused("ip_ver == (4 == 4)", "== 4)", "operator '=='");
    expectRefused("$ctx.tid == 5", "$ctx", "$ctx.tid " + kernel);
    expectRefused("$app.prov:ctx == 5", "$app", kernel);
    expectRefused("-1 == ip_ver", "-", "operator '-' in a comparison " + kernel);
    expectRefused("~ip_ver == 1", "~", "operator '~'");
    expectRefused("ip_ver == 4.5", "4.5", "floating-point");
    expectRefused("ip_ver == ip_plength", "ip_plength", "two fields");
    expectRefused("ip_ver.x == 4", "ip_ver", "field path");
    expectRefused("ip_ver[1] == 4", "ip_ver", "field path");
    expectRefused("udp_dport == \"53\"", "\"53\"", "integer constant");
    expectRefused("ip_saddr == 5", "5", "anything but a string");
    expectRefused("ip_saddr < \"1.2.3.4\"", "<", "Only '==' and '!='");
    expectRefused("ip_saddr == \"10.0.0.256\"", "\"10.0",
                  "\"10.0.0.256\" is neither an IPv4 nor an IPv6 address");
    expectRefused("ip_daddr != \"localhost\"", "\"local", "\"localhost\" is neither");
    // Found by a fresh-user pass: accepted, and then matched nothing.
    expectRefused("ip_saddr == \"::ffff:127.0.0.1\"", "\"::ff", "IPv4-mapped");
    expectRefused("ip_daddr == \"fe80::1%lo\"", "\"fe80", "zone id");
    expectRefused("ip_saddr == \"10.*\"", "\"10", "glob");
    expectRefused("if_name == \"e*h\"", "\"e", "glob");
    expectRefused("if_name == \"abcdefghijklmnop\"", "\"abc", "longer than 15 bytes");
    expectRefused("if_name == \"a\\\\b\"", "\\", "escape");
    expectRefused("ip_saddr", "ip_saddr", "as a truth value");
    expectRefused("ip_ver == 4 && \"x\"", "&&", "string operand");
    expectRefused("ip_ver > 4 == 1", ">", "operator '>' in a comparison");
}

TEST(IpFilter, RefusesWhatExceedsTheBounds) {
    EXPECT_EQ(compile(chain("||", TRACECTL_IP_MAX_CONJ)).n_conj, 16U);
    EXPECT_EQ(compile(chain("&&", TRACECTL_IP_MAX_ATOMS)).conj[0].n_atoms, 8U);
    const std::string ors = chain("||", TRACECTL_IP_MAX_CONJ + 1);
    try {
        compile(ors);
        ADD_FAILURE() << "accepted";
    } catch (const FilterError& e) {
        EXPECT_EQ(e.column(), ors.rfind("||") + 1) << e.what();
        EXPECT_NE(e.reason().find("more than 16 alternatives"), std::string::npos);
    }
    const std::string ands = chain("&&", TRACECTL_IP_MAX_ATOMS + 1);
    try {
        compile(ands);
        ADD_FAILURE() << "accepted";
    } catch (const FilterError& e) {
        EXPECT_EQ(e.column(), ands.rfind("&&") + 1) << e.what();
        EXPECT_NE(e.reason().find("more than 8 comparisons"), std::string::npos);
    }
    // (a||b) && (c||d) && ... 5 times: 32 alternatives.
    std::string product;
    for (int i = 0; i < 5; ++i)
        product += std::string(i ? " && " : "") + "(ip_ver == 4 || ip_ver == 6)";
    EXPECT_THROW(compile(product), FilterError);
    std::vector<tracectl::ip::IpRuleFilter> rules(TRACECTL_IP_MAX_CONJ + 1, {kBoth, ""});
    try {
        compileIpFilter(rules);
        ADD_FAILURE() << "accepted";
    } catch (const FilterError& e) {
        EXPECT_EQ(e.column(), 0U);
        EXPECT_NE(e.reason().find("ip rules need more than 16"), std::string::npos);
    }
}

TEST(IpFilter, SyntaxErrorsKeepTheParsersColumn) {
    try {
        compile("ip_ver == ");
        ADD_FAILURE() << "accepted";
    } catch (const FilterError& e) {
        EXPECT_GT(e.column(), 0U);
    }
    EXPECT_THROW(compile("ip_ver == 4 &&"), FilterError);
}
