#include "create_options.hpp"

#include <charconv>
#include <string>

namespace tracectl::cli {

std::string absoluteOutputPath(std::string_view dir, const std::filesystem::path& cwd) {
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

std::optional<UsageProblem> checkCreateOutput(const CreateOutputFlags& given) {
    if (given.ctrlUrl != given.dataUrl) {
        return given.ctrlUrl
                   ? UsageProblem{"--ctrl-url", "needs --data-url too (lttng-relayd's control "
                                                "and data connections go together)"}
                   : UsageProblem{"--data-url", "needs --ctrl-url too (lttng-relayd's control "
                                                "and data connections go together)"};
    }
    if (given.url && given.ctrlUrl) {
        return UsageProblem{"--set-url",
                            "give either --set-url or --ctrl-url with --data-url, not both"};
    }
    if (given.output && given.url) {
        return UsageProblem{"--output", "give either --output DIR or --set-url URL, not both "
                                        "(--set-url file:///DIR is --output /DIR)"};
    }
    if (given.output && given.ctrlUrl) {
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

std::optional<std::uint64_t> parseLiveTimer(std::string_view text) {
    if (text.empty()) {
        return kDefaultLiveTimerUs;
    }
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr != end || value == 0 || value > kMaxLiveTimerUs) {
        return std::nullopt;
    }
    return value;
}

CreateOptions createSessionOptions(const std::optional<std::string>& outputPath, bool snapshot,
                                   const std::optional<std::string>& buffers,
                                   const NetworkOutput& network) {
    CreateOptions options;
    if (outputPath) {
        options.emplace("output-path", *outputPath);
    }
    if (snapshot) {
        options.emplace("mode", std::string{"snapshot"});
    }
    if (network.liveTimerUs) {
        options.insert_or_assign("mode", std::string{"live"});
        options.emplace("live-timer", *network.liveTimerUs);
    }
    if (buffers) {
        options.emplace("buffer-ownership", *buffers);
    }
    if (network.url) {
        options.emplace("url", *network.url);
    }
    if (network.ctrlUrl) {
        options.emplace("control-url", *network.ctrlUrl);
    }
    if (network.dataUrl) {
        options.emplace("data-url", *network.dataUrl);
    }
    return options;
}

std::string autoSessionName(std::time_t now) {
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    const std::size_t n = std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    return "auto-" + std::string(stamp, n);
}

std::string autoSessionOutput(const std::filesystem::path& home, std::string_view name) {
    return absoluteOutputPath((home / "lttng-traces" / std::string(name)).string(), "/");
}

} // namespace tracectl::cli
