// What a terminal would show after a program's output: a small emulator of the xterm
// sequences ncurses sends (cursor addressing and moves, erase in line/display, insert/delete
// characters and lines, repeat, alternate screen), every other sequence skipped. Enough to
// read back a curses program's screen in a test, not a general terminal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tracectl::test {

/// The `rows` lines of the screen after `output` (trailing blanks removed). The alternate
/// screen is treated as the only screen (entering and leaving it clears it).
std::vector<std::string> renderScreen(std::string_view output, int rows, int columns);

} // namespace tracectl::test
