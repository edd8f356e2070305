// Waiting for several asynchronous steps, then answering once: each step
// gets a callback from add() (or addWithPath()); once every one of them has
// been called and the join is sealed, `done` is called, exactly once, with
// the first error a step reported (or nullopt) and, for a join whose `done`
// takes a path, the first non-empty path a step gave ("" if none).
//
// Sealing says that no step comes any more: seal() after the last add(),
// or, when the count is known up front, Join(count, done), sealed at its
// count-th add(). Until it is sealed, steps that answered (even inside the
// call that was given them) never make `done` come early.
//
// Single-threaded: every step is called on the owner's thread (the main
// loop); a step may be handed through another thread (a job that posts it
// back), since it holds only a std::shared_ptr. Copies of a Join share
// one join.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace tracectl {

class Join {
public:
    /// A step's callback, and `done` of a join without paths.
    using Done = std::function<void(std::optional<Error>)>;
    /// A step's callback with a path (an archive, a snapshot's folder), and
    /// `done` of a join that keeps the first non-empty one.
    using PathDone = std::function<void(std::optional<Error>, std::string path)>;
    /// What a step's error becomes before it counts (say, prefixed with the
    /// name of what the step was for).
    using MapError = std::function<Error(const Error&)>;

    /// A join sealed by seal(); `done` (may be empty: nobody is told) gets
    /// the first error.
    explicit Join(Done done) : state_(std::make_shared<State>(pathless(std::move(done)))) {}
    /// Likewise; `done` also gets the first non-empty path.
    explicit Join(PathDone done) : state_(std::make_shared<State>(std::move(done))) {}
    /// The fixed-count case: sealed at its `steps`-th add(); with 0 steps,
    /// `done` is called here, at once.
    Join(std::size_t steps, Done done) : Join(std::move(done)) { expect(steps); }
    Join(std::size_t steps, PathDone done) : Join(std::move(done)) { expect(steps); }

    /// The callback of one more step: call it (or one copy of it) once; a
    /// second call counts for nothing. `map`, if given, turns the step's
    /// error before it counts. Throws std::logic_error once sealed.
    Done add(MapError map = nullptr) const {
        return [step = newStep(std::move(map))](std::optional<Error> e) {
            step->answer(std::move(e), {});
        };
    }
    /// The same, for a step that answers with a path.
    PathDone addWithPath(MapError map = nullptr) const {
        return [step = newStep(std::move(map))](std::optional<Error> e, std::string path) {
            step->answer(std::move(e), std::move(path));
        };
    }
    /// No step is added after this: `done` comes now (inside this call) if
    /// every step answered already, else with the last answer. Idempotent.
    void seal() const {
        state_->sealed = true;
        state_->finishIfDone();
    }

private:
    struct State {
        explicit State(PathDone d) : done(std::move(d)) {}
        void finishIfDone() {
            if (!sealed || left != 0 || !done)
                return;
            PathDone d = std::exchange(done, nullptr);
            d(std::move(error), std::move(path));
        }
        PathDone done;
        std::optional<Error> error;
        std::string path;
        std::size_t left = 0;
        std::size_t sealAt = 0; ///< seal at this many add()s (0: by seal() only)
        std::size_t added = 0;
        bool sealed = false;
    };
    struct Step {
        void answer(std::optional<Error> e, std::string p) {
            if (std::exchange(answered, true))
                return;
            // Held here: `done` may free the last copy of this step.
            const std::shared_ptr<State> state = join;
            if (e && !state->error)
                state->error = map ? map(*e) : std::move(*e);
            if (state->path.empty())
                state->path = std::move(p);
            --state->left;
            state->finishIfDone();
        }
        std::shared_ptr<State> join;
        MapError map;
        bool answered = false;
    };

    static PathDone pathless(Done done) {
        if (!done)
            return nullptr;
        return
            [done = std::move(done)](std::optional<Error> e, std::string) { done(std::move(e)); };
    }
    void expect(std::size_t steps) const {
        state_->sealAt = steps;
        if (steps == 0)
            seal();
    }
    std::shared_ptr<Step> newStep(MapError map) const {
        if (state_->sealed)
            throw std::logic_error("Join: a step added after the join was sealed");
        ++state_->left;
        ++state_->added;
        if (state_->added == state_->sealAt)
            state_->sealed = true; // its answer (not this call) may finish the join
        return std::make_shared<Step>(Step{state_, std::move(map)});
    }

    std::shared_ptr<State> state_;
};

} // namespace tracectl
