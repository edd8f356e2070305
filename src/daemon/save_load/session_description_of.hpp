// A session as LTTng's session file describes it (`lttng save`): the
// inverse of load_plan.hpp. What tracectl has and LTTng's schema lacks is
// named in a warning.
#pragma once

#include "session/session.hpp"
#include "session_file/session_description.hpp"

#include <string>
#include <vector>

namespace tracectl {

/// `session` as lttng-tools 2.13's save.c would write it: UST and kernel
/// domains with their channels, rules and contexts, the vpid/vuid/vgid
/// trackers that are inclusion sets, the rotation schedule, the mode and the
/// output (tcp4://HOST:PORT/ relay URIs, as LTTng writes them), and
/// `started` for an active session. Appends to `warnings` one line per
/// thing LTTng cannot hold, each starting with "session 'NAME': ".
session_file::SessionDescription describeSession(const Session& session,
                                                 std::vector<std::string>& warnings);

} // namespace tracectl
