#include "symbols/elf_symbols.hpp"

#include <algorithm>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <memory>
#include <unistd.h>

namespace tracectl::symbols {

namespace {

/// An open file descriptor, closed at scope's end.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

struct ElfEnd {
    void operator()(Elf* e) const noexcept { elf_end(e); }
};

/// The section of type `type` (SHT_SYMTAB, SHT_DYNSYM), or null.
Elf_Scn* sectionOf(Elf* elf, Elf64_Word type) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type == type)
            return scn;
    }
    return nullptr;
}

} // namespace

ElfSymbols ElfSymbols::load(const std::string& path) {
    ElfSymbols out;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return out;
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0)
        return out;
    const std::unique_ptr<Elf, ElfEnd> elf(elf_begin(fd.fd, ELF_C_READ_MMAP, nullptr));
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
        return out;
    std::size_t phnum = 0;
    if (elf_getphdrnum(elf.get(), &phnum) != 0)
        return out;
    for (std::size_t i = 0; i < phnum; ++i) {
        GElf_Phdr phdr;
        if (gelf_getphdr(elf.get(), static_cast<int>(i), &phdr) != nullptr &&
            phdr.p_type == PT_LOAD)
            out.segments_.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
    }
    Elf_Scn* scn = sectionOf(elf.get(), SHT_SYMTAB);
    if (scn == nullptr)
        scn = sectionOf(elf.get(), SHT_DYNSYM);
    GElf_Shdr shdr;
    Elf_Data* data = scn != nullptr ? elf_getdata(scn, nullptr) : nullptr;
    if (data != nullptr && gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_entsize != 0) {
        const std::size_t count = shdr.sh_size / shdr.sh_entsize;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Sym sym;
            if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr)
                continue;
            const int type = GELF_ST_TYPE(sym.st_info);
            if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0)
                continue;
            const char* name = elf_strptr(elf.get(), shdr.sh_link, sym.st_name);
            if (name == nullptr || *name == '\0')
                continue;
            out.symbols_.push_back({sym.st_value, sym.st_size, name});
        }
    }
    std::stable_sort(out.symbols_.begin(), out.symbols_.end(),
                     [](const Symbol& a, const Symbol& b) { return a.value < b.value; });
    out.loaded_ = true;
    return out;
}

std::optional<ElfSymbols::Found> ElfSymbols::atFileOffset(std::uint64_t fileOffset) const {
    const auto segment = std::find_if(segments_.begin(), segments_.end(), [&](const Segment& s) {
        return fileOffset >= s.offset && fileOffset - s.offset < s.filesz;
    });
    if (segment == segments_.end())
        return std::nullopt;
    const std::uint64_t address = fileOffset - segment->offset + segment->vaddr;
    auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                               [](std::uint64_t a, const Symbol& s) { return a < s.value; });
    if (it == symbols_.begin())
        return std::nullopt;
    // The symbols at the highest value at or below the address (aliases share it): one
    // whose extent holds it, else one of size 0 (its extent unknown).
    const std::uint64_t value = (it - 1)->value;
    std::optional<Found> unsized;
    for (; it != symbols_.begin() && (it - 1)->value == value; --it) {
        const Symbol& s = *(it - 1);
        if (address - s.value < s.size)
            return Found{s.name, address - s.value};
        if (s.size == 0 && s.value >= segment->vaddr)
            unsized = Found{s.name, address - s.value};
    }
    return unsized;
}

} // namespace tracectl::symbols
