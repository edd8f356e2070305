// Shared by the kernel unit tests: the fixtures in tests/unit/data/kernel.
#pragma once

#include "kernel/format_file.hpp"
#include "test_data_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ktest {

/// tests/unit/data/kernel ($KERNEL_DATA_DIR under meson test).
inline std::string fixtureDir() {
    return tracectl::test::testDataDir("KERNEL_DATA_DIR", "kernel");
}

/// The bytes of fixture `name`; throws std::runtime_error naming the path
/// when it cannot be read.
inline std::string fixture(const std::string& name) {
    const std::string path = fixtureDir() + "/" + name;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("no fixture " + path + " (set KERNEL_DATA_DIR)");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The parsed `<event>.format` fixture.
inline tracectl::kernel::EventFormat format(const std::string& event) {
    return tracectl::kernel::parseFormat(fixture(event + ".format"));
}

} // namespace ktest
