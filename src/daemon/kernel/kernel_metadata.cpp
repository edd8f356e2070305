#include "kernel_metadata.hpp"

#include "ip_event_fields.hpp"
#include "metadata/field_model.hpp"
#include "metadata/trace_environment.hpp"
#include "metadata/tsdl_text.hpp"
#include "metadata/tsdl_writer.hpp"
#include "syscall_string_args.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace tracectl::kernel {

namespace kr = kernel_records;
using metadata::ArrayType;
using metadata::ByteOrder;
using metadata::Encoding;
using metadata::Field;
using metadata::IntegerType;
using metadata::SequenceType;
using metadata::StringType;
using metadata::substitute;

namespace {

constexpr ByteOrder kOrder = ByteOrder::Little;

IntegerType integer(std::uint32_t bytes, bool isSigned, std::uint32_t base = 10,
                    Encoding encoding = Encoding::None) {
    IntegerType t;
    t.size = bytes * 8;
    t.alignment = 8;
    t.isSigned = isSigned;
    t.base = base;
    t.encoding = encoding;
    return t;
}

IntegerType textElement() {
    return integer(1, true, 10, Encoding::Utf8);
}

bool isPow2Size(std::uint32_t n) {
    return n == 1 || n == 2 || n == 4 || n == 8;
}

bool isAddressType(std::string_view type) {
    return type.find('*') != std::string_view::npos || type == "unsigned long" ||
           type == "const unsigned long";
}

bool isCharType(std::string_view type) {
    return type == "char" || type == "const char" || type == "signed char";
}

// Size and signedness of the element type of a __data_loc/__rel_loc array
// (the kernel's and C's names); nullopt when not known.
struct ElementInfo {
    std::uint32_t size;
    bool isSigned;
};
std::optional<ElementInfo> elementInfo(std::string_view t) {
    struct Known {
        std::string_view name;
        ElementInfo info;
    };
    static constexpr Known kKnown[] = {
        {"char", {1, true}},
        {"signed char", {1, true}},
        {"unsigned char", {1, false}},
        {"u8", {1, false}},
        {"__u8", {1, false}},
        {"s8", {1, true}},
        {"bool", {1, false}},
        {"short", {2, true}},
        {"unsigned short", {2, false}},
        {"u16", {2, false}},
        {"__u16", {2, false}},
        {"s16", {2, true}},
        {"int", {4, true}},
        {"unsigned int", {4, false}},
        {"u32", {4, false}},
        {"__u32", {4, false}},
        {"s32", {4, true}},
        {"long", {8, true}},
        {"unsigned long", {8, false}},
        {"long long", {8, true}},
        {"unsigned long long", {8, false}},
        {"u64", {8, false}},
        {"__u64", {8, false}},
        {"s64", {8, true}},
    };
    for (const Known& k : kKnown)
        if (k.name == t)
            return k.info;
    if (t.find('*') != std::string_view::npos)
        return ElementInfo{8, false};
    return std::nullopt;
}

// True for the signed C integer types system call arguments are declared
// with (a pointer or an unsigned type is not).
bool isSignedCType(std::string type) {
    if (type.find('*') != std::string::npos || type.find("unsigned") != std::string::npos)
        return false;
    if (type.rfind("const ", 0) == 0)
        type.erase(0, 6);
    static const std::set<std::string, std::less<>> kSigned{
        "int",       "long",        "long long",
        "short",     "signed char", "pid_t",
        "off_t",     "loff_t",      "ssize_t",
        "clockid_t", "key_t",       "mqd_t",
        "timer_t",   "s8",          "s16",
        "s32",       "s64",         "__s8",
        "__s16",     "__s32",       "__s64",
        "int8_t",    "int16_t",     "int32_t",
        "int64_t",   "time_t",      "__kernel_old_time_t"};
    return kSigned.count(type) != 0;
}

// The bytes of the C integer types narrower than a system call's 8-byte
// argument slot (Linux x86-64 ABI sizes), for the types system calls
// declare their arguments with; 8 for the rest (long, size_t, pointers,
// off_t...) and for unknown names.
std::uint32_t cTypeBytes(std::string type) {
    if (type.find('*') != std::string::npos)
        return 8;
    if (type.rfind("const ", 0) == 0)
        type.erase(0, 6);
    static const std::map<std::string, std::uint32_t, std::less<>> kNarrow{
        {"int", 4},       {"unsigned int", 4}, {"unsigned", 4},
        {"pid_t", 4},     {"uid_t", 4},        {"gid_t", 4},
        {"qid_t", 4},     {"key_t", 4},        {"mqd_t", 4},
        {"clockid_t", 4}, {"key_serial_t", 4}, {"rwf_t", 4},
        {"u32", 4},       {"__u32", 4},        {"s32", 4},
        {"__s32", 4},     {"int32_t", 4},      {"uint32_t", 4},
        {"umode_t", 2},   {"short", 2},        {"unsigned short", 2},
        {"u16", 2},       {"__u16", 2},        {"s16", 2},
        {"__s16", 2},     {"char", 1},         {"unsigned char", 1},
        {"u8", 1},        {"__u8", 1},         {"s8", 1},
        {"__s8", 1}};
    const auto it = kNarrow.find(type);
    return it == kNarrow.end() ? 8 : it->second;
}

// A system call argument (`sys_enter_*`: every argument in an unsigned long
// slot, ftrace's syscall_enter_define_fields) whose C type is narrower than
// the slot: lttng-modules records it with its own type (`int dfd` = -100,
// where the slot holds 4294967196, the register's low 32 bits). The bytes to
// keep (the slot's low ones, little endian), or 0 to keep the slot.
std::uint32_t narrowSyscallArgument(const EventFormat& format, const FormatField& f) {
    if (format.name.rfind("sys_enter_", 0) != 0 || f.size != 8 || f.isArray || f.isDataLoc ||
        f.isRelLoc || f.offset < 16)
        return 0;
    const std::uint32_t bytes = cTypeBytes(f.type);
    return bytes < 8 ? bytes : 0;
}

// Unique TSDL identifiers within one struct.
class Identifiers {
public:
    std::string make(std::string_view name) {
        std::string id = metadata::fieldIdentifier(name);
        const std::string base = id;
        for (unsigned i = 2; !taken_.insert(id).second; ++i)
            id = base + "_" + std::to_string(i);
        return id;
    }

private:
    std::set<std::string> taken_;
};

// An event's CTF fields and its conversion steps, built together.
struct Lowered {
    std::vector<Field> fields;
    kr::EventConversion conversion;
};

void addCopy(kr::EventConversion& c, std::uint32_t offset, std::uint32_t size) {
    if (!c.steps.empty()) {
        kr::Step& last = c.steps.back();
        if (last.kind == kr::StepKind::Copy && last.offset + last.size == offset &&
            last.size + size <= 65535) {
            last.size = static_cast<std::uint16_t>(last.size + size);
            return;
        }
    }
    c.steps.push_back({kr::StepKind::Copy, static_cast<std::uint16_t>(offset),
                       static_cast<std::uint16_t>(size), 1});
}

void lowerField(const FormatField& f, const std::string& name, bool userString, Identifiers& ids,
                Lowered& out, std::uint32_t narrowTo = 0) {
    kr::EventConversion& c = out.conversion;
    if (narrowTo != 0) {
        const bool isSigned = isSignedCType(f.type);
        addCopy(c, f.offset, narrowTo);
        out.fields.push_back({ids.make(name), integer(narrowTo, isSigned)});
        return;
    }
    if (userString) {
        c.steps.push_back({kr::StepKind::UserString, static_cast<std::uint16_t>(f.offset), 8, 1});
        out.fields.push_back({ids.make(name), StringType{Encoding::Utf8}});
        return;
    }
    if (f.isDataLoc || f.isRelLoc) {
        const auto off = static_cast<std::uint16_t>(f.offset);
        if (isCharType(f.elementType)) {
            c.steps.push_back(
                {f.isDataLoc ? kr::StepKind::DataLocString : kr::StepKind::RelLocString, off, 4,
                 1});
            out.fields.push_back({ids.make(name), StringType{Encoding::Utf8}});
            return;
        }
        const std::optional<ElementInfo> e = elementInfo(f.elementType);
        const std::uint32_t elementSize = e ? e->size : 1;
        const bool hex = !e || isAddressType(f.elementType);
        c.steps.push_back(
            {f.isDataLoc ? kr::StepKind::DataLocSequence : kr::StepKind::RelLocSequence, off, 4,
             static_cast<std::uint16_t>(elementSize)});
        const std::string lengthId = ids.make("_" + name + "_length");
        out.fields.push_back({lengthId, integer(4, false)});
        out.fields.push_back(
            {ids.make(name),
             SequenceType{integer(elementSize, e && e->isSigned, hex ? 16 : 10), lengthId}});
        return;
    }
    if (f.isArray) {
        if (f.arrayLength && *f.arrayLength > 0 && f.size % *f.arrayLength == 0 &&
            isPow2Size(f.size / *f.arrayLength)) {
            const std::uint32_t elementSize = f.size / *f.arrayLength;
            const IntegerType element =
                elementSize == 1 && isCharType(f.elementType)
                    ? textElement()
                    : integer(elementSize, f.isSigned, isAddressType(f.elementType) ? 16 : 10);
            addCopy(c, f.offset, f.size);
            out.fields.push_back({ids.make(name), ArrayType{element, *f.arrayLength}});
            return;
        }
    } else if (isPow2Size(f.size)) {
        const bool isBool = f.type == "bool" || f.type == "_Bool";
        // The system call tracepoints store every argument in an unsigned
        // long slot (`signed:0` even for `int dfd`): the C type says what
        // lttng-modules' typed arguments say (dfd = -100, not 4294967196).
        const bool isSigned = f.isSigned || isSignedCType(f.type);
        addCopy(c, f.offset, f.size);
        out.fields.push_back({ids.make(name), integer(f.size, isSigned && !isBool,
                                                      isAddressType(f.type) ? 16 : 10)});
        return;
    }
    // Not mappable to a CTF integer type: its bytes, as they are.
    addCopy(c, f.offset, f.size);
    out.fields.push_back({ids.make(name), ArrayType{integer(1, false, 16), f.size}});
}

// The field `name` of `format` if it has `size` bytes (a loc field: 4) and
// is a char array when `text`; nullopt otherwise.
std::optional<std::uint16_t> fieldAt(const EventFormat& format, std::string_view name,
                                     std::uint32_t size, bool text = false) {
    for (const FormatField& f : format.fields)
        if (f.name == name && f.size == size && (!text || isCharType(f.elementType)))
            return static_cast<std::uint16_t>(f.offset);
    return std::nullopt;
}

// What the event tells the consumer about the running thread
// (kernel_records TaskRole), found by the fields' names in its format: an
// event whose format lacks one of them (another kernel's layout) tells
// nothing, and the contexts come from /proc.
kr::TaskFields taskFields(const EventFormat& format) {
    kr::TaskFields t;
    const auto all = [](std::initializer_list<std::optional<std::uint16_t>> at) {
        return std::all_of(at.begin(), at.end(), [](const auto& a) { return a.has_value(); });
    };
    if (format.name == "sched_switch") {
        const auto prev = fieldAt(format, "prev_pid", 4), next = fieldAt(format, "next_pid", 4),
                   comm = fieldAt(format, "next_comm", 16, true),
                   prio = fieldAt(format, "next_prio", 4);
        if (all({prev, next, comm, prio}))
            t = {kr::TaskRole::SchedSwitch, {*prev, *next, *comm, *prio}};
    } else if (format.name == "sched_process_exec") {
        const auto pid = fieldAt(format, "pid", 4);
        std::optional<std::uint16_t> file;
        for (const FormatField& f : format.fields)
            if (f.name == "filename" && f.isDataLoc && isCharType(f.elementType))
                file = static_cast<std::uint16_t>(f.offset);
        if (all({pid, file}))
            t = {kr::TaskRole::ProcessExec, {*pid, *file, 0, 0}};
    } else if (format.name == "task_rename") {
        const auto pid = fieldAt(format, "pid", 4), comm = fieldAt(format, "newcomm", 16, true);
        if (all({pid, comm}))
            t = {kr::TaskRole::TaskRename, {*pid, *comm, 0, 0}};
    }
    return t;
}

const FormatField* findField(const EventFormat& format, std::string_view name) {
    for (const FormatField& f : format.fields)
        if (f.name == name)
            return &f;
    return nullptr;
}

bool isPlainInt(const FormatField& f, std::uint32_t size) {
    return !f.isArray && !f.isDataLoc && !f.isRelLoc && f.size == size;
}

// One lttng_kernel_layout.hpp field made from its source `f`; false (with
// nothing added) when `f` has a shape the conversion does not take.
bool lowerLayoutField(const LayoutField& lf, const FormatField& f, Identifiers& ids, Lowered& out) {
    kr::EventConversion& c = out.conversion;
    const auto off = static_cast<std::uint16_t>(f.offset);
    const std::string name(lf.name);
    switch (lf.kind) {
    case LayoutKind::Same:
        lowerField(f, name, false, ids, out);
        return true;
    case LayoutKind::Rwbs:
        if (!f.isArray || !isCharType(f.elementType) || f.size == 0)
            return false;
        c.steps.push_back({kr::StepKind::RwbsFlags, off, static_cast<std::uint16_t>(f.size), 1});
        out.fields.push_back({ids.make(name), integer(4, false)});
        return true;
    case LayoutKind::Prio:
    case LayoutKind::Tgid:
    case LayoutKind::PidNsInum:
    case LayoutKind::Vtids: {
        if (!isPlainInt(f, 4))
            return false;
        const kr::StepKind kind = lf.kind == LayoutKind::Prio        ? kr::StepKind::PrioFromKernel
                                  : lf.kind == LayoutKind::Tgid      ? kr::StepKind::Tgid
                                  : lf.kind == LayoutKind::PidNsInum ? kr::StepKind::PidNsInum
                                                                     : kr::StepKind::Vtids;
        c.steps.push_back({kind, off, 4, 1});
        if (lf.kind == LayoutKind::Vtids) {
            const std::string lengthId = ids.make("_" + name + "_length");
            out.fields.push_back({lengthId, integer(1, false)});
            out.fields.push_back({ids.make(name), SequenceType{integer(4, true), lengthId}});
        } else {
            out.fields.push_back({ids.make(name), integer(4, lf.kind != LayoutKind::PidNsInum)});
        }
        return true;
    }
    case LayoutKind::CommText:
        if (f.isArray && isCharType(f.elementType)) {
            lowerField(f, name, false, ids, out);
            return true;
        }
        if (!f.isDataLoc || !isCharType(f.elementType))
            return false;
        c.steps.push_back({kr::StepKind::DataLocFixedText, off, 4, 16});
        out.fields.push_back({ids.make(name), ArrayType{textElement(), 16}});
        return true;
    case LayoutKind::LowU32:
        if (isPlainInt(f, 4)) {
            lowerField(f, name, false, ids, out);
            return true;
        }
        if (!isPlainInt(f, 8))
            return false;
        addCopy(c, f.offset, 4);
        out.fields.push_back({ids.make(name), integer(4, false)});
        return true;
    }
    return false;
}

// The event laid out as `layout` says, then ftrace's fields no layout field
// reads; nullopt when the format does not fit the layout.
std::optional<Lowered> lowerLayout(const EventFormat& format, const LttngLayout& layout,
                                   const LttngNaming& naming, Lowered out) {
    Identifiers ids;
    std::set<std::string_view> used;
    for (const LayoutField& lf : layout.fields) {
        const FormatField* f = findField(format, lf.source);
        if (f == nullptr || f->size == 0 || !lowerLayoutField(lf, *f, ids, out))
            return std::nullopt;
        used.insert(lf.source);
    }
    for (const FormatField& f : format.fields) {
        if (f.isCommon() || naming.isDropped(f.name) || f.size == 0 || used.count(f.name))
            continue;
        lowerField(f, naming.fieldName(f.name), isUserStringArgument(format, f), ids, out);
    }
    return out;
}

Lowered lower(const EventFormat& format, std::uint16_t ctfId, const LttngNaming& naming,
              const LttngLayout* layout) {
    Lowered out;
    out.conversion.ftraceId = format.id;
    out.conversion.ctfId = ctfId;
    std::uint32_t minSize = kr::kFtraceCommonSize;
    for (const FormatField& f : format.fields) {
        // parseFormat guarantees it; a format built by hand may not.
        if (std::uint64_t{f.offset} + f.size > 65535 ||
            ((f.isDataLoc || f.isRelLoc) && f.size != 4))
            throw KernelMetadataError("event " + format.name + ": field " + f.name +
                                      " has an impossible offset or size");
        minSize = std::max(minSize, f.offset + f.size);
    }
    out.conversion.minSize = static_cast<std::uint16_t>(minSize);
    if (layout != nullptr) {
        if (std::optional<Lowered> laidOut = lowerLayout(format, *layout, naming, out))
            out = std::move(*laidOut);
        else
            layout = nullptr;
    }
    if (layout == nullptr) {
        Identifiers ids;
        for (const FormatField& f : format.fields) {
            if (f.isCommon() || naming.isDropped(f.name) || f.size == 0)
                continue;
            lowerField(f, naming.fieldName(f.name), isUserStringArgument(format, f), ids, out,
                       narrowSyscallArgument(format, f));
        }
    }
    out.conversion.task = taskFields(format);
    if (out.conversion.steps.size() > kr::kMaxSteps)
        throw KernelMetadataError("event " + format.name + " needs more than " +
                                  std::to_string(kr::kMaxSteps) + " conversion steps");
    return out;
}

std::string u(std::uint64_t v) {
    return std::to_string(v);
}

bool isIdentifier(std::string_view s) {
    if (s.empty() || metadata::isTsdlKeyword(s))
        return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(c >= '0' && c <= '9' && i > 0))
            return false;
    }
    return true;
}

void validate(const KernelTraceDescription& trace) {
    if (trace.channels.empty())
        throw KernelMetadataError("kernel trace without channels");
    if (!isIdentifier(trace.clock.name))
        throw KernelMetadataError("clock name is not an identifier");
    if (trace.clock.frequency == 0)
        throw KernelMetadataError("clock frequency is zero");
    std::set<std::uint32_t> streamIds;
    for (const KernelChannelDescription& ch : trace.channels) {
        if (!streamIds.insert(ch.streamId).second)
            throw KernelMetadataError("stream id " + u(ch.streamId) + " given twice");
        if ((ch.contextMask & ~kr::kAllContexts) != 0)
            throw KernelMetadataError("channel " + ch.name + ": unknown context bits");
        std::set<std::uint16_t> ids;
        for (const KernelEventDescription& e : ch.events) {
            if (e.ctfId < kr::kFirstFtraceCtfId || e.ctfId > kr::kLastFtraceCtfId)
                throw KernelMetadataError("event " + e.format.name + ": ctf id " + u(e.ctfId) +
                                          " outside " + u(kr::kFirstFtraceCtfId) + ".." +
                                          u(kr::kLastFtraceCtfId));
            if (!ids.insert(e.ctfId).second)
                throw KernelMetadataError("channel " + ch.name + ": ctf id " + u(e.ctfId) +
                                          " given twice");
        }
        if (ch.ipProbes) {
            for (const std::uint16_t id : {ch.ipProbes->sendId, ch.ipProbes->receiveId}) {
                if (id < kr::kFirstFtraceCtfId || id > kr::kLastFtraceCtfId)
                    throw KernelMetadataError("ip provider: ctf id " + u(id) + " outside " +
                                              u(kr::kFirstFtraceCtfId) + ".." +
                                              u(kr::kLastFtraceCtfId));
                if (!ids.insert(id).second)
                    throw KernelMetadataError("channel " + ch.name + ": ctf id " + u(id) +
                                              " given twice");
            }
        }
    }
}

void appendEnvString(std::string& out, std::string_view key, std::string_view value) {
    out += substitute("\t{} = ", {key});
    metadata::appendStringLiteral(out, value);
    out += ";\n";
}

void appendPreamble(std::string& out, const KernelTraceDescription& t) {
    out += "/* CTF 1.8 */\n\n"
           "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
           "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
           "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
           "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
           "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n\n";
    metadata::appendTraceBlock(out, t.uuid, metadata::ByteOrder::Little);
    out += "env {\n";
    appendEnvString(out, "hostname", t.hostname);
    appendEnvString(out, "domain", "kernel");
    appendEnvString(out, "sysname", t.sysname);
    appendEnvString(out, "kernel_release", t.kernelRelease);
    appendEnvString(out, "kernel_version", t.kernelVersion);
    appendEnvString(out, "tracer_name", "lttng-modules");
    out += substitute("\ttracer_major = {};\n\ttracer_minor = {};\n\ttracer_patchlevel = {};\n",
                      {u(t.tracer.major), u(t.tracer.minor), u(t.tracer.patchlevel)});
    appendEnvString(out, "trace_buffering_scheme", "global");
    appendEnvString(out, "trace_name", t.sessionName);
    appendEnvString(out, "trace_creation_datetime", metadata::iso8601LocalTime(t.creationTime));
    // Not lttng-modules': what actually recorded the trace.
    appendEnvString(out, "tracer_backend", "tracectl (ftrace through tracefs)");
    out += "};\n\n";

    const metadata::ClockInfo& c = t.clock;
    out += substitute("clock {\n\tname = \"{}\";\n", {c.name});
    if (c.uuid)
        out += substitute("\tuuid = \"{}\";\n", {metadata::uuidToString(*c.uuid)});
    out += "\tdescription = ";
    metadata::appendStringLiteral(out, c.description);
    out += substitute(";\n"
                      "\tfreq = {}; /* Frequency, in Hz */\n"
                      "\t/* clock value offset from Epoch is: offset * (1/freq) */\n"
                      "\toffset = {};\n"
                      "};\n\n"
                      "typealias integer {\n"
                      "\tsize = 64; align = 8; signed = false;\n"
                      "\tmap = clock.{}.value;\n"
                      "} := uint64_clock_monotonic_t;\n\n",
                      {u(c.frequency), std::to_string(c.offset), c.name});
}

std::vector<Field> contextFields(std::uint32_t mask) {
    std::vector<Field> f;
    if (mask & kr::ContextTid)
        f.push_back({"_tid", integer(4, true)});
    if (mask & kr::ContextPid)
        f.push_back({"_pid", integer(4, true)});
    if (mask & kr::ContextProcname)
        f.push_back({"_procname", ArrayType{textElement(), 16}});
    if (mask & kr::ContextPrio)
        f.push_back({"_prio", integer(4, true)});
    if (mask & kr::ContextCpuId)
        f.push_back({"_cpu_id", integer(4, true)});
    // lttng-modules 2.13 lttng-context-callstack.c: an unsigned int length
    // named `_callstack_<kind>_length`, then a sequence of unsigned long
    // (base 16), each name with the underscore every field name gets.
    if (mask & kr::ContextCallstackKernel) {
        f.push_back({"__callstack_kernel_length", integer(4, false)});
        f.push_back({"_callstack_kernel",
                     SequenceType{integer(8, false, 16), "__callstack_kernel_length"}});
    }
    if (mask & kr::ContextCallstackUser) {
        f.push_back({"__callstack_user_length", integer(4, false)});
        f.push_back(
            {"_callstack_user", SequenceType{integer(8, false, 16), "__callstack_user_length"}});
    }
    return f;
}

void appendStream(std::string& out, const KernelChannelDescription& ch) {
    out += "/* channel ";
    for (const char c : ch.name)
        out += (c == '*' || c == '/' || static_cast<unsigned char>(c) < 0x20) ? '_' : c;
    out += " */\n";
    out += substitute("stream {\n"
                      "\tid = {};\n"
                      "\tevent.header := struct {\n"
                      "\t\tuint16_t id;\n"
                      "\t\tuint64_clock_monotonic_t timestamp;\n"
                      "\t};\n"
                      "\tpacket.context := struct {\n"
                      "\t\tuint64_clock_monotonic_t timestamp_begin;\n"
                      "\t\tuint64_clock_monotonic_t timestamp_end;\n"
                      "\t\tuint64_t content_size;\n"
                      "\t\tuint64_t packet_size;\n"
                      "\t\tuint64_t packet_seq_num;\n"
                      "\t\tuint64_t events_discarded;\n"
                      "\t\tuint32_t cpu_id;\n"
                      "\t};\n",
                      {u(ch.streamId)});
    const std::vector<Field> ctx = contextFields(ch.contextMask);
    if (!ctx.empty()) {
        out += "\tevent.context := struct {\n";
        metadata::appendFields(out, ctx, 2, kOrder);
        out += "\t};\n";
    }
    out += "};\n\n";
}

void appendEvent(std::string& out, std::string_view name, std::uint32_t id, std::uint32_t streamId,
                 const std::vector<Field>& fields) {
    out += "event {\n\tname = ";
    metadata::appendStringLiteral(out, name);
    out += substitute(";\n\tid = {};\n\tstream_id = {};\n\tfields := struct {\n",
                      {u(id), u(streamId)});
    metadata::appendFields(out, fields, 2, kOrder);
    out += "\t};\n};\n\n";
}

/// An ip provider event: its payload is ip_event_fields.hpp's.
void appendIpEvent(std::string& out, std::string_view name, std::uint32_t id,
                   std::uint32_t streamId) {
    out += "event {\n\tname = ";
    metadata::appendStringLiteral(out, name);
    out += substitute(";\n\tid = {};\n\tstream_id = {};\n\tfields := struct {\n",
                      {u(id), u(streamId)});
    out += ::tracectl::ip::ipEventTsdlFields();
    out += "\t};\n};\n\n";
}

/// A Pending::event value for the ip provider's events.
constexpr std::size_t kIpSendEvent = SIZE_MAX;
constexpr std::size_t kIpReceiveEvent = SIZE_MAX - 1;

/// kernel_records kKernelSymbolId's event.
constexpr std::string_view kKernelSymbolEvent = "tracectl_kernel_symbol";
/// kernel_records kVmMapId's event.
constexpr std::string_view kVmMapEvent = "tracectl_vm_map";
/// kernel_records kThreadId's event.
constexpr std::string_view kThreadEvent = "tracectl_thread";

struct StatedumpEvent {
    std::string_view name;
    std::uint16_t id;
    std::vector<Field> fields;
};

// kernel_records.hpp's statedump events (lttng-modules 2.13
// instrumentation/events/lttng-statedump.h names).
std::vector<StatedumpEvent> statedumpEvents() {
    const auto i32 = [](const char* n) { return Field{n, integer(4, true)}; };
    const auto u32 = [](const char* n) { return Field{n, integer(4, false)}; };
    const auto u16 = [](const char* n) { return Field{n, integer(2, false)}; };
    const auto u8 = [](const char* n) { return Field{n, integer(1, false)}; };
    // lttng-modules' ctf_integer_network_hex: big endian, base 16.
    const auto networkHex32 = [] {
        IntegerType t = integer(4, false, 16);
        t.reverseByteOrder = true; // the trace is little endian
        return t;
    };
    return {
        {"lttng_statedump_start", kr::kStatedumpStartId, {}},
        {"lttng_statedump_process_state",
         kr::kStatedumpProcessStateId,
         {i32("_tid"), i32("_vtid"), i32("_pid"), i32("_vpid"), i32("_ppid"), i32("_vppid"),
          Field{"_name", ArrayType{textElement(), 16}}, i32("_type"), i32("_mode"), i32("_submode"),
          i32("_status"), i32("_cpu")}},
        {"lttng_statedump_file_descriptor",
         kr::kStatedumpFileDescriptorId,
         {i32("_pid"), i32("_fd"), u32("_flags"), u32("_fmode"),
          Field{"_filename", StringType{Encoding::Utf8}}}},
        {"lttng_statedump_end", kr::kStatedumpEndId, {}},
        {"lttng_statedump_block_device",
         kr::kStatedumpBlockDeviceId,
         {u32("_dev"), Field{"_diskname", StringType{Encoding::Utf8}}}},
        {"lttng_statedump_interrupt",
         kr::kStatedumpInterruptId,
         {u32("_irq"), Field{"_name", StringType{Encoding::Utf8}},
          Field{"_action", StringType{Encoding::Utf8}}, i32("_tid")}},
        {"lttng_statedump_network_interface",
         kr::kStatedumpNetworkInterfaceId,
         {Field{"_name", StringType{Encoding::Utf8}}, Field{"_address_ipv4", networkHex32()}}},
        {"lttng_statedump_cpu_topology",
         kr::kStatedumpCpuTopologyId,
         {Field{"_architecture", StringType{Encoding::Utf8}}, u16("_cpu_id"),
          Field{"_vendor", StringType{Encoding::Utf8}}, u8("_family"), u8("_model"),
          Field{"_model_name", StringType{Encoding::Utf8}}, u16("_physical_id"), u16("_core_id"),
          u16("_cores")}},
    };
}

} // namespace

std::vector<kr::EventConversion> KernelChannelMetadata::conversions() const {
    std::vector<kr::EventConversion> out;
    out.reserve(events.size());
    for (const KernelEventInfo& e : events)
        out.push_back(e.conversion);
    return out;
}

kr::EventConversion computeConversion(const EventFormat& format, std::uint16_t ctfId,
                                      const LttngNaming& naming, const LttngLayout* layout) {
    return lower(format, ctfId, naming, layout).conversion;
}

KernelMetadata generateKernelMetadata(const KernelTraceDescription& trace) {
    validate(trace);
    KernelMetadata out;
    appendPreamble(out.tsdl, trace);
    // Every stream class (and the statedump's fixed events) first, then the
    // ftrace events of every channel in CTF id order: ids only grow as
    // events are enabled, so the metadata of more events is the metadata of
    // fewer plus what follows it, and a started trace's metadata is only
    // ever appended to (as lttng-sessiond's is).
    struct Pending {
        std::uint16_t ctfId;
        std::size_t channel;
        std::size_t event;
    };
    std::vector<Pending> order;
    std::vector<std::vector<std::string>> names(trace.channels.size());
    for (std::size_t c = 0; c < trace.channels.size(); ++c) {
        const KernelChannelDescription& ch = trace.channels[c];
        appendStream(out.tsdl, ch);
        std::vector<std::string> reserved;
        if (ch.withStatedump) {
            for (const StatedumpEvent& e : statedumpEvents()) {
                appendEvent(out.tsdl, e.name, e.id, ch.streamId, e.fields);
                reserved.emplace_back(e.name);
            }
        }
        if ((ch.contextMask & kr::ContextCallstackKernel) != 0) {
            appendEvent(out.tsdl, kKernelSymbolEvent, kr::kKernelSymbolId, ch.streamId,
                        {Field{"_address", integer(8, false, 16)},
                         Field{"_end", integer(8, false, 16)},
                         Field{"_name", StringType{Encoding::Utf8}},
                         Field{"_module", StringType{Encoding::Utf8}}});
            reserved.emplace_back(kKernelSymbolEvent);
        }
        if ((ch.contextMask & kr::ContextCallstackUser) != 0) {
            appendEvent(out.tsdl, kVmMapEvent, kr::kVmMapId, ch.streamId,
                        {Field{"_start", integer(8, false, 16)},
                         Field{"_end", integer(8, false, 16)},
                         Field{"_pgoff", integer(8, false, 16)}, Field{"_pid", integer(4, true)},
                         Field{"_path", StringType{Encoding::Utf8}}});
            reserved.emplace_back(kVmMapEvent);
            appendEvent(out.tsdl, kThreadEvent, kr::kThreadId, ch.streamId,
                        {Field{"_tid", integer(4, true)}, Field{"_pid", integer(4, true)}});
            reserved.emplace_back(kThreadEvent);
        }
        std::vector<std::pair<std::string, std::string>> keys;
        for (std::size_t i = 0; i < ch.events.size(); ++i) {
            keys.emplace_back(ch.events[i].system, ch.events[i].format.name);
            order.push_back({ch.events[i].ctfId, c, i});
        }
        if (ch.ipProbes) {
            order.push_back({ch.ipProbes->sendId, c, kIpSendEvent});
            order.push_back({ch.ipProbes->receiveId, c, kIpReceiveEvent});
        }
        names[c] = assignEventNames(keys, reserved);
        KernelChannelMetadata meta;
        meta.name = ch.name;
        meta.streamId = ch.streamId;
        out.channels.push_back(std::move(meta));
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const Pending& a, const Pending& b) { return a.ctfId < b.ctfId; });
    for (const Pending& p : order) {
        const KernelChannelDescription& ch = trace.channels[p.channel];
        if (p.event == kIpSendEvent || p.event == kIpReceiveEvent) {
            appendIpEvent(out.tsdl,
                          p.event == kIpSendEvent ? kIpSendEventName : kIpReceiveEventName, p.ctfId,
                          ch.streamId);
            continue;
        }
        const KernelEventDescription& e = ch.events[p.event];
        const Lowered lowered = lower(e.format, e.ctfId, lttngNaming(e.system, e.format.name),
                                      lttngLayout(e.system, e.format.name));
        appendEvent(out.tsdl, names[p.channel][p.event], e.ctfId, ch.streamId, lowered.fields);
        out.channels[p.channel].events.push_back(
            {e.system, e.format.name, names[p.channel][p.event], lowered.conversion});
    }
    return out;
}

} // namespace tracectl::kernel
