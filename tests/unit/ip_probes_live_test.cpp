// The `ip` provider against the real kernel: IpProbes (loader) and
// IpRingReader (consumer) over loopback UDP. Needs root and BTF
// (/sys/kernel/btf/vmlinux); skipped otherwise.
#include "common/error.hpp"
#include "common/event_loop.hpp"
#include "ip/ip_aggregations.hpp"
#include "ip/ip_filter.hpp"
#include "ip/ip_probes.hpp"
#include "ip_probe_abi.h"
#include "ip_ring_reader.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <linux/types.h>
#include <map>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <set>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using tracectl::UniqueFd;
using tracectl::consumer::kernel::IpRingReader;
using tracectl::ip::compileIpFilter;
using tracectl::ip::ipFieldRecordMask;
using tracectl::ip::IpFilterProgram;
using tracectl::ip::IpProbes;
using tracectl::ip::IpRecordMask;
using tracectl::ip::ipRecordMaskFor;
using tracectl::ip::ipRecordProbeMask;
using tracectl::ip::IpRuleFilter;
using tracectl::ip::readIpAggregation;

namespace {

constexpr std::uint32_t kBoth = 1U << TRACECTL_IP_SEND | 1U << TRACECTL_IP_RECEIVE;

bool canRun() {
    return ::geteuid() == 0 && ::access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

#define SKIP_UNLESS_ROOT()                                                                         \
    do {                                                                                           \
        if (!canRun())                                                                             \
            GTEST_SKIP() << "needs root and /sys/kernel/btf/vmlinux";                              \
    } while (0)

// Ports unlikely to be in use, distinct per test run.
std::uint16_t basePort() {
    return static_cast<std::uint16_t>(20000 + (::getpid() % 5000) * 8);
}

UniqueFd udpSocket(int family, const char* addr, std::uint16_t port) {
    UniqueFd fd(::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    EXPECT_TRUE(fd.valid());
    if (family == AF_INET) {
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(port);
        ::inet_pton(AF_INET, addr, &sa.sin_addr);
        EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << addr;
    } else {
        sockaddr_in6 sa{};
        sa.sin6_family = AF_INET6;
        sa.sin6_port = htons(port);
        ::inet_pton(AF_INET6, addr, &sa.sin6_addr);
        EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0) << addr;
    }
    return fd;
}

std::uint16_t localPort(int fd) {
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
    if (ss.ss_family == AF_INET)
        return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

/// Sends `count` datagrams of `size` bytes from `from` to `to` and receives
/// them all on `to` (so both probes have fired for each). Returns the
/// sender's port.
std::uint16_t exchange(int family, const char* from, const char* toAddr, UniqueFd& to, int count,
                       std::size_t size) {
    UniqueFd s = udpSocket(family, from, 0);
    sockaddr_storage dst{};
    socklen_t dlen = sizeof dst;
    ::getsockname(to.get(), reinterpret_cast<sockaddr*>(&dst), &dlen);
    (void)toAddr;
    std::vector<char> payload(size, 'x');
    std::vector<char> in(size + 16);
    for (int i = 0; i < count; ++i) {
        EXPECT_EQ(
            ::sendto(s.get(), payload.data(), size, 0, reinterpret_cast<sockaddr*>(&dst), dlen),
            static_cast<ssize_t>(size));
        EXPECT_EQ(::recv(to.get(), in.data(), in.size(), 0), static_cast<ssize_t>(size));
    }
    return localPort(s.get());
}

std::string addrText(const tracectl_ip_record& r, bool source) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (r.ip_ver == 4)
        ::inet_ntop(AF_INET, r.header + (source ? 12 : 16), buf, sizeof buf);
    else
        ::inet_ntop(AF_INET6, r.header + (source ? 8 : 24), buf, sizeof buf);
    return buf;
}

std::uint32_t plength(const tracectl_ip_record& r) {
    if (r.ip_ver == 4)
        return (r.header[2] << 8 | r.header[3]) - (r.header[0] & 0xf) * 4U;
    return r.header[4] << 8 | r.header[5];
}

std::uint8_t protocol(const tracectl_ip_record& r) {
    return r.ip_ver == 4 ? r.header[9] : r.header[6];
}

std::vector<tracectl_ip_record> drain(IpRingReader& reader) {
    std::vector<tracectl_ip_record> out;
    reader.consume([&](const tracectl_ip_record& r) { out.push_back(r); });
    return out;
}

IpRingReader readerFor(const IpProbes& p) {
    return IpRingReader(UniqueFd(::fcntl(p.ringFd(), F_DUPFD_CLOEXEC, 0)),
                        UniqueFd(::fcntl(p.countersFd(), F_DUPFD_CLOEXEC, 0)));
}

// The ids of the loaded programs named tracectl_ip_*, by id (libbpf's
// bpf_prog_get_next_id + bpf_prog_get_info_by_fd, as `bpftool prog show`).
std::map<__u32, std::string> ourPrograms() {
    std::map<__u32, std::string> programs;
    __u32 id = 0;
    while (bpf_prog_get_next_id(id, &id) == 0) {
        UniqueFd fd(bpf_prog_get_fd_by_id(id));
        if (!fd)
            continue;
        bpf_prog_info info{};
        __u32 len = sizeof info;
        if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) == 0 &&
            std::strncmp(info.name, "tracectl_ip_", 12) == 0)
            programs.emplace(id, info.name);
    }
    return programs;
}

// The programs named tracectl_ip_* this process holds (a program or link
// fd's /proc/self/fdinfo names its prog_id): another process's, loaded
// meanwhile (the ip suite beside this one), are not this test's.
std::map<__u32, std::string> heldPrograms() {
    const auto all = ourPrograms();
    std::map<__u32, std::string> held;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fdinfo")) {
        std::ifstream info(entry.path());
        std::string line;
        while (std::getline(info, line))
            if (line.rfind("prog_id:", 0) == 0) {
                const auto id = static_cast<__u32>(std::strtoul(line.c_str() + 8, nullptr, 10));
                if (const auto it = all.find(id); it != all.end())
                    held.emplace(id, it->second);
            }
    }
    return held;
}

// Those of `now` not in `before`.
std::map<__u32, std::string> added(const std::map<__u32, std::string>& before,
                                   const std::map<__u32, std::string>& now) {
    std::map<__u32, std::string> out;
    for (const auto& [id, name] : now)
        if (!before.contains(id))
            out.emplace(id, name);
    return out;
}

} // namespace

TEST(IpProbesLive, LoadsAttachesAndDetaches) {
    SKIP_UNLESS_ROOT();
    // Other processes' programs (an earlier run's, freed late) may come and
    // go: follow the ids this test's objects load.
    const auto before = ourPrograms();
    std::map<__u32, std::string> mine;
    {
        IpProbes p(5000);
        EXPECT_EQ(p.ringBytes(), 8192U);
        EXPECT_GE(p.ringFd(), 0);
        EXPECT_GE(p.countersFd(), 0);
        mine = added(before, heldPrograms());
        ASSERT_EQ(mine.size(), 2U);
        std::set<std::string> names;
        for (const auto& [id, name] : mine)
            names.insert(name);
        EXPECT_EQ(names, (std::set<std::string>{"tracectl_ip_rcv", "tracectl_ip_snd"}));
        IpProbes moved(std::move(p));
        EXPECT_EQ(p.ringFd(), -1);
        EXPECT_EQ(p.countersFd(), -1);
        EXPECT_EQ(p.ringBytes(), 0U);
        EXPECT_THROW(p.setEnabled(true), tracectl::ip::IpProbeError);
        EXPECT_EQ(added(before, heldPrograms()), mine);
        IpProbes small(1);
        EXPECT_EQ(small.ringBytes(), static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
        const auto withSmall = added(before, heldPrograms());
        EXPECT_EQ(withSmall.size(), 4U);
        for (const auto& [id, name] : withSmall)
            if (!mine.contains(id))
                mine.emplace(id, name);
    }
    // The kernel frees a detached program's id after an RCU grace period
    // (bpf_link_free, kernel/bpf/syscall.c), not at close(2): wait for it.
    const auto stillThere = [&] {
        const auto now = ourPrograms();
        return std::any_of(mine.begin(), mine.end(),
                           [&](const auto& entry) { return now.contains(entry.first); });
    };
    const auto start = std::chrono::steady_clock::now();
    while (stillThere() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(stillThere());
}

TEST(IpProbesLive, LoopbackUdpSendAndReceive) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p1 = basePort(), p2 = p1 + 1, p3 = p1 + 2;
    IpProbes probes(1 << 20);
    probes.setFilter(compileIpFilter(
        {{kBoth, "udp_dport == " + std::to_string(p1) + " || udp_dport == " + std::to_string(p2)},
         {kBoth, "udp_dport == " + std::to_string(p3)}}));
    IpRingReader reader = readerFor(probes);
    UniqueFd r1 = udpSocket(AF_INET, "127.0.0.1", p1);
    UniqueFd r3 = udpSocket(AF_INET6, "::1", p3);
    // Disabled: nothing.
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", r1, 3, 10);
    EXPECT_TRUE(drain(reader).empty());

    probes.setEnabled(true);
    const std::uint16_t s1 = exchange(AF_INET, "127.0.0.1", "127.0.0.1", r1, 5, 100);
    UniqueFd r2 = udpSocket(AF_INET, "127.0.0.1", p2);
    const std::uint16_t s2 = exchange(AF_INET, "127.0.0.2", "127.0.0.1", r2, 3, 200);
    const std::uint16_t s3 = exchange(AF_INET6, "::1", "::1", r3, 4, 300);
    probes.setEnabled(false);
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", r1, 2, 10);

    const std::vector<tracectl_ip_record> recs = drain(reader);
    EXPECT_EQ(reader.dropped(), 0U);
    EXPECT_EQ(reader.malformed(), 0U);
    ASSERT_EQ(recs.size(), 2U * (5 + 3 + 4));
    std::map<std::pair<std::uint16_t, int>, int> counts;
    std::uint64_t lastTs = 0;
    for (const tracectl_ip_record& r : recs) {
        SCOPED_TRACE("dport " + std::to_string(r.dport) + " probe " + std::to_string(r.probe));
        ++counts[{r.dport, r.probe}];
        EXPECT_GE(r.timestamp, lastTs);
        lastTs = r.timestamp;
        EXPECT_STREQ(r.if_name, "lo");
        EXPECT_EQ(r.if_local, 1);
        EXPECT_EQ(r.ifindex, 1U);
        EXPECT_NE(r.skb, 0U);
        EXPECT_NE(r.netns_ino, 0U);
        EXPECT_EQ(protocol(r), 17);
        if (r.probe == TRACECTL_IP_SEND) {
            EXPECT_NE(r.sk, 0U);
        }
        if (r.dport == p1) {
            EXPECT_EQ(r.ip_ver, 4);
            EXPECT_EQ(r.header_len, 20);
            EXPECT_EQ(r.sport, s1);
            EXPECT_EQ(addrText(r, true), "127.0.0.1");
            EXPECT_EQ(addrText(r, false), "127.0.0.1");
            EXPECT_EQ(plength(r), 108U);
        } else if (r.dport == p2) {
            EXPECT_EQ(r.ip_ver, 4);
            EXPECT_EQ(r.sport, s2);
            EXPECT_EQ(addrText(r, true), "127.0.0.2");
            EXPECT_EQ(addrText(r, false), "127.0.0.1");
            EXPECT_EQ(plength(r), 208U);
        } else {
            EXPECT_EQ(r.dport, p3);
            EXPECT_EQ(r.ip_ver, 6);
            EXPECT_EQ(r.header_len, 40);
            EXPECT_EQ(r.sport, s3);
            EXPECT_EQ(addrText(r, true), "::1");
            EXPECT_EQ(addrText(r, false), "::1");
            EXPECT_EQ(plength(r), 308U);
        }
    }
    EXPECT_EQ((counts[{p1, TRACECTL_IP_SEND}]), 5);
    EXPECT_EQ((counts[{p1, TRACECTL_IP_RECEIVE}]), 5);
    EXPECT_EQ((counts[{p2, TRACECTL_IP_SEND}]), 3);
    EXPECT_EQ((counts[{p2, TRACECTL_IP_RECEIVE}]), 3);
    EXPECT_EQ((counts[{p3, TRACECTL_IP_SEND}]), 4);
    EXPECT_EQ((counts[{p3, TRACECTL_IP_RECEIVE}]), 4);
}

TEST(IpProbesLive, FilterPassesExactlyTheWantedPackets) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 3;
    IpProbes probes(1 << 20);
    IpRingReader reader = readerFor(probes);
    UniqueFd rx = udpSocket(AF_INET, "127.0.0.1", p);
    UniqueFd rx6 = udpSocket(AF_INET6, "::1", p);
    probes.setEnabled(true);

    const auto run = [&](std::uint32_t mask, const std::string& expr) {
        probes.setFilter(compileIpFilter({{mask, expr}}));
        exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 2, 50);
        exchange(AF_INET, "127.0.0.2", "127.0.0.1", rx, 3, 60);
        exchange(AF_INET6, "::1", "::1", rx6, 4, 70);
        std::vector<tracectl_ip_record> recs = drain(reader);
        std::erase_if(recs, [&](const tracectl_ip_record& r) { return r.dport != p; });
        return recs;
    };
    const std::string port = std::to_string(p);
    auto recs = run(kBoth, "udp_dport == " + port + " && ip_saddr == \"127.0.0.2\"");
    ASSERT_EQ(recs.size(), 6U);
    for (const auto& r : recs)
        EXPECT_EQ(addrText(r, true), "127.0.0.2");

    recs = run(1U << TRACECTL_IP_RECEIVE, "udp_dport == " + port + " && ip_ver == 6");
    ASSERT_EQ(recs.size(), 4U);
    for (const auto& r : recs) {
        EXPECT_EQ(r.probe, TRACECTL_IP_RECEIVE);
        EXPECT_EQ(r.ip_ver, 6);
    }
    recs = run(kBoth, "udp_dport == " + port + " && !(ip_saddr == \"127.0.0.2\" || ip_ver == 6)");
    EXPECT_EQ(recs.size(), 4U);
    recs = run(kBoth, "udp_dport == " + port + " && ip_daddr == \"::1\" && ip_plength > 70 && " +
                          "if_name == \"l*\" && if_local && ipv6_nexthdr == 17");
    EXPECT_EQ(recs.size(), 8U);
    recs = run(kBoth, "udp_dport == " + port + " && if_name != \"lo\"");
    EXPECT_EQ(recs.size(), 0U);
    recs = run(kBoth, "udp_dport == " + port + " && ipv4_ttl == 64 && ip_plength <= 58");
    EXPECT_EQ(recs.size(), 4U);
    recs = run(0, "");
    EXPECT_EQ(recs.size(), 0U);
    EXPECT_EQ(reader.dropped(), 0U);
}

TEST(IpProbesLive, OverflowCountsEveryRecordNotReserved) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 3;
    IpProbes probes(1);
    IpRingReader reader = readerFor(probes);
    UniqueFd rx = udpSocket(AF_INET, "127.0.0.1", p);
    probes.setFilter(compileIpFilter({{kBoth, "udp_dport == " + std::to_string(p)}}));
    probes.setEnabled(true);
    constexpr int kDatagrams = 300;
    // Packets the filter refuses cost no ring space and are not counted as
    // dropped, even while the ring is full.
    UniqueFd other = udpSocket(AF_INET, "127.0.0.1", static_cast<std::uint16_t>(p + 1));
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, kDatagrams / 2, 20);
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", other, 100, 20);
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, kDatagrams / 2, 20);
    probes.setEnabled(false);
    const std::size_t read = drain(reader).size();
    EXPECT_GT(reader.dropped(), 0U);
    EXPECT_GT(read, 0U);
    EXPECT_EQ(reader.dropped() + read, 2U * kDatagrams);
    // A limit stops consume() after that many records.
    probes.setEnabled(true);
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 5, 20);
    probes.setEnabled(false);
    std::size_t n = 0;
    EXPECT_EQ(reader.consume([&](const tracectl_ip_record&) { ++n; }, 3), 3U);
    EXPECT_EQ(reader.consume([&](const tracectl_ip_record&) { ++n; }), 7U);
    EXPECT_EQ(n, 10U);
}

TEST(IpProbesLive, ReaderWorksAsNobodyWithTheFds) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 3;
    IpProbes probes(1 << 16);
    UniqueFd rx = udpSocket(AF_INET, "127.0.0.1", p);
    probes.setFilter(compileIpFilter({{kBoth, "udp_dport == " + std::to_string(p)}}));
    probes.setEnabled(true);
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 7, 20);
    probes.setEnabled(false);
    const int ring = ::fcntl(probes.ringFd(), F_DUPFD, 0);
    const int counters = ::fcntl(probes.countersFd(), F_DUPFD, 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // An ordinary user without capabilities, as the consumer's unit runs.
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0 ||
            ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            ::_exit(101);
        if (::geteuid() == 0)
            ::_exit(102);
        try {
            IpRingReader reader{UniqueFd(ring), UniqueFd(counters)};
            std::size_t ok = 0;
            reader.consume([&](const tracectl_ip_record& r) {
                if (r.dport == p && r.ip_ver == 4)
                    ++ok;
            });
            ::_exit(ok == 14 && reader.dropped() == 0 ? 0 : 103);
        } catch (...) {
            ::_exit(104);
        }
    }
    ::close(ring);
    ::close(counters);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(IpProbesLive, WakesTheReaderOnlyWhenMoreThanHalfFull) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 3;
    IpProbes probes(1); // one page: 4096 bytes, 120 per record (8-byte header + 112)
    IpRingReader reader = readerFor(probes);
    UniqueFd rx = udpSocket(AF_INET, "127.0.0.1", p);
    probes.setFilter(compileIpFilter({{kBoth, "udp_dport == " + std::to_string(p)}}));
    probes.setEnabled(true);
    const auto readable = [&] {
        pollfd pfd{reader.pollFd(), POLLIN, 0};
        return ::poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
    };
    ASSERT_GE(reader.pollFd(), 0);
    EXPECT_FALSE(readable());
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 5, 20); // 10 records: 1200 bytes
    EXPECT_FALSE(readable());
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 5, 20); // 20 records: 2400 > 2048
    EXPECT_TRUE(readable());
    probes.setEnabled(false);
    EXPECT_EQ(drain(reader).size(), 20U);
    EXPECT_EQ(reader.dropped(), 0U);
    EXPECT_FALSE(readable());
}

namespace {

// The OR of the named fields' masks, and the probe's when `probe`.
IpRecordMask keyMask(std::initializer_list<std::string_view> fields, bool probe) {
    IpRecordMask mask{};
    if (probe)
        mask = ipRecordProbeMask();
    for (const std::string_view f : fields) {
        const std::optional<IpRecordMask> m = ipFieldRecordMask(f);
        EXPECT_TRUE(m.has_value()) << f;
        if (m)
            for (std::size_t i = 0; i < mask.size(); ++i)
                mask[i] = static_cast<std::uint8_t>(mask[i] | (*m)[i]);
    }
    return mask;
}

// Runs `f` with this thread on the `index`-th CPU it may run on (the last
// one when it may run on fewer), then as before: the packets it sends are
// counted on that CPU's slots of the per-CPU aggregation.
template <typename F>
void onCpu(std::size_t index, F f) {
    cpu_set_t before;
    ASSERT_EQ(::sched_getaffinity(0, sizeof before, &before), 0);
    int cpu = -1;
    for (int c = 0, seen = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &before)) {
            cpu = c;
            if (static_cast<std::size_t>(seen++) == index)
                break;
        }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    f();
    ASSERT_EQ(::sched_setaffinity(0, sizeof before, &before), 0);
}

// A key's bytes its version's mask (ipRecordMaskFor) does not keep are all 0.
void expectMasked(const tracectl_ip_record& key, const IpRecordMask& mask) {
    const IpRecordMask bytes = ipRecordMaskFor(mask, key.ip_ver);
    const auto* b = reinterpret_cast<const unsigned char*>(&key);
    for (std::size_t i = 0; i < sizeof key; ++i) {
        if (bytes[i] == 0) {
            EXPECT_EQ(b[i], 0) << "byte " << i << " of an IPv" << int{key.ip_ver}
                               << " key outside the mask";
        }
    }
}

using AggKey = std::tuple<int, std::string, std::string>; // probe, saddr, daddr

// The count of each key by its (probe, ip_saddr, ip_daddr), for a mask of
// those fields: each such triple must be exactly one key (nothing else in
// the key may vary from packet to packet of one flow), so no two keys may
// give the same triple.
std::map<AggKey, std::uint64_t> byAddresses(const tracectl::ip::IpAggregation& agg,
                                            const IpRecordMask& mask) {
    std::map<AggKey, std::uint64_t> out;
    for (const auto& [key, count] : agg.rows) {
        expectMasked(key, mask);
        EXPECT_GT(count, 0U);
        const AggKey values{key.probe, addrText(key, true), addrText(key, false)};
        EXPECT_TRUE(out.emplace(values, count).second)
            << "two keys of probe " << std::get<0>(values) << ", " << std::get<1>(values) << " -> "
            << std::get<2>(values) << " (IPv" << int{key.ip_ver} << ")";
    }
    return out;
}

} // namespace

TEST(IpProbesLive, AggregatesInTheKernelByTheMaskedRecord) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 5;
    IpProbes probes(1 << 16, 64);
    ASSERT_GE(probes.aggregationFd(), 0);
    IpRingReader reader = readerFor(probes);
    UniqueFd rx = udpSocket(AF_INET, "127.0.0.1", p);
    UniqueFd rx6 = udpSocket(AF_INET6, "::1", p);
    const IpFilterProgram filter = compileIpFilter({{kBoth, "udp_dport == " + std::to_string(p)}});
    const IpRecordMask mask = keyMask({"ip_saddr", "ip_daddr"}, true);
    probes.setAggregatingFilter(filter, mask);
    probes.setEnabled(true);
    // Each key counted on two CPUs (when there are two): the reader sums them.
    onCpu(0, [&] { exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 3, 30); });
    onCpu(1, [&] { exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 2, 30); });
    onCpu(0, [&] { exchange(AF_INET, "127.0.0.2", "127.0.0.1", rx, 1, 40); });
    onCpu(1, [&] { exchange(AF_INET, "127.0.0.2", "127.0.0.1", rx, 1, 40); });
    onCpu(0, [&] { exchange(AF_INET6, "::1", "::1", rx6, 1, 50); });
    onCpu(1, [&] { exchange(AF_INET6, "::1", "::1", rx6, 2, 50); });
    // Not the filter's port: not counted.
    UniqueFd other = udpSocket(AF_INET, "127.0.0.1", static_cast<std::uint16_t>(p + 1));
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", other, 4, 30);
    probes.setEnabled(false);

    const auto agg = readIpAggregation(probes.aggregationFd(), probes.countersFd());
    EXPECT_EQ(agg.dropped, 0U);
    const std::map<AggKey, std::uint64_t> expected = {
        {{TRACECTL_IP_SEND, "127.0.0.1", "127.0.0.1"}, 5},
        {{TRACECTL_IP_RECEIVE, "127.0.0.1", "127.0.0.1"}, 5},
        {{TRACECTL_IP_SEND, "127.0.0.2", "127.0.0.1"}, 2},
        {{TRACECTL_IP_RECEIVE, "127.0.0.2", "127.0.0.1"}, 2},
        {{TRACECTL_IP_SEND, "::1", "::1"}, 3},
        {{TRACECTL_IP_RECEIVE, "::1", "::1"}, 3},
    };
    EXPECT_EQ(byAddresses(agg, mask), expected);
    // One key per (probe, source, destination), whatever the version.
    EXPECT_EQ(agg.rows.size(), expected.size());
    for (const auto& [key, count] : agg.rows) {
        EXPECT_EQ(key.header_len, key.ip_ver == 4 ? 20 : 40);
        EXPECT_EQ(key.header[0] >> 4, key.ip_ver);
    }
    // Counted, not recorded.
    EXPECT_TRUE(drain(reader).empty());
    EXPECT_EQ(reader.dropped(), 0U);
    // Reading changes nothing.
    EXPECT_EQ(byAddresses(readIpAggregation(probes.aggregationFd(), probes.countersFd()), mask),
              expected);

    // setFilter goes back to the ring; the aggregation keeps its counts.
    probes.setFilter(filter);
    probes.setEnabled(true);
    exchange(AF_INET, "127.0.0.1", "127.0.0.1", rx, 2, 30);
    probes.setEnabled(false);
    EXPECT_EQ(drain(reader).size(), 4U);
    EXPECT_EQ(byAddresses(readIpAggregation(probes.aggregationFd(), probes.countersFd()), mask),
              expected);

    // An aggregating filter again: the same keys count on.
    probes.setAggregatingFilter(filter, mask);
    probes.setEnabled(true);
    exchange(AF_INET6, "::1", "::1", rx6, 4, 50);
    probes.setEnabled(false);
    auto more = expected;
    more[{TRACECTL_IP_SEND, "::1", "::1"}] += 4;
    more[{TRACECTL_IP_RECEIVE, "::1", "::1"}] += 4;
    EXPECT_EQ(byAddresses(readIpAggregation(probes.aggregationFd(), probes.countersFd()), mask),
              more);
    EXPECT_TRUE(drain(reader).empty());
}

// N datagrams of one flow (one source, one destination, one size) are one
// key per probe, counted N times, over IPv4 as over IPv6: each version's
// key keeps only its own header's bytes of the fields (IPv4's TTL,
// protocol, ident and checksum are not IPv6's source address, nor is
// IPv6's flow label IPv4's length), so nothing in a key varies per packet.
TEST(IpProbesLive, OneFlowIsOneKeyPerProbe) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 6;
    constexpr int kN = 7;
    const IpFilterProgram filter = compileIpFilter({{kBoth, "udp_dport == " + std::to_string(p)}});
    // The addresses alone, then many fields of each version, constant per flow.
    const std::vector<IpRecordMask> masks = {
        keyMask({"ip_saddr", "ip_daddr"}, true),
        keyMask({"ip_saddr", "ip_daddr", "ip_plength", "udp_sport", "udp_dport", "if_name",
                 "ipv4_protocol", "ipv4_ttl", "ipv4_length", "ipv4_saddr", "ipv6_nexthdr",
                 "ipv6_hlim", "ipv6_plen", "ipv6_saddr", "ipv6_daddr"},
                true),
    };
    for (std::size_t m = 0; m < masks.size(); ++m) {
        for (const int family : {AF_INET, AF_INET6}) {
            const char* addr = family == AF_INET ? "127.0.0.1" : "::1";
            SCOPED_TRACE("mask " + std::to_string(m) + ", " + addr);
            IpProbes probes(1 << 16, 64);
            IpRingReader reader = readerFor(probes);
            UniqueFd rx = udpSocket(family, addr, p);
            probes.setAggregatingFilter(filter, masks[m]);
            probes.setEnabled(true);
            exchange(family, addr, addr, rx, kN, 32);
            probes.setEnabled(false);

            const auto agg = readIpAggregation(probes.aggregationFd(), probes.countersFd());
            EXPECT_EQ(agg.dropped, 0U);
            EXPECT_EQ(agg.rows.size(), 2U) << "one send key and one receive key";
            const std::map<AggKey, std::uint64_t> expected = {
                {{TRACECTL_IP_SEND, addr, addr}, kN},
                {{TRACECTL_IP_RECEIVE, addr, addr}, kN},
            };
            EXPECT_EQ(byAddresses(agg, masks[m]), expected);
            for (const auto& [key, count] : agg.rows) {
                EXPECT_EQ(key.ip_ver, family == AF_INET ? 4 : 6);
                EXPECT_EQ(count, static_cast<std::uint64_t>(kN));
            }
            EXPECT_TRUE(drain(reader).empty());
        }
    }
}

TEST(IpProbesLive, AFullAggregationCountsTheRefusedPackets) {
    SKIP_UNLESS_ROOT();
    const std::uint16_t p = basePort() + 5;
    IpProbes probes(1 << 16, 2);
    IpRingReader reader = readerFor(probes);
    UniqueFd rx = udpSocket(AF_INET, "127.0.0.1", p);
    // Keys by the sender's port only (send and receive alike): three
    // senders, three keys, for a map of two.
    const IpRecordMask mask = keyMask({"udp_sport"}, false);
    probes.setAggregatingFilter(compileIpFilter({{kBoth, "udp_dport == " + std::to_string(p)}}),
                                mask);
    UniqueFd s1 = udpSocket(AF_INET, "127.0.0.1", 0);
    UniqueFd s2 = udpSocket(AF_INET, "127.0.0.1", 0);
    UniqueFd s3 = udpSocket(AF_INET, "127.0.0.1", 0);
    const auto send = [&](UniqueFd& from, int count) {
        sockaddr_in dst{};
        dst.sin_family = AF_INET;
        dst.sin_port = htons(p);
        ::inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
        char buf[64] = {};
        for (int i = 0; i < count; ++i) {
            EXPECT_EQ(
                ::sendto(from.get(), buf, 20, 0, reinterpret_cast<sockaddr*>(&dst), sizeof dst),
                20);
            EXPECT_EQ(::recv(rx.get(), buf, sizeof buf, 0), 20);
        }
    };
    probes.setEnabled(true);
    send(s1, 3);
    send(s2, 4);
    send(s3, 5); // a third key: the map is full
    send(s1, 1); // a key it holds still counts
    probes.setEnabled(false);

    const auto agg = readIpAggregation(probes.aggregationFd(), probes.countersFd());
    std::map<std::uint16_t, std::uint64_t> bySport;
    for (const auto& [key, count] : agg.rows) {
        expectMasked(key, mask);
        EXPECT_TRUE(bySport.emplace(key.sport, count).second) << "a port twice: " << key.sport;
    }
    EXPECT_EQ(bySport, (std::map<std::uint16_t, std::uint64_t>{{localPort(s1.get()), 2 * (3 + 1)},
                                                               {localPort(s2.get()), 2 * 4}}));
    EXPECT_EQ(agg.dropped, 2U * 5);
    EXPECT_TRUE(drain(reader).empty());
    EXPECT_EQ(reader.dropped(), 0U);
}

TEST(IpProbesLive, AggregatingNeedsAnAggregationMap) {
    SKIP_UNLESS_ROOT();
    IpProbes probes(4096);
    EXPECT_GE(probes.aggregationFd(), 0);
    EXPECT_THROW(probes.setAggregatingFilter(IpFilterProgram{}, keyMask({"ip_saddr"}, true)),
                 tracectl::ip::IpProbeError);
    // The refusal changed nothing: the plain filter still works.
    EXPECT_NO_THROW(probes.setFilter(IpFilterProgram{}));
    IpProbes moved(std::move(probes));
    EXPECT_EQ(probes.aggregationFd(), -1);
    EXPECT_THROW(probes.setAggregatingFilter(IpFilterProgram{}, IpRecordMask{}),
                 tracectl::ip::IpProbeError);
    // A map of the wrong kind is refused by the reader.
    EXPECT_THROW(readIpAggregation(moved.countersFd(), moved.countersFd()),
                 tracectl::ip::IpProbeError);
    EXPECT_THROW(readIpAggregation(moved.aggregationFd(), moved.ringFd()),
                 tracectl::ip::IpProbeError);
    const auto empty = readIpAggregation(moved.aggregationFd(), moved.countersFd());
    EXPECT_TRUE(empty.rows.empty());
    EXPECT_EQ(empty.dropped, 0U);
}

// IpAggregations (the daemon's owner of CreateIpAggregation's programs): a
// caller that leaves during the load is still answered (with an error: its
// method call must not be left unanswered, which the daemon logs as its own
// fault), and the program loaded for it goes; a request is checked whole.
TEST(IpAggregations, AnOwnerGoneDuringTheLoadIsAnsweredAndKeepsNothing) {
    SKIP_UNLESS_ROOT();
    using tracectl::ip::ipAggregationRequest;
    using tracectl::ip::IpAggregations;
    tracectl::EventLoop loop;
    IpAggregations aggregations(loop);
    std::optional<std::optional<tracectl::Error>> answer;
    aggregations.create(":1.42", ipAggregationRequest({"receive"}, {"ip_saddr"}, "", 16),
                        [&](std::optional<tracectl::Error> e, std::uint64_t) {
                            answer = std::move(e);
                            loop.exit(0);
                        });
    aggregations.ownerGone(":1.42"); // before the load's outcome reaches the loop
    const auto giveUp = loop.addTimer(std::chrono::seconds(20), [&] { loop.exit(1); });
    ASSERT_EQ(loop.run(), 0) << "the caller was never answered";
    ASSERT_TRUE(answer.has_value());
    ASSERT_TRUE(answer->has_value()) << "a caller gone was told it has an aggregation";
    EXPECT_EQ((*answer)->code(), tracectl::ErrorCode::Failed);
    EXPECT_EQ(aggregations.size(), 0u);
}

TEST(IpAggregations, ARequestIsCheckedWhole) {
    using tracectl::ip::ipAggregationRequest;
    const auto refused = [](const std::vector<std::string>& probes,
                            const std::vector<std::string>& fields, const std::string& filter,
                            std::uint64_t keys, const std::string& part) {
        try {
            ipAggregationRequest(probes, fields, filter, keys);
            ADD_FAILURE() << "accepted: " << part;
        } catch (const tracectl::Error& e) {
            EXPECT_EQ(e.code(), tracectl::ErrorCode::InvalidArgument) << part;
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    refused({"send", "send"}, {}, "", 16, "'send' is given twice");
    refused({"send"}, {"ip_saddr", "ip_saddr"}, "", 16, "'ip_saddr' is given twice");
    refused({}, {}, "", 16, "at least one");
    refused({"send"}, {}, "", 0, "max-keys");
    const auto r = ipAggregationRequest({"receive", "send"}, {"ip_saddr"}, "", 16);
    EXPECT_EQ(r.probeMask, kBoth);
}
