#include "create_options.hpp"

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

} // namespace tracectl::cli
