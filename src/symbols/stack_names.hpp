// Names for the addresses of a trace's call stacks (callstack-kernel, callstack-user), from
// what the trace itself tells (common/kernel_records.hpp): kernel symbols from its
// tracectl_kernel_symbol events, and user addresses from its tracectl_vm_map events (a
// process's executable file mappings, read from /proc/PID/maps at record time) and the
// ELF symbols of the files they name (ElfSymbols, read when first needed, on the machine
// that reads the trace: the files must still be there, at the same paths).
#pragma once

#include "symbols/elf_symbols.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tracectl::symbols {

class StackNames {
public:
    /// A name for an address: the object (a kernel module, "vmlinux", or the basename of
    /// a mapped file) and, when a symbol holds the address, the symbol and the offset in it.
    struct Frame {
        std::string object;
        std::optional<ElfSymbols::Found> symbol;
        std::uint64_t fileOffset = 0; ///< a user address's offset in the mapped file
    };

    /// A tracectl_kernel_symbol event: the kernel function `name` of `module` ("" for
    /// vmlinux) spans [address, end).
    void learnKernelSymbol(std::uint64_t address, std::uint64_t end, std::string name,
                           std::string module);
    /// A tracectl_vm_map event: in process `pid`, [start, end) maps `path` from file
    /// offset `pgoff` on. A later mapping hides an earlier one it overlaps (an exec).
    void learnMapping(std::int32_t pid, std::uint64_t start, std::uint64_t end, std::uint64_t pgoff,
                      std::string path);
    /// A tracectl_thread event: thread `tid` is of process `pid` (its tgid). Until a
    /// later one says otherwise, or a tracectl_vm_map event makes `tid` a process's id
    /// (the tid reused by a process's main thread), userFrame(tid, ...) is process `pid`'s.
    void learnThread(std::int32_t tid, std::int32_t pid);

    /// The kernel symbol holding `address`, or nullopt.
    std::optional<Frame> kernelFrame(std::uint64_t address) const;
    /// The mapping of process `pid` holding `address` and the ELF symbol at its file
    /// offset, or nullopt (no mapping learnt holds it: the process was gone before the
    /// consumer read its maps, or the address is in anonymous memory). `pid` may be a
    /// thread's id (a tid context): a thread learnt is its process's.
    std::optional<Frame> userFrame(std::int32_t pid, std::uint64_t address);

    /// dtrace(1)'s text for a frame (illumos dt_print_stack, dt_print_ustack):
    /// "object`symbol+0xOFF" ("object`symbol" at offset 0), "object`0xADDRESS" without a
    /// symbol, "0xADDRESS" without a frame.
    static std::string dtraceText(const std::optional<Frame>& frame, std::uint64_t address);

    bool empty() const noexcept { return kernel_.empty() && mappings_.empty() && threads_.empty(); }

private:
    struct KernelSymbol {
        std::uint64_t end = 0;
        std::string name;
        std::string module;
    };
    struct Mapping {
        std::uint64_t start = 0;
        std::uint64_t end = 0;
        std::uint64_t pgoff = 0;
        std::string path;
    };
    const ElfSymbols& elf(const std::string& path);

    std::map<std::uint64_t, KernelSymbol> kernel_; ///< by address
    /// By pid, in the order learnt (the latest holding an address wins).
    std::unordered_map<std::int32_t, std::vector<Mapping>> mappings_;
    /// The process of each thread learnt, by tid (main threads: none).
    std::unordered_map<std::int32_t, std::int32_t> threads_;
    std::unordered_map<std::string, std::unique_ptr<ElfSymbols>> files_;
};

} // namespace tracectl::symbols
