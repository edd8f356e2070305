#include "create_request.hpp"

namespace tracectl::gui {

std::map<std::string, sdbus::Variant> create_options(const CreateRequest& request) {
    std::map<std::string, sdbus::Variant> options{
        {"mode", sdbus::Variant{request.mode}},
        {"buffer-ownership", sdbus::Variant{request.buffer_ownership}},
    };
    if (!request.output_folder.empty()) {
        options.emplace("output-path", sdbus::Variant{request.output_folder});
    }
    if (!request.relay_url.empty()) {
        options.emplace("url", sdbus::Variant{request.relay_url});
    }
    if (request.count_events) {
        options.emplace("count-events", sdbus::Variant{true});
    }
    return options;
}

} // namespace tracectl::gui
