// Rendering sessions for people (tables, key: value lines, one-line messages) and for
// programs (JSON). Pure functions: no bus, no I/O; user names come through a lookup function.
#pragma once

#include "session_view.hpp"

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::cli {

/// Maps a uid to a login name, or nullopt when the uid has none.
using UserNameLookup = std::function<std::optional<std::string>(std::uint32_t uid)>;

/// A property value for people: strings as they are, numbers and booleans as JSON text,
/// null as "", arrays and objects as compact JSON. Accepts any value.
std::string formatPropertyValue(const nlohmann::json& value);

/// `usec` microseconds since the Unix epoch as local time, "YYYY-MM-DD HH:MM:SS ZONE".
std::string formatTimestamp(std::uint64_t usec);

/// The user name of `uid` if `user_name` knows it, else the uid as a decimal number.
std::string formatOwner(std::uint32_t uid, const UserNameLookup& userName);

/// The `list` table: a header NAME STATE MODE OWNER DISCARDED LOST OUTPUT and one row per
/// session, in the given order, columns separated by two spaces and aligned (widths in UTF-8
/// code points). DISCARDED and LOST are the session's totals (Statistics), "-" when the
/// session has no Statistics property; OUTPUT is output_location(): the relay's URL for a
/// network session, else the folder.
/// "No sessions.\n" when `sessions` is empty. Ends with a newline.
std::string formatSessionTable(const std::vector<SessionView>& sessions,
                               const UserNameLookup& userName);

/// The `show` output: one "Key: value" line per property, values aligned; the well-known
/// properties first (Name, Id, State, Mode, Owner, OutputPath, OutputUrl, LiveTimer,
/// BufferOwnership, CreationTime), then the others by name, leaving out those that do not
/// apply: OutputUrl "" (a local session), LiveTimer 0 (not live), OutputPath "" beside an
/// OutputUrl (a network session). Owner gets its user name ("1000 (alice)"), LiveTimer its
/// unit ("250000 us") and CreationTime is shown as local time; Channels and Events are followed by
/// "  [disabled: NAME, CHANNEL/PATTERN...]" when some are disabled (as
/// lttng-list(1) marks them); other values use format_property_value().
/// KernelChannels, KernelEvents and KernelContexts are not listed as lines but, when the
/// session has any, as the "Kernel domain" section after a blank line
/// (format_kernel_section()). Statistics and ChannelStatistics are not listed as lines but
/// as a section after a blank line (format_statistics_section()).
std::string formatSessionDetails(const SessionView& session, const UserNameLookup& userName);

/// One session as a JSON object: every property under its D-Bus name, with its D-Bus type
/// (Owner and CreationTime are numbers). ChannelStatistics is an array of objects
/// {"domain", "channel", "events-recorded", ...} (channel_statistics_readable()).
/// Pretty-printed, ends with a newline.
std::string formatSessionJson(const SessionView& session);

/// The sessions as a JSON array of objects as in format_session_json(), in the given order.
std::string formatSessionsJson(const std::vector<SessionView>& sessions);

/// A local session (no OutputUrl): "Session NAME created (id ID, output DIR)\n". A network
/// session, as lttng create: "Session NAME created.\nTraces will be output to URL\n", then
/// "Live timer interval set to US us\n" when LiveTimer is not 0.
std::string formatCreated(const SessionView& session);

/// "Tracing started for session NAME.\n".
std::string formatStarted(std::string_view name);

/// "Tracing stopped for session NAME.\n".
std::string formatStopped(std::string_view name);

/// "Session NAME destroyed.\n".
std::string formatDestroyed(std::string_view name);

/// "No sessions to destroy.\n" (for `destroy --all` when there is none).
std::string formatNothingDestroyed();

} // namespace tracectl::cli
