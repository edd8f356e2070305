// The ip provider's in-kernel aggregations (Manager.CreateIpAggregation):
// each one a copy of the ip program (src/bpf/ip_probes.bpf.c) loaded for one
// client connection, which counts packets by the payload fields the client
// asked for instead of recording them (ip_probe_abi.h, "In-kernel
// aggregation"). What `tracectl dtrace` runs an aggregation-only program of
// the ip provider on, as dtrace(1M) and bpftrace aggregate in the kernel: no
// session, no consumer, no trace.
//
// Threads: the loop owns every aggregation. Loads (the verifier) and reads
// (a map walk) run on jobs_ with what they need (the request; dups of the
// maps' fds) and post their outcome back to the loop.
#pragma once

#include "common/error.hpp"
#include "common/event_loop.hpp"
#include "common/executor.hpp"
#include "common/lifetime.hpp"
#include "ip/ip_probes.hpp"
#include "ip_event_fields.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::ip {

/// Keys an aggregation holds unless asked otherwise, and at most.
inline constexpr std::uint64_t kDefaultIpAggregationKeys = 65536;
inline constexpr std::uint64_t kMaxIpAggregationKeys = std::uint64_t{1} << 20;
/// Aggregations one connection may hold at once (each is a loaded program).
inline constexpr std::size_t kMaxIpAggregationsPerPeer = 8;

/// What an aggregation counts: the probes, the filter, the record's key bytes.
struct IpAggregationRequest {
    std::uint32_t probeMask = 0; ///< 1 << TRACECTL_IP_SEND | 1 << TRACECTL_IP_RECEIVE
    std::string filter;          ///< LTTng filter text over the payload ("": every packet)
    IpRecordMask keyMask{};      ///< the probe byte and the asked fields' bytes
    std::uint64_t maxKeys = kDefaultIpAggregationKeys;
};

/// A request from CreateIpAggregation's options: `probes` ("send",
/// "receive"; at least one, each once), `fields` (ipEventFields() names, each once),
/// `filter`, `maxKeys` (1..kMaxIpAggregationKeys). Throws
/// Error(InvalidArgument) naming what is wrong; the filter is compiled here
/// (compileIpFilter), so that a bad one is refused before any load.
IpAggregationRequest ipAggregationRequest(const std::vector<std::string>& probes,
                                          const std::vector<std::string>& fields,
                                          const std::string& filter, std::uint64_t maxKeys);

class IpAggregations {
public:
    using Created = std::function<void(std::optional<Error>, std::uint64_t handle)>;
    using Read = std::function<void(std::optional<Error>, IpAggregation)>;

    /// `loop` outlives this object.
    explicit IpAggregations(EventLoop& loop);
    ~IpAggregations();
    IpAggregations(const IpAggregations&) = delete;
    IpAggregations& operator=(const IpAggregations&) = delete;

    /// Loads and enables an aggregation for the connection `owner`; `done`
    /// gets its handle, or Error(LimitExceeded) past
    /// kMaxIpAggregationsPerPeer, Error(Failed) when the program cannot be
    /// loaded (libbpf's reason). An owner gone during the load (ownerGone())
    /// gets Error(Failed), and the program is unloaded at once.
    void create(const std::string& owner, IpAggregationRequest request, Created done);
    /// What aggregation `handle` of `owner` has counted so far (it goes on
    /// counting). Error(InvalidArgument) if `owner` has no such handle.
    void read(const std::string& owner, std::uint64_t handle, Read done);
    /// Unloads aggregation `handle` of `owner`. Throws Error(InvalidArgument)
    /// if `owner` has no such handle.
    void close(const std::string& owner, std::uint64_t handle);
    /// Unloads every aggregation of `owner` (it left the bus).
    void ownerGone(const std::string& owner);
    /// Aggregations loaded now.
    std::size_t size() const noexcept { return entries_.size(); }

private:
    struct Entry {
        std::string owner;
        std::unique_ptr<IpProbes> probes;
    };
    /// The entry `handle` of `owner`; throws Error(InvalidArgument).
    Entry& entryOf(const std::string& owner, std::uint64_t handle);

    EventLoop& loop_;
    std::map<std::uint64_t, Entry> entries_;
    std::map<std::string, std::size_t> loading_; ///< loads under way, per owner
    std::uint64_t next_ = 1;
    Executor jobs_{1, "tc-ipagg"};
    Lifetime lifetime_; // last: outcomes posted after this is gone do nothing
};

} // namespace tracectl::ip
