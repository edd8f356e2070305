// CLI11's classes as the public headers name them (pointers and
// references only): the headers stay free of CLI11 itself, whose
// header-only implementation costs seconds in every file that includes
// it. The .cpp files that build or parse commands include <CLI/CLI.hpp>.
#pragma once

namespace CLI {
class App;
class Option;
} // namespace CLI
