// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The `ip` provider against the real kernel: sessions of the sandbox's
// tracectld enable `ip:*`, the daemon loads the provider's BPF program, the
// consumer writes its ring buffer's records as the CTF events ip:send and
// ip:receive, read back with babeltrace2 (trace_events.py). The traffic is
// the test's own UDP datagrams over loopback, told apart by their ports.
#include "child_process.hpp"
#include "ip_probe_abi.h"
#include "kernel_trace_support.hpp"
#include "multi_user.hpp"
#include "sandbox_suite.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sched.h>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <tuple>
#include <unistd.h>

using namespace tracectl::test;
using Json = nlohmann::json;

namespace {

using Options = std::map<std::string, sdbus::Variant>;

/// The ids of the BPF programs loaded now, by name (bpftool prog).
std::map<std::uint32_t, std::string> loadedPrograms() {
    const RunResult r = run({"bpftool", "prog", "show", "--json"});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    std::map<std::uint32_t, std::string> out;
    for (const Json& p : Json::parse(r.out.empty() ? "[]" : r.out))
        out[p.value("id", 0u)] = p.value("name", "");
    return out;
}

/// The ip provider's programs (tracectl_ip_*) that process `pid` holds:
/// the prog_id of its BPF program and link fds (/proc/PID/fdinfo). Other
/// daemons on the machine (BPF is kernel-wide) hold their own.
std::set<std::uint32_t> ipProgramsOf(pid_t pid) {
    const auto loaded = loadedPrograms();
    std::set<std::uint32_t> ids;
    std::error_code ec;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fdinfo";
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::ifstream info(e.path());
        for (std::string line; std::getline(info, line);)
            if (line.rfind("prog_id:", 0) == 0) {
                const auto id = static_cast<std::uint32_t>(std::stoul(line.substr(8)));
                if (const auto it = loaded.find(id);
                    it != loaded.end() && it->second.rfind("tracectl_ip", 0) == 0)
                    ids.insert(id);
            }
    }
    return ids;
}

/// True once none of `ids` is loaded any more.
bool allUnloaded(const std::set<std::uint32_t>& ids) {
    const auto loaded = loadedPrograms();
    return std::none_of(ids.begin(), ids.end(), [&](auto id) { return loaded.count(id) != 0; });
}

/// `address` (IPv4 or IPv6 text) and `port` as a socket address; its size in `len`.
sockaddr_storage socketAddress(const std::string& address, std::uint16_t port, socklen_t& len) {
    sockaddr_storage ss{};
    if (address.find(':') != std::string::npos) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        EXPECT_EQ(::inet_pton(AF_INET6, address.c_str(), &a->sin6_addr), 1) << address;
        len = sizeof *a;
    } else {
        auto* a = reinterpret_cast<sockaddr_in*>(&ss);
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        EXPECT_EQ(::inet_pton(AF_INET, address.c_str(), &a->sin_addr), 1) << address;
        len = sizeof *a;
    }
    return ss;
}

/// A UDP socket bound to `address` (IPv4 or IPv6 text), on port `port`
/// (0: any); its port in `bound`.
int udpSocket(const std::string& address, std::uint16_t port, std::uint16_t* bound = nullptr) {
    socklen_t len = 0;
    sockaddr_storage ss = socketAddress(address, port, len);
    const int fd = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd, 0) << std::strerror(errno);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&ss), len), 0) << std::strerror(errno);
    if (bound != nullptr) {
        EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len), 0);
        *bound = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    }
    return fd;
}

/// An IPv6 address added to lo (no duplicate detection: usable at once)
/// for the object's lifetime.
struct LoopbackAddress {
    explicit LoopbackAddress(std::string a) : address(std::move(a)) {
        // replace: also when a run killed before its destructor left it.
        const RunResult r =
            run({"ip", "-6", "addr", "replace", address + "/128", "dev", "lo", "nodad"});
        EXPECT_TRUE(r.ok()) << r.describe();
    }
    ~LoopbackAddress() { (void)run({"ip", "-6", "addr", "del", address + "/128", "dev", "lo"}); }
    LoopbackAddress(const LoopbackAddress&) = delete;
    LoopbackAddress& operator=(const LoopbackAddress&) = delete;
    const std::string address;
};

/// Sends `count` datagrams of `size` payload bytes from `tx` to
/// `to`:`port`, each received by `rx` before the next goes.
void exchange(int tx, int rx, const std::string& to, std::uint16_t port, int count,
              std::size_t size) {
    socklen_t len = 0;
    sockaddr_storage ss = socketAddress(to, port, len);
    const std::string payload(size, 'd');
    std::string buf(size + 1, '\0');
    for (int i = 0; i < count; ++i) {
        ASSERT_EQ(::sendto(tx, payload.data(), size, 0, reinterpret_cast<sockaddr*>(&ss), len),
                  static_cast<ssize_t>(size))
            << std::strerror(errno);
        ASSERT_EQ(::recv(rx, buf.data(), buf.size(), 0), static_cast<ssize_t>(size));
    }
}

class Ip : public SandboxSuite {
protected:
    void SetUp() override {
        SandboxSuite::SetUp();
        ASSERT_TRUE(manager_->KernelTracingAvailable());
    }

    /// The ip programs the sandbox's daemon holds now.
    static std::set<std::uint32_t> ours() { return ipProgramsOf(sandbox_->daemonPid()); }

    // A test's sessions are gone when it ends, and their programs with them.
    void TearDown() override {
        // Also the sessions a failed test left: the next test starts clean.
        SandboxSuite::TearDown();
        EXPECT_TRUE(eventually([] { return ours().empty(); }, std::chrono::seconds(10)))
            << "a test left a program loaded";
    }

    std::unique_ptr<SessionClient> create(const std::string& name, Options options = {}) {
        options["output-path"] = sdbus::Variant(output(name));
        return std::make_unique<SessionClient>(*bus_, manager_->CreateSession(name, options));
    }

    pid_t consumerPid(SessionClient& s) {
        const RunResult r = sandbox_->systemctl(
            {"show", "-p", "MainPID", "--value", "tracectl-consumer-" + hexId(s) + ".service"});
        return static_cast<pid_t>(std::stol(r.out));
    }
};

TEST_F(Ip, ListTracepointsNamesBothProbesWithDTracesArguments) {
    std::map<std::string, std::map<std::string, std::string>> probes;
    for (const auto& t : manager_->ListTracepoints("kernel"))
        if (t.get<0>() == "ip")
            for (const auto& f : t.get<2>())
                probes[t.get<1>()][f.get<0>()] = f.get<1>();
    ASSERT_EQ(probes.size(), 2u);
    for (const char* probe : {"send", "receive"}) {
        const auto& fields = probes[probe];
        for (const char* name :
             {"pkt_addr",    "cs_addr",   "ip_ver",        "ip_plength",    "ip_saddr",
              "ip_daddr",    "if_name",   "if_local",      "if_ipstack",    "ipv4_ver",
              "ipv4_ihl",    "ipv4_tos",  "ipv4_length",   "ipv4_ident",    "ipv4_flags",
              "ipv4_offset", "ipv4_ttl",  "ipv4_protocol", "ipv4_protostr", "ipv4_checksum",
              "ipv4_src",    "ipv4_dst",  "ipv4_saddr",    "ipv4_daddr",    "ipv6_ver",
              "ipv6_tclass", "ipv6_flow", "ipv6_plen",     "ipv6_nexthdr",  "ipv6_nextstr",
              "ipv6_hlim",   "ipv6_src",  "ipv6_dst",      "ipv6_saddr",    "ipv6_daddr"})
            EXPECT_TRUE(fields.count(name)) << probe << " lacks " << name;
    }
}

TEST_F(Ip, EveryLoopbackDatagramIsOneSendAndOneReceiveWithItsHeader) {
    std::uint16_t p4 = 0, p6 = 0;
    const int rx4 = udpSocket("127.0.0.1", 0, &p4);
    const int rx6 = udpSocket("::1", 0, &p6);
    const int tx1 = udpSocket("127.0.0.1", 0);
    const int tx2 = udpSocket("127.0.0.2", 0);
    const int tx6 = udpSocket("::1", 0);
    auto s = create("ip-exact");
    // In the kernel: only the test's datagrams take ring-buffer space.
    const std::string mine =
        "udp_dport == " + std::to_string(p4) + " || udp_dport == " + std::to_string(p6);
    s->EnableEvents("kernel", "", "ip:*", {{"filter", sdbus::Variant(mine)}});
    s->Start({});
    const auto loaded = ours();
    EXPECT_EQ(loaded.size(), 2u) << "the session's copy of the program: send and receive";
    struct Flow {
        std::string from, to;
        int version;
        int count;
        std::size_t size;
    };
    const std::vector<Flow> flows{{"127.0.0.1", "127.0.0.1", 4, 5, 100},
                                  {"127.0.0.2", "127.0.0.1", 4, 7, 300},
                                  {"::1", "::1", 6, 3, 1000}};
    exchange(tx1, rx4, "127.0.0.1", p4, flows[0].count, flows[0].size);
    exchange(tx2, rx4, "127.0.0.1", p4, flows[1].count, flows[1].size);
    exchange(tx6, rx6, "::1", p6, flows[2].count, flows[2].size);
    for (const int fd : {rx4, rx6, tx1, tx2, tx6})
        ::close(fd);
    s->Stop({});
    Json totals;
    const auto events = traceEvents(output("ip-exact"), {"ip:send", "ip:receive"}, &totals);
    // (probe, saddr, daddr, plength) -> events
    std::map<std::tuple<std::string, std::string, std::string, std::uint64_t>, int> seen;
    for (const Json& e : events) {
        const Json& f = e["fields"];
        seen[{e["name"], f["ip_saddr"], f["ip_daddr"], f["ip_plength"]}]++;
        EXPECT_EQ(f["if_name"], "lo") << e.dump();
        EXPECT_EQ(f["if_local"], 1) << e.dump();
        if (f["ip_ver"] == 4) {
            EXPECT_EQ(f["ipv4_protocol"], 17) << e.dump();
            EXPECT_EQ(f["ipv4_protostr"], "UDP") << e.dump();
            EXPECT_EQ(f["ipv4_ver"], 4);
            EXPECT_EQ(f["ipv4_ihl"], 20) << "in bytes, as DTrace";
            EXPECT_EQ(f["ipv4_length"], f["ip_plength"].get<std::uint64_t>() + 20);
            EXPECT_EQ(f["ipv4_saddr"], f["ip_saddr"]);
            EXPECT_EQ(f["ipv4_daddr"], f["ip_daddr"]);
            EXPECT_EQ(f["ipv6_ver"], 0) << "the IPv6 half is zero";
            EXPECT_EQ(f["ipv6_saddr"], "<null>");
            EXPECT_EQ(f["udp_dport"], p4);
        } else {
            EXPECT_EQ(f["ip_ver"], 6) << e.dump();
            EXPECT_EQ(f["ipv6_nexthdr"], 17) << e.dump();
            EXPECT_EQ(f["ipv6_nextstr"], "UDP") << e.dump();
            EXPECT_EQ(f["ipv6_plen"], f["ip_plength"]);
            EXPECT_EQ(f["ipv6_saddr"], "::1") << e.dump();
            EXPECT_EQ(f["ipv4_ver"], 0) << "the IPv4 half is zero" << e.dump();
            EXPECT_EQ(f["ipv4_saddr"], "<null>") << e.dump();
            EXPECT_EQ(f["ipv4_protostr"], "<null>") << e.dump();
            EXPECT_EQ(f["udp_dport"], p6) << e.dump();
        }
        EXPECT_NE(f["pkt_addr"], 0) << "the socket buffer's address";
    }
    std::size_t expected = 0;
    for (const Flow& flow : flows) {
        // ip_plength: the UDP header and the payload.
        for (const char* probe : {"ip:send", "ip:receive"})
            EXPECT_EQ((seen[{probe, flow.from, flow.to, flow.size + 8}]), flow.count)
                << probe << " " << flow.from << " -> " << flow.to;
        expected += 2 * static_cast<std::size_t>(flow.count);
    }
    EXPECT_EQ(events.size(), expected) << "nothing but the test's datagrams";
    EXPECT_EQ(totals["discarded"], 0);
    s->Destroy({});
    // The kernel frees a detached program after an RCU grace period.
    EXPECT_TRUE(eventually([&] { return allUnloaded(loaded); }, std::chrono::seconds(5)))
        << "Destroy unloads the program";
}

// tracectl-ip(7)'s semantics: the probes sit at the device layer, so an
// IPv4 datagram that the IP layer fragments is one send and one receive per
// fragment (ports in the first only), reassembly comes after the receive
// probe; each network namespace is its own if_ipstack. Run in a namespace
// of its own, where nothing else sends.
TEST_F(Ip, FragmentsAreProbedOneByOneInTheirOwnNetworkNamespace) {
    auto s = create("ip-fragments");
    s->EnableEvents("kernel", "", "ip:*", {});
    s->Start({});
    int pipeFds[2];
    ASSERT_EQ(::pipe2(pipeFds, O_CLOEXEC), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(pipeFds[0]);
        if (::unshare(CLONE_NEWNET) != 0 || std::system("ip link set lo up mtu 1500") != 0)
            ::_exit(2);
        struct stat st {};
        if (::stat("/proc/self/ns/net", &st) != 0)
            ::_exit(3);
        const auto ino = static_cast<std::uint64_t>(st.st_ino);
        if (::write(pipeFds[1], &ino, sizeof ino) != sizeof ino)
            ::_exit(4);
        std::uint16_t port = 0;
        const int rx = udpSocket("127.0.0.1", 0, &port);
        const int tx = udpSocket("127.0.0.1", 0);
        exchange(tx, rx, "127.0.0.1", port, 1, 4000);
        ::_exit(::testing::Test::HasFailure() ? 5 : 0);
    }
    ::close(pipeFds[1]);
    std::uint64_t netns = 0;
    ASSERT_EQ(::read(pipeFds[0], &netns, sizeof netns), static_cast<ssize_t>(sizeof netns));
    ::close(pipeFds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    s->Stop({});
    // 4008 bytes of UDP in 1500-byte packets: 1480 + 1480 + 1048.
    std::map<std::string, std::vector<std::tuple<int, int, int, int>>> byProbe;
    for (const Json& e : traceEvents(output("ip-fragments"), {"ip:send", "ip:receive"})) {
        const Json& f = e["fields"];
        if (f["if_ipstack"] != netns)
            continue;
        byProbe[e["name"]].emplace_back(f["ip_plength"].get<int>(), f["ipv4_offset"].get<int>(),
                                        f["ipv4_flags"].get<int>(), f["udp_dport"].get<int>());
    }
    for (const char* probe : {"ip:send", "ip:receive"}) {
        auto& got = byProbe[probe];
        ASSERT_EQ(got.size(), 3u) << probe;
        std::sort(got.begin(), got.end(),
                  [](const auto& a, const auto& b) { return std::get<1>(a) < std::get<1>(b); });
        // ipv4_offset in 8-byte units; ipv4_flags 0x20 is More Fragments
        // (illumos ip.d: IPH_MF).
        EXPECT_EQ(std::get<0>(got[0]), 1480);
        EXPECT_EQ(std::get<1>(got[0]), 0);
        EXPECT_NE(std::get<3>(got[0]), 0) << "the first fragment has the ports";
        EXPECT_EQ(std::get<0>(got[1]), 1480);
        EXPECT_EQ(std::get<1>(got[1]), 1480 / 8);
        EXPECT_EQ(std::get<3>(got[1]), 0) << "later fragments have no transport header";
        EXPECT_EQ(std::get<0>(got[2]), 1048);
        EXPECT_EQ(std::get<1>(got[2]), 2960 / 8);
        EXPECT_NE(std::get<2>(got[0]) & 0x20, 0) << "more fragments";
        EXPECT_NE(std::get<2>(got[1]) & 0x20, 0) << "more fragments";
        EXPECT_EQ(std::get<2>(got[2]) & 0x20, 0) << "the last fragment";
    }
    s->Destroy({});
}

// tracectl-ip(7): a UDP GSO super-packet (UDP_SEGMENT) on loopback is one
// send and one receive of its whole length: segmentation comes after the
// send probe, and loopback hands the receiver the packet unsegmented.
TEST_F(Ip, AGsoSuperPacketIsOneSendAndOneReceive) {
    auto s = create("ip-gso");
    s->EnableEvents("kernel", "", "ip:*", {});
    s->Start({});
    const RunResult r = run({"unshare", "-n", "sh", "-c",
                             "ip link set lo up && readlink /proc/self/ns/net && "
                             "/usr/bin/python3 -c '\n"
                             "import socket\n"
                             "r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                             "r.bind((\"127.0.0.1\", 0))\n"
                             "t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                             "t.setsockopt(17, 103, 1000)  # SOL_UDP, UDP_SEGMENT\n"
                             "t.sendto(b\"g\" * 3000, r.getsockname())\n"
                             "print(*[len(r.recv(65536)) for i in range(3)])\n'"});
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    EXPECT_NE(r.out.find("1000 1000 1000"), std::string::npos) << "three datagrams arrive";
    const std::string ns = r.out.substr(r.out.find('[') + 1);
    const std::uint64_t netns = std::stoull(ns.substr(0, ns.find(']')));
    s->Stop({});
    std::map<std::string, std::vector<int>> lengths;
    for (const Json& e : traceEvents(output("ip-gso"), {"ip:send", "ip:receive"}))
        if (e["fields"]["if_ipstack"] == netns && e["fields"]["ipv4_protocol"] == 17)
            lengths[e["name"]].push_back(e["fields"]["ip_plength"].get<int>());
    EXPECT_EQ(lengths["ip:send"], std::vector<int>{3008});
    EXPECT_EQ(lengths["ip:receive"], std::vector<int>{3008});
    s->Destroy({});
}

// tracectl-ip(7): a forwarded packet shows up at every device it crosses:
// send on the sender's, receive and send on the router's two (DTrace's
// ip_local_deliver would not see it at the router), receive on the
// receiver's. Three namespaces joined by two veth pairs.
TEST_F(Ip, AForwardedPacketIsProbedOnEveryDeviceItCrosses) {
    const std::string tag = std::to_string(::getpid());
    const std::string a = "tcip-a-" + tag, r = "tcip-r-" + tag, b = "tcip-b-" + tag;
    struct Namespaces {
        std::vector<std::string> names;
        ~Namespaces() {
            for (const auto& n : names)
                run({"ip", "netns", "del", n});
        }
    } made{{a, r, b}};
    const std::string va = "tva" + tag, vra = "tvra" + tag, vb = "tvb" + tag, vrb = "tvrb" + tag;
    for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
             {"ip", "netns", "add", a},
             {"ip", "netns", "add", r},
             {"ip", "netns", "add", b},
             {"ip", "link", "add", va, "netns", a, "type", "veth", "peer", "name", vra, "netns", r},
             {"ip", "link", "add", vb, "netns", b, "type", "veth", "peer", "name", vrb, "netns", r},
             {"ip", "-n", a, "addr", "add", "10.77.1.2/24", "dev", va},
             {"ip", "-n", r, "addr", "add", "10.77.1.1/24", "dev", vra},
             {"ip", "-n", r, "addr", "add", "10.77.2.1/24", "dev", vrb},
             {"ip", "-n", b, "addr", "add", "10.77.2.2/24", "dev", vb},
             {"ip", "-n", a, "link", "set", va, "up"},
             {"ip", "-n", r, "link", "set", vra, "up"},
             {"ip", "-n", r, "link", "set", vrb, "up"},
             {"ip", "-n", b, "link", "set", vb, "up"},
             {"ip", "-n", a, "route", "add", "default", "via", "10.77.1.1"},
             {"ip", "-n", b, "route", "add", "default", "via", "10.77.2.1"},
             {"ip", "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1"}}) {
        const RunResult done = run(cmd);
        ASSERT_EQ(done.exitCode, 0) << done.describe();
    }
    auto s = create("ip-forward");
    s->EnableEvents("kernel", "", "ip:*",
                    {{"filter", sdbus::Variant(std::string("udp_dport == 4555"))}});
    s->Start({});
    // The receiver answers once the datagram came (ARP first: retried).
    const RunResult got =
        run({"ip", "netns", "exec", b, "/usr/bin/python3", "-c",
             "import socket, subprocess\n"
             "r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
             "r.bind(('10.77.2.2', 4555)); r.settimeout(10)\n"
             "subprocess.run(['ip', 'netns', 'exec', '" +
                 a +
                 "', '/usr/bin/python3', "
                 "'-c', 'import socket; s = socket.socket(socket.AF_INET, "
                 "socket.SOCK_DGRAM); s.sendto(b\"f\" * 500, (\"10.77.2.2\", 4555))'], "
                 "check=True)\n"
                 "print(len(r.recv(9999)))\n"});
    ASSERT_EQ(got.exitCode, 0) << got.describe();
    EXPECT_NE(got.out.find("500"), std::string::npos) << got.describe();
    s->Stop({});
    std::vector<std::string> path;
    for (const Json& e : traceEvents(output("ip-forward"), {"ip:send", "ip:receive"}))
        if (e["fields"]["ip_daddr"] == "10.77.2.2" && e["fields"]["ip_plength"] == 508)
            path.push_back(e["name"].get<std::string>() + " " +
                           e["fields"]["if_name"].get<std::string>());
    EXPECT_EQ(path, (std::vector<std::string>{"ip:send " + va, "ip:receive " + vra,
                                              "ip:send " + vrb, "ip:receive " + vb}));
    s->Destroy({});
}

TEST_F(Ip, KernelFiltersOnAddressesNamesAndLengthsPassExactlyTheirPackets) {
    std::uint16_t port = 0;
    const int rx = udpSocket("127.0.0.1", 0, &port);
    const int tx1 = udpSocket("127.0.0.1", 0);
    const int tx2 = udpSocket("127.0.0.2", 0);
    const std::string mine = "udp_dport == " + std::to_string(port);
    auto s = create("ip-filters");
    s->AddChannel("kernel", "from2", {});
    s->AddChannel("kernel", "long", {});
    s->EnableEvents("kernel", "from2", "ip:receive",
                    {{"filter", sdbus::Variant(mine + " && ip_saddr == \"127.0.0.2\" && "
                                                      "if_name == \"l*\" && ip_ver == 4")}});
    s->EnableEvents("kernel", "long", "ip:send",
                    {{"filter", sdbus::Variant(mine + " && !(ip_plength <= 500)")}});
    s->Start({});
    exchange(tx1, rx, "127.0.0.1", port, 4, 200);
    exchange(tx1, rx, "127.0.0.1", port, 3, 900);
    exchange(tx2, rx, "127.0.0.1", port, 6, 200);
    for (const int fd : {rx, tx1, tx2})
        ::close(fd);
    s->Stop({});
    std::map<std::string, std::map<std::string, int>> byChannel; // stream -> name:saddr:len
    for (const Json& e : traceEvents(output("ip-filters"), {"ip:send", "ip:receive"}))
        byChannel[e["stream"]][e["name"].get<std::string>() + " " +
                               e["fields"]["ip_saddr"].get<std::string>() + " " +
                               std::to_string(e["fields"]["ip_plength"].get<int>())]++;
    EXPECT_EQ(byChannel["from2_ip"], (std::map<std::string, int>{{"ip:receive 127.0.0.2 208", 6}}));
    EXPECT_EQ(byChannel["long_ip"], (std::map<std::string, int>{{"ip:send 127.0.0.1 908", 3}}));
    EXPECT_EQ(byChannel.size(), 2u);
    s->Destroy({});
}

TEST_F(Ip, FiltersTheKernelCannotEvaluateAreRefusedWithTheirPlace) {
    auto s = create("ip-bad");
    const auto refusal = [&](const std::string& filter) {
        std::string message;
        const std::string name = errorNameOf([&] {
            try {
                s->EnableEvents("kernel", "", "ip:*", {{"filter", sdbus::Variant(filter)}});
            } catch (const sdbus::Error& e) {
                message = e.getMessage();
                throw;
            }
        });
        return name + ": " + message;
    };
    EXPECT_NE(refusal("ip_saddr == \"not-an-address\"").find("column 13"), std::string::npos)
        << refusal("ip_saddr == \"not-an-address\"");
    EXPECT_NE(refusal("ip_plength * 2 > 10").find("InvalidArgument"), std::string::npos);
    EXPECT_NE(refusal("ip_saddr == ").find("InvalidArgument"), std::string::npos);
    EXPECT_TRUE(s->KernelEvents().empty()) << "nothing refused is kept";
    EXPECT_TRUE(ours().empty()) << "nothing is loaded for a refused rule";
    // What the program evaluates is taken.
    s->EnableEvents("kernel", "", "ip:*", {{"filter", sdbus::Variant(std::string("ip_ver == 6"))}});
    EXPECT_EQ(s->KernelEvents().size(), 1u);
    s->Destroy({});
}

// Rotation and snapshots cover the ip stream as every other: what was
// sent before a rotation is in its archive, what came after in the next
// chunk, each datagram once.
TEST_F(Ip, ARotationArchivesTheIpStreamWithTheRest) {
    std::uint16_t port = 0;
    const int rx = udpSocket("127.0.0.1", 0, &port);
    const int tx = udpSocket("127.0.0.1", 0);
    auto s = create("ip-rotate");
    s->EnableEvents("kernel", "", "ip:receive",
                    {{"filter", sdbus::Variant("udp_dport == " + std::to_string(port))}});
    s->Start({});
    exchange(tx, rx, "127.0.0.1", port, 3, 111);
    const std::string archive = s->Rotate({});
    // Over once the session is no longer "rotating".
    ASSERT_TRUE(eventually(
        [&] {
            return std::filesystem::exists(archive + "/kernel/metadata") && s->State() == "active";
        },
        std::chrono::seconds(20)))
        << archive;
    exchange(tx, rx, "127.0.0.1", port, 2, 222);
    ::close(rx);
    ::close(tx);
    s->Stop({});
    const auto lengths = [](const std::string& dir) {
        std::map<int, int> n;
        for (const Json& e : traceEvents(dir, {"ip:receive"}))
            ++n[e["fields"]["ip_plength"].get<int>()];
        return n;
    };
    EXPECT_EQ(lengths(archive), (std::map<int, int>{{119, 3}}));
    EXPECT_EQ(lengths(output("ip-rotate")), (std::map<int, int>{{119, 3}, {230, 2}}));
    s->Destroy({});
}

// Found by a fresh-user pass: a channel of ip rules only (its per-CPU
// streams idle) rotated twice gave archives babeltrace2 refused to read
// together (zero-length first packets it could not order).
TEST_F(Ip, ARotatedSessionOfIpRulesOnlyReadsAsOneTrace) {
    auto s = create("ip-idle-rotate");
    s->EnableEvents("kernel", "", "ip:send",
                    {{"filter", sdbus::Variant(std::string("udp_dport == 1"))}});
    s->Start({});
    for (int i = 0; i < 2; ++i) {
        const std::string archive = s->Rotate({});
        // Over once the session is no longer "rotating": a second Rotate
        // before then is refused (WrongState).
        ASSERT_TRUE(eventually(
            [&] {
                return std::filesystem::exists(archive + "/kernel/metadata") &&
                       s->State() == "active";
            },
            std::chrono::seconds(20)));
    }
    s->Stop({});
    const RunResult r = run({"babeltrace2", output("ip-idle-rotate")});
    EXPECT_EQ(r.exitCode, 0) << r.describe();
    s->Destroy({});
}

TEST_F(Ip, AFullRingBufferCountsItsDiscardedEventsExactly) {
    std::uint16_t port = 0;
    const int rx = udpSocket("127.0.0.1", 0, &port);
    const int tx = udpSocket("127.0.0.1", 0);
    auto s = create("ip-overflow");
    // 8 KiB of ring buffer: about 60 records.
    s->AddChannel("kernel", "small",
                  {{"subbuf-size", sdbus::Variant(uint64_t{4096})},
                   {"subbuf-count", sdbus::Variant(uint64_t{2})}});
    s->EnableEvents("kernel", "small", "ip:*",
                    {{"filter", sdbus::Variant("udp_dport == " + std::to_string(port))}});
    s->Start({});
    // The consumer, stopped, reads nothing: the burst overflows the ring.
    const pid_t consumer = consumerPid(*s);
    ASSERT_GT(consumer, 0);
    ASSERT_EQ(::kill(consumer, SIGSTOP), 0);
    constexpr int kDatagrams = 3000;
    exchange(tx, rx, "127.0.0.1", port, kDatagrams, 64);
    ASSERT_EQ(::kill(consumer, SIGCONT), 0);
    ::close(rx);
    ::close(tx);
    s->Stop({});
    Json totals;
    const auto events = traceEvents(output("ip-overflow"), {"ip:send", "ip:receive"}, &totals);
    const auto discarded = totals["discarded"].get<std::uint64_t>();
    ASSERT_GT(discarded, 0u) << "the burst did not fill the ring buffer";
    EXPECT_EQ(events.size() + discarded, 2u * kDatagrams) << "recorded + discarded = sent";
    s->Destroy({});
}

TEST_F(Ip, NoProgramOutlivesAKilledConsumer) {
    auto s = create("ip-killed");
    s->EnableEvents("kernel", "", "ip:send", {});
    s->Start({});
    const auto loaded = ours();
    ASSERT_EQ(loaded.size(), 2u);
    const RunResult killed = sandbox_->systemctl(
        {"kill", "--signal=SIGKILL", "tracectl-consumer-" + hexId(*s) + ".service"});
    ASSERT_EQ(killed.exitCode, 0) << killed.describe();
    EXPECT_TRUE(eventually([&] { return s->State() == "error"; }, std::chrono::seconds(10)));
    EXPECT_TRUE(eventually([&] { return allUnloaded(loaded); }, std::chrono::seconds(10)));
    s->Destroy({});
}

TEST_F(Ip, NoProgramOutlivesADaemonKilledAndRestarted) {
    auto s = create("ip-crash");
    s->EnableEvents("kernel", "", "ip:*", {});
    s->Start({});
    const auto loaded = ours();
    ASSERT_EQ(loaded.size(), 2u);
    s.reset();
    ASSERT_TRUE(sandbox_->stopDaemon(SIGKILL).ok());
    // Its links and programs die with its fds; the orphaned consumer's maps
    // hold no program.
    EXPECT_TRUE(eventually([&] { return allUnloaded(loaded); }, std::chrono::seconds(10)));
    const RunResult started = sandbox_->startDaemon();
    ASSERT_TRUE(started.ok()) << started.describe();
    EXPECT_TRUE(ours().empty());
}

// The seed one-liners, as written, run like `dtrace -n` (a
// temporary session each) while the test's traffic flows: counts per source
// address, and each datagram in the power-of-two bucket of its ip_plength.
TEST_F(Ip, TheSeedOneLinersCountAndQuantizeTheTestsTraffic) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const std::string log = sandbox_->dir() + "/log/one-liners.log";
    const std::string quantizeLog = sandbox_->dir() + "/log/one-liners-quantize.log";
    ChildProcess counting(
        {cli, "aggregate", "--duration", "6", "ip:::receive { @[args[2]->ip_saddr] = count(); }"},
        {}, log);
    ChildProcess quantizing({cli, "aggregate", "--duration", "6",
                             "ip:::send { @[args[2]->ip_daddr] = quantize(args[2]->ip_plength); }"},
                            {}, quantizeLog);
    const auto text = [](const std::string& path) {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    // Both only aggregate: both count in the kernel (their lines say so) before the
    // traffic goes, and neither makes a session.
    const auto inKernel = [&](const std::string& path) {
        return text(path).find("(aggregating in the kernel)") != std::string::npos;
    };
    ASSERT_TRUE(eventually([&] { return inKernel(log) && inKernel(quantizeLog); },
                           std::chrono::seconds(20)))
        << text(log) << text(quantizeLog);
    EXPECT_TRUE(manager_->ListSessions().empty());
    // IPv4 between addresses no other test uses (the count keys on the source
    // alone: another test's 127.0.0.2 once reached its window). IPv6 from an
    // address of the test's own on lo: other suites talk over
    // ::1 meanwhile (the relay's IPv6 case), and the one-liner counts every
    // source.
    const LoopbackAddress own6("fd7a:ce00::2");
    std::uint16_t port = 0, port6 = 0;
    const int rx = udpSocket("127.0.0.33", 0, &port);
    const int rx6 = udpSocket("::1", 0, &port6);
    const int tx = udpSocket("127.0.0.32", 0);
    const int tx6 = udpSocket(own6.address, 0);
    exchange(tx, rx, "127.0.0.33", port, 4, 100);  // ip_plength 108: bucket 64
    exchange(tx, rx, "127.0.0.33", port, 2, 300);  // 308: bucket 256
    exchange(tx, rx, "127.0.0.33", port, 1, 1000); // 1008: bucket 512
    exchange(tx6, rx6, "::1", port6, 5, 50);
    for (const int fd : {rx, rx6, tx, tx6})
        ::close(fd);
    ASSERT_EQ(counting.wait(60000), 0);
    ASSERT_EQ(quantizing.wait(60000), 0);
    // count(): "  KEY   VALUE" rows.
    std::map<std::string, long> counts;
    std::istringstream rows(text(log));
    for (std::string line; std::getline(rows, line);) {
        std::istringstream row(line);
        std::string key, value, more;
        if (row >> key >> value && !(row >> more) &&
            std::all_of(value.begin(), value.end(), ::isdigit))
            counts[key] = std::stol(value);
    }
    EXPECT_EQ(counts["127.0.0.32"], 7) << text(log);
    EXPECT_EQ(counts[own6.address], 5) << text(log);
    // quantize(): the key line, then "value |@@@ count" rows.
    const std::string q = text(quantizeLog);
    const auto key = q.find("127.0.0.33");
    ASSERT_NE(key, std::string::npos) << q;
    std::map<long, long> buckets;
    std::istringstream plot(q.substr(key + 10));
    std::string line;
    std::getline(plot, line);
    while (std::getline(plot, line)) {
        const auto bar = line.find('|');
        if (line.find("Distribution") != std::string::npos)
            continue;
        if (bar == std::string::npos)
            break;
        const long value = std::stol(line.substr(0, bar));
        const std::string rest = line.substr(bar + 1);
        buckets[value] = std::stol(rest.substr(rest.find_first_of("0123456789")));
    }
    EXPECT_EQ(buckets[64], 4) << q;
    EXPECT_EQ(buckets[256], 2) << q;
    EXPECT_EQ(buckets[512], 1) << q;
    EXPECT_EQ(buckets[128], 0) << q;
    for (const auto& path : manager_->ListSessions())
        EXPECT_NE(SessionClient(*bus_, path).Name().rfind("aggregate-", 0), 0u)
            << "the temporary sessions are gone";
}

/// Whether process `pid` (a child not reaped yet) still runs: it has not exited (nor is
/// it a zombie). Reaps nothing (WNOWAIT), so that ChildProcess::wait still can.
bool stillRunning(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
}

// The example scripts (share/tracectl/examples), run unmodified as files like
// `dtrace -s` (a temporary session each) while the test's traffic flows:
// ipproto.d's exact counts by source, destination and protocol for the
// test's UDP datagrams over IPv4 and IPv6, and ipio.d's one line per datagram
// sent and received, with its interface and bytes, the first of them in its
// output less than 2 s after the first datagram went, while it still runs
// (issue 37). Other suites talk over loopback meanwhile: only the rows of the
// test's own addresses are checked.
TEST_F(Ip, TheExampleScriptsRunUnmodifiedOnTheTestsTraffic) {
    const char* cli = std::getenv("TRACECTL");
    const char* source = std::getenv("TRACECTL_SOURCE_ROOT");
    ASSERT_NE(cli, nullptr);
    ASSERT_NE(source, nullptr);
    const std::string examples = std::string(source) + "/share/tracectl/examples/";
    const std::string protoLog = sandbox_->dir() + "/log/ipproto.log";
    const std::string ioLog = sandbox_->dir() + "/log/ipio.log";
    ChildProcess proto({cli, "dtrace", "--duration", "6", "-s", examples + "ipproto.d"}, {},
                       protoLog);
    ChildProcess io({cli, "dtrace", "--duration", "6", "-s", examples + "ipio.d"}, {}, ioLog);
    const auto text = [](const std::string& path) {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    // ipproto.d only aggregates: it counts in the kernel, without a session (its line
    // says so); ipio.d prints each packet: it records a session.
    const auto dtraceSessions = [&] {
        std::size_t active = 0;
        for (const auto& path : manager_->ListSessions()) {
            SessionClient session(*bus_, path);
            active += session.Name().rfind("dtrace-", 0) == 0 && session.State() == "active";
        }
        return active;
    };
    ASSERT_TRUE(eventually(
        [&] {
            return text(protoLog).find("(aggregating in the kernel)") != std::string::npos &&
                   dtraceSessions() == 1;
        },
        std::chrono::seconds(20)))
        << text(protoLog);
    const LoopbackAddress own6("fd7a:ce00::3");
    std::uint16_t port = 0, port6 = 0;
    const int rx = udpSocket("127.0.0.5", 0, &port);
    const int rx6 = udpSocket(own6.address, 0, &port6);
    const int tx = udpSocket("127.0.0.4", 0);
    const int tx6 = udpSocket(own6.address, 0);
    const auto firstSent = std::chrono::steady_clock::now();
    exchange(tx, rx, "127.0.0.5", port, 3, 100);    // ip_plength 108
    exchange(tx, rx, "127.0.0.5", port, 1, 300);    // 308
    exchange(tx6, rx6, own6.address, port6, 2, 50); // 58 (IPv6: no header in ip_plength)
    for (const int fd : {rx, rx6, tx, tx6})
        ::close(fd);
    // ipio.d prints live (switchrate 10hz): the first datagram's line is in its output
    // within 2 s of the datagram (the bound), while the script still runs.
    const auto bound = std::chrono::seconds(2);
    std::chrono::steady_clock::duration firstLineAfter{};
    bool runningThen = false;
    const auto left = bound - (std::chrono::steady_clock::now() - firstSent);
    const bool firstLineSeen = eventually(
        [&] {
            if (text(ioLog).find("127.0.0.4 -> 127.0.0.5") == std::string::npos)
                return false;
            firstLineAfter = std::chrono::steady_clock::now() - firstSent;
            runningThen = stillRunning(io.pid());
            return true;
        },
        std::max(std::chrono::duration_cast<std::chrono::milliseconds>(left),
                 std::chrono::milliseconds(0)));
    EXPECT_TRUE(firstLineSeen) << "no line of the first datagram within 2 s:\n" << text(ioLog);
    EXPECT_LT(firstLineAfter, bound)
        << std::chrono::duration_cast<std::chrono::milliseconds>(firstLineAfter).count() << " ms";
    EXPECT_TRUE(runningThen) << "ipio.d had ended when the first datagram's line came";
    ASSERT_EQ(proto.wait(60000), 0);
    ASSERT_EQ(io.wait(60000), 0);
    const auto lines = [](const std::string& all) {
        std::vector<std::string> out;
        std::istringstream in(all);
        for (std::string line; std::getline(in, line);)
            out.push_back(line);
        return out;
    };
    // ipproto.d: "   SADDR DADDR PROTO COUNT" ("   %-28s %-28s %6s %8s"); each datagram
    // is one send and one receive.
    const std::string p = text(protoLog);
    EXPECT_NE(p.find("Tracing IP packets... Hit Ctrl-C to end.\n"), std::string::npos) << p;
    const auto row = [](const std::string& s, const std::string& d, const std::string& count) {
        const auto pad = [](const std::string& x, std::size_t w) {
            return x + std::string(w - x.size(), ' ');
        };
        return "   " + pad(s, 28) + " " + pad(d, 28) + " " + std::string(6 - 3, ' ') + "UDP " +
               std::string(8 - count.size(), ' ') + count;
    };
    const auto protoLines = lines(p);
    const auto has = [&](const std::vector<std::string>& all, const std::string& line) {
        return std::find(all.begin(), all.end(), line) != all.end();
    };
    EXPECT_TRUE(has(protoLines, row("127.0.0.4", "127.0.0.5", "8"))) << p;
    EXPECT_TRUE(has(protoLines, row(own6.address, own6.address, "4"))) << p;
    // ipio.d: " %3d %10d %15s -> %-15s %8s %6d", the test's lines in order.
    std::vector<std::string> ours;
    for (const std::string& line : lines(text(ioLog))) {
        std::istringstream words(line);
        std::string cpu, delta, a, arrow, b, dev, bytes;
        if (!(words >> cpu >> delta >> a >> arrow >> b >> dev >> bytes))
            continue;
        if (a == "127.0.0.4" || a == "127.0.0.5" || a == own6.address)
            ours.push_back(a + " " + arrow + " " + b + " " + dev + " " + bytes);
    }
    const std::vector<std::string> expected = {"127.0.0.4 -> 127.0.0.5 lo 108",
                                               "127.0.0.5 <- 127.0.0.4 lo 108",
                                               "127.0.0.4 -> 127.0.0.5 lo 108",
                                               "127.0.0.5 <- 127.0.0.4 lo 108",
                                               "127.0.0.4 -> 127.0.0.5 lo 108",
                                               "127.0.0.5 <- 127.0.0.4 lo 108",
                                               "127.0.0.4 -> 127.0.0.5 lo 308",
                                               "127.0.0.5 <- 127.0.0.4 lo 308",
                                               own6.address + " -> " + own6.address + " lo 58",
                                               own6.address + " <- " + own6.address + " lo 58",
                                               own6.address + " -> " + own6.address + " lo 58",
                                               own6.address + " <- " + own6.address + " lo 58"};
    EXPECT_EQ(ours, expected) << text(ioLog);
}

// Manager.CreateIpAggregation's own contract: options are checked before
// anything loads; a handle is its connection's alone; a read leaves the
// counts going; a closed handle is gone.
TEST_F(Ip, AnIpAggregationIsItsConnectionsAndChecksItsOptions) {
    const auto refused = [&](Options options, const std::string& part) {
        try {
            manager_->CreateIpAggregation(options);
            ADD_FAILURE() << "accepted: " << part;
        } catch (const sdbus::Error& e) {
            EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument") << part;
            EXPECT_NE(e.getMessage().find(part), std::string::npos) << e.getMessage();
        }
    };
    using Strings = std::vector<std::string>;
    refused({}, "at least one of send, receive");
    refused({{"probes", sdbus::Variant(Strings{"sned"})}}, "'sned'");
    refused({{"probes", sdbus::Variant(Strings{"send"})},
             {"fields", sdbus::Variant(Strings{"ip_saddr", "../etc"})}},
            "'../etc' is not a payload field");
    refused({{"probes", sdbus::Variant(std::string("send"))}}, "string array");
    refused({{"probes", sdbus::Variant(Strings{"send"})},
             {"max-keys", sdbus::Variant(std::uint64_t{0})}},
            "max-keys");
    refused({{"probes", sdbus::Variant(Strings{"send"})},
             {"filter", sdbus::Variant(std::string("ip_saddr == "))}},
            "filter");
    refused({{"probes", sdbus::Variant(Strings{"send"})}, {"sizes", sdbus::Variant(true)}},
            "unknown option 'sizes'");
    EXPECT_TRUE(ours().empty()) << "a refused request loaded a program";

    const std::uint64_t handle = manager_->CreateIpAggregation(
        {{"probes", sdbus::Variant(Strings{"send", "receive"})},
         {"fields", sdbus::Variant(Strings{"ip_saddr", "udp_dport"})},
         {"filter", sdbus::Variant(std::string("ip_saddr == \"127.0.0.6\""))}});
    EXPECT_EQ(ours().size(), 2u);
    std::uint16_t port = 0;
    const int rx = udpSocket("127.0.0.7", 0, &port);
    const int tx = udpSocket("127.0.0.6", 0);
    const int other = udpSocket("127.0.0.8", 0);
    exchange(tx, rx, "127.0.0.7", port, 3, 10);
    exchange(other, rx, "127.0.0.7", port, 2, 10); // filtered out in the kernel
    // Rows of the test's source, by probe: 3 sends, 3 receives, the port kept.
    const auto counted = [&] {
        std::map<std::pair<int, std::uint16_t>, std::uint64_t> out;
        const auto [rows, dropped] = manager_->ReadIpAggregation(handle);
        EXPECT_EQ(dropped, 0u);
        for (const auto& row : rows) {
            tracectl_ip_record r{};
            EXPECT_EQ(row.get<0>().size(), sizeof r);
            std::memcpy(&r, row.get<0>().data(), std::min(sizeof r, row.get<0>().size()));
            EXPECT_EQ(r.timestamp, 0u) << "a field not asked for";
            out[{r.probe, r.dport}] += row.get<1>();
        }
        return out;
    };
    const std::map<std::pair<int, std::uint16_t>, std::uint64_t> expected{
        {{TRACECTL_IP_SEND, port}, 3}, {{TRACECTL_IP_RECEIVE, port}, 3}};
    EXPECT_TRUE(eventually([&] { return counted() == expected; }, std::chrono::seconds(10)));
    EXPECT_EQ(counted(), expected) << "a read leaves the counts as they are";
    // Another connection (busctl's) may neither read nor close it.
    for (const char* method : {"ReadIpAggregation", "CloseIpAggregation"}) {
        const RunResult r =
            run({"busctl", "--system", "call", "org.tracectl.Tracing1", "/org/tracectl/Tracing1",
                 "org.tracectl.Tracing1.Manager", method, "t", std::to_string(handle)});
        EXPECT_NE(r.exitCode, 0) << method;
        EXPECT_NE(r.err.find("of this connection"), std::string::npos) << r.describe();
    }
    manager_->CloseIpAggregation(handle);
    EXPECT_TRUE(eventually([] { return ours().empty(); }, std::chrono::seconds(10)));
    try {
        manager_->ReadIpAggregation(handle);
        ADD_FAILURE() << "a closed handle was read";
    } catch (const sdbus::Error& e) {
        EXPECT_EQ(e.getName(), "org.tracectl.Tracing1.Error.InvalidArgument");
    }
    for (const int fd : {rx, tx, other})
        ::close(fd);
}

// A `tracectl dtrace` counting in the kernel that is killed (no Close) takes
// its programs with it: the daemon unloads them when its connection leaves.
TEST_F(Ip, AKilledClientsAggregationIsUnloaded) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const std::string log = sandbox_->dir() + "/log/killed-aggregation.log";
    ChildProcess counting({cli, "dtrace", "-n", "ip:::receive { @ = count(); }"}, {}, log);
    ASSERT_TRUE(eventually([&] { return ours().size() == 2; }, std::chrono::seconds(20)));
    const auto loaded = ours();
    counting.kill(SIGKILL);
    EXPECT_TRUE(eventually([&] { return allUnloaded(loaded); }, std::chrono::seconds(10)));
}

// Found by a fresh-user pass: counting in the kernel prints nothing until the
// end, so a reader of the output that went away was never noticed and the
// run went on until killed. The closed pipe now ends it, as it ends a
// recording run, and nothing stays loaded (TearDown).
TEST_F(Ip, AClosedOutputPipeEndsAnAggregationInTheKernel) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    RunOptions options;
    options.timeout = std::chrono::minutes(2);
    const RunResult r =
        run({"sh", "-c", "\"$0\" dtrace -n 'ip:::receive { @ = count(); }' | true; echo done", cli},
            options);
    EXPECT_FALSE(r.timedOut) << r.describe();
    EXPECT_EQ(r.out, "done\n") << r.describe();
}

// dtrace -c: the command starts once tracing has begun, $target is its pid,
// and the run ends when it exits (long before --duration).
TEST_F(Ip, MinusCRunsTheCommandAsTargetAndEndsWithIt) {
    const char* cli = std::getenv("TRACECTL");
    ASSERT_NE(cli, nullptr);
    const std::string dir = sandbox_->dir();
    const std::string script = dir + "/sender.sh";
    {
        std::ofstream out(script);
        out << "#!/bin/sh\necho $$ > " << dir << "/sender.pid\n"
            << "exec python3 -c 'import socket\n"
               "r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind((\"127.0.0.7\", 0))\n"
               "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"127.0.0.6\", 0))\n"
               "for i in range(3):\n"
               "    s.sendto(b\"x\" * 10, r.getsockname()); r.recv(100)\n'\n";
    }
    ::chmod(script.c_str(), 0755);
    const auto start = std::chrono::steady_clock::now();
    const RunResult r = run({cli, "dtrace", "-q", "--duration", "60", "-c", script, "-n",
                             "BEGIN { printf(\"target %d\\n\", $target); }\n"
                             "ip:::send /args[2]->ip_saddr == \"127.0.0.6\"/ { n++; }\n"
                             "END { printf(\"sent %d\\n\", n); }"});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    ASSERT_EQ(r.exitCode, 0) << r.describe();
    std::ifstream pid(dir + "/sender.pid");
    std::string target;
    pid >> target;
    EXPECT_EQ(r.out, "target " + target + "\nsent 3\n") << r.describe();
}

// As real users: trace-kernel decides, and nothing is loaded without it.
class IpAccess : public MultiUserSuite {};

TEST_F(IpAccess, WithoutTraceKernelNoIpAggregationIsMade) {
    EXPECT_EQ(errorOf(call("alice", "/org/tracectl/Tracing1",
                           "org.tracectl.Tracing1.Manager.CreateIpAggregation",
                           {"{'probes': <['receive']>, 'interactive': <true>}"})),
              kAccessDenied);
    EXPECT_TRUE(ipProgramsOf(sandbox_->daemonPid()).empty());
}

TEST_F(IpAccess, WithoutTraceKernelTheProbesAreRefusedAndNothingIsLoaded) {
    const std::string path = createAs("alice", "ip-denied", homeOutput("alice", "ip-denied"));
    EXPECT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.EnableEvents",
                           {"'kernel'", "''", "'ip:*'", "{'interactive': <true>}"})),
              kAccessDenied);
    ASSERT_EQ(errorOf(call("alice", path, "org.tracectl.Tracing1.Session.Start", {"{}"})),
              "no error");
    EXPECT_TRUE(ipProgramsOf(sandbox_->daemonPid()).empty());
}

} // namespace
