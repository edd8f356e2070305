// Where in an ELF file a userspace probe goes, as uprobe_events wants it:
// a file offset (the kernel's Documentation/trace/uprobetracer.rst,
// "PATH:OFFSET"). Read with libelf (elfutils), the way lttng-tools'
// src/common/lttng-elf.cpp does it by hand:
//
// - a function: its symbol in .symtab, else .dynsym (STT_FUNC or
//   STT_GNU_IFUNC, defined), its st_value turned into a file offset
//   through the PT_LOAD program header that maps it;
// - a USDT probe: every stapsdt note (section .note.stapsdt, note type 3,
//   name "stapsdt") of that provider and name: its pc, adjusted by the
//   prelink difference between the note's base and the .stapsdt.base
//   section's address (SystemTap's sdt.h), then turned into a file offset
//   as above; with its argument specification.
//
// Only ELF files of this machine (x86-64, 64-bit, little-endian) are taken:
// the kernel would place the probe at an offset meaningless in another
// machine's code.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracectl::kernel {

/// A file that is not an ELF file of this machine, or lacks what is asked.
/// what() is a sentence for the user.
class ElfProbeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One USDT probe site.
struct SdtProbeSite {
    std::uint64_t offset = 0;    ///< file offset of the probe's nop
    std::uint64_t semaphore = 0; ///< the semaphore's address (0: none)
    std::string arguments;       ///< the note's argument specification
};

/// The file offset of function `symbol`'s entry in the ELF file open at
/// `fd` (read with pread: the offset of `fd` is left alone). Throws
/// ElfProbeError: not an ELF file, another machine's, no such function.
/// `what` names the file in messages.
std::uint64_t elfFunctionOffset(int fd, const std::string& what, const std::string& symbol);

/// Every site of USDT probe `provider`:`name` in the ELF file open at
/// `fd`, in the notes' order. Throws ElfProbeError: not an ELF file,
/// another machine's, no stapsdt notes, no such probe.
std::vector<SdtProbeSite> elfSdtProbeSites(int fd, const std::string& what,
                                           const std::string& provider, const std::string& name);

} // namespace tracectl::kernel
