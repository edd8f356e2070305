// Names quoted in the window's messages, as “NAME”.
#pragma once

#include <string>

namespace tracectl::gui {

/// `name` between typographic double quotes.
inline std::string quoted(const std::string& name) {
    return "“" + name + "”";
}

} // namespace tracectl::gui
