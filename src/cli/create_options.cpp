#include "create_options.hpp"

#include <string>

namespace tracectl::cli {

std::string absolute_output_path(std::string_view dir, const std::filesystem::path& cwd) {
    if (dir.empty()) {
        return {};
    }
    std::filesystem::path path{dir};
    if (path.is_relative()) {
        path = cwd / path;
    }
    std::string normal = path.lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') {
        normal.pop_back();
    }
    return normal;
}

std::map<std::string, std::string>
create_session_options(const std::optional<std::string>& output_path, bool snapshot,
                       const std::optional<std::string>& buffers) {
    std::map<std::string, std::string> options;
    if (output_path) {
        options.emplace("output-path", *output_path);
    }
    if (snapshot) {
        options.emplace("mode", "snapshot");
    }
    if (buffers) {
        options.emplace("buffer-ownership", *buffers);
    }
    return options;
}

std::string auto_session_name(std::time_t now) {
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    const std::size_t n = std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    return "auto-" + std::string(stamp, n);
}

std::string auto_session_output(const std::filesystem::path& home, std::string_view name) {
    return absolute_output_path((home / "lttng-traces" / std::string(name)).string(), "/");
}

} // namespace tracectl::cli
