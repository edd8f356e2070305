#include "utf8.hpp"

#include "common/utf8.hpp"

namespace tracectl::cli {

bool isValidUtf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        const std::size_t len = tracectl::decodeUtf8(s, i, cp);
        if (len == 0 || cp == 0) {
            return false;
        }
        i += len;
    }
    return true;
}

} // namespace tracectl::cli
