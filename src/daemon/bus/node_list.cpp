#include "bus/node_list.hpp"

#include <cstdlib>
#include <cstring>

namespace tracectl::bus {

char** toNodeList(const std::vector<std::string>& paths) {
    // malloc/strdup: sd-bus frees the list with free() (strv_free).
    auto** list = static_cast<char**>(std::calloc(paths.size() + 1, sizeof(char*)));
    if (list == nullptr)
        return nullptr;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        list[i] = strdup(paths[i].c_str());
        if (list[i] == nullptr) {
            for (std::size_t j = 0; j < i; ++j)
                std::free(list[j]);
            std::free(list);
            return nullptr;
        }
    }
    return list;
}

} // namespace tracectl::bus
