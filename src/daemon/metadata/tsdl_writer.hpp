// Fields (field_model.hpp) as TSDL declarations, in the layout lttng-sessiond
// 2.13 writes (ust-metadata.c _lttng_field_statedump), so that the text reads
// like LTTng's: one declaration per line, tab-indented, every attribute of an
// integer spelled out, byte_order only where a field differs from the trace.
#pragma once

#include "field_model.hpp"
#include "trace_info.hpp"

#include <string>
#include <vector>

namespace tracectl::metadata {

/// Appends each field as a struct member declaration ("<type> <id>;\n"),
/// indented by `indent` tabs. `traceByteOrder` is what reverseByteOrder is
/// relative to.
void appendFields(std::string& out, const std::vector<Field>& fields, unsigned indent,
                  ByteOrder traceByteOrder);

/// "integer { size = 32; align = 32; signed = 1; encoding = none; base = 10; }"
void appendIntegerType(std::string& out, const IntegerType& type, ByteOrder traceByteOrder);

} // namespace tracectl::metadata
