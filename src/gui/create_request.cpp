#include "create_request.hpp"

namespace tracectl::gui {

std::map<std::string, sdbus::Variant> createOptions(const CreateRequest& request) {
    std::map<std::string, sdbus::Variant> options{
        {"mode", sdbus::Variant{request.mode}},
        {"buffer-ownership", sdbus::Variant{request.bufferOwnership}},
    };
    if (!request.outputFolder.empty()) {
        options.emplace("output-path", sdbus::Variant{request.outputFolder});
    }
    if (!request.relayUrl.empty()) {
        options.emplace("url", sdbus::Variant{request.relayUrl});
    }
    if (request.countEvents) {
        options.emplace("count-events", sdbus::Variant{true});
    }
    return options;
}

} // namespace tracectl::gui
