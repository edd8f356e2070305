#include "symbols/stack_names.hpp"

#include <cinttypes>
#include <cstdio>

namespace tracectl::symbols {

void StackNames::learnKernelSymbol(std::uint64_t address, std::uint64_t end, std::string name,
                                   std::string module) {
    if (end <= address)
        return;
    kernel_[address] = {end, std::move(name), std::move(module)};
}

void StackNames::learnMapping(std::int32_t pid, std::uint64_t start, std::uint64_t end,
                              std::uint64_t pgoff, std::string path) {
    if (end <= start)
        return;
    threads_.erase(pid); // a process's id now, its main thread's
    std::vector<Mapping>& of = mappings_[pid];
    for (const Mapping& m : of)
        if (m.start == start && m.end == end && m.pgoff == pgoff && m.path == path)
            return; // written again in another stream or chunk
    of.push_back({start, end, pgoff, std::move(path)});
}

void StackNames::learnThread(std::int32_t tid, std::int32_t pid) {
    if (tid == pid)
        threads_.erase(tid);
    else
        threads_[tid] = pid;
}

std::optional<StackNames::Frame> StackNames::kernelFrame(std::uint64_t address) const {
    auto it = kernel_.upper_bound(address);
    if (it == kernel_.begin())
        return std::nullopt;
    --it;
    if (address >= it->second.end)
        return std::nullopt;
    return Frame{it->second.module.empty() ? "vmlinux" : it->second.module,
                 ElfSymbols::Found{it->second.name, address - it->first}, 0};
}

const ElfSymbols& StackNames::elf(const std::string& path) {
    auto& file = files_[path];
    if (!file)
        file = std::make_unique<ElfSymbols>(ElfSymbols::load(path));
    return *file;
}

std::optional<StackNames::Frame> StackNames::userFrame(std::int32_t pid, std::uint64_t address) {
    if (const auto thread = threads_.find(pid); thread != threads_.end())
        pid = thread->second;
    const auto of = mappings_.find(pid);
    if (of == mappings_.end())
        return std::nullopt;
    for (auto m = of->second.rbegin(); m != of->second.rend(); ++m) {
        if (address < m->start || address >= m->end)
            continue;
        const std::size_t slash = m->path.rfind('/');
        Frame frame{slash == std::string::npos ? m->path : m->path.substr(slash + 1), std::nullopt,
                    address - m->start + m->pgoff};
        frame.symbol = elf(m->path).atFileOffset(frame.fileOffset);
        return frame;
    }
    return std::nullopt;
}

std::string StackNames::dtraceText(const std::optional<Frame>& frame, std::uint64_t address) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%" PRIx64, address);
    if (!frame)
        return hex;
    if (!frame->symbol)
        return frame->object + "`" + hex;
    std::string out = frame->object + "`" + frame->symbol->name;
    if (frame->symbol->offset != 0) {
        std::snprintf(hex, sizeof hex, "+0x%" PRIx64, frame->symbol->offset);
        out += hex;
    }
    return out;
}

} // namespace tracectl::symbols
