// Which session, per-UID trace and channel an app's object handle belongs
// to: the table the notify thread reads on every channel/event/enum
// registration while the main loop adds and removes apps. A liburcu
// lock-free RCU hash table (urcu/rculfhash.h, "memb" flavour): readers
// never wait for writers.
//
// Keys are (app pid, object descriptor); an app's descriptors (sessions,
// channels, events: lttng-ust's objd table, ust-abi.h) are unique within the
// app, so session handles and channel handles share one table.
//
// Lifetime rule: the pointers a Route holds stay valid only inside an
// RcuReadSection. Whoever frees what they point to first erases every route
// to it, then calls synchronize() (outside any read section and without
// holding a lock a reader may wait for), then frees.
#pragma once

#include <cstdint>
#include <optional>
#include <sys/types.h>

struct cds_lfht;

namespace tracectl {

/// RAII read-side critical section (urcu_memb_read_lock/unlock). Nests.
/// Registers the calling thread with liburcu on first use.
class RcuReadSection {
public:
    RcuReadSection();
    ~RcuReadSection();
    RcuReadSection(const RcuReadSection&) = delete;
    RcuReadSection& operator=(const RcuReadSection&) = delete;
};

/// Where a handle leads. `session` and `trace` are the tracer's own types,
/// opaque here.
struct Route {
    void* session = nullptr;
    void* trace = nullptr;
    bool isChannel = false; ///< a channel handle (else a session handle)
    uint32_t chanId = 0;    ///< the channel's CTF stream class id, if isChannel
};

/// The hash of key (pid, handle): every key bit mixed into the low bits,
/// which pick the bucket.
unsigned long routeHash(pid_t pid, int handle) noexcept;

class HandleRoutes {
public:
    /// Most buckets the table may grow to (a power of two): memory stays
    /// bounded whatever the keys.
    static constexpr unsigned long kMaxBuckets = 1ul << 16;

    HandleRoutes();
    /// Waits for pending frees (rcu_barrier) and destroys the table.
    ~HandleRoutes();
    HandleRoutes(const HandleRoutes&) = delete;
    HandleRoutes& operator=(const HandleRoutes&) = delete;

    /// Adds or replaces the route of (pid, handle). Any thread.
    void set(pid_t pid, int handle, Route route);
    /// Removes it, if present; the node is freed after a grace period. Any thread.
    void erase(pid_t pid, int handle);
    /// The route of (pid, handle). Call inside an RcuReadSection if the
    /// pointers are to be used.
    std::optional<Route> find(pid_t pid, int handle) const;
    /// Waits until every read section that may have seen an erased route
    /// has ended (synchronize_rcu). Not from inside a read section.
    static void synchronize();

private:
    cds_lfht* table_ = nullptr;
};

} // namespace tracectl
