#include "top_screen.hpp"

#include "text_table.hpp"

#include <cstdio>
#include <cstdlib>
#include <curses.h>
#include <stdexcept>

namespace tracectl::cli {

TopScreen::TopScreen() {
    const char* term = std::getenv("TERM");
    screen_ = newterm(nullptr, stdout, stdin);
    if (screen_ == nullptr) {
        throw std::runtime_error(std::string{"cannot use the terminal (TERM="} +
                                 (term != nullptr ? term : "unset") + ")");
    }
    set_term(screen_);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
}

TopScreen::~TopScreen() {
    curs_set(1);
    endwin();
    delscreen(screen_);
}

void TopScreen::draw(const std::vector<std::string>& lines, std::size_t header) {
    erase();
    const int rows = getmaxy(stdscr);
    const int columns = getmaxx(stdscr);
    for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) < rows; ++i) {
        if (i == header) {
            attron(A_BOLD);
        }
        // Clipped here: curses would wrap a longer line onto the next one.
        const std::string line = clipToWidth(lines[i], static_cast<std::size_t>(columns));
        mvaddstr(static_cast<int>(i), 0, line.c_str());
        if (i == header) {
            attroff(A_BOLD);
        }
    }
    refresh();
}

KeyAction TopScreen::readKeys() {
    KeyAction action = KeyAction::None;
    for (int key = getch(); key != ERR; key = getch()) {
        if (key == 'q' || key == 'Q' || key == 27) {
            return KeyAction::Quit;
        }
        if (key == KEY_RESIZE || key == 12 /* Ctrl-L */) {
            action = KeyAction::Redraw;
        }
    }
    return action;
}

} // namespace tracectl::cli
