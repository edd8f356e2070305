#include "syscall_string_probes.hpp"

#include "syscall_string_abi.h"

#include <linux/types.h>
// bpftool's generated skeleton is C with C++ helpers: its casts are its own.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wcast-align"
#pragma GCC diagnostic ignored "-Wpedantic"
#include "syscall_strings.skel.h"
#pragma GCC diagnostic pop

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <utility>

namespace tracectl::kernel {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
    if (err < 0)
        err = -err;
    throw SyscallStringProbeError("system-call strings: " + what + ": " + std::strerror(err));
}

std::size_t roundRing(std::size_t bytes) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::size_t size = page;
    while (size < bytes) {
        if (size > (std::size_t{1} << 30))
            throw SyscallStringProbeError("system-call strings: a ring buffer of " +
                                          std::to_string(bytes) + " bytes is too large");
        size <<= 1;
    }
    return size;
}

} // namespace

void SyscallStringProbes::LinkDeleter::operator()(bpf_link* link) const noexcept {
    bpf_link__destroy(link);
}

SyscallStringProbes::SyscallStringProbes(std::size_t ringBytes) {
    ringBytes_ = roundRing(ringBytes);
    skel_ = syscall_strings_bpf::open();
    if (!skel_)
        fail("cannot open the BPF object", errno);
    try {
        if (int err = bpf_map__set_max_entries(skel_->maps.strings, static_cast<__u32>(ringBytes_));
            err)
            fail("cannot size the ring buffer", err);
        if (int err = syscall_strings_bpf::load(skel_); err)
            fail("cannot load the BPF program", err);
    } catch (...) {
        destroy();
        throw;
    }
}

SyscallStringProbes::~SyscallStringProbes() {
    destroy();
}

SyscallStringProbes::SyscallStringProbes(SyscallStringProbes&& other) noexcept
    : skel_(std::exchange(other.skel_, nullptr)), ringBytes_(std::exchange(other.ringBytes_, 0)),
      links_(std::move(other.links_)) {
    other.links_.clear();
}

SyscallStringProbes& SyscallStringProbes::operator=(SyscallStringProbes&& other) noexcept {
    if (this != &other) {
        destroy();
        skel_ = std::exchange(other.skel_, nullptr);
        ringBytes_ = std::exchange(other.ringBytes_, 0);
        links_ = std::move(other.links_);
        other.links_.clear();
    }
    return *this;
}

void SyscallStringProbes::destroy() noexcept {
    links_.clear(); // detached first: nothing more reaches the ring buffer
    if (skel_)
        syscall_strings_bpf::destroy(skel_);
    skel_ = nullptr;
    ringBytes_ = 0;
}

int SyscallStringProbes::ringFd() const noexcept {
    return skel_ ? bpf_map__fd(skel_->maps.strings) : -1;
}

int SyscallStringProbes::countersFd() const noexcept {
    return skel_ ? bpf_map__fd(skel_->maps.counters) : -1;
}

void SyscallStringProbes::attach(const std::string& event, std::uint64_t argMask) {
    if (!skel_)
        throw SyscallStringProbeError("system-call strings: attach on an empty object");
    if (links_.count(event) != 0)
        return;
    LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = argMask);
    errno = 0;
    bpf_link* link = bpf_program__attach_tracepoint_opts(skel_->progs.tracectl_syscall_strings,
                                                         "syscalls", event.c_str(), &opts);
    if (link == nullptr)
        fail("cannot attach to syscalls:" + event, errno ? errno : EINVAL);
    links_.emplace(event, std::unique_ptr<bpf_link, LinkDeleter>(link));
}

void SyscallStringProbes::detach(const std::string& event) noexcept {
    links_.erase(event);
}

void SyscallStringProbes::setEnabled(bool on) noexcept {
    if (skel_)
        __atomic_store_n(&skel_->bss->enabled, on ? 1u : 0u, __ATOMIC_RELEASE);
}

} // namespace tracectl::kernel
