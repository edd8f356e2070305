// The kernel's text symbols, read from /proc/kallsyms at record time, so
// that the consumer writes into the trace the ones its kernel call stacks
// (callstack-kernel) hit: kernel_records' tracectl_kernel_symbol events.
// lttng-modules leaves naming the addresses to the reader, which then needs
// the recording machine's kallsyms; a trace of ours names them itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tracectl::consumer::kernel {

class KernelSymbols {
public:
    struct Symbol {
        std::uint64_t address = 0; ///< its first byte
        std::uint64_t end = 0; ///< the next symbol's address (its extent, as kallsyms tells none)
        std::string name;
        std::string module; ///< "" for vmlinux
    };
    static constexpr std::size_t kNpos = SIZE_MAX;

    KernelSymbols() = default;
    /// Parses /proc/kallsyms' text: lines `ADDRESS TYPE NAME [MODULE]`
    /// (kernel/kallsyms.c s_show). Keeps the text symbols (types t, T, w,
    /// W) with a non-zero address (kallsyms shows zeros to an opener
    /// without CAP_SYSLOG under kptr_restrict: then none is kept).
    /// Malformed lines are skipped.
    static KernelSymbols parse(std::string_view text);
    /// Reads all of `fd` (an open /proc/kallsyms) and parses it. Throws
    /// std::system_error when reading fails.
    static KernelSymbols read(int fd);

    /// The index of the symbol whose [address, end) holds `address`, or npos.
    std::size_t find(std::uint64_t address) const noexcept;
    const Symbol& at(std::size_t index) const { return symbols_.at(index); }
    std::size_t size() const noexcept { return symbols_.size(); }

private:
    std::vector<Symbol> symbols_; ///< by address
};

} // namespace tracectl::consumer::kernel
