#include "trace_environment.hpp"

#include "metadata_error.hpp"
#include "tsdl_text.hpp"

#include <cerrno>

namespace tracectl::metadata {

namespace {

std::string u(std::uint64_t v) {
    return std::to_string(v);
}

bool isIdentifier(const std::string& s) {
    if (s.empty() || isTsdlKeyword(s))
        return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        const bool digit = c >= '0' && c <= '9';
        if (!alpha && !(digit && i > 0))
            return false;
    }
    return true;
}

void checkAlignment(std::uint32_t a, const char* what) {
    if (a == 0 || a > 64 || (a & (a - 1)) != 0)
        throw MetadataError(EINVAL, std::string(what) + " alignment " + u(a) + " invalid");
}

void appendEnvString(std::string& out, std::string_view key, std::string_view value) {
    out += substitute("\t{} = ", {key});
    appendStringLiteral(out, value);
    out += ";\n";
}

void appendEnvNumber(std::string& out, std::string_view key, const std::string& value) {
    out += substitute("\t{} = {};\n", {key, value});
}

void appendTypeAliases(std::string& out, const Abi& abi) {
    out += substitute(
        "typealias integer { size = 8; align = {}; signed = false; } := uint8_t;\n"
        "typealias integer { size = 16; align = {}; signed = false; } := uint16_t;\n"
        "typealias integer { size = 32; align = {}; signed = false; } := uint32_t;\n"
        "typealias integer { size = 64; align = {}; signed = false; } := uint64_t;\n"
        "typealias integer { size = {}; align = {}; signed = false; } := unsigned long;\n"
        "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
        "typealias integer { size = 27; align = 1; signed = false; } := uint27_t;\n"
        "\n",
        {u(abi.uint8Alignment), u(abi.uint16Alignment), u(abi.uint32Alignment),
         u(abi.uint64Alignment), u(abi.bitsPerLong), u(abi.longAlignment)});
}

void appendTraceBlock(std::string& out, const TraceInfo& info) {
    appendTraceBlock(out, info.uuid, info.abi.byteOrder);
}

void appendEnv(std::string& out, const TraceInfo& info) {
    const bool perPid = info.buffering == BufferingScheme::PerPid;
    out += "env {\n";
    appendEnvString(out, "domain", "ust");
    appendEnvString(out, "tracer_name", "lttng-ust");
    appendEnvNumber(out, "tracer_major", u(info.tracer.major));
    appendEnvNumber(out, "tracer_minor", u(info.tracer.minor));
    appendEnvString(out, "tracer_buffering_scheme", perPid ? "pid" : "uid");
    appendEnvNumber(out, "tracer_buffering_id", u(info.bufferingId));
    appendEnvNumber(out, "architecture_bit_width", u(info.abi.bitsPerLong));
    appendEnvString(out, "trace_name", info.traceName);
    appendEnvString(out, "trace_creation_datetime", iso8601LocalTime(info.creationTime));
    appendEnvString(out, "hostname", info.hostname);
    if (perPid && info.app) {
        appendEnvNumber(out, "tracer_patchlevel", u(info.tracer.patchlevel));
        appendEnvNumber(out, "vpid", std::to_string(info.app->vpid));
        appendEnvString(out, "procname", info.app->procname);
        appendEnvString(out, "vpid_datetime", iso8601LocalTime(info.app->registrationTime));
    }
    out += "};\n\n";
}

// The clock, and the timestamp types mapped to it.
void appendClock(std::string& out, const TraceInfo& info) {
    const ClockInfo& c = info.clock;
    out += substitute("clock {\n\tname = \"{}\";\n", {c.name});
    if (c.uuid)
        out += substitute("\tuuid = \"{}\";\n", {uuidToString(*c.uuid)});
    out += "\tdescription = ";
    appendStringLiteral(out, c.description);
    out += substitute(";\n"
                      "\tfreq = {}; /* Frequency, in Hz */\n"
                      "\t/* clock value offset from Epoch is: offset * (1/freq) */\n"
                      "\toffset = {};\n"
                      "};\n\n",
                      {u(c.frequency), std::to_string(c.offset)});

    out += substitute(
        "typealias integer {\n"
        "\tsize = 27; align = 1; signed = false;\n"
        "\tmap = clock.{}.value;\n"
        "} := uint27_clock_monotonic_t;\n\n"
        "typealias integer {\n"
        "\tsize = 32; align = {}; signed = false;\n"
        "\tmap = clock.{}.value;\n"
        "} := uint32_clock_monotonic_t;\n\n"
        "typealias integer {\n"
        "\tsize = 64; align = {}; signed = false;\n"
        "\tmap = clock.{}.value;\n"
        "} := uint64_clock_monotonic_t;\n\n",
        {c.name, u(info.abi.uint32Alignment), c.name, u(info.abi.uint64Alignment), c.name});
}

// What lttng-ust's ring buffer writes after the packet header (the `ctx`
// member of the same struct packet_header).
void appendPacketContext(std::string& out) {
    out += "struct packet_context {\n"
           "\tuint64_clock_monotonic_t timestamp_begin;\n"
           "\tuint64_clock_monotonic_t timestamp_end;\n"
           "\tuint64_t content_size;\n"
           "\tuint64_t packet_size;\n"
           "\tuint64_t packet_seq_num;\n"
           "\tunsigned long events_discarded;\n"
           "\tuint32_t cpu_id;\n"
           "};\n\n";
}

// Compact: id 0..30 inline, 31 = extended. Large: id 0..65534, 65535 =
// extended (32-bit id and 64-bit timestamp follow).
void appendEventHeaders(std::string& out, const Abi& abi) {
    out += substitute("struct event_header_compact {\n"
                      "\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
                      "\tvariant <id> {\n"
                      "\t\tstruct {\n"
                      "\t\t\tuint27_clock_monotonic_t timestamp;\n"
                      "\t\t} compact;\n"
                      "\t\tstruct {\n"
                      "\t\t\tuint32_t id;\n"
                      "\t\t\tuint64_clock_monotonic_t timestamp;\n"
                      "\t\t} extended;\n"
                      "\t} v;\n"
                      "} align({});\n\n"
                      "struct event_header_large {\n"
                      "\tenum : uint16_t { compact = 0 ... 65534, extended = 65535 } id;\n"
                      "\tvariant <id> {\n"
                      "\t\tstruct {\n"
                      "\t\t\tuint32_clock_monotonic_t timestamp;\n"
                      "\t\t} compact;\n"
                      "\t\tstruct {\n"
                      "\t\t\tuint32_t id;\n"
                      "\t\t\tuint64_clock_monotonic_t timestamp;\n"
                      "\t\t} extended;\n"
                      "\t} v;\n"
                      "} align({});\n\n",
                      {u(abi.uint32Alignment), u(abi.uint16Alignment)});
}

} // namespace

std::optional<ByteOrder> byteOrderFromRegistration(int byteOrder) noexcept {
    switch (byteOrder) {
    case 1234:
        return ByteOrder::Little;
    case 4321:
        return ByteOrder::Big;
    default:
        return std::nullopt;
    }
}

void validateTraceInfo(const TraceInfo& info) {
    const Abi& abi = info.abi;
    if (abi.bitsPerLong != 32 && abi.bitsPerLong != 64)
        throw MetadataError(EINVAL, "bits per long " + u(abi.bitsPerLong) + " invalid");
    checkAlignment(abi.uint8Alignment, "uint8_t");
    checkAlignment(abi.uint16Alignment, "uint16_t");
    checkAlignment(abi.uint32Alignment, "uint32_t");
    checkAlignment(abi.uint64Alignment, "uint64_t");
    checkAlignment(abi.longAlignment, "long");
    if (!isIdentifier(info.clock.name))
        throw MetadataError(EINVAL, "clock name is not an identifier");
    if (info.clock.frequency == 0)
        throw MetadataError(EINVAL, "clock frequency is zero");
    if (info.buffering == BufferingScheme::PerPid && !info.app)
        throw MetadataError(EINVAL, "per-PID trace without its app");
}

std::string tracePreamble(const TraceInfo& info) {
    std::string out = "/* CTF 1.8 */\n\n";
    appendTypeAliases(out, info.abi);
    appendTraceBlock(out, info);
    appendEnv(out, info);
    appendClock(out, info);
    appendPacketContext(out);
    appendEventHeaders(out, info.abi);
    return out;
}

void appendTraceBlock(std::string& out, const Uuid& uuid, ByteOrder byteOrder) {
    out += substitute("trace {\n"
                      "\tmajor = 1;\n"
                      "\tminor = 8;\n"
                      "\tuuid = \"{}\";\n"
                      "\tbyte_order = {};\n"
                      "\tpacket.header := struct {\n"
                      "\t\tuint32_t magic;\n"
                      "\t\tuint8_t  uuid[16];\n"
                      "\t\tuint32_t stream_id;\n"
                      "\t\tuint64_t stream_instance_id;\n"
                      "\t};\n"
                      "};\n\n",
                      {uuidToString(uuid), byteOrder == ByteOrder::Big ? "be" : "le"});
}

} // namespace tracectl::metadata
