#include "session/output_path.hpp"

#include "common/error.hpp"
#include "session/session_name.hpp"

#include <ctime>
#include <filesystem>

namespace tracectl {

std::string checkedOutputPath(std::string_view path) {
    const auto bad = [&](const std::string& why) {
        return Error(ErrorCode::InvalidArgument,
                     "output path " + quoteForMessage(path) + " " + why);
    };
    if (path.empty() || path.front() != '/')
        throw bad("must be absolute");
    if (path.size() >= kMaxOutputPathBytes)
        throw bad("is " + std::to_string(kMaxOutputPathBytes) + " bytes or longer (PATH_MAX)");
    for (char c : path) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F)
            throw bad("must not contain control characters");
    }
    const std::filesystem::path p{std::string(path)};
    for (const auto& element : p) {
        if (element == "..")
            throw bad("must not contain '..'");
        if (element.native().size() > 255)
            throw bad("has a component longer than 255 bytes (NAME_MAX)");
    }
    std::string normal = p.lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/')
        normal.pop_back();
    if (normal == "/")
        throw bad("must not be the root directory");
    return normal;
}

std::string defaultOutputPath(std::string_view home, std::string_view sessionName,
                              std::chrono::system_clock::time_point created) {
    const std::time_t t = std::chrono::system_clock::to_time_t(created);
    std::tm tm{};
    localtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    std::string out(home);
    while (out.size() > 1 && out.back() == '/')
        out.pop_back();
    out += "/lttng-traces/";
    out += sessionName;
    out += '-';
    out += stamp;
    return out;
}

} // namespace tracectl
