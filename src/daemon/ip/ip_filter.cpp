#include "ip/ip_filter.hpp"

#include "filter/filter_check.hpp"
#include "filter/filter_error.hpp"
#include "filter/filter_parser.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <string_view>
#include <vector>

namespace tracectl::ip {
namespace {

using filter::BinaryOp;
using filter::FilterError;
using filter::Node;
using filter::NodeKind;
using filter::UnaryOp;

enum class Kind { Integer, Address, Name };

struct FieldInfo {
    std::string_view name;
    tracectl_ip_field field;
    Kind kind;
};

constexpr FieldInfo kFields[] = {
    {"ip_ver", TRACECTL_IP_F_IP_VER, Kind::Integer},
    {"ip_plength", TRACECTL_IP_F_IP_PLENGTH, Kind::Integer},
    {"ip_saddr", TRACECTL_IP_F_IP_SADDR, Kind::Address},
    {"ip_daddr", TRACECTL_IP_F_IP_DADDR, Kind::Address},
    {"if_name", TRACECTL_IP_F_IF_NAME, Kind::Name},
    {"udp_sport", TRACECTL_IP_F_UDP_SPORT, Kind::Integer},
    {"udp_dport", TRACECTL_IP_F_UDP_DPORT, Kind::Integer},
    {"tcp_sport", TRACECTL_IP_F_TCP_SPORT, Kind::Integer},
    {"tcp_dport", TRACECTL_IP_F_TCP_DPORT, Kind::Integer},
    {"ipv4_protocol", TRACECTL_IP_F_IPV4_PROTOCOL, Kind::Integer},
    {"ipv6_nexthdr", TRACECTL_IP_F_IPV6_NEXTHDR, Kind::Integer},
    {"if_local", TRACECTL_IP_F_IF_LOCAL, Kind::Integer},
    {"if_ipstack", TRACECTL_IP_F_IF_IPSTACK, Kind::Integer},
    {"ipv4_ttl", TRACECTL_IP_F_IPV4_TTL, Kind::Integer},
    {"ipv6_hlim", TRACECTL_IP_F_IPV6_HLIM, Kind::Integer},
};

using Conj = std::vector<tracectl_ip_atom>;
using Dnf = std::vector<Conj>; // empty: false; one empty Conj: true

[[noreturn]] void notInKernel(std::size_t column, const std::string& what) {
    throw FilterError(column, what + " cannot be evaluated in the kernel by the ip probes");
}

const FieldInfo& fieldOf(const Node& n) {
    if (n.root != filter::FieldRoot::Payload) {
        std::string name = n.path.empty() ? std::string{} : n.path.front().name;
        notInKernel(n.column,
                    std::string(n.root == filter::FieldRoot::Context ? "$ctx." : "$app.") + name);
    }
    if (n.path.size() != 1 || n.path.front().index)
        notInKernel(n.column, "a field path or index");
    for (const FieldInfo& f : kFields)
        if (f.name == n.path.front().name)
            return f;
    notInKernel(n.column, "field '" + n.path.front().name + "'");
}

tracectl_ip_op toOp(BinaryOp op) {
    switch (op) {
    case BinaryOp::Equal:
        return TRACECTL_IP_OP_EQ;
    case BinaryOp::NotEqual:
        return TRACECTL_IP_OP_NE;
    case BinaryOp::Less:
        return TRACECTL_IP_OP_LT;
    case BinaryOp::LessEqual:
        return TRACECTL_IP_OP_LE;
    case BinaryOp::Greater:
        return TRACECTL_IP_OP_GT;
    case BinaryOp::GreaterEqual:
        return TRACECTL_IP_OP_GE;
    default:
        return TRACECTL_IP_OP_EQ;
    }
}

// `c OP field` is `field MIRROR(OP) c`.
tracectl_ip_op mirror(tracectl_ip_op op) {
    switch (op) {
    case TRACECTL_IP_OP_LT:
        return TRACECTL_IP_OP_GT;
    case TRACECTL_IP_OP_LE:
        return TRACECTL_IP_OP_GE;
    case TRACECTL_IP_OP_GT:
        return TRACECTL_IP_OP_LT;
    case TRACECTL_IP_OP_GE:
        return TRACECTL_IP_OP_LE;
    default:
        return op;
    }
}

tracectl_ip_op negate(tracectl_ip_op op) {
    switch (op) {
    case TRACECTL_IP_OP_EQ:
        return TRACECTL_IP_OP_NE;
    case TRACECTL_IP_OP_NE:
        return TRACECTL_IP_OP_EQ;
    case TRACECTL_IP_OP_LT:
        return TRACECTL_IP_OP_GE;
    case TRACECTL_IP_OP_LE:
        return TRACECTL_IP_OP_GT;
    case TRACECTL_IP_OP_GT:
        return TRACECTL_IP_OP_LE;
    case TRACECTL_IP_OP_GE:
        return TRACECTL_IP_OP_LT;
    }
    return op;
}

bool isComparison(BinaryOp op) {
    return op == BinaryOp::Equal || op == BinaryOp::NotEqual || op == BinaryOp::Less ||
           op == BinaryOp::LessEqual || op == BinaryOp::Greater || op == BinaryOp::GreaterEqual;
}

// An operand of a comparison must be a field or a constant.
void checkOperand(const Node& n) {
    if (n.kind == NodeKind::Unary)
        notInKernel(n.operatorColumn, std::string("operator '") + filter::unaryOpText(n.unaryOp) +
                                          "' in a comparison");
    if (n.kind == NodeKind::Binary)
        notInKernel(n.operatorColumn, std::string("operator '") + filter::binaryOpText(n.binaryOp) +
                                          "' in a comparison");
    if (n.kind == NodeKind::Float)
        notInKernel(n.column, "a floating-point constant");
}

tracectl_ip_atom compareAtom(const Node& cmp) {
    checkOperand(*cmp.left);
    checkOperand(*cmp.right);
    const Node* field = cmp.left.get();
    const Node* constant = cmp.right.get();
    tracectl_ip_op op = toOp(cmp.binaryOp);
    if (field->kind != NodeKind::Field) {
        std::swap(field, constant);
        op = mirror(op);
    }
    if (field->kind != NodeKind::Field) {
        notInKernel(cmp.left->kind == NodeKind::Field ? cmp.left->column : cmp.column,
                    "a comparison without a field");
    }
    const FieldInfo& info = fieldOf(*field);
    tracectl_ip_atom atom{};
    atom.field = static_cast<__u8>(info.field);
    atom.op = static_cast<__u8>(op);
    if (constant->kind == NodeKind::Field)
        notInKernel(constant->column, "a comparison of two fields");
    if (info.kind == Kind::Integer) {
        if (constant->kind != NodeKind::Integer)
            notInKernel(constant->column, "comparing integer field '" + std::string(info.name) +
                                              "' with anything but an integer constant");
        atom.value = constant->integer;
        return atom;
    }
    // Addresses and names: == and != against a string literal.
    if (op != TRACECTL_IP_OP_EQ && op != TRACECTL_IP_OP_NE)
        notInKernel(cmp.operatorColumn, std::string("operator '") +
                                            filter::binaryOpText(cmp.binaryOp) + "' on field '" +
                                            std::string(info.name) + "'");
    if (constant->kind != NodeKind::String)
        notInKernel(constant->column,
                    "comparing field '" + std::string(info.name) + "' with anything but a string");
    const std::string& text = constant->text;
    if (text.find('\\') != std::string::npos)
        notInKernel(constant->column, "an escape sequence in the string");
    if (info.kind == Kind::Address) {
        if (constant->stringKind != filter::StringKind::Plain)
            notInKernel(constant->column,
                        "a glob pattern on field '" + std::string(info.name) + "'");
        unsigned char bytes[16] = {};
        if (text.find('%') != std::string::npos)
            throw FilterError(constant->column,
                              "\"" + text + "\": a zone id (%...) is no part of an address in " +
                                  "a packet's header; write the address alone");
        if (::inet_pton(AF_INET, text.c_str(), bytes) == 1) {
            atom.addr_ver = 4;
        } else if (::inet_pton(AF_INET6, text.c_str(), bytes) == 1) {
            atom.addr_ver = 6;
            // ::ffff:a.b.c.d is how sockets name IPv4 peers; packets carry the
            // IPv4 address itself (RFC 4291 2.5.5.2), so it would match nothing.
            static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
            if (std::memcmp(bytes, kMapped, sizeof kMapped) == 0)
                throw FilterError(constant->column,
                                  "\"" + text + "\" is an IPv4-mapped IPv6 address, which no " +
                                      "packet carries: compare with the IPv4 address");
        } else {
            throw FilterError(constant->column,
                              "\"" + text + "\" is neither an IPv4 nor an IPv6 address");
        }
        std::memcpy(atom.bytes, bytes, sizeof bytes);
        return atom;
    }
    // if_name: dev->name, NUL-terminated, at most IFNAMSIZ - 1 = 15 bytes.
    std::string_view name = text;
    bool prefix = false;
    if (constant->stringKind == filter::StringKind::GlobStarEnd) {
        name.remove_suffix(1);
        prefix = true;
    } else if (constant->stringKind == filter::StringKind::GlobStar) {
        notInKernel(constant->column, "a '*' glob other than at the end");
    }
    if (name.size() > TRACECTL_IP_IFNAMSIZ - 1)
        throw FilterError(constant->column,
                          "interface name \"" + std::string(name) + "\" is longer than 15 bytes");
    std::memcpy(atom.bytes, name.data(), name.size());
    atom.name_len = static_cast<__u8>(prefix ? name.size() : name.size() + 1);
    return atom;
}

struct Builder {
    static bool isLogical(const Node& n) {
        return n.binaryOp == BinaryOp::LogicalAnd || n.binaryOp == BinaryOp::LogicalOr;
    }

    Dnf build(const Node& n, bool neg) {
        switch (n.kind) {
        case NodeKind::Integer:
            return (n.integer != 0) != neg ? Dnf{Conj{}} : Dnf{};
        case NodeKind::Field: {
            // A field used as a truth value: field != 0.
            const FieldInfo& info = fieldOf(n);
            if (info.kind != Kind::Integer)
                notInKernel(n.column, "field '" + std::string(info.name) + "' as a truth value");
            tracectl_ip_atom atom{};
            atom.field = static_cast<__u8>(info.field);
            atom.op = neg ? TRACECTL_IP_OP_EQ : TRACECTL_IP_OP_NE;
            return Dnf{Conj{atom}};
        }
        case NodeKind::Unary:
            if (n.unaryOp == UnaryOp::Not)
                return build(*n.left, !neg);
            notInKernel(n.operatorColumn,
                        std::string("operator '") + filter::unaryOpText(n.unaryOp) + "'");
        case NodeKind::Binary: {
            if (isLogical(n)) {
                // A chain (filter::leftChain()) in a loop, operands left to right.
                const std::vector<const Node*> chain = filter::leftChain(n, isLogical);
                Dnf l = build(*chain.front()->left, neg);
                for (const Node* link : chain) {
                    Dnf r = build(*link->right, neg);
                    // De Morgan: under a negation, && becomes || and || becomes &&.
                    const bool isAnd = (link->binaryOp == BinaryOp::LogicalAnd) != neg;
                    l = isAnd ? conjoin(l, r, link->operatorColumn)
                              : disjoin(std::move(l), std::move(r), link->operatorColumn);
                }
                return l;
            }
            if (isComparison(n.binaryOp)) {
                tracectl_ip_atom atom = compareAtom(n);
                if (neg)
                    atom.op = static_cast<__u8>(negate(static_cast<tracectl_ip_op>(atom.op)));
                return Dnf{Conj{atom}};
            }
            notInKernel(n.operatorColumn,
                        std::string("operator '") + filter::binaryOpText(n.binaryOp) + "'");
        }
        case NodeKind::Float:
            notInKernel(n.column, "a floating-point constant");
        case NodeKind::String:
            notInKernel(n.column, "a string as a truth value");
        }
        notInKernel(n.column, "this expression");
    }

    static void checkConjunctions(std::size_t n, std::size_t column) {
        if (n > TRACECTL_IP_MAX_CONJ)
            throw FilterError(column, "the expression needs more than " +
                                          std::to_string(TRACECTL_IP_MAX_CONJ) +
                                          " alternatives (||, in disjunctive normal form) to be "
                                          "evaluated in the kernel by the ip probes");
    }

    static Dnf disjoin(Dnf l, Dnf r, std::size_t column) {
        checkConjunctions(l.size() + r.size(), column);
        for (Conj& c : r)
            l.push_back(std::move(c));
        return l;
    }

    static Dnf conjoin(const Dnf& l, const Dnf& r, std::size_t column) {
        checkConjunctions(l.size() * r.size(), column);
        Dnf out;
        for (const Conj& a : l)
            for (const Conj& b : r) {
                if (a.size() + b.size() > TRACECTL_IP_MAX_ATOMS)
                    throw FilterError(column, "the expression needs more than " +
                                                  std::to_string(TRACECTL_IP_MAX_ATOMS) +
                                                  " comparisons in one conjunction (&&) to be "
                                                  "evaluated in the kernel by the ip probes");
                Conj c = a;
                c.insert(c.end(), b.begin(), b.end());
                out.push_back(std::move(c));
            }
        return out;
    }
};

bool blank(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

} // namespace

IpFilterProgram compileIpFilter(const std::vector<IpRuleFilter>& rules) {
    IpFilterProgram program;
    tracectl_ip_filter& f = program.filter;
    constexpr std::uint32_t kAllProbes = 1U << TRACECTL_IP_SEND | 1U << TRACECTL_IP_RECEIVE;
    for (const IpRuleFilter& rule : rules) {
        const std::uint32_t mask = rule.probeMask & kAllProbes;
        Dnf dnf;
        if (blank(rule.expression)) {
            dnf.emplace_back();
        } else {
            const filter::NodePtr tree = filter::parseFilter(rule.expression);
            // LTTng's own checks first (types, string comparisons; and they
            // classify the string literals' globs).
            filter::checkFilter(*tree);
            dnf = Builder{}.build(*tree, false);
        }
        if (mask == 0)
            continue;
        for (const Conj& c : dnf) {
            if (f.n_conj >= TRACECTL_IP_MAX_CONJ)
                throw FilterError(0, "the ip rules need more than " +
                                         std::to_string(TRACECTL_IP_MAX_CONJ) +
                                         " alternatives together (rules, and || in each) to be "
                                         "evaluated in the kernel by the ip probes");
            tracectl_ip_conj& out = f.conj[f.n_conj++];
            out.probe_mask = mask;
            out.n_atoms = static_cast<__u32>(c.size());
            std::copy(c.begin(), c.end(), out.atoms);
        }
    }
    return program;
}

} // namespace tracectl::ip
