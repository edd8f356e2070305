// Where a unit test's data folder is, under meson test and by hand.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace tracectl::test {

/// tests/unit/data/<folder>: $<envName> (meson test sets it), else that
/// folder below the current directory when it is the checkout's top or a
/// build folder in it (a test run by hand).
inline std::string testDataDir(const char* envName, const std::string& folder) {
    if (const char* dir = std::getenv(envName))
        return dir;
    const std::string fromTop = "tests/unit/data/" + folder;
    std::error_code error;
    return std::filesystem::is_directory(fromTop, error) ? fromTop : "../" + fromTop;
}

} // namespace tracectl::test
