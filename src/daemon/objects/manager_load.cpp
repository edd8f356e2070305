// Manager.LoadSessions and the auto-load at start: LTTng session files made
// into sessions (save_load/load_plan.hpp), all of a document or none.
#include "bus/bus_call.hpp"
#include "bus/option_reader.hpp"
#include "common/join.hpp"
#include "common/log.hpp"
#include "kernel/kernel_support.hpp"
#include "objects/manager_object.hpp"
#include "recording/output_folder.hpp"
#include "relay/relay_session_opener.hpp"
#include "save_load/auto_load.hpp"
#include "session/session_name.hpp"
#include "session_file/session_xml.hpp"

#include <ctime>
#include <grp.h>
#include <pwd.h>
#include <set>
#include <sys/stat.h>

namespace tracectl {

namespace {

/// The uid of user `name` or gid of group `name` (NSS: blocks, so called
/// off the loop). Throws Error(InvalidArgument) for an unknown name.
uint32_t idOfName(ProcessAttribute attribute, const std::string& name,
                  const std::string& sessionName) {
    std::vector<char> buffer(16384);
    if (attribute == ProcessAttribute::Vuid) {
        passwd pw{};
        passwd* found = nullptr;
        if (getpwnam_r(name.c_str(), &pw, buffer.data(), buffer.size(), &found) == 0 && found)
            return found->pw_uid;
    } else {
        group gr{};
        group* found = nullptr;
        if (getgrnam_r(name.c_str(), &gr, buffer.data(), buffer.size(), &found) == 0 && found)
            return found->gr_gid;
    }
    (void)sessionName; // forSession() names it
    throw Error(ErrorCode::InvalidArgument,
                "the " + std::string(toString(attribute)) + " tracker names " +
                    (attribute == ProcessAttribute::Vuid ? "user " : "group ") +
                    quoteForMessage(name) + ", which does not exist here");
}

/// Whether `path` holds a trace (LTTng's top folders): looked at, as the
/// daemon, without following a last symbolic link.
bool holdsTrace(const std::string& path) {
    struct stat st {};
    for (const char* top : {"/ust", "/kernel", "/archives"})
        if (::lstat((path + top).c_str(), &st) == 0)
            return true;
    return false;
}

/// YYYYmmdd-HHMMSS of `t` in local time, as LTTng names default outputs.
std::string folderTimestamp(std::chrono::system_clock::time_point t) {
    const std::time_t secs = std::chrono::system_clock::to_time_t(t);
    std::tm local{};
    localtime_r(&secs, &local);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &local);
    return buf;
}

/// Runs `f`; a tracectl::Error it throws is prefixed with the session's name.
template <class F>
void forSession(const std::string& name, F f) {
    try {
        f();
    } catch (const Error& e) {
        throw Error(e.code(), "session " + quoteForMessage(name) + ": " + e.what());
    }
}

/// A Join step's error, prefixed with the session's name (as forSession()).
Join::MapError inSession(const std::string& name) {
    return [name](const Error& e) {
        return Error(e.code(), "session " + quoteForMessage(name) + ": " + e.what());
    };
}

} // namespace

struct ManagerObject::LoadRun {
    std::vector<LoadPlan> plans;
    std::vector<SessionRegistry::Plan> registryPlans;
    std::vector<SessionId> created;
    std::vector<std::string> paths;
    uid_t owner = 0;
    bool allUsers = false;
    LoadDone done;
};

ManagerObject::Loaded ManagerObject::readLoad(const std::string& document,
                                              const std::optional<std::string>& only,
                                              const LoadOverrides& overrides) {
    session_file::ParsedSessions parsed;
    try {
        parsed = session_file::readSessionFile(document);
    } catch (const session_file::SessionFileError& e) {
        throw Error(ErrorCode::InvalidArgument,
                    std::string("not an LTTng session file: ") + e.what());
    }
    Loaded out;
    out.warnings = std::move(parsed.warnings);
    std::set<std::string> names;
    for (const session_file::SessionDescription& s : parsed.sessions) {
        if (only && s.name != *only)
            continue;
        if (!names.insert(s.name).second)
            throw Error(ErrorCode::InvalidArgument,
                        "the document has two sessions named " + quoteForMessage(s.name));
        out.plans.push_back(planLoad(s, out.warnings));
        LoadPlan& p = out.plans.back();
        if (overrides.name)
            p.request.name = *overrides.name;
        if (overrides.url) {
            // As lttng load --override-url: the output the URL names, local
            // (file://) or a relay (net://), instead of the file's.
            p.request.url = *overrides.url;
            p.request.outputPath.reset();
            p.request.controlUrl.reset();
            p.request.dataUrl.reset();
        }
    }
    if (out.plans.empty())
        throw Error(ErrorCode::NoSuchSession,
                    only ? "the document has no session named " + quoteForMessage(*only)
                         : std::string("the document has no session"));
    return out;
}

int ManagerObject::onLoadSessions(sd_bus_message* m, void* userdata, sd_bus_error*) {
    return bus::runMethod<ManagerObject>(m, userdata, "LoadSessions",
                                         [](ManagerObject& o, sd_bus_message* msg, auto reply) {
                                             const std::string doc = bus::readStringArgument(msg);
                                             o.loadSessions(reply, doc, bus::readOptions(msg));
                                         });
}

void ManagerObject::loadSessions(const Pending& pending, const std::string& document,
                                 auth::CallOptions options) {
    const auth::Caller caller = services_.peers.callerOf(pending->call());
    const bool interactive =
        auth::takeInteractive(options) || pending->allowsInteractiveAuthorization();
    std::optional<std::string> only;
    LoadOverrides overrides;
    for (const auto& [key, value] : options) {
        std::optional<std::string>* into = key == "name"            ? &only
                                           : key == "override-name" ? &overrides.name
                                           : key == "override-url"  ? &overrides.url
                                                                    : nullptr;
        if (into == nullptr)
            throw Error(ErrorCode::InvalidArgument,
                        "unknown option " + quoteForMessage(key) +
                            " (known: name, override-name, override-url, interactive)");
        if (!value.containsValueOfType<std::string>())
            throw Error(ErrorCode::InvalidArgument,
                        "option " + quoteForMessage(key) + " must be a string (s)");
        *into = value.get<std::string>();
    }
    if (overrides.name && !only)
        throw Error(ErrorCode::InvalidArgument,
                    "override-name needs name: it renames one session (lttng load "
                    "SESSION --override-name)");
    auto loaded = std::make_shared<Loaded>(readLoad(document, only, overrides));
    bool usesKernel = false;
    for (const LoadPlan& p : loaded->plans)
        usesKernel = usesKernel || p.usesKernel;
    // trace-own, trace-kernel if a session has kernel channels, and
    // (without interaction, as EnableEvents) whether the owner may record
    // every user's apps.
    auto afterKernel = lifetime_.guard([this, pending, caller,
                                        loaded](std::optional<sdbus::Error> denied) {
        if (denied)
            return pending->returnError(*denied);
        auto run = lifetime_.guard([this, pending, caller, loaded](bool allUsers) {
            const std::vector<std::string> warnings = boundedWarnings(loaded->warnings);
            loadPlans(std::move(loaded->plans), caller.uid, allUsers,
                      [pending, warnings](std::optional<Error> e, std::vector<std::string> paths) {
                          if (e)
                              return pending->returnError(toBusError(*e));
                          pending->returnWith([&](sd_bus_message* m) {
                              bus::check(sd_bus_message_open_container(m, 'a', "o"), "ao");
                              for (const std::string& p : paths)
                                  bus::check(sd_bus_message_append(m, "o", p.c_str()), "o");
                              bus::check(sd_bus_message_close_container(m), "ao");
                              bus::check(sd_bus_message_open_container(m, 'a', "s"), "as");
                              for (const std::string& w : warnings)
                                  bus::check(sd_bus_message_append(m, "s", w.c_str()), "s");
                              bus::check(sd_bus_message_close_container(m), "as");
                          });
                      });
        });
        if (caller.uid == 0)
            return run(true);
        holds(caller, auth::Action::TraceAllUsers, run);
    });
    services_.authority.check(caller, auth::Action::TraceOwn, interactive,
                              lifetime_.guard([this, pending, caller, interactive, usesKernel,
                                               afterKernel](std::optional<sdbus::Error> denied) {
                                  if (denied) {
                                      log::warning("uid " + std::to_string(caller.uid) +
                                                   " denied LoadSessions: " + denied->getMessage());
                                      return pending->returnError(*denied);
                                  }
                                  if (!usesKernel)
                                      return afterKernel(std::nullopt);
                                  services_.authority.check(caller, auth::Action::TraceKernel,
                                                            interactive, afterKernel);
                              }));
}

void ManagerObject::autoLoad(const std::string& directory, uid_t owner) {
    std::vector<std::string> refusals;
    const std::vector<AutoLoadFile> files = readAutoLoadFiles(directory, owner, refusals);
    for (const std::string& r : refusals)
        log::warning("auto-load: refused " + r);
    for (const AutoLoadFile& f : files) {
        Loaded loaded;
        try {
            loaded = readLoad(f.text, std::nullopt);
        } catch (const Error& e) {
            log::warning("auto-load: " + f.path + " skipped: " + e.what());
            continue;
        }
        for (const std::string& w : boundedWarnings(loaded.warnings))
            log::warning("auto-load: " + f.path + ": " + w);
        // A session the daemon before this one had loaded is back from its
        // state already. One that was recording came back in error (its
        // consumer was not taken over): the file's is loaded again in its
        // place, so tracing set up at boot goes on after a restart. One that
        // came back as it was stays, and the file's is passed over.
        std::vector<LoadPlan> plans;
        std::vector<SessionId> replaced;
        for (LoadPlan& p : loaded.plans) {
            p.freshFolderIfTaken = true;
            const Session* existing = registry_.findByName(owner, p.request.name);
            if (existing == nullptr) {
                plans.push_back(std::move(p));
            } else if (leftInErrorByRestart(*existing)) {
                replaced.push_back(existing->id());
                plans.push_back(std::move(p));
            } else {
                log::notice("auto-load: " + f.path + ": session '" + p.request.name +
                            "' is there already (brought back from the state of the daemon "
                            "before), passed over");
            }
        }
        if (plans.empty())
            continue;
        auto load = [this, path = f.path, owner, plans = std::move(plans)]() mutable {
            loadPlans(
                std::move(plans), owner, owner == 0,
                [path](std::optional<Error> e, std::vector<std::string> paths) {
                    if (e)
                        return log::warning("auto-load: " + path + " not loaded: " + e->what());
                    log::notice("auto-load: " + path + " loaded (" + std::to_string(paths.size()) +
                                " session" + (paths.size() == 1 ? "" : "s") + ")");
                });
        };
        // Loaded once every session it replaces is destroyed.
        Join replacedAll(replaced.size(),
                         [load = std::move(load)](std::optional<Error>) mutable { load(); });
        for (const SessionId& id : replaced) {
            Session* s = registry_.findById(id);
            log::notice("auto-load: " + f.path + ": session '" + s->config().name +
                            "' left in error by the restart is replaced by the file's",
                        id.uuid());
            s->destroy(lifetime_.guard([this, id, step = replacedAll.add()](std::optional<Error>) {
                destroySession(id);
                step(std::nullopt);
            }));
        }
    }
}

void ManagerObject::loadPlans(std::vector<LoadPlan> plans, uid_t owner, bool allUsers,
                              LoadDone done) {
    auto run = std::make_shared<LoadRun>();
    run->plans = std::move(plans);
    run->owner = owner;
    run->allUsers = allUsers;
    run->done = std::move(done);
    try {
        // Checked up front: a document of more sessions than the owner may
        // hold fails at once, not after making hundreds of them.
        if (registry_.visibleTo(owner, false).size() + run->plans.size() > kMaxSessionsPerOwner)
            throw Error(ErrorCode::LimitExceeded, "loading " + std::to_string(run->plans.size()) +
                                                      " sessions would pass the " +
                                                      std::to_string(kMaxSessionsPerOwner) +
                                                      " sessions a user may hold");
        for (const LoadPlan& p : run->plans) {
            forSession(p.request.name, [&] {
                if (p.usesKernel) {
                    if (services_.kernel == nullptr)
                        throw Error(ErrorCode::KernelUnavailable,
                                    "this daemon has no kernel domain");
                    if (const auto why = services_.kernel->unavailableReason())
                        throw Error(ErrorCode::KernelUnavailable,
                                    "kernel tracing is not available: " + *why);
                }
                run->registryPlans.push_back(registry_.plan(p.request, owner));
            });
        }
    } catch (const Error& e) {
        return run->done(e, {});
    }
    // As CreateSession: folders checked as the owner in a child, relays
    // probed, and the trackers' user and group names looked up: off the loop.
    auto checked = lifetime_.guard([this, run](const std::optional<Error>& problem) {
        if (problem)
            return run->done(problem, {});
        createLoaded(run);
    });
    relayProbes_.submit([this, checked, run]() mutable {
        std::optional<Error> problem;
        try {
            for (std::size_t i = 0; i < run->plans.size(); ++i) {
                LoadPlan& p = run->plans[i];
                SessionConfig& config = run->registryPlans[i].config;
                forSession(p.request.name, [&] {
                    if (!config.relay && p.freshFolderIfTaken && holdsTrace(config.outputPath)) {
                        const std::string taken = config.outputPath;
                        config.outputPath += "-" + folderTimestamp(run->registryPlans[i].created);
                        log::notice("session '" + p.request.name + "': " + taken +
                                    " holds a trace already; this one goes to " +
                                    config.outputPath);
                    }
                    if (config.relay)
                        probeRelay(*config.relay);
                    else
                        checkOutputFolder(config.outputPath, config.owner,
                                          primaryGidOf(config.owner));
                    for (PlannedTracker& t : p.trackers) {
                        for (const std::string& name : t.names)
                            t.ids.push_back(idOfName(t.attribute, name, p.request.name));
                        t.names.clear();
                    }
                });
            }
        } catch (const Error& e) {
            problem = e;
        }
        loop_.post([checked, problem] { checked(problem); });
    });
}

void ManagerObject::createLoaded(const std::shared_ptr<LoadRun>& run) {
    Join configured(lifetime_.guard([this, run](std::optional<Error> e) {
        if (e) {
            rollBack(*run);
            return run->done(e, {});
        }
        startLoaded(run);
    }));
    try {
        for (std::size_t i = 0; i < run->plans.size(); ++i) {
            const LoadPlan& p = run->plans[i];
            forSession(p.request.name, [&] {
                const std::string path = add(std::move(run->registryPlans[i]));
                run->paths.push_back(path);
                Session& s = objectAt(path)->session();
                run->created.push_back(s.id());
                configureLoaded(s, p, run->allUsers, configured);
            });
        }
    } catch (const Error& e) {
        rollBack(*run);
        return run->done(e, {});
    }
    configured.seal();
}

void ManagerObject::configureLoaded(Session& s, const LoadPlan& p, bool allUsers,
                                    const Join& gather) {
    const std::string& name = p.request.name;
    if (allUsers)
        s.traceAllUsers();
    for (const auto& [domain, channel] : p.channels) {
        ChannelConfig c = channel;
        c.enabled = true;
        s.addChannel(c, domain);
    }
    for (const PlannedContext& c : p.contexts)
        s.addContext(c.domain, c.channel, c.type);
    for (const EventRule& r : p.rules) {
        EventRule rule = r;
        rule.enabled = true;
        s.enableEvents(rule, gather.add(inSession(name)));
    }
    for (const EventRule& r : p.rules)
        if (!r.enabled)
            s.disableEvents(r.domain, r.channel, r.pattern, gather.add(inSession(name)));
    for (const auto& [domain, channel] : p.channels)
        if (!channel.enabled)
            s.disableChannel(domain, channel.name, gather.add(inSession(name)));
    for (const PlannedTracker& t : p.trackers) {
        const std::set<uint32_t> unique(t.ids.begin(), t.ids.end());
        if (unique.empty())
            s.untrackProcessAttribute(TracingDomain::Ust, t.attribute, {}, true,
                                      gather.add(inSession(name)));
        else
            s.trackProcessAttribute(TracingDomain::Ust, t.attribute,
                                    std::vector<uint32_t>(unique.begin(), unique.end()), false,
                                    gather.add(inSession(name)));
    }
    if (p.schedule.any())
        s.setRotationSchedule(p.schedule, gather.add(inSession(name)));
}

void ManagerObject::startLoaded(const std::shared_ptr<LoadRun>& run) {
    Join started([run](std::optional<Error> e) {
        // Loaded all the same: a session that did not start stays, as
        // with lttng load; the error says which.
        if (e)
            return run->done(Error(e->code(), std::string(e->what()) +
                                                  " (the sessions were loaded, but this one did "
                                                  "not start)"),
                             {});
        run->done(std::nullopt, run->paths);
    });
    for (std::size_t i = 0; i < run->plans.size(); ++i) {
        if (!run->plans[i].start)
            continue;
        Session* s = registry_.findById(run->created[i]);
        if (s == nullptr)
            continue;
        s->start(started.add(inSession(run->plans[i].request.name)));
    }
    for (std::size_t i = 0; i < run->plans.size(); ++i)
        log::info("session '" + run->plans[i].request.name + "' loaded from a session file",
                  run->created[i].uuid());
    started.seal();
}

void ManagerObject::rollBack(const LoadRun& run) {
    for (const SessionId& id : run.created) {
        Session* s = registry_.findById(id);
        if (s == nullptr)
            continue;
        s->destroy(lifetime_.guard([this, id](std::optional<Error>) { destroySession(id); }));
    }
}

} // namespace tracectl
