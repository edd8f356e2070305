// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The objects of a process (symbols/process_objects.hpp) over this test's own executable
// and the libraries the dynamic linker really loaded for it: the DT_NEEDED resolution
// finds the very files /proc/self/maps maps.
#include "symbols/proc_maps.hpp"
#include "symbols/process_objects.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <unistd.h>

using namespace tracectl::symbols;

extern "C" {
// A function of this executable's .symtab only (internal linkage: not exported).
// NOLINTNEXTLINE(readability-identifier-naming): looked up by this name
static __attribute__((noinline, used)) int tracectl_objects_local(int x) {
    return x + 1;
}
}

namespace {

std::string self() {
    char path[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path);
    return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

std::string canonical(const std::string& path) {
    char resolved[PATH_MAX];
    return ::realpath(path.c_str(), resolved) != nullptr ? resolved : path;
}

/// The libc.so.6 among `paths`, or "".
std::string libcOf(const std::vector<std::string>& paths) {
    const auto it = std::find_if(paths.begin(), paths.end(), [](const std::string& p) {
        return p.size() > 10 && p.compare(p.size() - 10, 10, "/libc.so.6") == 0;
    });
    return it == paths.end() ? "" : *it;
}

} // namespace

TEST(ProcessObjects, NeededLibrariesAreTheFilesTheDynamicLinkerMapped) {
    const std::string exe = self();
    const std::vector<std::string> needed = neededLibraries(exe);
    ASSERT_FALSE(needed.empty());
    std::set<std::string> mapped;
    for (const ProcMapping& m : readProcMaps(static_cast<std::int32_t>(::getpid())))
        mapped.insert(canonical(m.path));
    for (const std::string& path : needed)
        EXPECT_TRUE(mapped.count(path) == 1) << path << " is needed but not mapped";
    EXPECT_NE(libcOf(needed), "");
    EXPECT_EQ(std::find(needed.begin(), needed.end(), canonical(exe)), needed.end());
}

TEST(ProcessObjects, ARunningProcesssObjectsAreItsMappedFilesTheExecutableFirst) {
    const std::string exe = self();
    const ProcessObjects objects = processObjects(static_cast<std::int32_t>(::getpid()), exe);
    ASSERT_FALSE(objects.paths.empty());
    EXPECT_EQ(objects.paths.front(), exe);
    EXPECT_EQ(objects.source, "mapped by process " + std::to_string(::getpid()));
    for (const std::string& path : neededLibraries(exe))
        EXPECT_NE(std::find(objects.paths.begin(), objects.paths.end(), path), objects.paths.end())
            << path;
}

TEST(ProcessObjects, ExportedFunctionsAreTheDynsymsGlobalAndWeakOnes) {
    const std::string exe = self();
    const std::string libc = libcOf(neededLibraries(exe));
    ASSERT_NE(libc, "");
    EXPECT_TRUE(elfDefinesFunction(libc, "malloc", true));  // global
    EXPECT_TRUE(elfDefinesFunction(libc, "getppid", true)); // weak
    EXPECT_FALSE(elfDefinesFunction(libc, "tracectl_objects_local", true));
    EXPECT_EQ(tracectl_objects_local(1), 2);
    EXPECT_TRUE(elfDefinesFunction(exe, "tracectl_objects_local", false));
    EXPECT_FALSE(elfDefinesFunction(exe, "tracectl_objects_local", true));
    EXPECT_FALSE(elfDefinesFunction(exe, "malloc", false)); // only referenced here
    EXPECT_FALSE(elfDefinesFunction("/nonexistent/libx.so", "malloc", true));
}

TEST(ProcessObjects, AModuleIsAFileNameASonameOrAFileNameUpToSo) {
    const std::string libc = libcOf(neededLibraries(self()));
    ASSERT_NE(libc, "");
    EXPECT_EQ(elfSoname(libc), "libc.so.6");
    EXPECT_TRUE(moduleNames("libc.so.6", libc));
    EXPECT_TRUE(moduleNames("libc", libc));
    EXPECT_FALSE(moduleNames("libc.so", libc));
    EXPECT_FALSE(moduleNames("libm", libc));
    EXPECT_FALSE(moduleNames("", libc));
}
