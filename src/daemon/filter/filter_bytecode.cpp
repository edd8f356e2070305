#include "filter/filter_bytecode.hpp"

#include "filter/bytecode_ops.hpp"
#include "filter/filter_error.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace tracectl::filter {

namespace {

class Generator {
public:
    FilterBytecode run(const Node& root) {
        visit(root);
        emitOp(Op::Return);
        FilterBytecode out;
        out.relocOffset = static_cast<std::uint32_t>(code_.size());
        out.data = std::move(code_);
        out.data.insert(out.data.end(), reloc_.begin(), reloc_.end());
        if (out.data.size() + kBytecodeHeaderSize > kFilterMaxLen)
            throw FilterError(0, "the filter's bytecode would be " +
                                     std::to_string(out.data.size() + kBytecodeHeaderSize) +
                                     " bytes long (its " + std::to_string(kBytecodeHeaderSize) +
                                     "-byte header included), over LTTng's limit of " +
                                     std::to_string(kFilterMaxLen) +
                                     " bytes (LTTNG_FILTER_MAX_LEN)");
        return out;
    }

private:
    template <typename T>
    static void append(std::vector<std::uint8_t>& to, const T& value) {
        std::uint8_t bytes[sizeof(T)];
        std::memcpy(bytes, &value, sizeof(T));
        to.insert(to.end(), bytes, bytes + sizeof(T));
    }
    void emitOp(Op op) { code_.push_back(static_cast<std::uint8_t>(op)); }

    // A reloc entry naming the instruction at `insnOffset`; the name's offset
    // within the reloc table is returned (GET_SYMBOL's operand).
    std::uint16_t addReloc(std::size_t insnOffset, const std::string& name) {
        append(reloc_, static_cast<std::uint16_t>(insnOffset));
        const auto nameOffset = static_cast<std::uint16_t>(reloc_.size());
        reloc_.insert(reloc_.end(), name.begin(), name.end());
        reloc_.push_back(0);
        return nameOffset;
    }

    void field(const Node& node) {
        bool indexed = false;
        for (const auto& seg : node.path)
            indexed = indexed || seg.index.has_value();
        if (!indexed) { // lttng's "legacy" load: one reference by full name
            std::string name = node.root == FieldRoot::Context      ? "$ctx."
                               : node.root == FieldRoot::AppContext ? "$app."
                                                                    : "";
            for (std::size_t i = 0; i < node.path.size(); ++i)
                name += (i ? "." : "") + node.path[i].name;
            const std::size_t at = code_.size();
            emitOp(node.root == FieldRoot::Payload ? Op::LoadFieldRef : Op::GetContextRef);
            append(code_, static_cast<std::uint16_t>(0xFFFF));
            addReloc(at, name);
            return;
        }
        emitOp(node.root == FieldRoot::Context      ? Op::GetContextRoot
               : node.root == FieldRoot::AppContext ? Op::GetAppContextRoot
                                                    : Op::GetPayloadRoot);
        for (const auto& seg : node.path) {
            const std::size_t at = code_.size();
            emitOp(Op::GetSymbol);
            // The operand is where the name will sit: after the u16 offset.
            append(code_, static_cast<std::uint16_t>(reloc_.size() + sizeof(std::uint16_t)));
            addReloc(at, seg.name);
            if (seg.index) {
                emitOp(Op::GetIndexU64);
                append(code_, static_cast<std::uint64_t>(*seg.index));
            }
        }
        emitOp(Op::LoadField);
    }

    void castForLogical(const Node& operand) {
        if (operand.type == DataType::Expression)
            emitOp(Op::CastToS64);
        else if (operand.type == DataType::Float)
            emitOp(Op::CastDoubleToS64);
    }

    // `node`'s operator and right operand, its left operand's code emitted.
    void logical(const Node& node) {
        castForLogical(*node.left);
        emitOp(node.binaryOp == BinaryOp::LogicalAnd ? Op::And : Op::Or);
        const std::size_t patchAt = code_.size();
        append(code_, static_cast<std::uint16_t>(0xFFFF));
        visit(*node.right);
        castForLogical(*node.right);
        const auto target = static_cast<std::uint16_t>(code_.size());
        std::memcpy(&code_[patchAt], &target, sizeof target);
    }

    static Op binaryOpcode(BinaryOp op) {
        switch (op) {
        case BinaryOp::Mul:
            return Op::Mul;
        case BinaryOp::Div:
            return Op::Div;
        case BinaryOp::Mod:
            return Op::Mod;
        case BinaryOp::Plus:
            return Op::Plus;
        case BinaryOp::Minus:
            return Op::Minus;
        case BinaryOp::ShiftRight:
            return Op::BitRshift;
        case BinaryOp::ShiftLeft:
            return Op::BitLshift;
        case BinaryOp::BitAnd:
            return Op::BitAnd;
        case BinaryOp::BitOr:
            return Op::BitOr;
        case BinaryOp::BitXor:
            return Op::BitXor;
        case BinaryOp::Equal:
            return Op::Eq;
        case BinaryOp::NotEqual:
            return Op::Ne;
        case BinaryOp::Greater:
            return Op::Gt;
        case BinaryOp::Less:
            return Op::Lt;
        case BinaryOp::GreaterEqual:
            return Op::Ge;
        case BinaryOp::LessEqual:
            return Op::Le;
        case BinaryOp::LogicalAnd:
            return Op::And;
        case BinaryOp::LogicalOr:
            return Op::Or;
        }
        return Op::Unknown;
    }

    void visit(const Node& node) {
        switch (node.kind) {
        case NodeKind::Integer:
            emitOp(Op::LoadS64);
            append(code_, static_cast<std::int64_t>(node.integer));
            return;
        case NodeKind::Float:
            emitOp(Op::LoadDouble);
            append(code_, node.floating);
            return;
        case NodeKind::String:
            emitOp(node.stringKind == StringKind::GlobStar ? Op::LoadStarGlobString
                                                           : Op::LoadString);
            code_.insert(code_.end(), node.text.begin(), node.text.end());
            code_.push_back(0);
            return;
        case NodeKind::Field:
            field(node);
            return;
        case NodeKind::Unary:
            visit(*node.left);
            switch (node.unaryOp) {
            case UnaryOp::Plus:
                return;
            case UnaryOp::Minus:
                emitOp(Op::UnaryMinus);
                return;
            case UnaryOp::Not:
                emitOp(Op::UnaryNot);
                return;
            case UnaryOp::BitNot:
                emitOp(Op::UnaryBitNot);
                return;
            }
            return;
        case NodeKind::Binary:
            binary(node);
            return;
        }
    }

    // Postorder, a chain (leftChain()) in a loop: the innermost left
    // operand, then each operator with its right operand.
    void binary(const Node& top) {
        const std::vector<const Node*> chain = leftChain(top, anyBinary);
        visit(*chain.front()->left);
        for (const Node* node : chain) {
            if (node->binaryOp == BinaryOp::LogicalAnd || node->binaryOp == BinaryOp::LogicalOr) {
                logical(*node);
                continue;
            }
            visit(*node->right);
            emitOp(binaryOpcode(node->binaryOp));
        }
    }

    std::vector<std::uint8_t> code_;
    std::vector<std::uint8_t> reloc_;
};

} // namespace

std::vector<std::uint8_t> FilterBytecode::ustAbiBytes() const {
    std::vector<std::uint8_t> out(kBytecodeHeaderSize + data.size(), 0);
    const auto len = static_cast<std::uint32_t>(data.size());
    std::memcpy(out.data(), &len, sizeof len);
    std::memcpy(out.data() + 4, &relocOffset, sizeof relocOffset);
    std::memcpy(out.data() + 8, &seqnum, sizeof seqnum);
    if (!data.empty())
        std::memcpy(out.data() + kBytecodeHeaderSize, data.data(), data.size());
    return out;
}

FilterBytecode generateBytecode(const Node& root) {
    return Generator().run(root);
}

} // namespace tracectl::filter
