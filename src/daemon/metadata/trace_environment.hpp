// The fixed beginning of a trace's metadata: the "/* CTF 1.8 */" line, type
// aliases, the trace block with the packet header lttng-ust writes, the env
// block, the clock, the packet context the ring buffer writes and both event
// headers. Same content and order as lttng-sessiond 2.13
// (ust-metadata.c ust_metadata_session_statedump), strings escaped.
#pragma once

#include "trace_info.hpp"

#include <string>

namespace tracectl::metadata {

/// Throws MetadataError(EINVAL) if `info` cannot describe a trace:
/// bitsPerLong not 32 or 64; an alignment that is not a power of two in
/// 1..64; a clock name that is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*,
/// no keyword); a zero clock frequency; per-PID without `app`.
void validateTraceInfo(const TraceInfo& info);

/// The preamble for `info` (assumed valid).
std::string tracePreamble(const TraceInfo& info);

/// The CTF 1.8 trace block: version 1.8, `uuid`, `byteOrder`, and the
/// packet header both LTTng tracers write (magic, uuid, stream_id,
/// stream_instance_id; lttng-ust's ringbuffer-clients/template.h, and
/// common/kernel_records.hpp for the kernel domain), with the uint*_t
/// aliases declared before it.
void appendTraceBlock(std::string& out, const Uuid& uuid, ByteOrder byteOrder);

} // namespace tracectl::metadata
