#include "filter/filter_ast.hpp"

#include <utility>
#include <vector>

namespace tracectl::filter {

Node::~Node() {
    std::vector<NodePtr> pending;
    if (left)
        pending.push_back(std::move(left));
    if (right)
        pending.push_back(std::move(right));
    while (!pending.empty()) {
        NodePtr n = std::move(pending.back());
        pending.pop_back();
        if (n->left)
            pending.push_back(std::move(n->left));
        if (n->right)
            pending.push_back(std::move(n->right));
        // n, with no operand left, is freed here.
    }
}

} // namespace tracectl::filter
