// The statedump's system-wide events: block devices, interrupts, network
// interfaces and CPUs, read from /sys, /proc and getifaddrs(3) where
// lttng-modules' lttng-statedump-impl.c reads the kernel's own lists.
#include "kernel_records.hpp"
#include "statedump.hpp"
#include "statedump_fields.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <charconv>
#include <cstring>
#include <fstream>
#include <ifaddrs.h>
#include <memory>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace tracectl::consumer::kernel {

namespace kr = kernel_records;
namespace fs = std::filesystem;

namespace {

// The first line of a small file, without its newline; empty if unreadable.
std::string firstLine(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line;
}

template <typename T>
T number(std::string_view s, int base = 10) {
    T v{};
    s = s.substr(std::min(s.find_first_not_of(" \t"), s.size()));
    std::from_chars(s.data(), s.data() + s.size(), v, base);
    return v;
}

// The entries of `dir`, sorted by name; none if it cannot be read.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

// The kernel's dev_t (include/linux/kdev_t.h MKDEV: 12 bits of major above
// 20 of minor) of a "major:minor" text; nullopt if it is not one.
std::optional<std::uint32_t> kernelDev(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    std::uint32_t major = 0, minor = 0;
    const auto a = std::from_chars(text.data(), text.data() + colon, major);
    const auto b = std::from_chars(text.data() + colon + 1, text.data() + text.size(), minor);
    if (a.ec != std::errc{} || b.ec != std::errc{} || major >= (1u << 12) || minor >= (1u << 20))
        return std::nullopt;
    return (major << 20) | minor;
}

struct IfaddrsFree {
    void operator()(ifaddrs* a) const noexcept { ::freeifaddrs(a); }
};

} // namespace

void Statedump::dumpBlockDevices(const StatedumpSink& sink, StatedumpCounts& counts) {
    const fs::path dir = sources_.sys / "class" / "block";
    StatedumpFields f;
    for (const std::string& name : entries(dir)) {
        const auto dev = kernelDev(firstLine(dir / name / "dev"));
        if (!dev)
            continue;
        f.clear();
        f.le<std::uint32_t>(*dev);
        f.string(name);
        event(kr::kStatedumpBlockDeviceId, f.view(), sink, counts);
        ++counts.blockDevices;
    }
}

void Statedump::dumpInterrupts(const StatedumpSink& sink, StatedumpCounts& counts) {
    const fs::path dir = sources_.sys / "kernel" / "irq";
    std::vector<std::uint32_t> irqs;
    for (const std::string& name : entries(dir)) {
        std::uint32_t irq = 0;
        const auto r = std::from_chars(name.data(), name.data() + name.size(), irq);
        if (r.ec == std::errc{} && r.ptr == name.data() + name.size())
            irqs.push_back(irq);
    }
    std::sort(irqs.begin(), irqs.end());
    StatedumpFields f;
    for (const std::uint32_t irq : irqs) {
        const fs::path at = dir / std::to_string(irq);
        const std::string chip = firstLine(at / "chip_name");
        const std::string actions = firstLine(at / "actions");
        // lttng-modules writes one event per action: an IRQ without a
        // handler has none.
        for (std::size_t begin = 0; begin < actions.size();) {
            const std::size_t end = std::min(actions.find(',', begin), actions.size());
            const std::string action = actions.substr(begin, end - begin);
            begin = end + 1;
            if (action.empty())
                continue;
            f.clear();
            f.le<std::uint32_t>(irq);
            f.string(chip);
            f.string(action);
            f.le<std::int32_t>(0);
            event(kr::kStatedumpInterruptId, f.view(), sink, counts);
            ++counts.interrupts;
        }
    }
}

void Statedump::dumpNetworkInterfaces(const StatedumpSink& sink, StatedumpCounts& counts) {
    ifaddrs* raw = nullptr;
    if (::getifaddrs(&raw) != 0)
        return;
    const std::unique_ptr<ifaddrs, IfaddrsFree> list(raw);
    StatedumpFields f;
    for (const ifaddrs* a = list.get(); a != nullptr; a = a->ifa_next) {
        if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || a->ifa_name == nullptr)
            continue;
        sockaddr_in address{};
        std::memcpy(&address, a->ifa_addr, sizeof address);
        f.clear();
        f.string(a->ifa_name);
        f.le<std::uint32_t>(address.sin_addr.s_addr); // network byte order, as is
        event(kr::kStatedumpNetworkInterfaceId, f.view(), sink, counts);
        ++counts.networkInterfaces;
    }
}

void Statedump::dumpCpuTopology(const StatedumpSink& sink, StatedumpCounts& counts) {
    std::ifstream in(sources_.proc / "cpuinfo");
    struct Cpu {
        std::uint16_t id = 0;
        std::string vendor, modelName;
        std::uint8_t family = 0, model = 0;
        std::uint16_t physicalId = 0, coreId = 0, cores = 0;
    };
    StatedumpFields f;
    const auto write = [&](const Cpu& c) {
        f.clear();
        f.string("x86");
        f.le<std::uint16_t>(c.id);
        f.string(c.vendor);
        f.le<std::uint8_t>(c.family);
        f.le<std::uint8_t>(c.model);
        f.string(c.modelName);
        f.le<std::uint16_t>(c.physicalId);
        f.le<std::uint16_t>(c.coreId);
        f.le<std::uint16_t>(c.cores);
        event(kr::kStatedumpCpuTopologyId, f.view(), sink, counts);
        ++counts.cpus;
    };
    std::optional<Cpu> cpu;
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string key = line.substr(0, colon);
        key.erase(key.find_last_not_of(" \t") + 1);
        std::string value = line.substr(colon + 1);
        value.erase(0, std::min(value.find_first_not_of(" \t"), value.size()));
        if (key == "processor") {
            if (cpu)
                write(*cpu);
            cpu.emplace();
            cpu->id = number<std::uint16_t>(value);
        } else if (!cpu) {
            continue;
        } else if (key == "vendor_id") {
            cpu->vendor = value;
        } else if (key == "cpu family") {
            cpu->family = number<std::uint8_t>(value);
        } else if (key == "model") {
            cpu->model = number<std::uint8_t>(value);
        } else if (key == "model name") {
            cpu->modelName = value;
        } else if (key == "physical id") {
            cpu->physicalId = number<std::uint16_t>(value);
        } else if (key == "core id") {
            cpu->coreId = number<std::uint16_t>(value);
        } else if (key == "cpu cores") {
            cpu->cores = number<std::uint16_t>(value);
        }
    }
    if (cpu)
        write(*cpu);
}

} // namespace tracectl::consumer::kernel
