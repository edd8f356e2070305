#include "kernel/kernel_domain.hpp"

#include "common/join.hpp"
#include "common/log.hpp"
#include "ip_event_fields.hpp"
#include "kernel/session_instances.hpp"
#include "kernel/statedump_events.hpp"
#include "kernel/tracefs.hpp"
#include "kernel/tracepoint_catalog.hpp"
#include "metadata/trace_info.hpp"
#include "recording/consumer_connection.hpp"

#include <algorithm>
#include <filesystem>
#include <future>
#include <random>
#include <tuple>

namespace tracectl {

namespace cp = consumer_protocol;

namespace {

/// How many times, a second apart, an instance whose removal failed (the
/// consumer still held its fds) is tried again.
constexpr int kRemovalAttempts = 30;

metadata::Uuid randomUuid() {
    std::random_device rd;
    metadata::Uuid u{};
    for (auto& b : u)
        b = static_cast<std::uint8_t>(rd());
    u[6] = static_cast<std::uint8_t>((u[6] & 0x0F) | 0x40); // version 4
    u[8] = static_cast<std::uint8_t>((u[8] & 0x3F) | 0x80); // variant 1
    return u;
}

} // namespace

/// What the session's recording is told of kernel channel `c`: its ring
/// buffer is the channel's per-CPU tracefs buffer (KERNEL-NOTES.md).
static ChannelUse channelUse(const SessionSnapshot& s, const kernel::PreparedChannel& c) {
    ChannelUse use{"kernel", c.name, c.packetSize, 0, c.cpus.size()};
    for (const ChannelConfig& config : s.kernelChannels)
        if (config.name == c.name)
            use.subbufCount = config.subbufCount;
    return use;
}

struct KernelDomain::Traced {
    std::uint64_t serial = 0;
    SessionSnapshot snapshot;
    metadata::Uuid uuid{};
    /// Used by executor jobs only (one at a time); the loop only hands it on.
    std::shared_ptr<kernel::SessionInstances> instances;
    bool made = false; ///< the consumer has the kernel channels
    /// resume(): the instances an earlier daemon made are taken over.
    bool takeOver = false;
    bool gone = false; ///< the consumer is gone: nothing is read any more
    std::uint64_t metadataKey = 0;
    std::string pushedTsdl;
    std::vector<std::pair<std::uint64_t, std::string>> channels; ///< (key, name) of data channels
    std::deque<Step> queue;
    bool running = false;
};

KernelDomain::KernelDomain(EventLoop& loop, Recordings& recordings, std::filesystem::path ledger,
                           std::function<bool(const std::string& idHex)> keptForTakeover)
    : loop_(loop), recordings_(recordings), ledger_(std::move(ledger)) {
    try {
        auto fs = std::make_unique<kernel::Tracefs>(kernel::Tracefs::locate());
        if (!fs->writable()) {
            unavailable_ = "tracefs at " + fs->root().string() + " is not writable by tracectld";
        } else {
            catalog_ = std::make_unique<kernel::TracepointCatalog>(
                kernel::TracepointCatalog::fromTracefs(*fs));
            // What an earlier daemon of this instance made and left (it
            // crashed, or was killed): only those, never other daemons'.
            std::size_t removed = 0;
            for (const std::string& name : ledger_.read()) {
                const std::string_view prefix = kernel::TracefsInstance::kPrefix;
                if (keptForTakeover && name.rfind(prefix, 0) == 0 &&
                    keptForTakeover(name.substr(prefix.size()))) {
                    heldForTakeover_.push_back(name); // still recording: resume()'s
                    continue;
                }
                if (removeLeftOver(*fs, name))
                    ++removed;
                else
                    staleLeft_.push_back(name); // a draining consumer holds it: retried
            }
            if (removed != 0)
                log::notice("removed " + std::to_string(removed) +
                            " session(s)' tracefs instances an earlier tracectld left");
            tracefs_ = std::move(fs);
            if (!staleLeft_.empty())
                retryStale(kRemovalAttempts);
        }
    } catch (const std::exception& e) {
        unavailable_ = e.what();
    }
    if (unavailable_)
        log::notice("the kernel domain is not available: " + *unavailable_);
}

void KernelDomain::shutdown() {
    std::vector<std::shared_ptr<kernel::SessionInstances>> all;
    for (auto& [id, t] : sessions_)
        if (t->instances)
            all.push_back(std::exchange(t->instances, nullptr));
    if (all.empty() || !tracefs_)
        return;
    auto over = std::make_shared<std::promise<void>>();
    std::future<void> removed = over->get_future();
    executor_.submit([this, all, over] {
        for (const auto& instances : all) {
            // Each attempt waits up to 1 s for a consumer draining its fds;
            // quiet: what is left is said once, below.
            std::vector<std::string> left;
            for (int attempt = 0; attempt < 3; ++attempt)
                if ((left = instances->remove(true)).empty())
                    break;
            instances->giveUp(left, "still held open at exit");
            if (left.empty())
                forgetInstance(instances->baseName());
        }
        over->set_value();
    });
    if (removed.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
        log::warning("tracefs instances still being removed at exit");
}

KernelDomain::~KernelDomain() {
    // Queued jobs run first (the executor is destroyed before the members
    // they use, right after lifetime_); instances left are removed by their
    // owners' destructors, on this thread.
}

KernelDomain::Traced* KernelDomain::find(const std::string& idHex, std::uint64_t serial) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end() || it->second->serial != serial)
        return nullptr;
    return it->second.get();
}

void KernelDomain::onExecutor(std::function<void(kernel::Tracefs&, kernel::TracepointCatalog&)> job,
                              std::function<void(std::optional<Error>)> then) {
    if (!tracefs_ || !catalog_) {
        const Error e(ErrorCode::KernelUnavailable,
                      "kernel tracing is not available: " + unavailable_.value_or("no tracefs"));
        loop_.post([then, e] { then(e); });
        return;
    }
    executor_.submit(
        [this, poster = loop_.poster(), job = std::move(job), then = std::move(then)]() mutable {
            std::optional<Error> error;
            try {
                job(*tracefs_, *catalog_);
            } catch (const Error& e) {
                error = e;
            } catch (const std::exception& e) {
                error = Error(ErrorCode::Failed, e.what());
            }
            poster->post([then = std::move(then), error] { then(error); });
        });
}

void KernelDomain::enqueue(Traced& t, Step step) {
    t.queue.push_back(std::move(step));
    if (!t.running)
        runNext(t.snapshot.idHex);
}

void KernelDomain::runNext(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return;
    Traced& t = *it->second;
    if (t.queue.empty()) {
        t.running = false;
        return;
    }
    t.running = true;
    Step step = std::move(t.queue.front());
    t.queue.pop_front();
    auto next = lifetime_.guard([this, idHex, serial = t.serial] {
        if (Traced* live = find(idHex, serial))
            runNext(live->snapshot.idHex);
    });
    // Posted: a step that finishes inside its own call does not recurse.
    step([&loop = loop_, next] { loop.post(next); });
}

void KernelDomain::listTracepoints(TracepointsDone done) {
    if (listed_)
        return loop_.post([done, list = *listed_] { done(std::nullopt, list); });
    auto list = std::make_shared<std::vector<KernelTracepointInfo>>();
    onExecutor(
        [list](kernel::Tracefs&, kernel::TracepointCatalog& catalog) {
            for (const kernel::TracepointId& id : catalog.all()) {
                KernelTracepointInfo info{id.system, id.event, {}};
                try {
                    for (const kernel::FormatField& f : catalog.format(id.system, id.event).fields)
                        if (!f.isCommon())
                            info.fields.emplace_back(
                                f.name, f.isArray
                                            ? f.type + "[" +
                                                  (f.arrayLength ? std::to_string(*f.arrayLength)
                                                                 : std::string()) +
                                                  "]"
                                            : f.type);
                } catch (const std::exception& e) {
                    log::debug("format of " + id.full() + ": " + e.what());
                }
                list->push_back(std::move(info));
            }
            // The ip provider's probes, which the daemon's BPF program makes.
            for (const char* probe : {"receive", "send"}) {
                KernelTracepointInfo info{"ip", probe, {}};
                for (const auto& f : ip::ipEventFields())
                    info.fields.emplace_back(std::string(f.name), std::string(f.ctype));
                list->push_back(std::move(info));
            }
            // lttng-modules' statedump events, which the consumer writes.
            for (const kernel::StatedumpEventInfo& e : kernel::statedumpEventInfos()) {
                KernelTracepointInfo info{
                    std::string(kernel::kStatedumpSystem), std::string(e.name), {}};
                for (const auto& [name, type] : e.fields)
                    info.fields.emplace_back(std::string(name), std::string(type));
                list->push_back(std::move(info));
            }
            std::sort(list->begin(), list->end(), [](const auto& a, const auto& b) {
                return std::tie(a.system, a.event) < std::tie(b.system, b.event);
            });
        },
        [this, list, done](std::optional<Error> e) {
            if (e)
                return done(e, {});
            listed_ = *list;
            done(std::nullopt, *list);
        });
}

void KernelDomain::start(SessionSnapshot s, Done done) {
    auto& slot = sessions_[s.idHex];
    if (!slot) {
        if (s.kernelChannels.empty()) {
            sessions_.erase(s.idHex);
            return loop_.post([done] { done(std::nullopt); });
        }
        slot = std::make_unique<Traced>();
        slot->serial = nextSerial_++;
        slot->uuid = randomUuid();
    }
    Traced& t = *slot;
    t.snapshot = std::move(s);
    enqueue(t, [this, id = t.snapshot.idHex, serial = t.serial, done](auto finished) {
        Traced* live = find(id, serial);
        if (live == nullptr) {
            done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
            return finished();
        }
        if (live->gone) {
            done(Error(ErrorCode::WrongState,
                       "the session's consumer is gone; its kernel channels record nothing"));
            return finished();
        }
        auto then = [this, id, serial, done, finished](std::optional<Error> e) {
            if (e) {
                done(e);
                return finished();
            }
            Traced* on = find(id, serial);
            if (on == nullptr) {
                done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
                return finished();
            }
            setTracing(*on, true, [done, finished](std::optional<Error> e2) {
                done(e2);
                finished();
            });
        };
        if (live->made)
            return then(std::nullopt);
        prepare(*live, then);
    });
}

void KernelDomain::resume(SessionSnapshot s, bool active, Done done) {
    if (s.kernelChannels.empty())
        return loop_.post([done] { done(std::nullopt); });
    const std::string base = std::string(kernel::TracefsInstance::kPrefix) + s.idHex;
    std::erase(heldForTakeover_, base);
    auto& slot = sessions_[s.idHex];
    if (slot)
        return loop_.post([done] {
            done(Error(ErrorCode::Failed, "the kernel domain knows the session already"));
        });
    slot = std::make_unique<Traced>();
    slot->serial = nextSerial_++;
    slot->uuid = randomUuid();
    slot->takeOver = true;
    slot->snapshot = std::move(s);
    Traced& t = *slot;
    // A failure before the instances are ours leaves them to the removal of
    // what an earlier daemon left (the session itself fails).
    const auto fail = [this, base, done](std::optional<Error> e, auto finished) {
        removeLater(base);
        done(std::move(e));
        finished();
    };
    enqueue(t, [this, id = t.snapshot.idHex, serial = t.serial, active, done, fail](auto finished) {
        // The session's recording was taken over first: its consumer
        // archived the previous daemon's chunk, the new channels go to the
        // next one.
        loop_.post(lifetime_.guard([this, id, serial, active, done, fail, finished] {
            {
                Traced* live = find(id, serial);
                if (live == nullptr)
                    return fail(Error(ErrorCode::Failed, "the session was destroyed meanwhile"),
                                finished);
                prepare(*live, [this, id, serial, active, done, fail,
                                finished](std::optional<Error> e) {
                    Traced* on = e ? nullptr : find(id, serial);
                    if (on == nullptr)
                        return fail(
                            e ? e : Error(ErrorCode::Failed, "the session was destroyed meanwhile"),
                            finished);
                    setTracing(*on, active, [done, finished](std::optional<Error> e2) {
                        done(e2);
                        finished();
                    });
                });
            }
        }));
    });
}

void KernelDomain::releaseUnclaimed() {
    for (const std::string& name : std::exchange(heldForTakeover_, {}))
        removeLater(name);
}

void KernelDomain::removeLater(const std::string& name) {
    if (!tracefs_)
        return;
    if (std::find(staleLeft_.begin(), staleLeft_.end(), name) == staleLeft_.end())
        staleLeft_.push_back(name);
    retryStale(kRemovalAttempts);
}

void KernelDomain::prepare(Traced& t, std::function<void(std::optional<Error>)> done) {
    // Posted: never inside the call that asked.
    loop_.post(lifetime_.guard([this, id = t.snapshot.idHex, serial = t.serial, done] {
        Traced* live = find(id, serial);
        if (live == nullptr)
            return done(Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
        // Every trace of the session shares its recording's clock offset.
        const auto offset = recordings_.clockOffsetOf(id);
        if (!offset)
            return done(Error(ErrorCode::Failed, "the session's recording was not started"));
        prepareInstances(*live, *offset, done);
    }));
}

void KernelDomain::prepareInstances(Traced& t, std::int64_t clockOffset,
                                    std::function<void(std::optional<Error>)> done) {
    auto instances = std::make_shared<kernel::SessionInstances>(
        t.snapshot.idHex, t.uuid, t.snapshot.name, t.snapshot.creationTime, clockOffset);
    auto prepared = std::make_shared<kernel::PreparedTrace>();
    const SessionSnapshot s = t.snapshot;
    onExecutor(
        [this, instances, prepared, s, takeOver = t.takeOver](kernel::Tracefs& fs,
                                                              kernel::TracepointCatalog& catalog) {
            // Written down first: a crash from here on leaves a name the
            // next daemon knows to remove.
            try {
                ledger_.add(instances->baseName());
            } catch (const std::exception& e) {
                log::warning(std::string("the instance ledger: ") + e.what());
            }
            *prepared = instances->prepare(fs, catalog, s, takeOver);
        },
        [this, id = t.snapshot.idHex, serial = t.serial, instances, prepared,
         done](std::optional<Error> e) {
            Traced* live = find(id, serial);
            if (e || live == nullptr) {
                removeInstances(instances, kRemovalAttempts);
                return done(e ? e
                              : Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
            }
            live->instances = instances;
            // The consumer is the session's recording's, started before
            // its domains.
            {
                Traced* on = live;
                ConsumerConnection* consumer = recordings_.consumerOf(id);
                if (consumer == nullptr) {
                    removeInstances(std::exchange(on->instances, nullptr), kRemovalAttempts);
                    return done(
                        Error(ErrorCode::Failed, "the session's consumer is not there" +
                                                     (recordings_.failureOf(id)
                                                          ? " (" + *recordings_.failureOf(id) + ")"
                                                          : std::string())));
                }
                std::array<std::uint8_t, 16> uuid{};
                std::copy(on->uuid.begin(), on->uuid.end(), uuid.begin());
                Join join([this, id, serial, done](std::optional<Error> failed) {
                    Traced* made = find(id, serial);
                    if (made == nullptr)
                        return done(
                            Error(ErrorCode::Failed, "the session was destroyed meanwhile"));
                    if (failed)
                        return done(Error(ErrorCode::Failed, std::string("the consumer refused the "
                                                                         "kernel channels: ") +
                                                                 failed->what()));
                    made->made = true;
                    done(std::nullopt);
                });
                cp::CreateKernelChannel meta;
                meta.key = on->metadataKey =
                    recordings_.newChannelKey(id, {"kernel", "", 4096, 2, 1});
                meta.kind = cp::ChannelKind::Metadata;
                meta.outputDir = "kernel" + recordings_.traceDirSuffixOf(id);
                meta.name = "metadata";
                meta.packetSize = 4096;
                meta.traceUuid = uuid;
                consumer->createKernelChannel(meta, {}, join.add());
                consumer->pushMetadata(on->metadataKey, 0, prepared->tsdl, join.add());
                on->pushedTsdl = prepared->tsdl;
                for (kernel::PreparedChannel& c : prepared->channels) {
                    cp::CreateKernelChannel data;
                    data.key = recordings_.newChannelKey(id, channelUse(on->snapshot, c));
                    data.kind = cp::ChannelKind::Data;
                    data.outputDir = "kernel" + recordings_.traceDirSuffixOf(id);
                    data.name = c.name;
                    data.packetSize = c.packetSize;
                    data.bufferBytes = c.bufferBytes;
                    data.streamId = c.streamId;
                    data.contextMask = c.contextMask;
                    data.kernelStackType = c.kernelStackType;
                    data.userStackType = c.userStackType;
                    data.statedump = c.statedump;
                    data.traceUuid = uuid;
                    data.pageSize = c.page.pageSize;
                    data.timestampOffset = c.page.timestampOffset;
                    data.timestampSize = c.page.timestampSize;
                    data.commitOffset = c.page.commitOffset;
                    data.commitSize = c.page.commitSize;
                    data.dataOffset = c.page.dataOffset;
                    data.cpus = c.cpus;
                    if (c.readTimerUs != 0)
                        data.readTimerUsec = c.readTimerUs;
                    on->channels.emplace_back(data.key, c.name);
                    // The conversions first: no record is read before it
                    // can be converted (tracing is still off anyway).
                    consumer->createKernelChannel(data, std::move(c.fds), join.add());
                    consumer->declareKernelEvents({data.key, c.conversions}, join.add());
                    if (c.ip)
                        consumer->attachIpProbes({data.key, c.ip->ids.sendId, c.ip->ids.receiveId},
                                                 std::move(c.ip->ring), std::move(c.ip->counters),
                                                 join.add());
                    if (c.strings)
                        consumer->attachSyscallStrings({data.key}, std::move(c.strings->ring),
                                                       std::move(c.strings->counters), join.add());
                }
                join.seal();
            }
        });
}

void KernelDomain::setTracing(Traced& t, bool on, std::function<void(std::optional<Error>)> done) {
    if (!t.instances)
        return loop_.post([done] { done(std::nullopt); });
    onExecutor([instances = t.instances,
                on](kernel::Tracefs&, kernel::TracepointCatalog&) { instances->setTracing(on); },
               std::move(done));
}

void KernelDomain::stop(std::string idHex, Done done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return loop_.post([done] { done(std::nullopt); });
    Traced& t = *it->second;
    enqueue(t, [this, idHex, serial = t.serial, done](auto finished) {
        Traced* live = find(idHex, serial);
        if (live == nullptr || !live->made || live->gone) {
            done(std::nullopt);
            return finished();
        }
        setTracing(*live, false, [this, idHex, serial, done, finished](std::optional<Error> e) {
            Traced* on = find(idHex, serial);
            ConsumerConnection* consumer = on ? recordings_.consumerOf(idHex) : nullptr;
            if (e || on == nullptr || consumer == nullptr) {
                done(e);
                return finished();
            }
            // Everything recorded before tracing went off, on disk. A Stop
            // that fails leaves the session active: tracing goes on again.
            Join join([this, idHex, serial, done, finished](std::optional<Error> failed) {
                Traced* now = failed ? find(idHex, serial) : nullptr;
                if (now == nullptr) {
                    done(failed);
                    return finished();
                }
                setTracing(*now, true, [done, finished, failed](std::optional<Error>) {
                    done(failed);
                    finished();
                });
            });
            for (const auto& [key, name] : on->channels)
                consumer->flushChannel(key, join.add());
            join.seal();
        });
    });
}

void KernelDomain::destroy(std::string idHex, Done done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return loop_.post([done] { done(std::nullopt); });
    Traced& t = *it->second;
    enqueue(t, [this, idHex, serial = t.serial, done](auto) {
        Traced* live = find(idHex, serial);
        if (live == nullptr)
            return done(std::nullopt);
        const auto end = [this, idHex, serial, done] {
            Traced* on = find(idHex, serial);
            if (on == nullptr)
                return done(std::nullopt);
            auto instances = std::exchange(on->instances, nullptr);
            // Steps queued after this one answer as for a session gone.
            auto rest = std::move(on->queue);
            sessions_.erase(idHex);
            for (Step& step : rest)
                step([] {});
            // Destroy answers once its instances are gone (or, still held
            // open, are being retried).
            removeInstances(std::move(instances), kRemovalAttempts, [done] { done(std::nullopt); });
        };
        ConsumerConnection* consumer = recordings_.consumerOf(idHex);
        if (consumer == nullptr || !live->made)
            return end();
        // Before the recording ends (the session ends its domains first):
        // the consumer reads each buffer to its end and closes the fds, so
        // that the instances can go (remove() turns tracing off first).
        Join join([end](std::optional<Error> e) {
            if (e)
                log::warning(std::string("closing the kernel channels: ") + e->what());
            end();
        });
        for (const auto& [key, name] : live->channels)
            consumer->destroyChannel(key, join.add());
        consumer->destroyChannel(live->metadataKey, join.add());
        live->made = false;
        join.seal();
    });
}

void KernelDomain::onSessionInstances(
    const std::string& idHex,
    std::function<void(kernel::SessionInstances&, kernel::TracepointCatalog&)> job, Done done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end()) // not started: the next start's snapshot says it
        return loop_.post([done] { done(std::nullopt); });
    Traced& t = *it->second;
    enqueue(t, [this, idHex, serial = t.serial, job = std::move(job), done](auto finished) {
        const auto answer = [done, finished](std::optional<Error> e) {
            done(e);
            finished();
        };
        Traced* live = find(idHex, serial);
        if (live == nullptr || !live->instances)
            return answer(std::nullopt);
        onExecutor([instances = live->instances,
                    job](kernel::Tracefs&,
                         kernel::TracepointCatalog& catalog) { job(*instances, catalog); },
                   answer);
    });
}

void KernelDomain::setEventRulesEnabled(std::string idHex, std::vector<EventRule> rules,
                                        bool enabled, Done done) {
    std::erase_if(rules, [](const EventRule& r) { return r.domain != TracingDomain::Kernel; });
    if (rules.empty())
        return loop_.post([done] { done(std::nullopt); });
    onSessionInstances(
        idHex,
        [rules = std::move(rules), enabled](kernel::SessionInstances& instances,
                                            kernel::TracepointCatalog& catalog) {
            instances.setRulesEnabled(catalog, rules, enabled);
        },
        std::move(done));
}

void KernelDomain::setChannelEnabled(std::string idHex, TracingDomain domain, std::string channel,
                                     bool enabled, Done done) {
    if (domain != TracingDomain::Kernel)
        return loop_.post([done] { done(std::nullopt); });
    onSessionInstances(
        idHex,
        [channel = std::move(channel), enabled](kernel::SessionInstances& instances,
                                                kernel::TracepointCatalog&) {
            instances.setChannelEnabled(channel, enabled);
        },
        std::move(done));
}

void KernelDomain::setProcessTrackers(std::string, ProcessTrackers trackers, bool, Done done) {
    std::optional<Error> refused;
    for (const auto a : {ProcessAttribute::Pid, ProcessAttribute::Uid, ProcessAttribute::Gid})
        if (!trackers.of(a).all)
            refused = Error(ErrorCode::InvalidArgument,
                            "the kernel domain cannot track by " + std::string(toString(a)));
    loop_.post([done, refused] { done(refused); });
}

void KernelDomain::enableEvents(std::string idHex, EventRule rule, bool, Done done) {
    if (rule.domain != TracingDomain::Kernel)
        return loop_.post([done] { done(std::nullopt); });
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end()) {
        // Not started: the rule comes with the first start; checked now, so
        // that a rule naming nothing is refused here rather than at Start.
        return checkRule(rule, std::move(done));
    }
    Traced& t = *it->second;
    enqueue(t, [this, idHex, serial = t.serial, rule, done](auto finished) {
        Traced* live = find(idHex, serial);
        const auto answer = [done, finished](std::optional<Error> e) {
            done(e);
            finished();
        };
        if (live == nullptr || !live->instances)
            return checkRule(rule, answer);
        auto added = std::make_shared<kernel::AddedEvents>();
        onExecutor(
            [instances = live->instances, rule, added](kernel::Tracefs&,
                                                       kernel::TracepointCatalog& catalog) {
                *added = instances->describe(catalog, rule);
            },
            [this, idHex, serial, rule, added, answer](std::optional<Error> e) {
                Traced* on = find(idHex, serial);
                if (e || on == nullptr)
                    return answer(e);
                ConsumerConnection* consumer = recordings_.consumerOf(idHex);
                const auto enable = [this, idHex, serial, rule, answer](std::optional<Error> e2) {
                    Traced* now = find(idHex, serial);
                    if (e2 || now == nullptr || !now->instances)
                        return answer(e2);
                    onExecutor(
                        [instances = now->instances, rule](kernel::Tracefs&,
                                                           kernel::TracepointCatalog& catalog) {
                            instances->enableAdded(catalog, rule);
                        },
                        answer);
                };
                if (consumer == nullptr || !on->made)
                    return enable(std::nullopt);
                // The consumer learns the new events before they record.
                Join join(enable);
                for (const auto& [index, conversions] : added->conversions)
                    consumer->declareKernelEvents({on->channels.at(index).first, conversions},
                                                  join.add());
                for (auto& [index, ip] : added->ipAttached)
                    consumer->attachIpProbes(
                        {on->channels.at(index).first, ip.ids.sendId, ip.ids.receiveId},
                        std::move(ip.ring), std::move(ip.counters), join.add());
                for (auto& [index, strings] : added->stringsAttached)
                    consumer->attachSyscallStrings({on->channels.at(index).first},
                                                   std::move(strings.ring),
                                                   std::move(strings.counters), join.add());
                // The metadata only grows (kernel_metadata.hpp): what is new
                // follows what was pushed. Recorded as pushed once the
                // consumer took it.
                const bool grows =
                    added->tsdl.size() >= on->pushedTsdl.size() &&
                    added->tsdl.compare(0, on->pushedTsdl.size(), on->pushedTsdl) == 0;
                if (!grows) {
                    join.add()(Error(ErrorCode::Failed,
                                     "the kernel metadata would change what it said already"));
                } else if (added->tsdl.size() > on->pushedTsdl.size()) {
                    auto pushed = join.add();
                    consumer->pushMetadata(on->metadataKey, on->pushedTsdl.size(),
                                           added->tsdl.substr(on->pushedTsdl.size()),
                                           [this, idHex, serial, tsdl = added->tsdl,
                                            pushed](std::optional<Error> failed) {
                                               if (Traced* now = find(idHex, serial);
                                                   now != nullptr && !failed)
                                                   now->pushedTsdl = tsdl;
                                               pushed(failed);
                                           });
                }
                join.seal();
            });
    });
}

void KernelDomain::removeInstances(std::shared_ptr<kernel::SessionInstances> instances,
                                   int attemptsLeft, std::function<void()> tried) {
    if (!instances) {
        if (tried)
            loop_.post(std::move(tried));
        return;
    }
    auto left = std::make_shared<std::vector<std::string>>();
    onExecutor(
        [this, instances, left,
         quiet = attemptsLeft < kRemovalAttempts](kernel::Tracefs&, kernel::TracepointCatalog&) {
            // Said once, at the first attempt, and once more if the last fails.
            *left = instances->remove(quiet);
            if (left->empty())
                forgetInstance(instances->baseName());
        },
        [tried, retry = lifetime_.guard([this, instances, left, attemptsLeft] {
            if (left->empty())
                return;
            if (attemptsLeft <= 1) {
                // Said once per instance, and let go on the executor, which
                // owns them: whoever drops the last reference then neither
                // waits nor warns again.
                onExecutor(
                    [instances, left](kernel::Tracefs&, kernel::TracepointCatalog&) {
                        instances->giveUp(*left, "still held open after " +
                                                     std::to_string(kRemovalAttempts) +
                                                     " attempts");
                    },
                    [](std::optional<Error>) {});
                return;
            }
            // The consumer holds their fds until it has exited.
            auto timer = std::make_shared<EventSourcePtr>();
            *timer = loop_.addTimer(std::chrono::seconds(1),
                                    [this, instances, attemptsLeft, timer]() mutable {
                                        removeInstances(instances, attemptsLeft - 1);
                                        timer.reset();
                                    });
        })](std::optional<Error>) {
            if (tried)
                tried();
            retry();
        });
}

void KernelDomain::forgetInstance(const std::string& name) {
    try {
        ledger_.remove(name);
    } catch (const std::exception& e) {
        log::warning(std::string("the instance ledger: ") + e.what());
    }
}

bool KernelDomain::removeLeftOver(const kernel::Tracefs& fs, const std::string& name, bool quiet) {
    fs.removeStaleInstances(name, quiet);
    if (std::filesystem::exists(fs.root() / "instances" / name))
        return false;
    // Then its userspace probes (disabled with the instances): the group
    // of the session the ledger's name is of.
    const std::string_view prefix = kernel::TracefsInstance::kPrefix;
    if (name.rfind(prefix, 0) == 0 &&
        !fs.removeUprobeGroup(kernel::Tracefs::uprobeGroup(name.substr(prefix.size())), quiet))
        return false;
    forgetInstance(name);
    return true;
}

void KernelDomain::checkRule(const EventRule& rule, Done done) {
    onExecutor(
        [rule](kernel::Tracefs&, kernel::TracepointCatalog& catalog) {
            kernel::SessionInstances::checkRule(catalog, rule);
        },
        std::move(done));
}

void KernelDomain::retryStale(int attemptsLeft) {
    staleTimer_ = loop_.addTimer(std::chrono::seconds(1), [this, attemptsLeft] {
        auto names = std::make_shared<std::vector<std::string>>(staleLeft_);
        onExecutor(
            [this, names](kernel::Tracefs& fs, kernel::TracepointCatalog&) {
                std::vector<std::string> left;
                for (const std::string& name : *names)
                    if (!removeLeftOver(fs, name, true))
                        left.push_back(name);
                *names = std::move(left);
            },
            [this, names, attemptsLeft](std::optional<Error>) {
                staleLeft_ = *names;
                if (!staleLeft_.empty() && attemptsLeft > 1)
                    retryStale(attemptsLeft - 1);
                else if (!staleLeft_.empty())
                    log::warning(std::to_string(staleLeft_.size()) +
                                 " tracefs instance(s) an earlier tracectld left are still held "
                                 "open; left in place");
            });
    });
}

void KernelDomain::consumerGone(const std::string& idHex) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return;
    Traced& t = *it->second;
    t.gone = true;
    t.made = false;
    removeInstances(std::exchange(t.instances, nullptr), kRemovalAttempts);
}

void KernelDomain::beforeChunkCloses(const std::string&, Ready ready) {
    // Its metadata is whole from the start (every event declared when its
    // channels were made, DeclareKernelEvents), and each change is pushed
    // in the session's queue of steps before it answers.
    ready(std::nullopt);
}

void KernelDomain::afterChunkBoundary(const std::string&) {}

void KernelDomain::recordingFailed(const std::string& idHex, const std::string&) {
    consumerGone(idHex);
}

} // namespace tracectl
