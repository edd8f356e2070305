// Shared by the kernel unit tests: the fixtures in tests/unit/data/kernel.
#pragma once

#include "kernel/format_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#ifndef KERNEL_DATA_DIR
#error "KERNEL_DATA_DIR must name tests/unit/data/kernel"
#endif

namespace ktest {

inline std::string fixture(const std::string& name) {
    std::ifstream in(std::string(KERNEL_DATA_DIR) + "/" + name, std::ios::binary);
    if (!in)
        throw std::runtime_error("no fixture " + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The parsed `<event>.format` fixture.
inline tracectl::kernel::EventFormat format(const std::string& event) {
    return tracectl::kernel::parseFormat(fixture(event + ".format"));
}

} // namespace ktest
