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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
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

IpProbes::IpProbes(std::size_t ringBytes) {
    installLogger();
    libbpfLog.clear();
    ringBytes_ = roundRing(ringBytes);
    skel_ = ip_probes_bpf::open();
    if (!skel_)
        fail("cannot open the BPF object", errno);
    try {
        if (int err = bpf_map__set_max_entries(skel_->maps.events, static_cast<__u32>(ringBytes_));
            err)
            fail("cannot size the ring buffer", err);
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
      active_(std::exchange(other.active_, 0)), enabled_(std::exchange(other.enabled_, false)) {}

IpProbes& IpProbes::operator=(IpProbes&& other) noexcept {
    if (this != &other) {
        destroy();
        skel_ = std::exchange(other.skel_, nullptr);
        ringBytes_ = std::exchange(other.ringBytes_, 0);
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

void IpProbes::setFilter(const IpFilterProgram& program) {
    if (!skel_)
        throw IpProbeError("ip probes: setFilter on an empty IpProbes");
    const unsigned next = active_ ^ 1U;
    tracectl_ip_config value{};
    value.filter = program.filter;
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

} // namespace tracectl::ip
