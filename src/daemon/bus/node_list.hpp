// The node list a node enumerator hands to sd-bus (sd_bus_add_node_enumerator(3)).
#pragma once

#include <string>
#include <vector>

namespace tracectl::bus {

/// `paths` as a NULL-terminated array of malloc'd strings, which sd-bus
/// takes over and frees (the enumerator's contract); nullptr when out of
/// memory.
char** toNodeList(const std::vector<std::string>& paths);

} // namespace tracectl::bus
