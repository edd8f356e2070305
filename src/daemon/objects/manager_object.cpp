#include "objects/manager_object.hpp"

#include "auth/call_options.hpp"
#include "bus/bus_call.hpp"
#include "bus/option_reader.hpp"
#include "common/log.hpp"
#include "config.h"
#include "kernel/kernel_support.hpp"
#include "objects/create_session_options.hpp"
#include "recording/output_folder.hpp"
#include "relay/relay_session_opener.hpp"
#include "session/session_name.hpp"

namespace tracectl {

namespace {

constexpr const char* kManagerInterface = "org.tracectl.Tracing1.Manager";

} // namespace

const bus::Property<ManagerObject> ManagerObject::kProperties[2] = {
    {"Version", "s", SD_BUS_VTABLE_PROPERTY_CONST,
     [](const ManagerObject&, sd_bus_message* m) {
         bus::check(sd_bus_message_append(m, "s", TRACECTL_VERSION), "s");
     }},
    {"KernelTracingAvailable", "b", 0,
     [](const ManagerObject& o, sd_bus_message* m) {
         const int available =
             o.services_.kernel != nullptr && !o.services_.kernel->unavailableReason();
         bus::check(sd_bus_message_append(m, "b", available), "b");
     }},
};

ManagerObject::ManagerObject(bus::BusServices& services, SessionRegistry& registry,
                             ApplicationDirectory& apps, EventLoop& loop)
    : services_(services), registry_(registry), apps_(apps), loop_(loop),
      sessions_(
          services, sessionPathPrefix(), kSessionInterface,
          "the session belongs to another user; reading it needs polkit's "
          "org.tracectl.Tracing1.manage-all-sessions",
          [this](const std::string& path) { return objectAt(path); },
          [this] {
              std::vector<const SessionObject*> all;
              for (const auto& [hex, e] : objects_)
                  all.push_back(e.object.get());
              return all;
          }) {
    using Self = ManagerObject;
    constexpr uint64_t kAnyone = SD_BUS_VTABLE_UNPRIVILEGED; // polkit decides, per call
    static const sd_bus_vtable members[] = {
        SD_BUS_METHOD_WITH_ARGS("CreateSession", SD_BUS_ARGS("s", name, "a{sv}", options),
                                SD_BUS_RESULT("o", session), &Self::onCreateSession, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("GetSession", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", session),
                                &Self::onGetSession, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("ListSessions", SD_BUS_NO_ARGS, SD_BUS_RESULT("ao", sessions),
                                &Self::onListSessions, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("ListApplications", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("ao", applications), &Self::onListApplications,
                                kAnyone),
        SD_BUS_METHOD_WITH_ARGS("LoadSessions", SD_BUS_ARGS("s", document, "a{sv}", options),
                                SD_BUS_RESULT("ao", sessions, "as", warnings),
                                &Self::onLoadSessions, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("ListTracepoints", SD_BUS_ARGS("s", domain),
                                SD_BUS_RESULT("a(ssa(ss))", tracepoints), &Self::onListTracepoints,
                                kAnyone),
        SD_BUS_METHOD_WITH_ARGS(
            "ListTracepointsWithOptions", SD_BUS_ARGS("s", domain, "a{sv}", options),
            SD_BUS_RESULT("a(ssa(ss))", tracepoints), &Self::onListTracepointsWithOptions, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("DefaultOutputPath", SD_BUS_ARGS("s", name),
                                SD_BUS_RESULT("s", path), &Self::onDefaultOutputPath, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("CreateIpAggregation", SD_BUS_ARGS("a{sv}", options),
                                SD_BUS_RESULT("t", handle), &Self::onCreateIpAggregation, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("ReadIpAggregation", SD_BUS_ARGS("t", handle),
                                SD_BUS_RESULT("a(ayt)", records, "t", dropped),
                                &Self::onReadIpAggregation, kAnyone),
        SD_BUS_METHOD_WITH_ARGS("CloseIpAggregation", SD_BUS_ARGS("t", handle), SD_BUS_NO_RESULT,
                                &Self::onCloseIpAggregation, kAnyone),
    };
    managerVtable_ = bus::buildVtable<ManagerObject>(members);
    // An aggregation lives as long as the connection that made it.
    services_.peers.onPeerGone(
        lifetime_.guard([this](const std::string& name) { ipAggregations_.ownerGone(name); }));
    sd_bus* bus = services_.bus;
    sd_bus_slot* slot = nullptr;
    bus::check(sd_bus_add_object_vtable(bus, &slot, kManagerPath, kManagerInterface,
                                        managerVtable_.data(), this),
               "register the Manager vtable");
    managerSlot_.reset(slot);
    bus::check(sd_bus_add_object_manager(bus, &slot, kManagerPath), "add the object manager");
    objectManagerSlot_.reset(slot);
}

SessionObject* ManagerObject::objectAt(const std::string& path) const {
    const std::string prefix = sessionPathPrefix() + "/";
    if (path.rfind(prefix, 0) != 0)
        return nullptr;
    const auto it = objects_.find(path.substr(prefix.size()));
    return it == objects_.end() ? nullptr : it->second.object.get();
}

int ManagerObject::onCreateSession(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(m, userdata, "CreateSession",
                                         [](ManagerObject& o, sd_bus_message* msg, auto reply) {
                                             const std::string name = bus::readStringArgument(msg);
                                             o.createSession(reply, name, bus::readOptions(msg));
                                         });
}

int ManagerObject::onGetSession(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(m, userdata, "GetSession",
                                         [](ManagerObject& o, sd_bus_message* msg, auto reply) {
                                             o.getSession(reply, bus::readStringArgument(msg));
                                         });
}

int ManagerObject::onListSessions(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "ListSessions", [](ManagerObject& o, sd_bus_message*, auto reply) {
            o.listVisible(reply, auth::Action::ManageAllSessions, [&o](uid_t uid, bool all) {
                std::vector<std::string> out;
                for (const Session* s : o.registry_.visibleTo(uid, all))
                    out.push_back(sessionObjectPath(s->id()));
                return out;
            });
        });
}

int ManagerObject::onListApplications(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "ListApplications", [](ManagerObject& o, sd_bus_message*, auto reply) {
            o.listVisible(reply, auth::Action::TraceAllUsers,
                          [&o](uid_t uid, bool all) { return o.apps_.visibleTo(uid, all); });
        });
}

int ManagerObject::onListTracepoints(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "ListTracepoints", [](ManagerObject& o, sd_bus_message* msg, auto reply) {
            o.listTracepoints(reply, bus::readStringArgument(msg),
                              reply->allowsInteractiveAuthorization());
        });
}

int ManagerObject::onListTracepointsWithOptions(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "ListTracepointsWithOptions",
        [](ManagerObject& o, sd_bus_message* msg, auto reply) {
            const std::string domain = bus::readStringArgument(msg);
            const bool interactive = auth::readInteractiveOnly(bus::readOptions(msg));
            o.listTracepoints(reply, domain,
                              interactive || reply->allowsInteractiveAuthorization());
        });
}

int ManagerObject::onDefaultOutputPath(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(
        m, userdata, "DefaultOutputPath", [](ManagerObject& o, sd_bus_message* msg, auto reply) {
            const std::string name = bus::readStringArgument(msg);
            const auth::Caller caller = o.services_.peers.callerOf(reply->call());
            reply->returnResults(o.registry_.defaultOutputPathOf(caller.uid, name));
        });
}

void ManagerObject::listTracepoints(const Pending& pending, const std::string& domain,
                                    bool interactive) {
    if (domain != "kernel")
        return pending->returnError(toBusError(
            Error(ErrorCode::InvalidArgument,
                  domain == "ust" ? std::string("UST tracepoints belong to each app: "
                                                "Application.ListTracepoints")
                                  : "domain " + quoteForMessage(domain) + " is not supported")));
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    services_.authority.check(
        caller, auth::Action::TraceKernel, interactive,
        lifetime_.guard([this, pending](std::optional<sdbus::Error> denied) {
            if (denied)
                return pending->returnError(*denied);
            KernelSupport* kernel = services_.kernel;
            if (kernel == nullptr)
                return pending->returnError(toBusError(
                    Error(ErrorCode::KernelUnavailable, "this daemon has no kernel domain")));
            kernel->listTracepoints([pending](std::optional<Error> e,
                                              std::vector<KernelTracepointInfo> list) {
                if (e)
                    return pending->returnError(toBusError(*e));
                pending->returnWith([&](sd_bus_message* m) {
                    bus::check(sd_bus_message_open_container(m, 'a', "(ssa(ss))"), "a(ssa(ss))");
                    for (const KernelTracepointInfo& t : list) {
                        bus::check(sd_bus_message_open_container(m, 'r', "ssa(ss)"), "(ssa(ss))");
                        bus::check(
                            sd_bus_message_append(m, "ss", t.system.c_str(), t.event.c_str()),
                            "ss");
                        bus::check(sd_bus_message_open_container(m, 'a', "(ss)"), "a(ss)");
                        for (const auto& [name, type] : t.fields)
                            bus::check(sd_bus_message_append(m, "(ss)", name.c_str(), type.c_str()),
                                       "(ss)");
                        bus::check(sd_bus_message_close_container(m), "a(ss)");
                        bus::check(sd_bus_message_close_container(m), "(ssa(ss))");
                    }
                    bus::check(sd_bus_message_close_container(m), "a(ssa(ss))");
                });
            });
        }));
}

void ManagerObject::sessionFailed(const std::string& idHex, const std::string& reason) {
    const auto it = objects_.find(idHex);
    if (it != objects_.end())
        it->second.object->session().fail(reason);
}

void ManagerObject::sessionBufferSize(const std::string& idHex, uint64_t bytes) {
    const auto it = objects_.find(idHex);
    if (it != objects_.end())
        it->second.object->session().setRingBufferSize(bytes);
}

void ManagerObject::sessionStatistics(const std::string& idHex, const std::string& domain,
                                      const DomainStatistics& statistics) {
    const auto it = objects_.find(idHex);
    if (it != objects_.end())
        it->second.object->session().setStatistics(domain, statistics);
}

void ManagerObject::retireAll() {
    if (!objects_.empty())
        log::notice("exiting with " + std::to_string(objects_.size()) + " sessions: their state " +
                    (store_ != nullptr && !store_->directory().empty()
                         ? "stays in " + store_->directory() + " for the next daemon"
                         : std::string("is not kept")) +
                    "; the consumers of sessions a restart keeps (systemd's fd store) go on "
                    "for it, the others write what they hold and stop (tracectld(8), "
                    "RESTARTS)");
    objects_.clear();
    retired_.clear();
}

ManagerObject::~ManagerObject() {
    objects_.clear();
    retired_.clear();
}

void ManagerObject::holds(const auth::Caller& caller, auth::Action action,
                          std::function<void(bool)> then) {
    // What the caller sees elsewhere (GetManagedObjects, signals) decides
    // here too: a grant, denial or challenge known for this connection.
    if (caller.uid != 0)
        if (const auto known = services_.authority.cachedForReading(caller.sender, action)) {
            then(*known);
            return;
        }
    services_.authority.check(
        caller, action, false,
        lifetime_.guard(
            [then = std::move(then)](std::optional<sdbus::Error> denied) { then(!denied); }));
}

void ManagerObject::createSession(const Pending& pending, const std::string& name,
                                  auth::CallOptions options) {
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    const bool interactive =
        auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
    SessionRequest request = readCreateSessionOptions(name, options);
    // Sites may restrict network outputs in a rules file (polkit/): the
    // relay's address goes to polkit as the detail "output-url".
    auth::PolkitAuthority::Details details;
    if (std::string url = requestedOutputUrl(request); !url.empty())
        details.emplace("output-url", std::move(url));
    services_.authority.check(
        caller, auth::Action::TraceOwn, interactive,
        lifetime_.guard([this, pending, caller,
                         request = std::move(request)](std::optional<sdbus::Error> denied) {
            if (denied) {
                log::warning("uid " + std::to_string(caller.uid) +
                             " denied CreateSession: " + denied->getMessage());
                pending->returnError(*denied);
                return;
            }
            create(pending, request, caller.uid);
        }),
        std::move(details));
}

void ManagerObject::create(const Pending& pending, const SessionRequest& request, uid_t owner) {
    SessionRegistry::Plan plan;
    try {
        plan = handleCall("CreateSession", [&] { return registry_.plan(request, owner); });
    } catch (const sdbus::Error& e) {
        return pending->returnError(e);
    }
    // A folder the caller could make and write itself, checked as the
    // caller in a child process (which a dead network mount may hold for
    // its whole bound): off the loop. Nothing is made before the first Start.
    // A relay that never answers holds a thread for its timeouts: relays
    // are probed apart, so local sessions never wait behind one.
    Executor& checks = plan.config.relay ? relayProbes_ : folderChecks_;
    // Back on the loop with the outcome: the session is made, or the call refused.
    auto checked = lifetime_.guard(
        [this, pending](SessionRegistry::Plan checkedPlan, const std::optional<Error>& problem) {
            try {
                if (problem)
                    throw toBusError(*problem);
                pending->returnObjectPath(
                    handleCall("CreateSession", [&] { return add(std::move(checkedPlan)); }));
            } catch (const sdbus::Error& e) {
                pending->returnError(e);
            }
        });
    checks.submit([this, checked, plan = std::move(plan)]() mutable {
        std::optional<Error> problem;
        try {
            // A network session: the relay must answer (lttng create
            // fails at once too when it cannot connect).
            if (plan.config.relay)
                probeRelay(*plan.config.relay);
            else
                checkOutputFolder(plan.config.outputPath, plan.config.owner,
                                  primaryGidOf(plan.config.owner));
        } catch (const Error& e) {
            problem = e;
        }
        loop_.post([checked, plan = std::move(plan), problem]() mutable {
            checked(std::move(plan), problem);
        });
    });
}

std::string ManagerObject::add(SessionRegistry::Plan plan) {
    Session& session = registry_.add(std::move(plan));
    const std::string path = publish(session);
    log::info(
        "session '" + session.config().name + "' created by uid " +
            std::to_string(session.config().owner) + ", output " +
            (session.config().relay ? session.config().relay->url() : session.config().outputPath),
        session.id().uuid());
    return path;
}

std::string ManagerObject::publish(Session& session) {
    const SessionId id = session.id();
    try {
        auto object = std::make_unique<SessionObject>(
            services_, session, [this](const SessionId& sid) { destroySession(sid); });
        object->onPersistentChange([this, id] { persist(id); });
        objects_.emplace(id.hex(), Entry{nullptr, std::move(object)});
    } catch (...) {
        registry_.remove(id);
        throw;
    }
    persist(id);
    return sessionObjectPath(id);
}

void ManagerObject::persist(const SessionId& id) {
    if (store_ == nullptr)
        return;
    if (const Session* s = registry_.findById(id))
        store_->save(recordOf(*s));
}

void ManagerObject::getSession(const Pending& pending, const std::string& name) {
    if (auto problem = sessionNameProblem(name))
        throw Error(ErrorCode::InvalidName,
                    "invalid session name " + quoteForMessage(name) + ": " + *problem);
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    if (const Session* own = registry_.findByName(caller.uid, name); own != nullptr) {
        pending->returnObjectPath(sessionObjectPath(own->id()));
        return;
    }
    std::optional<SessionId> others;
    for (const Session* s : registry_.visibleTo(caller.uid, true))
        if (s->config().name == name) {
            others = s->id();
            break;
        }
    if (!others)
        throw Error(ErrorCode::NoSuchSession, "no session named " + quoteForMessage(name));
    // Another user's session: only for holders of manage-all-sessions; the
    // others learn nothing, not even that it exists.
    holds(
        caller, auth::Action::ManageAllSessions, [this, pending, name, id = *others](bool seesAll) {
            if (seesAll && registry_.findById(id) != nullptr)
                pending->returnObjectPath(sessionObjectPath(id));
            else
                pending->returnError(toBusError(
                    Error(ErrorCode::NoSuchSession, "no session named " + quoteForMessage(name))));
        });
}

void ManagerObject::listVisible(const Pending& pending, auth::Action seesAll,
                                std::function<std::vector<std::string>(uid_t, bool)> list) {
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    holds(caller, seesAll, [pending, caller, list = std::move(list)](bool all) {
        pending->returnObjectPaths(list(caller.uid, all));
    });
}

void ManagerObject::destroySession(const SessionId& id) {
    const auto it = objects_.find(id.hex());
    if (it == objects_.end())
        return;
    Entry entry = std::move(it->second);
    objects_.erase(it);
    if (store_ != nullptr)
        store_->remove(id);
    entry.object->retire();
    entry.session = registry_.remove(id);
    retired_.push_back(std::move(entry));
    loop_.defer([this] { retired_.clear(); });
}

} // namespace tracectl
