#include "record_layout_compiler.hpp"

#include "enum_registry.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tracectl::metadata {

namespace {

using record_layout::LayoutError;
using record_layout::Op;
using record_layout::OpKind;
using record_layout::Program;
using record_layout::VariantRange;

std::uint64_t alignUp(std::uint64_t v, std::uint32_t a) noexcept {
    return (v + a - 1) & ~std::uint64_t{a - 1};
}

std::uint32_t alignmentOf(const FieldType& type);

std::uint32_t structAlignment(const StructType& t) {
    std::uint32_t a = std::max<std::uint32_t>(t.alignment, 1);
    for (const Field& f : t.fields)
        a = std::max(a, alignmentOf(f.type));
    return a;
}

// The CTF alignment of a type, as babeltrace2 computes it (its ctf
// plugin's set_alignments: a struct takes its largest member's, a variant
// stays at 1).
std::uint32_t alignmentOf(const FieldType& type) {
    struct Visitor {
        std::uint32_t operator()(const IntegerType& t) const { return t.alignment; }
        std::uint32_t operator()(const FloatType& t) const { return t.alignment; }
        std::uint32_t operator()(const StringType&) const { return 8; }
        std::uint32_t operator()(const EnumType& t) const { return t.container.alignment; }
        std::uint32_t operator()(const ArrayType& t) const { return t.element.alignment; }
        std::uint32_t operator()(const SequenceType& t) const { return t.element.alignment; }
        std::uint32_t operator()(const StructType& t) const { return structAlignment(t); }
        std::uint32_t operator()(const VariantType&) const { return 1; }
    };
    return std::max<std::uint32_t>(std::visit(Visitor{}, type), 1);
}

// Identifiers that a sequence length or a variant tag names.
void collectReferences(const std::vector<Field>& fields, std::unordered_set<std::string>& out) {
    for (const Field& f : fields) {
        if (const auto* s = std::get_if<SequenceType>(&f.type)) {
            out.insert(s->lengthIdentifier);
        } else if (const auto* st = std::get_if<StructType>(&f.type)) {
            collectReferences(st->fields, out);
        } else if (const auto* v = std::get_if<VariantType>(&f.type)) {
            out.insert(v->tagIdentifier);
            collectReferences(v->choices, out);
        }
    }
}

// Ops of one body; Choice ops' `bits` are relative to the body's start
// until the body is placed in its parent.
class Body {
public:
    void skip(std::uint32_t alignment, std::uint64_t bits) {
        if (pending_) {
            // The run starts aligned on p.alignment: a field aligned on no
            // more than that lands at a known offset; a larger alignment is
            // only known before any bits.
            Op& p = *pending_;
            if (alignment <= p.alignment) {
                const std::uint64_t at = alignUp(p.bits, alignment);
                if (at + bits <= record_layout::kMaxSkipBits) {
                    p.bits = at + bits;
                    return;
                }
            } else if (p.bits == 0) {
                p.alignment = alignment;
                p.bits = bits;
                return;
            }
            flush();
        }
        pending_ = Op{OpKind::Skip, 0, 0, alignment, bits};
    }

    // `alignment`: what `op` aligns on itself (1 for a variant); a pending
    // bare alignment it covers is dropped.
    void push(const Op& op, std::uint32_t alignment) {
        if (pending_ && pending_->bits == 0 && pending_->alignment <= alignment)
            pending_.reset();
        flush();
        ops_.push_back(op);
    }

    // Appends `child`, relocating its choices to where it lands.
    void splice(std::vector<Op>&& child) {
        flush();
        const std::uint64_t base = ops_.size();
        for (Op& op : child) {
            if (op.kind == OpKind::Choice)
                op.bits += base;
        }
        ops_.insert(ops_.end(), child.begin(), child.end());
    }

    std::vector<Op> take() {
        flush();
        return std::move(ops_);
    }

private:
    void flush() {
        if (pending_ && !(pending_->bits == 0 && pending_->alignment == 1))
            ops_.push_back(*pending_);
        pending_.reset();
    }

    std::vector<Op> ops_;
    std::optional<Op> pending_;
};

class Compiler {
public:
    explicit Compiler(const std::vector<Field>& fields) { collectReferences(fields, referenced_); }

    Program run(const std::vector<Field>& fields) {
        Body body;
        body.skip(structAlignmentOf(fields), 0);
        for (const Field& f : fields)
            member(body, f, false);
        Program p;
        p.ops = body.take();
        p.ranges = std::move(ranges_);
        if (p.ops.size() > record_layout::kMaxOps)
            throw LayoutError("record layout: " + std::to_string(p.ops.size()) +
                              " ops, past the limit");
        if (p.ranges.size() > record_layout::kMaxRanges)
            throw LayoutError("record layout: " + std::to_string(p.ranges.size()) +
                              " variant ranges, past the limit");
        p.registers = static_cast<std::uint16_t>(nextRegister_);
        record_layout::validate(p);
        return p;
    }

private:
    struct Register {
        std::uint16_t index;
        bool isSigned;
        std::shared_ptr<const EnumDescription> labels; // enums only
    };

    static std::uint32_t structAlignmentOf(const std::vector<Field>& fields) {
        std::uint32_t a = 1;
        for (const Field& f : fields)
            a = std::max(a, alignmentOf(f.type));
        return a;
    }

    // `choice`: the field is a variant choice, whose identifier is a label
    // that nothing refers to (it may equal a member's identifier).
    void member(Body& body, const Field& f, bool choice) {
        const bool keep = !choice && referenced_.count(f.identifier) != 0;
        std::visit(
            [&](const auto& t) {
                using T = std::decay_t<decltype(t)>;
                if constexpr (std::is_same_v<T, IntegerType>) {
                    integer(body, f.identifier, t, keep, nullptr);
                } else if constexpr (std::is_same_v<T, EnumType>) {
                    integer(body, f.identifier, t.container, keep, t.description);
                } else if constexpr (std::is_same_v<T, FloatType>) {
                    body.skip(std::max<std::uint32_t>(t.alignment, 1), t.expDig + t.mantDig);
                } else if constexpr (std::is_same_v<T, StringType>) {
                    body.push(Op{OpKind::String, 0, 0, 8, 0}, 8);
                } else if constexpr (std::is_same_v<T, ArrayType>) {
                    const std::uint32_t a = std::max<std::uint32_t>(t.element.alignment, 1);
                    const std::uint64_t bits =
                        t.length == 0 ? 0
                                      : (std::uint64_t{t.length} - 1) * alignUp(t.element.size, a) +
                                            t.element.size;
                    body.skip(a, bits);
                } else if constexpr (std::is_same_v<T, SequenceType>) {
                    const Register& r = lookup(t.lengthIdentifier, "sequence length");
                    const std::uint32_t a = std::max<std::uint32_t>(t.element.alignment, 1);
                    body.push(Op{OpKind::Sequence, 0, r.index, a, t.element.size}, a);
                } else if constexpr (std::is_same_v<T, StructType>) {
                    body.skip(structAlignment(t), 0);
                    for (const Field& m : t.fields)
                        member(body, m, false);
                } else if constexpr (std::is_same_v<T, VariantType>) {
                    variant(body, t);
                }
            },
            f.type);
    }

    void integer(Body& body, const std::string& id, const IntegerType& t, bool keep,
                 std::shared_ptr<const EnumDescription> labels) {
        const std::uint32_t a = std::max<std::uint32_t>(t.alignment, 1);
        if (!keep) {
            body.skip(a, t.size);
            return;
        }
        if (nextRegister_ >= record_layout::kMaxRegisters)
            throw LayoutError("record layout: more referenced fields than registers");
        const auto index = static_cast<std::uint16_t>(nextRegister_++);
        registers_.insert_or_assign(id, Register{index, t.isSigned, std::move(labels)});
        std::uint8_t flags = 0;
        if (t.isSigned)
            flags |= record_layout::kSigned;
        if (t.reverseByteOrder)
            flags |= record_layout::kReverse;
        body.push(Op{OpKind::Integer, flags, index, a, t.size}, a);
    }

    const Register& lookup(const std::string& id, const char* what) const {
        const auto it = registers_.find(id);
        if (it == registers_.end())
            throw LayoutError(std::string("record layout: ") + what + " " + id +
                              " names no earlier integer");
        return it->second;
    }

    void addRange(std::uint64_t lo, std::uint64_t hi, std::uint32_t choice, bool isSigned,
                  std::size_t first) {
        // Merge with the previous range of the same variant when it ends
        // just before and selects the same choice.
        if (ranges_.size() > first) {
            VariantRange& last = ranges_.back();
            const bool adjacent = isSigned ? static_cast<std::int64_t>(last.hi) < INT64_MAX &&
                                                 static_cast<std::int64_t>(last.hi) + 1 ==
                                                     static_cast<std::int64_t>(lo)
                                           : last.hi < UINT64_MAX && last.hi + 1 == lo;
            if (adjacent && last.choice == choice) {
                last.hi = hi;
                return;
            }
        }
        if (ranges_.size() >= record_layout::kMaxRanges)
            throw LayoutError("record layout: variant ranges past the limit");
        ranges_.push_back(VariantRange{lo, hi, choice});
    }

    void variant(Body& body, const VariantType& t) {
        const Register tag = lookup(t.tagIdentifier, "variant tag");
        const std::size_t first = ranges_.size();
        for (std::size_t k = 0; k < t.choices.size(); ++k) {
            if (tag.labels == nullptr)
                break;
            for (const EnumEntry& e : tag.labels->entries) {
                if (e.label == t.choices[k].identifier)
                    addRange(e.start.value, e.end.value, static_cast<std::uint32_t>(k),
                             tag.isSigned, first);
            }
        }
        const auto n = static_cast<std::uint32_t>(t.choices.size());
        const std::uint64_t rangeCount = ranges_.size() - first;
        Op v{OpKind::Variant, static_cast<std::uint8_t>(tag.isSigned ? record_layout::kSigned : 0),
             tag.index, n, (rangeCount << 32) | first};
        std::vector<Op> ops{v};
        std::vector<std::vector<Op>> bodies;
        bodies.reserve(n);
        for (const Field& c : t.choices) {
            Body b;
            member(b, c, true);
            bodies.push_back(b.take());
        }
        std::uint64_t start = 1 + n; // relative to `ops`
        for (const auto& b : bodies) {
            ops.push_back(Op{OpKind::Choice, 0, 0, static_cast<std::uint32_t>(b.size()), start});
            start += b.size();
        }
        for (auto& b : bodies) {
            const std::uint64_t base = ops.size();
            for (Op& op : b) {
                if (op.kind == OpKind::Choice)
                    op.bits += base;
            }
            ops.insert(ops.end(), b.begin(), b.end());
        }
        body.splice(std::move(ops));
    }

    std::unordered_set<std::string> referenced_;
    std::unordered_map<std::string, Register> registers_;
    std::size_t nextRegister_ = 0;
    std::vector<VariantRange> ranges_;
};

} // namespace

record_layout::Program compileFields(const std::vector<Field>& fields) {
    return Compiler(fields).run(fields);
}

record_layout::Abi layoutAbi(const Abi& abi) noexcept {
    record_layout::Abi out;
    out.bitsPerLong = abi.bitsPerLong;
    out.uint8Alignment = abi.uint8Alignment;
    out.uint16Alignment = abi.uint16Alignment;
    out.uint32Alignment = abi.uint32Alignment;
    out.uint64Alignment = abi.uint64Alignment;
    out.longAlignment = abi.longAlignment;
    out.bigEndian = abi.byteOrder == ByteOrder::Big;
    return out;
}

} // namespace tracectl::metadata
