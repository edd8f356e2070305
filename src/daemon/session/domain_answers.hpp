// What a session's operation answers once the session was freed while its
// domain backends (domain_backend.hpp) worked: the session's files
// (session.cpp, session_restore.cpp) use it, nothing else does. Their
// answers are gathered with common/join.hpp.
#pragma once

#include "common/error.hpp"

namespace tracectl::session_detail {

/// What an operation answers once its session was freed meanwhile.
inline Error destroyedError() {
    return Error(ErrorCode::NoSuchSession, "the session was destroyed");
}

} // namespace tracectl::session_detail
