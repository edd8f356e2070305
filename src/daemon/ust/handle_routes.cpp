#include "handle_routes.hpp"

// The flavour header must come before the hash table's (urcu/rculfhash.h).
#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <urcu/rculfhash.h>
#include <urcu/urcu-memb.h>
#include <vector>

namespace tracectl {

namespace {

/// Registers the thread with liburcu once, unregisters it when the thread ends.
struct ThreadRegistration {
    ThreadRegistration() { urcu_memb_register_thread(); }
    ~ThreadRegistration() { urcu_memb_unregister_thread(); }
    ThreadRegistration(const ThreadRegistration&) = delete;
    ThreadRegistration& operator=(const ThreadRegistration&) = delete;
};

void registerThisThread() {
    thread_local ThreadRegistration registration;
}

struct Node {
    cds_lfht_node node{};
    pid_t pid = 0;
    int handle = 0;
    Route route;
    rcu_head head{};
};

Node* nodeOf(cds_lfht_node* n) {
    // cds_lfht_node is Node's first member (standard layout).
    return reinterpret_cast<Node*>(n);
}

struct Key {
    pid_t pid;
    int handle;
};

int matches(cds_lfht_node* n, const void* key) {
    const auto* k = static_cast<const Key*>(key);
    const Node* node = nodeOf(n);
    return node->pid == k->pid && node->handle == k->handle ? 1 : 0;
}

void freeNode(rcu_head* head) {
    std::unique_ptr<Node> owned(
        reinterpret_cast<Node*>(reinterpret_cast<char*>(head) - offsetof(Node, head)));
}

} // namespace

static_assert(std::is_standard_layout_v<Node> && offsetof(Node, node) == 0);

RcuReadSection::RcuReadSection() {
    registerThisThread();
    urcu_memb_read_lock();
}

RcuReadSection::~RcuReadSection() {
    urcu_memb_read_unlock();
}

unsigned long routeHash(pid_t pid, int handle) noexcept {
    // The table picks buckets by the low bits, and keys of many apps differ
    // only in the pid (high half): mix every bit into every other
    // (MurmurHash3's 64-bit finalizer). std::hash<uint64_t> is the identity
    // in libstdc++ and made one bucket per handle number, which the table's
    // resize worker then doubled without end.
    uint64_t x =
        (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(handle);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return static_cast<unsigned long>(x);
}

HandleRoutes::HandleRoutes()
    : table_(cds_lfht_new_flavor(64, 64, kMaxBuckets, CDS_LFHT_AUTO_RESIZE, &urcu_memb_flavor,
                                 nullptr)) {
    if (table_ == nullptr)
        throw std::bad_alloc();
}

HandleRoutes::~HandleRoutes() {
    registerThisThread();
    // Nobody else uses the table any more: gather the nodes in one pass, then
    // unlink them (deleting while iterating races liburcu's shrink worker).
    std::vector<cds_lfht_node*> nodes;
    {
        RcuReadSection read;
        cds_lfht_iter iter;
        cds_lfht_node* n = nullptr;
        cds_lfht_for_each(table_, &iter, n) {
            nodes.push_back(n);
        }
    }
    for (cds_lfht_node* n : nodes) {
        RcuReadSection read;
        if (cds_lfht_del(table_, n) == 0)
            urcu_memb_call_rcu(&nodeOf(n)->head, &freeNode);
    }
    urcu_memb_barrier(); // every freeNode has run
    cds_lfht_destroy(table_, nullptr);
}

void HandleRoutes::set(pid_t pid, int handle, Route route) {
    auto node = std::make_unique<Node>();
    node->pid = pid;
    node->handle = handle;
    node->route = route;
    cds_lfht_node_init(&node->node);
    const Key key{pid, handle};
    RcuReadSection read;
    cds_lfht_node* old =
        cds_lfht_add_replace(table_, routeHash(pid, handle), &matches, &key, &node.release()->node);
    if (old != nullptr)
        urcu_memb_call_rcu(&nodeOf(old)->head, &freeNode);
}

void HandleRoutes::erase(pid_t pid, int handle) {
    const Key key{pid, handle};
    RcuReadSection read;
    cds_lfht_iter iter;
    cds_lfht_lookup(table_, routeHash(pid, handle), &matches, &key, &iter);
    cds_lfht_node* n = cds_lfht_iter_get_node(&iter);
    if (n != nullptr && cds_lfht_del(table_, n) == 0)
        urcu_memb_call_rcu(&nodeOf(n)->head, &freeNode);
}

std::optional<Route> HandleRoutes::find(pid_t pid, int handle) const {
    const Key key{pid, handle};
    RcuReadSection read;
    cds_lfht_iter iter;
    cds_lfht_lookup(table_, routeHash(pid, handle), &matches, &key, &iter);
    cds_lfht_node* n = cds_lfht_iter_get_node(&iter);
    if (n == nullptr)
        return std::nullopt;
    return nodeOf(n)->route;
}

void HandleRoutes::synchronize() {
    registerThisThread();
    urcu_memb_synchronize_rcu();
}

} // namespace tracectl
