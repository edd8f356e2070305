// Gathering the answers of a session's domain backends
// (domain_backend.hpp) to one operation: the session's files
// (session.cpp, session_disable.cpp, ...) use it, nothing else does.
#pragma once

#include "common/error.hpp"
#include "session/domain_backend.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace tracectl::session_detail {

/// Calls `done` once `count` answers came (at once for 0), with the first
/// error and the first non-empty path among them.
class Gather {
public:
    Gather(std::size_t count, DomainBackend::PathDone done) : left_(count), done_(std::move(done)) {
        if (left_ == 0)
            finish();
    }
    void add(std::optional<Error> error, const std::string& path) {
        if (error && !error_)
            error_ = std::move(error);
        if (path_.empty())
            path_ = path;
        if (--left_ == 0)
            finish();
    }

private:
    void finish() {
        if (auto d = std::exchange(done_, nullptr))
            d(std::move(error_), std::move(path_));
    }
    std::size_t left_;
    DomainBackend::PathDone done_;
    std::optional<Error> error_;
    std::string path_;
};

/// What an operation answers once its session was freed meanwhile.
inline Error destroyedError() {
    return Error(ErrorCode::NoSuchSession, "the session was destroyed");
}

inline DomainBackend::Done withoutPath(const std::shared_ptr<Gather>& g) {
    return [g](std::optional<Error> e) { g->add(std::move(e), {}); };
}

inline DomainBackend::PathDone withPath(const std::shared_ptr<Gather>& g) {
    return [g](std::optional<Error> e, std::string path) { g->add(std::move(e), path); };
}

inline std::shared_ptr<Gather> gatherDone(std::size_t count, DomainBackend::Done done) {
    return std::make_shared<Gather>(
        count, [done = std::move(done)](std::optional<Error> e, std::string) { done(e); });
}

} // namespace tracectl::session_detail
