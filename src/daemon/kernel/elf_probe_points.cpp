#include "kernel/elf_probe_points.hpp"

#include <cstring>
#include <gelf.h>
#include <libelf.h>
#include <memory>
#include <optional>

namespace tracectl::kernel {

namespace {

struct ElfEnd {
    void operator()(Elf* e) const noexcept { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfEnd>;

/// `fd` opened as an ELF file of this machine, with its header.
ElfPtr openElf(int fd, const std::string& what, GElf_Ehdr& header) {
    if (elf_version(EV_CURRENT) == EV_NONE)
        throw ElfProbeError(std::string("libelf: ") + elf_errmsg(-1));
    ElfPtr elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
        throw ElfProbeError(what + " is not an ELF file");
    if (gelf_getehdr(elf.get(), &header) == nullptr)
        throw ElfProbeError(what + ": its ELF header cannot be read: " + elf_errmsg(-1));
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
        header.e_machine != EM_X86_64)
        throw ElfProbeError(what + " is an ELF file for another machine (e_machine " +
                            std::to_string(header.e_machine) + ", " +
                            (header.e_ident[EI_CLASS] == ELFCLASS32 ? "32" : "64") +
                            "-bit); this machine runs x86-64 code (e_machine " +
                            std::to_string(EM_X86_64) + ")");
    return elf;
}

/// The file offset of virtual address `vaddr`: through the PT_LOAD
/// segment that maps it from the file.
std::optional<std::uint64_t> fileOffsetOf(Elf* elf, std::uint64_t vaddr) {
    std::size_t count = 0;
    if (elf_getphdrnum(elf, &count) != 0)
        return std::nullopt;
    for (std::size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD)
            continue;
        if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
            return vaddr - ph.p_vaddr + ph.p_offset;
    }
    return std::nullopt;
}

/// The section named `name`, or nullptr.
Elf_Scn* sectionNamed(Elf* elf, const char* name, GElf_Shdr& header) {
    std::size_t names = 0;
    if (elf_getshdrstrndx(elf, &names) != 0)
        return nullptr;
    for (Elf_Scn* s = elf_nextscn(elf, nullptr); s != nullptr; s = elf_nextscn(elf, s)) {
        if (gelf_getshdr(s, &header) == nullptr)
            continue;
        const char* n = elf_strptr(elf, names, header.sh_name);
        if (n != nullptr && std::strcmp(n, name) == 0)
            return s;
    }
    return nullptr;
}

/// The value of defined function `symbol` in the symbol table of type
/// `type` (SHT_SYMTAB, SHT_DYNSYM), or nullopt.
std::optional<std::uint64_t> functionIn(Elf* elf, Elf64_Word type, const std::string& symbol) {
    for (Elf_Scn* s = elf_nextscn(elf, nullptr); s != nullptr; s = elf_nextscn(elf, s)) {
        GElf_Shdr sh;
        if (gelf_getshdr(s, &sh) == nullptr || sh.sh_type != type || sh.sh_entsize == 0)
            continue;
        Elf_Data* data = elf_getdata(s, nullptr);
        if (data == nullptr)
            continue;
        const std::size_t count = sh.sh_size / sh.sh_entsize;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Sym sym;
            if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr)
                continue;
            const int kind = GELF_ST_TYPE(sym.st_info);
            if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0)
                continue;
            const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (n != nullptr && symbol == n)
                return sym.st_value;
        }
    }
    return std::nullopt;
}

} // namespace

std::uint64_t elfFunctionOffset(int fd, const std::string& what, const std::string& symbol) {
    GElf_Ehdr header;
    const ElfPtr elf = openElf(fd, what, header);
    std::optional<std::uint64_t> value = functionIn(elf.get(), SHT_SYMTAB, symbol);
    if (!value)
        value = functionIn(elf.get(), SHT_DYNSYM, symbol);
    if (!value)
        throw ElfProbeError(what + " has no function named '" + symbol +
                            "' in its symbol tables (.symtab, .dynsym)");
    const auto offset = fileOffsetOf(elf.get(), *value);
    if (!offset)
        throw ElfProbeError(what + ": function '" + symbol +
                            "' is at an address no loadable segment maps");
    return *offset;
}

std::vector<SdtProbeSite> elfSdtProbeSites(int fd, const std::string& what,
                                           const std::string& provider, const std::string& name) {
    GElf_Ehdr header;
    const ElfPtr elf = openElf(fd, what, header);
    GElf_Shdr notesHeader;
    Elf_Scn* notes = sectionNamed(elf.get(), ".note.stapsdt", notesHeader);
    if (notes == nullptr)
        throw ElfProbeError(what + " has no SDT probes (no .note.stapsdt section)");
    GElf_Shdr baseHeader;
    const Elf_Scn* base = sectionNamed(elf.get(), ".stapsdt.base", baseHeader);
    Elf_Data* data = elf_getdata(notes, nullptr);
    if (data == nullptr)
        throw ElfProbeError(what + ": its .note.stapsdt section cannot be read");
    std::vector<SdtProbeSite> sites;
    std::size_t at = 0;
    GElf_Nhdr nhdr;
    std::size_t nameAt = 0;
    std::size_t descAt = 0;
    const auto* bytes = static_cast<const char*>(data->d_buf);
    while ((at = gelf_getnote(data, at, &nhdr, &nameAt, &descAt)) > 0) {
        if (nhdr.n_type != 3 || nhdr.n_namesz != sizeof("stapsdt") ||
            std::memcmp(bytes + nameAt, "stapsdt", sizeof("stapsdt")) != 0 ||
            nhdr.n_descsz < 3 * 8 + 3)
            continue;
        const char* desc = bytes + descAt;
        std::uint64_t pc = 0;
        std::uint64_t noteBase = 0;
        std::uint64_t semaphore = 0;
        std::memcpy(&pc, desc, 8);
        std::memcpy(&noteBase, desc + 8, 8);
        std::memcpy(&semaphore, desc + 16, 8);
        // Three NUL-terminated strings follow, within the descriptor.
        const std::string_view strings(desc + 24, nhdr.n_descsz - 24);
        const auto end1 = strings.find('\0');
        const auto end2 = end1 == std::string_view::npos ? end1 : strings.find('\0', end1 + 1);
        if (end2 == std::string_view::npos)
            continue;
        const std::string_view prov = strings.substr(0, end1);
        const std::string_view probe = strings.substr(end1 + 1, end2 - end1 - 1);
        const auto end3 = strings.find('\0', end2 + 1);
        const std::string_view args = strings.substr(
            end2 + 1, (end3 == std::string_view::npos ? strings.size() : end3) - end2 - 1);
        if (prov != provider || probe != name)
            continue;
        if (base != nullptr) { // prelink moved the code: move the pc as much
            pc += baseHeader.sh_addr - noteBase;
            if (semaphore != 0)
                semaphore += baseHeader.sh_addr - noteBase;
        }
        const auto offset = fileOffsetOf(elf.get(), pc);
        if (!offset)
            throw ElfProbeError(what + ": SDT probe " + provider + ":" + name +
                                " is at an address no loadable segment maps");
        sites.push_back(SdtProbeSite{*offset, semaphore, std::string(args)});
    }
    if (sites.empty())
        throw ElfProbeError(what + " has no SDT probe " + provider + ":" + name);
    return sites;
}

} // namespace tracectl::kernel
