#include "ip/ip_probes.hpp"

#include "ip_probe_abi.h"

#include <linux/types.h>
// bpftool's generated skeleton is C with C++ helpers: its casts are its own.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wpedantic"
#include "ip_probes.skel.h"
#pragma GCC diagnostic pop

#include <algorithm>
#include <array>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unistd.h>
#include <utility>

namespace tracectl::ip {
namespace {

// libbpf's log (libbpf_set_print is process-wide): the last few KiB, for
// the message of the next IpProbeError; never printed to stderr.
thread_local std::string libbpfLog;

int keepLibbpfLog(enum libbpf_print_level level, const char* format, va_list args) {
    if (level == LIBBPF_DEBUG)
        return 0;
    char line[512];
    const int n = std::vsnprintf(line, sizeof line, format, args);
    if (n > 0) {
        libbpfLog.append(line, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof line - 1));
        if (libbpfLog.size() > 4096)
            libbpfLog.erase(0, libbpfLog.size() - 4096);
    }
    return 0;
}

void installLogger() {
    static std::once_flag once;
    std::call_once(once, [] { libbpf_set_print(keepLibbpfLog); });
}

[[noreturn]] void fail(const std::string& what, int err) {
    if (err < 0)
        err = -err;
    std::string message = "ip probes: " + what + ": " + std::strerror(err);
    if (!libbpfLog.empty()) {
        std::string log = std::exchange(libbpfLog, {});
        while (!log.empty() && log.back() == '\n')
            log.pop_back();
        message += " (libbpf: " + log + ")";
    }
    throw IpProbeError(message);
}

std::size_t roundRing(std::size_t bytes) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::size_t size = page;
    while (size < bytes) {
        if (size > (std::size_t{1} << 30))
            throw IpProbeError("ip probes: a ring buffer of " + std::to_string(bytes) +
                               " bytes is too large (at most 2 GiB)");
        size <<= 1;
    }
    return size;
}

} // namespace

IpProbes::IpProbes(std::size_t ringBytes, std::size_t aggregationKeys) {
    installLogger();
    libbpfLog.clear();
    ringBytes_ = roundRing(ringBytes);
    if (aggregationKeys > std::numeric_limits<__u32>::max())
        throw IpProbeError("ip probes: an aggregation of " + std::to_string(aggregationKeys) +
                           " keys is too large (at most 2^32 - 1)");
    skel_ = ip_probes_bpf::open();
    if (!skel_)
        fail("cannot open the BPF object", errno);
    try {
        if (int err = bpf_map__set_max_entries(skel_->maps.events, static_cast<__u32>(ringBytes_));
            err)
            fail("cannot size the ring buffer", err);
        // A hash map cannot have 0 entries: 1, which no filter uses.
        if (int err = bpf_map__set_max_entries(
                skel_->maps.aggregation,
                static_cast<__u32>(std::max<std::size_t>(aggregationKeys, 1)));
            err)
            fail("cannot size the aggregation map", err);
        aggregationKeys_ = aggregationKeys;
        if (int err = ip_probes_bpf::load(skel_); err)
            fail("cannot load the BPF programs (tp_btf net_dev_queue, netif_receive_skb)", err);
        // The filter slots start as "nothing passes", the control slot as
        // disabled: a zeroed ARRAY map already is; write it anyway so the
        // state does not depend on that.
        setFilter(IpFilterProgram{});
        writeControl();
        if (int err = ip_probes_bpf::attach(skel_); err)
            fail("cannot attach the BPF programs", err);
    } catch (...) {
        destroy();
        throw;
    }
}

IpProbes::~IpProbes() {
    destroy();
}

IpProbes::IpProbes(IpProbes&& other) noexcept
    : skel_(std::exchange(other.skel_, nullptr)), ringBytes_(std::exchange(other.ringBytes_, 0)),
      aggregationKeys_(std::exchange(other.aggregationKeys_, 0)),
      active_(std::exchange(other.active_, 0)), enabled_(std::exchange(other.enabled_, false)) {}

IpProbes& IpProbes::operator=(IpProbes&& other) noexcept {
    if (this != &other) {
        destroy();
        skel_ = std::exchange(other.skel_, nullptr);
        ringBytes_ = std::exchange(other.ringBytes_, 0);
        aggregationKeys_ = std::exchange(other.aggregationKeys_, 0);
        active_ = std::exchange(other.active_, 0);
        enabled_ = std::exchange(other.enabled_, false);
    }
    return *this;
}

void IpProbes::destroy() noexcept {
    if (skel_)
        ip_probes_bpf::destroy(skel_);
    skel_ = nullptr;
    ringBytes_ = 0;
    aggregationKeys_ = 0;
}

std::size_t IpProbes::ringBytes() const noexcept {
    return ringBytes_;
}

int IpProbes::ringFd() const noexcept {
    return skel_ ? bpf_map__fd(skel_->maps.events) : -1;
}

int IpProbes::countersFd() const noexcept {
    return skel_ ? bpf_map__fd(skel_->maps.counters) : -1;
}

int IpProbes::aggregationFd() const noexcept {
    return skel_ ? bpf_map__fd(skel_->maps.aggregation) : -1;
}

void IpProbes::setFilter(const IpFilterProgram& program) {
    if (!skel_)
        throw IpProbeError("ip probes: setFilter on an empty IpProbes");
    tracectl_ip_config value{};
    value.filter = program.filter;
    writeFilter(value);
}

void IpProbes::setAggregatingFilter(const IpFilterProgram& program, const IpRecordMask& keyMask) {
    if (!skel_)
        throw IpProbeError("ip probes: setAggregatingFilter on an empty IpProbes");
    if (aggregationKeys_ == 0)
        throw IpProbeError("ip probes: setAggregatingFilter on probes loaded without an "
                           "aggregation map (0 keys)");
    tracectl_ip_config value{};
    value.aggregate = 1;
    value.filter = program.filter;
    // keyMask keeps a byte per version (bit 0 IPv4, bit 1 IPv6); the program
    // ANDs a record with its version's 0xff/0x00 mask.
    static_assert(sizeof value.key_mask[0] == std::tuple_size_v<IpRecordMask>);
    const IpRecordMask v4 = ipRecordMaskFor(keyMask, 4);
    const IpRecordMask v6 = ipRecordMaskFor(keyMask, 6);
    std::memcpy(value.key_mask[0], v4.data(), sizeof value.key_mask[0]);
    std::memcpy(value.key_mask[1], v6.data(), sizeof value.key_mask[1]);
    writeFilter(value);
}

// The double-buffered write (ip_probe_abi.h): `value` whole into the
// inactive filter slot, then the control slot switched to it.
void IpProbes::writeFilter(const tracectl_ip_config& value) {
    const unsigned next = active_ ^ 1U;
    const __u32 key = next;
    if (int err = bpf_map_update_elem(bpf_map__fd(skel_->maps.config), &key, &value, BPF_ANY); err)
        fail("cannot write the filter", errno);
    const unsigned previous = active_;
    active_ = next;
    try {
        writeControl();
    } catch (...) {
        active_ = previous;
        throw;
    }
}

void IpProbes::setEnabled(bool on) {
    if (!skel_)
        throw IpProbeError("ip probes: setEnabled on an empty IpProbes");
    const bool previous = enabled_;
    enabled_ = on;
    try {
        writeControl();
    } catch (...) {
        enabled_ = previous;
        throw;
    }
}

void IpProbes::writeControl() {
    tracectl_ip_config value{};
    value.enabled = enabled_ ? 1 : 0;
    value.active = active_;
    const __u32 key = TRACECTL_IP_CONFIG_CONTROL;
    if (int err = bpf_map_update_elem(bpf_map__fd(skel_->maps.config), &key, &value, BPF_ANY); err)
        fail("cannot write the probes' control word", errno);
}

namespace {

// The map behind `fd` is what readIpAggregation expects (a dup of another
// map would otherwise be read with the wrong sizes).
void expectMap(int fd, const char* what, __u32 type, __u32 keySize, __u32 valueSize) {
    bpf_map_info info{};
    __u32 len = sizeof info;
    if (int err = bpf_obj_get_info_by_fd(fd, &info, &len); err)
        fail(std::string("cannot inspect the ") + what + " map", errno);
    if (info.type != type || info.key_size != keySize || info.value_size != valueSize)
        throw IpProbeError(std::string("ip probes: fd ") + std::to_string(fd) + " is not the " +
                           what + " map (type " + std::to_string(info.type) + ", key " +
                           std::to_string(info.key_size) + " bytes, value " +
                           std::to_string(info.value_size) + " bytes)");
}

} // namespace

IpAggregation readIpAggregation(int aggregationFd, int countersFd) {
    expectMap(aggregationFd, "aggregation", BPF_MAP_TYPE_PERCPU_HASH, sizeof(tracectl_ip_record),
              sizeof(std::uint64_t));
    expectMap(countersFd, "counters", BPF_MAP_TYPE_ARRAY, sizeof(__u32),
              sizeof(tracectl_ip_counters));
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0)
        fail("cannot count the possible CPUs", cpus);

    // By the key's bytes: a key met twice (get_next_key starts over when
    // the key it continues from is gone) is read again, not added twice.
    using KeyBytes = std::array<unsigned char, sizeof(tracectl_ip_record)>;
    std::map<KeyBytes, std::uint64_t> counts;
    // A per-CPU value: each CPU's __u64 (8-byte slots, bpf(2)).
    std::vector<std::uint64_t> perCpu(static_cast<std::size_t>(cpus));
    tracectl_ip_record key{};
    tracectl_ip_record next{};
    bool first = true;
    for (;;) {
        if (bpf_map_get_next_key(aggregationFd, first ? nullptr : &key, &next) != 0) {
            if (errno == ENOENT)
                break;
            fail("cannot walk the aggregation map", errno);
        }
        first = false;
        key = next;
        if (bpf_map_lookup_elem(aggregationFd, &key, perCpu.data()) != 0) {
            if (errno == ENOENT)
                continue; // deleted since: nothing to count
            fail("cannot read the aggregation map", errno);
        }
        std::uint64_t sum = 0;
        for (const std::uint64_t n : perCpu)
            sum += n;
        KeyBytes bytes;
        std::memcpy(bytes.data(), &key, sizeof key);
        counts[bytes] = sum;
    }

    IpAggregation out;
    out.rows.reserve(counts.size());
    for (const auto& [bytes, sum] : counts) {
        tracectl_ip_record r;
        std::memcpy(&r, bytes.data(), sizeof r);
        out.rows.emplace_back(r, sum);
    }
    const __u32 zero = 0;
    tracectl_ip_counters counters{};
    if (bpf_map_lookup_elem(countersFd, &zero, &counters) != 0)
        fail("cannot read the counters", errno);
    out.dropped = counters.aggregation_dropped;
    return out;
}

} // namespace tracectl::ip
