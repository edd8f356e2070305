// The ELF objects a process runs, for tracectl dtrace's pid provider (pid$target::f:entry):
// its executable first, then its shared libraries, in the order the dynamic linker looks
// up a symbol in them (ld.so(8)'s breadth-first order of DT_NEEDED entries).
//
// - A process whose libraries are mapped (-p PID of a running process): the executable,
//   then the other files of /proc/PID/maps' executable mappings, in address order.
// - A process stopped at its first instruction (-c CMD: only the executable and its
//   interpreter are mapped): the executable's DT_NEEDED entries, recursively, each found as
//   ld.so(8) would: a name with a '/' as is; else in the needing object's DT_RPATH (when it
//   has no DT_RUNPATH), LD_LIBRARY_PATH (this process's environment, which -c's command
//   inherits), the needing object's DT_RUNPATH ($ORIGIN expanded), then the default
//   directories kDefaultLibraryDirectories (not /etc/ld.so.cache); then its PT_INTERP
//   interpreter.
//   Files of another machine are skipped, as ld.so skips them.
//
// Read with libelf: the dynamic section (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH) and
// the symbol tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tracectl::symbols {

/// Where a DT_NEEDED name without a '/' is looked for after the objects' own paths:
/// Debian's x86-64 library directories.
inline constexpr const char* kDefaultLibraryDirectories[] = {"/usr/local/lib/x86_64-linux-gnu",
                                                             "/usr/local/lib",
                                                             "/lib/x86_64-linux-gnu",
                                                             "/usr/lib/x86_64-linux-gnu",
                                                             "/lib64",
                                                             "/usr/lib64",
                                                             "/lib",
                                                             "/usr/lib"};

/// The objects of a process: absolute paths, the executable first, each once.
struct ProcessObjects {
    std::vector<std::string> paths;
    /// How the libraries were found, for messages: "mapped by process PID" or "the
    /// executable's DT_NEEDED libraries, as the dynamic linker finds them, and its
    /// interpreter".
    std::string source;
};

/// The objects of process `pid`, whose executable is `executable` (/proc/PID/exe). The
/// libraries found are made canonical (realpath(3)); a DT_NEEDED name found nowhere is
/// left out (the dynamic linker would refuse to start the command).
ProcessObjects processObjects(std::int32_t pid, const std::string& executable);

/// The shared libraries `executable` needs, as ld.so(8) finds them (see above), in its
/// breadth-first order, canonical, each once; `executable` itself is not among them.
std::vector<std::string> neededLibraries(const std::string& executable);

/// What the dynamic section of the ELF file at `path` says: its DT_SONAME ("" when none).
std::string elfSoname(const std::string& path);

/// Whether the ELF file at `path` defines function `symbol` (STT_FUNC or STT_GNU_IFUNC,
/// defined, nonzero value): in .symtab or .dynsym, any binding, when `exportedOnly` is
/// false (an executable's own functions); in .dynsym, global or weak, when it is true (a
/// shared library's exports). False when the file cannot be read as ELF.
bool elfDefinesFunction(const std::string& path, const std::string& symbol, bool exportedOnly);

/// Whether module name `module` (of a probe description) names the object at `path`: its
/// file name, its DT_SONAME, or its file name up to ".so" ("libc" for libc.so.6).
bool moduleNames(const std::string& module, const std::string& path);

} // namespace tracectl::symbols
