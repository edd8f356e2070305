// UstTracer::clear: Session.Clear on the main loop (ust_tracer.hpp). A
// normal session's clear is a rotation whose closed chunk the consumer
// deletes (ust_rotation.cpp, consumer_protocol::Rotate::discard); a
// snapshot session's consumer empties its buffers (ClearBuffers). The
// deletion happens in the consumer, as the session's owner, in its unit.
#include "common/error.hpp"
#include "common/log.hpp"
#include "ust_tracer.hpp"

#include <memory>

namespace tracectl {

void UstTracer::clear(const std::string& idHex, Done done) {
    const auto it = sessions_.find(idHex);
    if (it == sessions_.end())
        return done(std::nullopt); // never started: nothing was recorded (as LTTng)
    Traced& t = *it->second;
    if (t.failed)
        return done(
            Error(ErrorCode::WrongState, "the session's consumer is gone; destroy the session"));
    if (!t.consumer)
        return done(Error(ErrorCode::WrongState, "the session is still starting"));
    if (t.snapshot.snapshotMode) {
        t.consumer->clearBuffers(
            [name = t.snapshot.name, done = std::move(done)](std::optional<Error> e) {
                if (e)
                    return done(Error(ErrorCode::Failed,
                                      std::string("clearing the buffers: ") + e->what()));
                log::info("session '" + name + "': buffers cleared");
                done(std::nullopt);
            });
        return;
    }
    if (t.rotating || t.rotationAfterCreation.has_value())
        return done(Error(ErrorCode::WrongState,
                          "a rotation is under way" +
                              (t.rotating ? " (to " + t.rotating->path + ")" : std::string()) +
                              "; clear once it is over"));
    // Exactly one answer: a rotation that did not begin is never completed,
    // one that began is completed once.
    auto once = std::make_shared<Done>(std::move(done));
    const auto answer = [once](std::optional<Error> e) {
        if (auto d = std::exchange(*once, nullptr))
            d(std::move(e));
    };
    beginRotation(
        t,
        [answer](std::optional<Error> e, const std::string&) {
            if (e)
                answer(Error(e->code(), std::string("clearing: ") + e->what()));
        },
        [answer](std::optional<Error> e, const std::string&) { answer(std::move(e)); }, true);
}

} // namespace tracectl
