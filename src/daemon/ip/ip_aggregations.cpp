#include "ip/ip_aggregations.hpp"

#include "common/unique_fd.hpp"
#include "filter/filter_error.hpp"
#include "ip/ip_filter.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <utility>

namespace tracectl::ip {
namespace {

UniqueFd dupOf(int fd) {
    UniqueFd out(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!out.valid())
        throw Error(ErrorCode::Failed, std::string("cannot duplicate the aggregation's maps: ") +
                                           std::strerror(errno));
    return out;
}

} // namespace

IpAggregationRequest ipAggregationRequest(const std::vector<std::string>& probes,
                                          const std::vector<std::string>& fields,
                                          const std::string& filter, std::uint64_t maxKeys) {
    IpAggregationRequest r;
    for (const std::string& p : probes) {
        const std::uint32_t bit = p == "send"      ? 1U << TRACECTL_IP_SEND
                                  : p == "receive" ? 1U << TRACECTL_IP_RECEIVE
                                                   : 0;
        if (bit == 0)
            throw Error(ErrorCode::InvalidArgument,
                        "probes: unknown probe '" + p + "' (known: send, receive)");
        if ((r.probeMask & bit) != 0)
            throw Error(ErrorCode::InvalidArgument, "probes: '" + p + "' is given twice");
        r.probeMask |= bit;
    }
    if (r.probeMask == 0)
        throw Error(ErrorCode::InvalidArgument, "probes: at least one of send, receive");
    r.keyMask = ipRecordProbeMask();
    std::set<std::string> seen;
    for (const std::string& f : fields) {
        const auto mask = ipFieldRecordMask(f);
        if (!mask)
            throw Error(ErrorCode::InvalidArgument,
                        "fields: '" + f + "' is not a payload field of the ip provider");
        if (!seen.insert(f).second)
            throw Error(ErrorCode::InvalidArgument, "fields: '" + f + "' is given twice");
        for (std::size_t i = 0; i < r.keyMask.size(); ++i)
            r.keyMask[i] |= (*mask)[i];
    }
    if (maxKeys == 0 || maxKeys > kMaxIpAggregationKeys)
        throw Error(ErrorCode::InvalidArgument, "max-keys: " + std::to_string(maxKeys) +
                                                    " is not within 1.." +
                                                    std::to_string(kMaxIpAggregationKeys));
    r.maxKeys = maxKeys;
    try {
        (void)compileIpFilter({IpRuleFilter{r.probeMask, filter}});
    } catch (const filter::FilterError& e) {
        throw Error(ErrorCode::InvalidArgument, std::string("filter: ") + e.what());
    }
    r.filter = filter;
    return r;
}

IpAggregations::IpAggregations(EventLoop& loop) : loop_(loop) {}

IpAggregations::~IpAggregations() = default;

void IpAggregations::create(const std::string& owner, IpAggregationRequest request, Created done) {
    const auto held = static_cast<std::size_t>(std::count_if(
        entries_.begin(), entries_.end(), [&](const auto& e) { return e.second.owner == owner; }));
    if (held + loading_[owner] >= kMaxIpAggregationsPerPeer)
        return done(Error(ErrorCode::LimitExceeded, "a connection may hold at most " +
                                                        std::to_string(kMaxIpAggregationsPerPeer) +
                                                        " ip aggregations"),
                    0);
    ++loading_[owner];
    auto poster = loop_.poster();
    auto landed = lifetime_.guard(
        [this, owner, done](std::shared_ptr<IpProbes> probes, std::optional<Error> error) {
            const auto pending = loading_.find(owner);
            if (pending == loading_.end()) // the owner left: `probes` goes with this call
                return done(Error(ErrorCode::Failed, "the caller left the bus during the load"), 0);
            if (--pending->second == 0)
                loading_.erase(pending);
            if (error)
                return done(std::move(error), 0);
            const std::uint64_t handle = next_++;
            // IpProbes is move-only: take it out of the shared holder.
            entries_.emplace(handle, Entry{owner, std::make_unique<IpProbes>(std::move(*probes))});
            done(std::nullopt, handle);
        });
    jobs_.submit([request = std::move(request), poster, landed]() mutable {
        std::shared_ptr<IpProbes> probes;
        std::optional<Error> error;
        try {
            // The ring is never written to (an aggregating filter): one page.
            probes = std::make_shared<IpProbes>(1, request.maxKeys);
            probes->setAggregatingFilter(
                compileIpFilter({IpRuleFilter{request.probeMask, request.filter}}),
                request.keyMask);
            probes->setEnabled(true);
        } catch (const IpProbeError& e) {
            error = Error(ErrorCode::Failed, e.what());
        } catch (const std::exception& e) {
            error = Error(ErrorCode::Failed, std::string("ip aggregation: ") + e.what());
        }
        poster->post([landed, probes = std::move(probes), error = std::move(error)]() mutable {
            landed(std::move(probes), std::move(error));
        });
    });
}

IpAggregations::Entry& IpAggregations::entryOf(const std::string& owner, std::uint64_t handle) {
    const auto it = entries_.find(handle);
    if (it == entries_.end() || it->second.owner != owner)
        throw Error(ErrorCode::InvalidArgument,
                    "no ip aggregation " + std::to_string(handle) + " of this connection");
    return it->second;
}

void IpAggregations::read(const std::string& owner, std::uint64_t handle, Read done) {
    // The job's own dups (std::function needs a copyable job: shared).
    struct Maps {
        UniqueFd aggregation, counters;
    };
    auto maps = std::make_shared<Maps>();
    try {
        Entry& e = entryOf(owner, handle);
        maps->aggregation = dupOf(e.probes->aggregationFd());
        maps->counters = dupOf(e.probes->countersFd());
    } catch (const Error& e) {
        return done(e, {});
    }
    auto poster = loop_.poster();
    auto landed = lifetime_.guard(std::move(done));
    jobs_.submit([maps, poster, landed]() mutable {
        IpAggregation result;
        std::optional<Error> error;
        try {
            result = readIpAggregation(maps->aggregation.get(), maps->counters.get());
        } catch (const IpProbeError& e) {
            error = Error(ErrorCode::Failed, e.what());
        }
        poster->post([landed, result = std::move(result), error = std::move(error)]() mutable {
            landed(std::move(error), std::move(result));
        });
    });
}

void IpAggregations::close(const std::string& owner, std::uint64_t handle) {
    entryOf(owner, handle);
    entries_.erase(handle);
}

void IpAggregations::ownerGone(const std::string& owner) {
    loading_.erase(owner);
    std::erase_if(entries_, [&](const auto& e) { return e.second.owner == owner; });
}

} // namespace tracectl::ip
