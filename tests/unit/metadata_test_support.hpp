// Helpers for the metadata registry tests: lttng_ust_ctl_field lists built the
// way lttng-ust 2.13 serializes its tracepoint fields (ustcomm.c
// serialize_one_type), and a sample TraceInfo.
#pragma once

#include "metadata/trace_info.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <lttng/ust-ctl.h>
#include <string>
#include <string_view>
#include <vector>

namespace mdtest {

using Fields = std::vector<lttng_ust_ctl_field>;

// Copies `src` into a name array of `size` bytes (NUL-padded, truncated).
inline void copyName(char* dst, std::size_t size, std::string_view src) {
    std::memset(dst, 0, size);
    std::memcpy(dst, src.data(), std::min(src.size(), size - 1));
}

inline lttng_ust_ctl_field named(std::string_view name, lttng_ust_ctl_abstract_types atype) {
    lttng_ust_ctl_field f;
    std::memset(&f, 0, sizeof f);
    copyName(f.name, sizeof f.name, name);
    f.type.atype = atype;
    return f;
}

/// One integer entry (a field, or with an empty name an element/container).
inline lttng_ust_ctl_field
integer(std::string_view name, std::uint32_t bits, bool isSigned, std::uint32_t base = 10,
        bool reverse = false, lttng_ust_ctl_string_encodings encoding = lttng_ust_ctl_encode_none,
        std::uint16_t alignment = 0) {
    lttng_ust_ctl_field f = named(name, lttng_ust_ctl_atype_integer);
    f.type.u.integer.size = bits;
    f.type.u.integer.signedness = isSigned ? 1 : 0;
    f.type.u.integer.reverse_byte_order = reverse ? 1 : 0;
    f.type.u.integer.base = base;
    f.type.u.integer.encoding = encoding;
    f.type.u.integer.alignment = alignment != 0 ? alignment : static_cast<std::uint16_t>(bits);
    return f;
}

inline lttng_ust_ctl_field floating(std::string_view name, bool isDouble) {
    lttng_ust_ctl_field f = named(name, lttng_ust_ctl_atype_float);
    f.type.u._float.exp_dig = isDouble ? 11 : 8;
    f.type.u._float.mant_dig = isDouble ? 53 : 24;
    f.type.u._float.alignment = isDouble ? 64 : 32;
    return f;
}

inline lttng_ust_ctl_field string(std::string_view name,
                                  lttng_ust_ctl_string_encodings e = lttng_ust_ctl_encode_UTF8) {
    lttng_ust_ctl_field f = named(name, lttng_ust_ctl_atype_string);
    f.type.u.string.encoding = e;
    return f;
}

/// ctf_array(_text): array_nestable + element.
inline Fields array(std::string_view name, std::uint32_t length, std::uint32_t bits, bool isSigned,
                    bool text = false, std::uint32_t alignmentBytes = 0) {
    lttng_ust_ctl_field a = named(name, lttng_ust_ctl_atype_array_nestable);
    a.type.u.array_nestable.length = length;
    a.type.u.array_nestable.alignment = alignmentBytes;
    return {a, integer("", bits, isSigned, 10, false,
                       text ? lttng_ust_ctl_encode_UTF8 : lttng_ust_ctl_encode_none)};
}

/// A sequence_nestable + element, whose length is the field `lengthName`.
inline Fields sequenceOf(std::string_view name, std::string_view lengthName, std::uint32_t bits,
                         bool isSigned, bool text = false, std::uint32_t alignmentBytes = 0) {
    lttng_ust_ctl_field s = named(name, lttng_ust_ctl_atype_sequence_nestable);
    copyName(s.type.u.sequence_nestable.length_name, sizeof s.type.u.sequence_nestable.length_name,
             lengthName);
    s.type.u.sequence_nestable.alignment = alignmentBytes;
    return {s, integer("", bits, isSigned, 10, false,
                       text ? lttng_ust_ctl_encode_UTF8 : lttng_ust_ctl_encode_none)};
}

/// ctf_sequence(_text): the "_<name>_length" field, then the sequence.
inline Fields sequence(std::string_view name, std::uint32_t bits, bool isSigned,
                       std::uint32_t lengthBits = 64, bool text = false) {
    const std::string lengthName = "_" + std::string(name) + "_length";
    Fields out{integer(lengthName, lengthBits, false)};
    for (const auto& f : sequenceOf(name, lengthName, bits, isSigned, text))
        out.push_back(f);
    return out;
}

/// ctf_enum: enum_nestable + container.
inline Fields enumField(std::string_view name, std::string_view enumName, std::uint64_t id,
                        std::uint32_t bits = 32, bool isSigned = false) {
    lttng_ust_ctl_field e = named(name, lttng_ust_ctl_atype_enum_nestable);
    copyName(e.type.u.enum_nestable.name, sizeof e.type.u.enum_nestable.name, enumName);
    e.type.u.enum_nestable.id = id;
    return {e, integer("", bits, isSigned)};
}

inline lttng_ust_ctl_field structField(std::string_view name, std::uint32_t members,
                                       std::uint32_t alignmentBytes = 0) {
    lttng_ust_ctl_field s = named(name, lttng_ust_ctl_atype_struct_nestable);
    s.type.u.struct_nestable.nr_fields = members;
    s.type.u.struct_nestable.alignment = alignmentBytes;
    return s;
}

inline lttng_ust_ctl_field variantField(std::string_view name, std::string_view tagName,
                                        std::uint32_t choices, std::uint32_t alignmentBytes = 0,
                                        bool legacyAtype = false) {
    lttng_ust_ctl_field v = named(name, legacyAtype ? lttng_ust_ctl_atype_variant
                                                    : lttng_ust_ctl_atype_variant_nestable);
    v.type.u.variant_nestable.nr_choices = choices;
    copyName(v.type.u.variant_nestable.tag_name, sizeof v.type.u.variant_nestable.tag_name,
             tagName);
    v.type.u.variant_nestable.alignment = alignmentBytes;
    return v;
}

inline lttng_ust_ctl_enum_entry entry(std::string_view label, std::int64_t start, std::int64_t end,
                                      bool isSigned = true) {
    lttng_ust_ctl_enum_entry e;
    std::memset(&e, 0, sizeof e);
    copyName(e.string, sizeof e.string, label);
    e.start.value = static_cast<std::uint64_t>(start);
    e.start.signedness = isSigned ? 1 : 0;
    e.end.value = static_cast<std::uint64_t>(end);
    e.end.signedness = isSigned ? 1 : 0;
    return e;
}

inline lttng_ust_ctl_enum_entry autoEntry(std::string_view label) {
    lttng_ust_ctl_enum_entry e = entry(label, -1, -1, false);
    e.u.extra.options = LTTNG_UST_CTL_UST_ENUM_ENTRY_OPTION_IS_AUTO;
    return e;
}

/// The entries of lttng-ust's dynamic_type_enum (src/common/dynamic-type.c).
inline std::vector<lttng_ust_ctl_enum_entry> dynamicTypeEntries() {
    std::vector<lttng_ust_ctl_enum_entry> v;
    const char* labels[] = {"_none",   "_int8",   "_int16",  "_int32", "_int64",  "_uint8",
                            "_uint16", "_uint32", "_uint64", "_float", "_double", "_string"};
    std::int64_t i = 0;
    for (const char* l : labels) {
        v.push_back(entry(l, i, i, false));
        ++i;
    }
    return v;
}

/// An app context of dynamic type ("$app.<provider>:<name>") as lttng-ust
/// 2.13 sends it (serialize_dynamic_type): the "<name>_tag" enum field, the
/// variant (legacy atype, nestable layout) and its 12 choices.
inline Fields dynamicContext(std::string_view name, std::uint64_t enumId) {
    const std::string tag = std::string(name) + "_tag";
    Fields out = enumField(tag, "dynamic_type_enum", enumId, 8, true);
    out.push_back(variantField(name, tag, 12, 0, true));
    out.push_back(structField("none", 0));
    out.push_back(integer("int8", 8, true));
    out.push_back(integer("int16", 16, true));
    out.push_back(integer("int32", 32, true));
    out.push_back(integer("int64", 64, true));
    out.push_back(integer("uint8", 8, false));
    out.push_back(integer("uint16", 16, false));
    out.push_back(integer("uint32", 32, false));
    out.push_back(integer("uint64", 64, false));
    out.push_back(floating("float", false));
    out.push_back(floating("double", true));
    out.push_back(string("string"));
    return out;
}

inline Fields concat(std::initializer_list<Fields> parts) {
    Fields out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

inline tracectl::metadata::TraceInfo sampleTraceInfo(bool perPid = false) {
    tracectl::metadata::TraceInfo info;
    for (std::size_t i = 0; i < info.uuid.size(); ++i)
        info.uuid[i] = static_cast<std::uint8_t>(0xa0 + i);
    info.tracer = {2, 13, 5};
    info.hostname = "testhost";
    info.traceName = "mysession";
    info.creationTime = 1700000000; // 2023-11-14T22:13:20Z
    info.clock.offset = 1700000000LL * 1'000'000'000LL;
    info.clock.uuid = tracectl::metadata::Uuid{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                                               0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00};
    if (perPid) {
        info.buffering = tracectl::metadata::BufferingScheme::PerPid;
        info.bufferingId = 4242;
        info.app = tracectl::metadata::AppInfo{4242, "myapp", 1700000100};
    } else {
        info.buffering = tracectl::metadata::BufferingScheme::PerUid;
        info.bufferingId = 1000;
    }
    return info;
}

} // namespace mdtest
