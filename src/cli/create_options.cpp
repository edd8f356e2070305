#include "create_options.hpp"

#include <charconv>
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

std::optional<UsageProblem> check_create_output(const CreateOutputFlags& given) {
    if (given.ctrl_url != given.data_url) {
        return given.ctrl_url
                   ? UsageProblem{"--ctrl-url", "needs --data-url too (lttng-relayd's control "
                                                "and data connections go together)"}
                   : UsageProblem{"--data-url", "needs --ctrl-url too (lttng-relayd's control "
                                                "and data connections go together)"};
    }
    if (given.url && given.ctrl_url) {
        return UsageProblem{"--set-url",
                            "give either --set-url or --ctrl-url with --data-url, not both"};
    }
    if (given.output && given.url) {
        return UsageProblem{"--output", "give either --output DIR or --set-url URL, not both "
                                        "(--set-url file:///DIR is --output /DIR)"};
    }
    if (given.output && given.ctrl_url) {
        return UsageProblem{"--output", "a session writes to a folder (--output) or streams to "
                                        "a relay (--ctrl-url, --data-url), not both"};
    }
    if (given.live && given.snapshot) {
        return UsageProblem{"--live", "a session is either live or a snapshot session, not both"};
    }
    if (given.live && given.output) {
        return UsageProblem{"--live", "a live session streams to lttng-relayd, not to a folder: "
                                      "give --set-url net://HOST instead of --output"};
    }
    return std::nullopt;
}

std::optional<std::uint64_t> parse_live_timer(std::string_view text) {
    if (text.empty()) {
        return default_live_timer_us;
    }
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr != end || value == 0 || value > max_live_timer_us) {
        return std::nullopt;
    }
    return value;
}

CreateOptions create_session_options(const std::optional<std::string>& output_path, bool snapshot,
                                     const std::optional<std::string>& buffers,
                                     const NetworkOutput& network) {
    CreateOptions options;
    if (output_path) {
        options.emplace("output-path", *output_path);
    }
    if (snapshot) {
        options.emplace("mode", std::string{"snapshot"});
    }
    if (network.live_timer_us) {
        options.insert_or_assign("mode", std::string{"live"});
        options.emplace("live-timer", *network.live_timer_us);
    }
    if (buffers) {
        options.emplace("buffer-ownership", *buffers);
    }
    if (network.url) {
        options.emplace("url", *network.url);
    }
    if (network.ctrl_url) {
        options.emplace("control-url", *network.ctrl_url);
    }
    if (network.data_url) {
        options.emplace("data-url", *network.data_url);
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
