// Waits for several asynchronous steps, then reports once: each step gets a
// callback from add(); once every one of them has been called and seal()
// has been, `done` is called with the first error any step reported (or
// nullopt). Single-threaded: every callback on the owner's thread.
#pragma once

#include "common/error.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace tracectl {

class Join : public std::enable_shared_from_this<Join> {
public:
    using Done = std::function<void(std::optional<Error>)>;

    /// A join that calls `done` once (see above).
    static std::shared_ptr<Join> make(Done done) { return std::make_shared<Join>(std::move(done)); }
    /// Use make(): the callbacks hold the join through shared_from_this().
    explicit Join(Done done) : done_(std::move(done)) {}

    /// A callback for one more step; call it exactly once.
    Done add() {
        ++left_;
        return [self = shared_from_this()](std::optional<Error> e) {
            if (e && !self->first_)
                self->first_ = std::move(e);
            --self->left_;
            self->finishIfDone();
        };
    }
    /// No step is added after this; `done` may come now.
    void seal() {
        sealed_ = true;
        finishIfDone();
    }

private:
    void finishIfDone() {
        if (!sealed_ || left_ != 0 || !done_)
            return;
        Done done = std::exchange(done_, nullptr);
        done(std::move(first_));
    }

    Done done_;
    std::optional<Error> first_;
    std::size_t left_ = 0;
    bool sealed_ = false;
};

} // namespace tracectl
