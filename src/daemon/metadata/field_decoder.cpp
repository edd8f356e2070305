#include "field_decoder.hpp"

#include "metadata_error.hpp"
#include "tsdl_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>

namespace tracectl::metadata {

namespace {

// Largest alignment accepted, in bits. lttng-ust uses at most 64.
constexpr std::uint32_t kMaxAlignmentBits = 4096;

bool isPowerOfTwo(std::uint32_t v) noexcept {
    return v != 0 && (v & (v - 1)) == 0;
}

[[noreturn]] void refuse(int err, const std::string& what) {
    throw MetadataError(err, what);
}

// A field that later fields may refer to (as sequence length or variant tag).
struct Declared {
    std::string name;       // as the app sent it
    std::string identifier; // as written
    enum class Kind { UnsignedInteger, SignedInteger, Enum, Other } kind = Kind::Other;
    std::shared_ptr<const EnumDescription> enumDescription;
    bool enumUnsigned = false;
};

class Decoder {
public:
    Decoder(std::span<const lttng_ust_ctl_field> in, const EnumRegistry& enums,
            const RegistryLimits& limits)
        : in_(in), enums_(enums), limits_(limits) {}

    std::vector<Field> run() {
        if (in_.size() > limits_.maxFields)
            refuse(E2BIG, "too many fields (" + std::to_string(in_.size()) + ")");
        std::vector<Field> out;
        levels_.emplace_back();
        while (pos_ < in_.size())
            decodeMember(out, 0);
        return out;
    }

private:
    const lttng_ust_ctl_field& next(const char* what) {
        if (pos_ >= in_.size())
            refuse(EINVAL, std::string("field list ends where ") + what + " was expected");
        return in_[pos_++];
    }

    std::size_t remaining() const noexcept { return in_.size() - pos_; }

    // A fixed-size name array of an entry (taken by pointer: a reference
    // to a packed member could bind to a temporary copy).
    std::string_view text(const char* chars, std::size_t size, const char* what) const {
        const std::size_t len = strnlen(chars, size);
        if (len == size)
            refuse(EINVAL, std::string(what) + " not terminated");
        if (len > limits_.maxNameBytes)
            refuse(E2BIG, std::string(what) + " too long");
        return std::string_view(chars, len);
    }

    // The atype that begins a lttng_ust_ctl_type or lttng_ust_ctl_basic_type,
    // read as an integer: an out-of-range value from an app must not be
    // loaded as the enum type (nor a reference to the packed member bound,
    // which would load it into a temporary).
    template <typename PackedType>
    static std::uint32_t leadingAtype(const PackedType& type) noexcept {
        static_assert(alignof(PackedType) == 1);
        static_assert(sizeof(lttng_ust_ctl_abstract_types) == sizeof(std::uint32_t));
        std::uint32_t raw = 0;
        std::memcpy(&raw, &type, sizeof raw);
        return raw;
    }
    static std::uint32_t atypeOf(const lttng_ust_ctl_field& f) noexcept {
        return leadingAtype(f.type);
    }

    static Encoding encodingOf(std::int32_t e, const char* what) {
        switch (e) {
        case lttng_ust_ctl_encode_none:
            return Encoding::None;
        case lttng_ust_ctl_encode_UTF8:
            return Encoding::Utf8;
        case lttng_ust_ctl_encode_ASCII:
            return Encoding::Ascii;
        default:
            refuse(EINVAL, std::string(what) + ": unknown encoding " + std::to_string(e));
        }
    }

    static IntegerType integerOf(const lttng_ust_ctl_integer_type& it) {
        IntegerType t;
        t.size = it.size;
        t.alignment = it.alignment;
        t.isSigned = it.signedness != 0;
        t.reverseByteOrder = it.reverse_byte_order != 0;
        t.base = it.base;
        t.encoding = encodingOf(it.encoding, "integer");
        if (t.size < 1 || t.size > 64)
            refuse(EINVAL, "integer size " + std::to_string(t.size) + " not in 1..64");
        if (!isPowerOfTwo(t.alignment) || t.alignment > kMaxAlignmentBits)
            refuse(EINVAL, "integer alignment " + std::to_string(t.alignment) + " invalid");
        if (t.base != 2 && t.base != 8 && t.base != 10 && t.base != 16)
            refuse(EINVAL, "integer base " + std::to_string(t.base) + " invalid");
        return t;
    }

    IntegerType integerEntry(const char* what) {
        const lttng_ust_ctl_field& f = next(what);
        if (atypeOf(f) != lttng_ust_ctl_atype_integer)
            refuse(EINVAL, std::string(what) + " is not an integer");
        return integerOf(f.type.u.integer);
    }

    static std::uint32_t byteAlignment(std::uint32_t bytes, const char* what) {
        if (bytes == 0)
            return 0;
        if (!isPowerOfTwo(bytes) || bytes > kMaxAlignmentBits / 8)
            refuse(EINVAL, std::string(what) + " alignment " + std::to_string(bytes) + " invalid");
        return bytes * 8;
    }

    // Identifiers of the members of a struct (or the choices of a variant)
    // as babeltrace2 checks them: a new member's identifier must differ
    // from every earlier member's *name*, which is its identifier less one
    // leading '_' (visit_struct_decl_field compares the new identifier with
    // the names of the members so far). So "_a" may not follow "__a".
    struct IdentifierSet {
        std::unordered_set<std::string> identifiers;
        std::unordered_set<std::string> names; // identifiers less their '_'

        bool available(const std::string& id) const {
            return identifiers.count(id) == 0 && names.count(id) == 0;
        }
        void add(const std::string& id) {
            identifiers.insert(id);
            names.insert(id.substr(1));
        }
    };

    std::string uniqueIdentifier(const std::string& base) {
        std::string candidate = base;
        for (std::size_t n = 1; !identifiers_.available(candidate); ++n)
            candidate = base + "_" + std::to_string(n);
        identifiers_.add(candidate);
        return candidate;
    }

    // The earlier field a length or tag named `name` refers to: the latest
    // one of that name in the current struct, else in the enclosing ones.
    const Declared& lookup(std::string_view name, const char* what) const {
        for (auto level = levels_.rbegin(); level != levels_.rend(); ++level) {
            const auto it = std::find_if(level->rbegin(), level->rend(),
                                         [&](const Declared& d) { return d.name == name; });
            if (it == level->rend())
                continue;
            // The reader searches enclosing variants' choices too: a choice
            // of the same identifier would capture the reference.
            for (const auto* choices : enclosingChoices_) {
                if (!choices->available(it->identifier))
                    refuse(EINVAL, std::string(what) + " is hidden by a variant choice");
            }
            return *it;
        }
        refuse(EINVAL, std::string(what) + " names no earlier field");
    }

    // Where a decoded field goes: a struct's members (identifier made
    // unique, field declared for later references) or a variant's choices
    // (identifier kept, so that it matches a label).
    struct Sink {
        std::vector<Field>& out;
        IdentifierSet* choiceIds = nullptr; // set for choices
    };

    std::string identifierFor(Sink& sink, std::string_view name) {
        std::string id = fieldIdentifier(name);
        if (sink.choiceIds == nullptr)
            return uniqueIdentifier(id);
        if (!sink.choiceIds->available(id))
            refuse(EINVAL, "two variant choices named alike: " + id);
        sink.choiceIds->add(id);
        return id;
    }

    void addPadding(Sink& sink, std::string_view name, std::uint32_t alignmentBits) {
        if (alignmentBits == 0)
            return;
        if (sink.choiceIds != nullptr)
            refuse(EINVAL, "aligned type as a variant choice");
        std::string id = uniqueIdentifier(fieldIdentifier(std::string(name) + "_padding"));
        sink.out.push_back(Field{std::move(id), StructType{alignmentBits, {}}});
    }

    void emit(Sink& sink, std::string_view name, FieldType type, Declared::Kind kind,
              std::shared_ptr<const EnumDescription> enumDescription = nullptr,
              bool enumUnsigned = false) {
        std::string id = identifierFor(sink, name);
        if (sink.choiceIds == nullptr) {
            levels_.back().push_back(
                Declared{std::string(name), id, kind, enumDescription, enumUnsigned});
        }
        sink.out.push_back(Field{std::move(id), std::move(type)});
    }

    void decodeMember(std::vector<Field>& out, std::size_t depth) {
        Sink sink{out};
        decode(sink, depth);
    }

    void decode(Sink& sink, std::size_t depth) {
        if (depth > limits_.maxDepth)
            refuse(E2BIG, "fields nested too deep");
        const lttng_ust_ctl_field& f = next("a field");
        const std::string_view name = text(f.name, sizeof f.name, "field name");
        using Kind = Declared::Kind;

        switch (atypeOf(f)) {
        case lttng_ust_ctl_atype_integer: {
            const IntegerType t = integerOf(f.type.u.integer);
            emit(sink, name, t, t.isSigned ? Kind::SignedInteger : Kind::UnsignedInteger);
            break;
        }
        case lttng_ust_ctl_atype_float: {
            const lttng_ust_ctl_float_type& ft = f.type.u._float;
            FloatType t{ft.exp_dig, ft.mant_dig, ft.alignment, ft.reverse_byte_order != 0};
            if (!((t.expDig == 8 && t.mantDig == 24) || (t.expDig == 11 && t.mantDig == 53)))
                refuse(EINVAL, "float is neither binary32 nor binary64");
            if (!isPowerOfTwo(t.alignment) || t.alignment > kMaxAlignmentBits)
                refuse(EINVAL, "float alignment invalid");
            emit(sink, name, t, Kind::Other);
            break;
        }
        case lttng_ust_ctl_atype_string:
            emit(sink, name, StringType{encodingOf(f.type.u.string.encoding, "string")},
                 Kind::Other);
            break;
        case lttng_ust_ctl_atype_enum_nestable:
            decodeEnum(
                sink, name,
                text(f.type.u.enum_nestable.name, sizeof f.type.u.enum_nestable.name, "enum name"),
                f.type.u.enum_nestable.id, integerEntry("enum container"));
            break;
        case lttng_ust_ctl_atype_enum: {
            decodeEnum(sink, name,
                       text(f.type.u.legacy.basic.enumeration.name,
                            sizeof f.type.u.legacy.basic.enumeration.name, "enum name"),
                       f.type.u.legacy.basic.enumeration.id,
                       integerOf(f.type.u.legacy.basic.enumeration.container_type));
            break;
        }
        case lttng_ust_ctl_atype_array_nestable: {
            const std::uint32_t length = f.type.u.array_nestable.length;
            const std::uint32_t align = byteAlignment(f.type.u.array_nestable.alignment, "array");
            const IntegerType element = integerEntry("array element");
            addPadding(sink, name, align);
            emit(sink, name, ArrayType{element, length}, Kind::Other);
            break;
        }
        case lttng_ust_ctl_atype_array: {
            const auto& elem = f.type.u.legacy.array.elem_type;
            if (leadingAtype(elem) != lttng_ust_ctl_atype_integer)
                refuse(EINVAL, "array element is not an integer");
            emit(sink, name,
                 ArrayType{integerOf(elem.u.basic.integer), f.type.u.legacy.array.length},
                 Kind::Other);
            break;
        }
        case lttng_ust_ctl_atype_sequence_nestable: {
            const std::string_view lengthName =
                text(f.type.u.sequence_nestable.length_name,
                     sizeof f.type.u.sequence_nestable.length_name, "sequence length name");
            const std::uint32_t align =
                byteAlignment(f.type.u.sequence_nestable.alignment, "sequence");
            const IntegerType element = integerEntry("sequence element");
            const Declared& length = lookup(lengthName, "sequence length");
            const bool unsignedLength = length.kind == Kind::UnsignedInteger ||
                                        (length.kind == Kind::Enum && length.enumUnsigned);
            if (!unsignedLength)
                refuse(EINVAL, "sequence length is not an unsigned integer");
            std::string lengthId = length.identifier;
            addPadding(sink, name, align);
            emit(sink, name, SequenceType{element, std::move(lengthId)}, Kind::Other);
            break;
        }
        case lttng_ust_ctl_atype_sequence: {
            const auto& lengthBasic = f.type.u.legacy.sequence.length_type;
            const auto& elemBasic = f.type.u.legacy.sequence.elem_type;
            if (leadingAtype(lengthBasic) != lttng_ust_ctl_atype_integer ||
                leadingAtype(elemBasic) != lttng_ust_ctl_atype_integer)
                refuse(EINVAL, "sequence length or element is not an integer");
            const IntegerType lengthType = integerOf(lengthBasic.u.basic.integer);
            const IntegerType element = integerOf(elemBasic.u.basic.integer);
            if (lengthType.isSigned)
                refuse(EINVAL, "sequence length is not an unsigned integer");
            if (sink.choiceIds != nullptr)
                refuse(EINVAL, "legacy sequence as a variant choice");
            // lttng-sessiond writes the implicit length as "__<name>_length".
            const std::string lengthName = "_" + std::string(name) + "_length";
            emit(sink, lengthName, lengthType, Kind::UnsignedInteger);
            std::string lengthId = sink.out.back().identifier;
            emit(sink, name, SequenceType{element, std::move(lengthId)}, Kind::Other);
            break;
        }
        case lttng_ust_ctl_atype_struct_nestable:
            decodeStruct(sink, name, f.type.u.struct_nestable.nr_fields,
                         byteAlignment(f.type.u.struct_nestable.alignment, "struct"), depth);
            break;
        case lttng_ust_ctl_atype_struct:
            decodeStruct(sink, name, f.type.u.legacy._struct.nr_fields, 0, depth);
            break;
        case lttng_ust_ctl_atype_variant_nestable:
            decodeVariant(sink, name, f.type.u.variant_nestable.nr_choices,
                          text(f.type.u.variant_nestable.tag_name,
                               sizeof f.type.u.variant_nestable.tag_name, "variant tag name"),
                          byteAlignment(f.type.u.variant_nestable.alignment, "variant"), depth);
            break;
        case lttng_ust_ctl_atype_variant:
            decodeVariant(sink, name, f.type.u.legacy.variant.nr_choices,
                          text(f.type.u.legacy.variant.tag_name,
                               sizeof f.type.u.legacy.variant.tag_name, "variant tag name"),
                          0, depth);
            break;
        default:
            refuse(EINVAL, "unknown field type " + std::to_string(atypeOf(f)));
        }
    }

    void decodeEnum(Sink& sink, std::string_view name, std::string_view enumName,
                    std::uint64_t enumId, const IntegerType& container) {
        auto description = enums_.find(enumName, enumId);
        if (!description)
            refuse(ENOENT, "unknown enum " + std::string(enumName) + " (id " +
                               std::to_string(enumId) + ")");
        if (container.isSigned ? description->hasValueAboveInt64 : description->hasNegativeValue)
            refuse(EINVAL, "enum values do not fit its container's signedness");
        emit(sink, name, EnumType{container, description}, Declared::Kind::Enum, description,
             !container.isSigned);
    }

    void decodeStruct(Sink& sink, std::string_view name, std::uint32_t count,
                      std::uint32_t alignmentBits, std::size_t depth) {
        if (count > remaining())
            refuse(EINVAL, "struct has more members than the list has fields");
        StructType st{alignmentBits, {}};
        st.fields.reserve(count);
        levels_.emplace_back();
        for (std::uint32_t i = 0; i < count; ++i)
            decodeMember(st.fields, depth + 1);
        levels_.pop_back();
        emit(sink, name, std::move(st), Declared::Kind::Other);
    }

    void decodeVariant(Sink& sink, std::string_view name, std::uint32_t count,
                       std::string_view tagName, std::uint32_t alignmentBits, std::size_t depth) {
        if (count == 0)
            refuse(EINVAL, "variant without choices");
        if (count > remaining())
            refuse(EINVAL, "variant has more choices than the list has fields");
        const Declared& tag = lookup(tagName, "variant tag");
        if (tag.kind != Declared::Kind::Enum)
            refuse(EINVAL, "variant tag is not an enum");
        const std::shared_ptr<const EnumDescription> labels = tag.enumDescription;
        VariantType vt{tag.identifier, {}};
        vt.choices.reserve(count);

        IdentifierSet choiceIds;
        Sink choices{vt.choices, &choiceIds};
        enclosingChoices_.push_back(&choiceIds);
        for (std::uint32_t i = 0; i < count; ++i)
            decode(choices, depth + 1); // choices are never declared: nothing refers to them
        enclosingChoices_.pop_back();

        for (const Field& choice : vt.choices) {
            const bool labelled =
                std::any_of(labels->entries.begin(), labels->entries.end(),
                            [&](const EnumEntry& e) { return e.label == choice.identifier; });
            if (!labelled)
                refuse(EINVAL, "variant choice " + choice.identifier + " is no label of its tag");
        }
        addPadding(sink, name, alignmentBits);
        emit(sink, name, std::move(vt), Declared::Kind::Other);
    }

    std::span<const lttng_ust_ctl_field> in_;
    std::size_t pos_ = 0;
    const EnumRegistry& enums_;
    const RegistryLimits& limits_;
    IdentifierSet identifiers_;                 // struct members, all levels
    std::vector<std::vector<Declared>> levels_; // visible declarations, outermost first
    std::vector<const IdentifierSet*> enclosingChoices_;
};

} // namespace

std::vector<Field> decodeFields(std::span<const lttng_ust_ctl_field> fields,
                                const EnumRegistry& enums, const RegistryLimits& limits) {
    return Decoder(fields, enums, limits).run();
}

} // namespace tracectl::metadata
