#include "verb.hpp"

#include <CLI/CLI.hpp>

namespace tracectl::cli {

void VerbTable::add(const CLI::App& command, VerbHandler handler) {
    verbs_.emplace_back(&command, std::move(handler));
}

const VerbHandler* VerbTable::parsed() const {
    for (const auto& [command, handler] : verbs_) {
        if (command->parsed()) {
            return &handler;
        }
    }
    return nullptr;
}

} // namespace tracectl::cli
