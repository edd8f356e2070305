#include "user_names.hpp"

#include <cerrno>
#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace tracectl::cli {

std::optional<std::string> lookupUserName(std::uint32_t uid) {
    const long suggested = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(suggested > 0 ? static_cast<std::size_t>(suggested) : 1024);
    constexpr std::size_t kMaxBuffer = 1024 * 1024;
    for (;;) {
        passwd entry{};
        passwd* result = nullptr;
        const int error =
            getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &result);
        if (error == ERANGE && buffer.size() < kMaxBuffer) {
            buffer.resize(buffer.size() * 2);
            continue;
        }
        if (error != 0 || result == nullptr || result->pw_name == nullptr) {
            return std::nullopt;
        }
        return std::string{result->pw_name};
    }
}

} // namespace tracectl::cli
