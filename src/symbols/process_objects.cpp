#include "symbols/process_objects.hpp"

#include "common/unique_fd.hpp"
#include "symbols/proc_maps.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <memory>
#include <optional>
#include <string_view>
#include <unistd.h>

namespace tracectl::symbols {

namespace {

struct ElfEnd {
    void operator()(Elf* e) const noexcept { elf_end(e); }
};

/// An ELF file of this machine (x86-64, 64-bit, little-endian) open for reading.
struct OpenElf {
    UniqueFd fd;
    std::unique_ptr<Elf, ElfEnd> elf;
};

/// The ELF file at `path`, or nullopt: it cannot be opened, is no ELF file or another
/// machine's.
std::optional<OpenElf> openElf(const std::string& path) {
    if (elf_version(EV_CURRENT) == EV_NONE)
        return std::nullopt;
    OpenElf out;
    out.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!out.fd)
        return std::nullopt;
    out.elf.reset(elf_begin(out.fd.get(), ELF_C_READ_MMAP, nullptr));
    GElf_Ehdr header;
    if (!out.elf || elf_kind(out.elf.get()) != ELF_K_ELF ||
        gelf_getehdr(out.elf.get(), &header) == nullptr || header.e_ident[EI_CLASS] != ELFCLASS64 ||
        header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_machine != EM_X86_64)
        return std::nullopt;
    return out;
}

/// The dynamic section's entries ld.so reads to load an object's dependencies.
struct Dynamic {
    std::vector<std::string> needed; ///< DT_NEEDED, in order
    std::string soname;
    std::string rpath;       ///< DT_RPATH
    std::string runpath;     ///< DT_RUNPATH
    std::string interpreter; ///< PT_INTERP
};

Dynamic dynamicOf(Elf* elf) {
    Dynamic d;
    for (Elf_Scn* s = elf_nextscn(elf, nullptr); s != nullptr; s = elf_nextscn(elf, s)) {
        GElf_Shdr sh;
        if (gelf_getshdr(s, &sh) == nullptr || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
            continue;
        Elf_Data* data = elf_getdata(s, nullptr);
        if (data == nullptr)
            continue;
        for (std::size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
            GElf_Dyn dyn;
            if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag == DT_NULL)
                break;
            if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME && dyn.d_tag != DT_RPATH &&
                dyn.d_tag != DT_RUNPATH)
                continue;
            const char* text = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
            if (text == nullptr)
                continue;
            switch (dyn.d_tag) {
            case DT_NEEDED:
                d.needed.emplace_back(text);
                break;
            case DT_SONAME:
                d.soname = text;
                break;
            case DT_RPATH:
                d.rpath = text;
                break;
            default:
                d.runpath = text;
                break;
            }
        }
    }
    std::size_t count = 0;
    if (elf_getphdrnum(elf, &count) == 0) {
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_INTERP)
                continue;
            std::size_t size = 0;
            const char* image = elf_rawfile(elf, &size);
            if (image != nullptr && ph.p_offset + ph.p_filesz <= size && ph.p_filesz > 0)
                d.interpreter.assign(image + ph.p_offset,
                                     ::strnlen(image + ph.p_offset, ph.p_filesz));
        }
    }
    return d;
}

/// `path` made canonical, or nullopt when it does not exist.
std::optional<std::string> canonical(const std::string& path) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr)
        return std::nullopt;
    return std::string(resolved);
}

std::string directoryOf(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

std::string fileNameOf(const std::string& path) {
    return path.substr(path.rfind('/') + 1);
}

/// The directories of a colon-separated search path, $ORIGIN and ${ORIGIN} made `origin`.
/// An empty element is the current directory, as ld.so takes it.
std::vector<std::string> searchPath(std::string_view list, const std::string& origin) {
    std::vector<std::string> dirs;
    while (true) {
        const std::size_t colon = list.find(':');
        std::string dir(list.substr(0, colon));
        for (const std::string_view token : {"${ORIGIN}", "$ORIGIN"}) {
            for (std::size_t at = dir.find(token); at != std::string::npos;
                 at = dir.find(token, at + origin.size()))
                dir.replace(at, token.size(), origin);
        }
        dirs.push_back(dir.empty() ? "." : dir);
        if (colon == std::string_view::npos)
            break;
        list.remove_prefix(colon + 1);
    }
    return dirs;
}

/// Where ld.so finds `name`, needed by the object at `needer` (its dynamic section
/// `d`): canonical, or nullopt.
std::optional<std::string> findLibrary(const std::string& name, const std::string& needer,
                                       const Dynamic& d) {
    const auto usable = [](const std::string& path) -> std::optional<std::string> {
        if (!openElf(path))
            return std::nullopt;
        return canonical(path);
    };
    if (name.find('/') != std::string::npos)
        return usable(name);
    const std::string origin = directoryOf(needer);
    std::vector<std::string> dirs;
    if (d.runpath.empty() && !d.rpath.empty())
        dirs = searchPath(d.rpath, origin);
    if (const char* env = std::getenv("LD_LIBRARY_PATH"); env != nullptr && *env != '\0') {
        for (std::string& dir : searchPath(env, origin))
            dirs.push_back(std::move(dir));
    }
    if (!d.runpath.empty()) {
        for (std::string& dir : searchPath(d.runpath, origin))
            dirs.push_back(std::move(dir));
    }
    for (const char* dir : kDefaultLibraryDirectories)
        dirs.emplace_back(dir);
    for (const std::string& dir : dirs) {
        if (auto found = usable(dir + "/" + name))
            return found;
    }
    return std::nullopt;
}

void addOnce(std::vector<std::string>& paths, const std::string& path) {
    if (std::find(paths.begin(), paths.end(), path) == paths.end())
        paths.push_back(path);
}

} // namespace

std::vector<std::string> neededLibraries(const std::string& executable) {
    std::vector<std::string> found;
    const auto exe = openElf(executable);
    if (!exe)
        return found;
    const std::string self = canonical(executable).value_or(executable);
    std::deque<std::pair<std::string, Dynamic>> queue;
    queue.emplace_back(executable, dynamicOf(exe->elf.get()));
    while (!queue.empty()) {
        const auto [needer, dynamic] = std::move(queue.front());
        queue.pop_front();
        for (const std::string& name : dynamic.needed) {
            const auto path = findLibrary(name, needer, dynamic);
            if (!path || *path == self ||
                std::find(found.begin(), found.end(), *path) != found.end())
                continue;
            found.push_back(*path);
            if (const auto lib = openElf(*path))
                queue.emplace_back(*path, dynamicOf(lib->elf.get()));
        }
    }
    return found;
}

ProcessObjects processObjects(std::int32_t pid, const std::string& executable) {
    ProcessObjects objects;
    objects.paths.push_back(executable);
    const std::string self = canonical(executable).value_or(executable);
    std::string interpreter;
    if (const auto exe = openElf(executable); exe) {
        const std::string named = dynamicOf(exe->elf.get()).interpreter;
        interpreter = named.empty() ? "" : canonical(named).value_or(named);
    }
    // The files mapped now, other than the executable and its interpreter: libraries
    // loaded already.
    std::vector<std::string> mapped;
    for (const ProcMapping& m : readProcMaps(pid)) {
        const auto path = canonical(m.path);
        if (path && *path != self && *path != interpreter)
            addOnce(mapped, *path);
    }
    if (!mapped.empty()) {
        for (const std::string& path : mapped)
            addOnce(objects.paths, path);
        if (!interpreter.empty())
            addOnce(objects.paths, interpreter);
        objects.source = "mapped by process " + std::to_string(pid);
        return objects;
    }
    for (const std::string& path : neededLibraries(executable))
        addOnce(objects.paths, path);
    if (!interpreter.empty())
        addOnce(objects.paths, interpreter);
    objects.source =
        "the executable's DT_NEEDED libraries, as the dynamic linker finds them, and its "
        "interpreter";
    return objects;
}

std::string elfSoname(const std::string& path) {
    const auto file = openElf(path);
    return file ? dynamicOf(file->elf.get()).soname : std::string();
}

bool elfDefinesFunction(const std::string& path, const std::string& symbol, bool exportedOnly) {
    const auto file = openElf(path);
    if (!file)
        return false;
    Elf* elf = file->elf.get();
    for (Elf_Scn* s = elf_nextscn(elf, nullptr); s != nullptr; s = elf_nextscn(elf, s)) {
        GElf_Shdr sh;
        if (gelf_getshdr(s, &sh) == nullptr || sh.sh_entsize == 0 ||
            (sh.sh_type != SHT_DYNSYM && (exportedOnly || sh.sh_type != SHT_SYMTAB)))
            continue;
        Elf_Data* data = elf_getdata(s, nullptr);
        if (data == nullptr)
            continue;
        for (std::size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
            GElf_Sym sym;
            if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr)
                continue;
            const int kind = GELF_ST_TYPE(sym.st_info);
            const int binding = GELF_ST_BIND(sym.st_info);
            if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0 || (exportedOnly && binding != STB_GLOBAL && binding != STB_WEAK))
                continue;
            const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
            if (name != nullptr && symbol == name)
                return true;
        }
    }
    return false;
}

bool moduleNames(const std::string& module, const std::string& path) {
    const std::string file = fileNameOf(path);
    if (module == file)
        return true;
    const std::size_t so = file.find(".so");
    if (so != std::string::npos && module == file.substr(0, so))
        return true;
    return module == elfSoname(path);
}

} // namespace tracectl::symbols
