#include "tsdl_writer.hpp"

#include "enum_registry.hpp"
#include "tsdl_text.hpp"

#include <type_traits>

namespace tracectl::metadata {

namespace {

void tabs(std::string& out, unsigned n) {
    out.append(n, '\t');
}

const char* encodingName(Encoding e) noexcept {
    switch (e) {
    case Encoding::Utf8:
        return "UTF8";
    case Encoding::Ascii:
        return "ASCII";
    case Encoding::None:
        break;
    }
    return "none";
}

// " byte_order = be;" for a field stored opposite to the trace, else "".
const char* byteOrderSuffix(bool reverse, ByteOrder traceByteOrder) noexcept {
    if (!reverse)
        return "";
    return traceByteOrder == ByteOrder::Big ? " byte_order = le;" : " byte_order = be;";
}

void appendEnumValue(std::string& out, const EnumValue& v) {
    out +=
        v.isSigned ? std::to_string(static_cast<std::int64_t>(v.value)) : std::to_string(v.value);
}

class TypeWriter {
public:
    TypeWriter(std::string& out, unsigned indent, ByteOrder order)
        : out_(out), indent_(indent), order_(order) {}

    // Writes the type specifier; returns the suffix that follows the
    // identifier (array and sequence lengths).
    std::string operator()(const IntegerType& t) {
        appendIntegerType(out_, t, order_);
        return {};
    }

    std::string operator()(const FloatType& t) {
        out_ +=
            substitute("floating_point { exp_dig = {}; mant_dig = {}; align = {};{} }",
                       {std::to_string(t.expDig), std::to_string(t.mantDig),
                        std::to_string(t.alignment), byteOrderSuffix(t.reverseByteOrder, order_)});
        return {};
    }

    std::string operator()(const StringType& t) {
        out_ += t.encoding == Encoding::Ascii ? "string { encoding = ASCII; }" : "string";
        return {};
    }

    std::string operator()(const EnumType& t) {
        if (t.description->entries.empty()) {
            // TSDL has no empty enumeration (babeltrace2's parser rejects
            // "{ }"): an enum without labels is its container integer.
            appendIntegerType(out_, t.container, order_);
            return {};
        }
        out_ += "enum : ";
        appendIntegerType(out_, t.container, order_);
        out_ += " {\n";
        for (const EnumEntry& e : t.description->entries) {
            tabs(out_, indent_ + 1);
            appendStringLiteral(out_, e.label);
            if (!e.isAuto) {
                out_ += " = ";
                appendEnumValue(out_, e.start);
                if (e.end != e.start) {
                    out_ += " ... ";
                    appendEnumValue(out_, e.end);
                }
            }
            out_ += ",\n";
        }
        tabs(out_, indent_);
        out_ += "}";
        return {};
    }

    std::string operator()(const ArrayType& t) {
        appendIntegerType(out_, t.element, order_);
        return "[" + std::to_string(t.length) + "]";
    }

    std::string operator()(const SequenceType& t) {
        appendIntegerType(out_, t.element, order_);
        return "[ " + t.lengthIdentifier + " ]";
    }

    std::string operator()(const StructType& t) {
        if (t.fields.empty()) {
            out_ += "struct {}";
        } else {
            out_ += "struct {\n";
            appendFields(out_, t.fields, indent_ + 1, order_);
            tabs(out_, indent_);
            out_ += "}";
        }
        if (t.alignment != 0)
            out_ += " align(" + std::to_string(t.alignment) + ")";
        return {};
    }

    std::string operator()(const VariantType& t) {
        out_ += "variant <" + t.tagIdentifier + "> {\n";
        appendFields(out_, t.choices, indent_ + 1, order_);
        tabs(out_, indent_);
        out_ += "}";
        return {};
    }

private:
    std::string& out_;
    unsigned indent_;
    ByteOrder order_;
};

} // namespace

void appendIntegerType(std::string& out, const IntegerType& t, ByteOrder traceByteOrder) {
    out += substitute("integer { size = {}; align = {}; signed = {}; encoding = {}; base = {};{} }",
                      {std::to_string(t.size), std::to_string(t.alignment), t.isSigned ? "1" : "0",
                       encodingName(t.encoding), std::to_string(t.base),
                       byteOrderSuffix(t.reverseByteOrder, traceByteOrder)});
}

void appendFields(std::string& out, const std::vector<Field>& fields, unsigned indent,
                  ByteOrder traceByteOrder) {
    for (const Field& field : fields) {
        tabs(out, indent);
        const std::string suffix = std::visit(TypeWriter(out, indent, traceByteOrder), field.type);
        out += ' ';
        out += field.identifier;
        out += suffix;
        out += ";\n";
    }
}

} // namespace tracectl::metadata
