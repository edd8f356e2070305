// The registry's own description of event payload and context fields: what
// the flattened lttng_ust_ctl_field list of an app decodes to once it is
// validated (field_decoder.hpp), and what tsdl_writer.hpp turns into TSDL.
// Every identifier here is final: sanitized, unique in its struct, and every
// reference (sequence length, variant tag) points at an earlier field.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace tracectl::metadata {

struct EnumDescription;

enum class Encoding : std::uint8_t { None, Utf8, Ascii };

struct IntegerType {
    std::uint32_t size = 0;      ///< bits, 1..64
    std::uint32_t alignment = 0; ///< bits, power of two
    bool isSigned = false;
    bool reverseByteOrder = false; ///< opposite of the trace's byte order
    std::uint32_t base = 10;       ///< 2, 8, 10 or 16
    Encoding encoding = Encoding::None;
};

struct FloatType {
    std::uint32_t expDig = 0;  ///< 8 (float) or 11 (double)
    std::uint32_t mantDig = 0; ///< 24 (float) or 53 (double)
    std::uint32_t alignment = 0;
    bool reverseByteOrder = false;
};

struct StringType {
    Encoding encoding = Encoding::Utf8;
};

struct EnumType {
    IntegerType container;
    std::shared_ptr<const EnumDescription> description;
};

/// Fixed-length array of integers (a text array when the element has an
/// encoding and is 8 bits wide).
struct ArrayType {
    IntegerType element;
    std::uint32_t length = 0;
};

/// Sequence of integers whose length is an earlier unsigned integer field.
struct SequenceType {
    IntegerType element;
    std::string lengthIdentifier;
};

struct Field;

/// A struct: `alignment` in bits (0 = natural). An empty struct with an
/// alignment is also how the padding before an aligned array, sequence or
/// variant is written (`struct { } align(N) _x_padding;`).
struct StructType {
    std::uint32_t alignment = 0;
    std::vector<Field> fields;
};

/// Variant selected by an earlier enum field; every choice's identifier is
/// a label of that enum.
struct VariantType {
    std::string tagIdentifier;
    std::vector<Field> choices;
};

using FieldType = std::variant<IntegerType, FloatType, StringType, EnumType, ArrayType,
                               SequenceType, StructType, VariantType>;

struct Field {
    std::string identifier; ///< TSDL identifier, e.g. "_msg"
    FieldType type;
};

} // namespace tracectl::metadata
