// The terminal of `tracectl top`, through ncurses: set up on construction, restored on
// destruction (also when an exception leaves `top`).
#pragma once

#include <string>
#include <vector>

struct screen; // ncurses' SCREEN

namespace tracectl::cli {

/// What a key press asks for.
enum class KeyAction {
    None,   ///< nothing pending, or a key `top` does not use
    Quit,   ///< q, Q or Escape
    Redraw, ///< the terminal was resized, or Ctrl-L
};

class TopScreen {
public:
    /// Takes over the terminal on standard input/output (cbreak, no echo, no cursor,
    /// non-blocking keys). Throws std::runtime_error when ncurses cannot use it (e.g. TERM
    /// unknown).
    TopScreen();
    /// Restores the terminal (endwin).
    ~TopScreen();
    TopScreen(const TopScreen&) = delete;
    TopScreen& operator=(const TopScreen&) = delete;
    TopScreen(TopScreen&&) = delete;
    TopScreen& operator=(TopScreen&&) = delete;

    /// Replaces the screen's content with `lines` (clipped to the terminal's size); the line
    /// at `header` is drawn in bold.
    void draw(const std::vector<std::string>& lines, std::size_t header);

    /// Reads the keys typed so far (never blocks) and returns the strongest request.
    KeyAction readKeys();

private:
    struct screen* screen_ = nullptr;
};

} // namespace tracectl::cli
