// Reading and writing LTTng's session XML (lttng-tools 2.13
// src/common/config/session.xsd; src/bin/lttng-sessiond/save.c writes it,
// src/common/config/session-config.c reads it), with libxml2.
#pragma once

#include "session_file/session_description.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::session_file {

/// A document that is not a session file: malformed XML (libxml2's message),
/// a DTD, a text that is not UTF-8 or is over kMaxSessionFileBytes, another
/// root element, a missing, repeated or ill-typed element. The message names
/// the line and the element ("line 12: <subbuffer_count>: 'x' is not an
/// unsigned integer"; "line 3: Opening and ending tag mismatch: ...").
class SessionFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What readSessionFile() found.
struct ParsedSessions {
    std::vector<SessionDescription> sessions; ///< in document order
    /// Elements the reader does not know, skipped, each named with its line:
    /// "line 7: unknown element <foo> in <channel> ignored" (text where only
    /// elements belong: "line 7: text in <channel> ignored"); at most
    /// kMaxReaderWarnings such lines, then one that counts the others.
    std::vector<std::string> warnings;
};

/// Most warning lines readSessionFile() gives one by one.
inline constexpr std::size_t kMaxReaderWarnings = 32;

/// Most bytes a session file may have (bounds what a client makes the
/// daemon parse; LTTng's own files are a few kB per session).
inline constexpr std::size_t kMaxSessionFileBytes = 4 * 1024 * 1024;

/// Parses `text`, at most kMaxSessionFileBytes of UTF-8 (the XML
/// declaration may name no other encoding), as a <sessions> document of one
/// <session> or more. Never fetches anything (no network, no external
/// entities, no DTD loading): a document with a <!DOCTYPE> is refused
/// outright ("DTDs are not accepted"), so no entity is ever declared.
/// libxml2 prints nothing: its errors become the SessionFileError.
///
/// Each value is checked against session.xsd's type (decimal integers in
/// the type's range; xs:boolean true, false, 1 or 0; the enumerations as
/// spelled there; names of 255 bytes at most), with the whitespace around
/// it trimmed. Required: a session's <name> (not empty), a domain's <type>
/// and <buffer_type>, a channel's <name>, a consumer output's
/// <destination>, a snapshot output's <name>, <max_size> and
/// <consumer_output>, the members of <perf>, <app> and <net_output>, a
/// tracker value's <id> (or <name>). Elements of an xs:all may appear once.
/// Absent optional elements take the schema's defaults (a channel's
/// <read_timer_interval> and <output_type>, which the schema requires, too:
/// 0 and MMAP). Throws SessionFileError.
ParsedSessions readSessionFile(std::string_view text);

/// The document for `sessions`, as `lttng save` lays it out (tab
/// indentation, the element order of save.c), UTF-8, starting with
/// `<?xml version="1.0" encoding="UTF-8"?>` and ending in a newline; text
/// escaped by libxml2. Reading lttng save's own files and writing them back
/// gives the same bytes. What does not survive a write and a read:
/// Event::hasProbeAttributes (not written), an event's loglevel when its
/// loglevelType is All, the `output` of a snapshot session (snapshotMode or
/// snapshotOutputs), an unset path or URI of a ConsumerOutput (written
/// empty), the order between periodic and size rotation schedules, the
/// whitespace around values.
///
/// Throws std::invalid_argument (naming the session, domain, channel...)
/// for what the schema cannot hold or readSessionFile() would refuse: no
/// session, an empty session name, a name over 255 bytes, a string that is
/// not UTF-8 XML text (control characters, NUL), an output, event or
/// context type outside its enumeration, a blocking timeout outside -1 to
/// 2147483648000, a Context that is not exactly one of its three kinds, a
/// tracker attribute other than pid/vpid/uid/vuid/gid/vgid or twice in one
/// domain, a tracker value that is not exactly one of id and name, a name
/// in a pid or vpid tracker. std::runtime_error if libxml2 fails
/// (std::bad_alloc when it cannot allocate).
std::string writeSessionFile(const std::vector<SessionDescription>& sessions);

} // namespace tracectl::session_file
