#include "session_chunks.hpp"

#include "aggregate/trace_reader.hpp"
#include "bus_client.hpp"

#include <filesystem>

namespace tracectl::cli {

namespace {

/// find_traces(folder), or none if it holds no trace (or is gone).
std::vector<std::string> tracesUnder(const std::string& folder) {
    std::error_code ec;
    bool any = false;
    for (auto it = std::filesystem::recursive_directory_iterator(folder, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        any = any || it->path().filename() == "metadata";
    }
    return any ? aggregate::findTraces(folder) : std::vector<std::string>{};
}

} // namespace

SessionChunks::SessionChunks(BusClient& bus, std::string path, std::string output)
    : bus_(bus), path_(std::move(path)), output_(std::move(output)) {}

std::vector<std::string> SessionChunks::next() {
    if (!previous_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(previous_, ec); // read: its space is not kept
        previous_.clear();
    }
    previous_ = bus_.rotate(path_, true, [](const std::string&) {});
    return tracesUnder(previous_);
}

std::vector<std::string> SessionChunks::rest() {
    if (!previous_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(previous_, ec);
        previous_.clear();
    }
    return tracesUnder(output_);
}

} // namespace tracectl::cli
