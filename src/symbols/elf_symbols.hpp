// The function symbols of one ELF file, to name a user address by the file offset its
// mapping gives (/proc/PID/maps: offset = address - start + pgoff). Read with libelf
// from the file's .symtab, else its .dynsym (a stripped file keeps only its exports);
// its PT_LOAD program headers turn a file offset into the address symbols use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::symbols {

class ElfSymbols {
public:
    /// A function symbol and how far into it an address is.
    struct Found {
        std::string name;
        std::uint64_t offset = 0; ///< bytes from the symbol's first one
    };

    /// The symbols of the ELF file at `path`; none (no error) when it cannot be opened
    /// or is not an ELF file.
    static ElfSymbols load(const std::string& path);

    /// The function holding the byte at `fileOffset` of the file: one whose [value,
    /// value + size) holds its address, else (a symbol of size 0, such as _start in some
    /// files) the nearest one below it in the same PT_LOAD segment. nullopt: no segment
    /// maps the offset, or no symbol holds it.
    std::optional<Found> atFileOffset(std::uint64_t fileOffset) const;

    /// Whether the file was read as ELF.
    bool loaded() const noexcept { return loaded_; }
    std::size_t size() const noexcept { return symbols_.size(); }

private:
    struct Symbol {
        std::uint64_t value = 0;
        std::uint64_t size = 0;
        std::string name;
    };
    struct Segment {
        std::uint64_t offset = 0; ///< p_offset
        std::uint64_t vaddr = 0;  ///< p_vaddr
        std::uint64_t filesz = 0; ///< p_filesz
    };
    std::vector<Symbol> symbols_; ///< by value
    std::vector<Segment> segments_;
    bool loaded_ = false;
};

} // namespace tracectl::symbols
