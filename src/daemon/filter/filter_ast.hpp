// The tree of a parsed filter expression: LTTng 2.13's AST
// (lttng-tools src/common/filter/filter-ast.h), with the dot/bracket chains
// of a field reference flattened into one path, and the type that the
// checks (filter_check.hpp) give each node, as LTTng's IR does
// (filter-ir.h: IR_DATA_STRING, _NUMERIC, _FLOAT, _EXPRESSION).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracectl::filter {

enum class NodeKind { Integer, Float, String, Field, Unary, Binary };

enum class UnaryOp { Plus, Minus, Not, BitNot };

// In lttng's enum op_type order (filter-ast.h).
enum class BinaryOp {
    Mul,
    Div,
    Mod,
    Plus,
    Minus,
    ShiftRight,
    ShiftLeft,
    LogicalAnd,
    LogicalOr,
    BitAnd,
    BitOr,
    BitXor,
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
};

/// Where a field reference starts: the event payload (`name`), the
/// channel's contexts (`$ctx.name`) or application contexts
/// (`$app.provider:name`).
enum class FieldRoot { Payload, Context, AppContext };

/// One element of a field path: `name` and, for `name[3]`, the index.
struct FieldSegment {
    std::string name;
    std::optional<std::uint64_t> index;
    std::size_t column = 0;
};

/// The static type of a node (LTTng's enum ir_data_type): a string literal,
/// a numeric value (integer literal, comparison, logical or bitwise result),
/// a floating literal, or a field whose type is known only in the app.
enum class DataType { Unknown, String, Numeric, Float, Expression };

/// A string literal's kind (LTTng's enum ir_load_string_type): plain (or
/// with escaped stars only), a star only at its end ("abc*"), or a full
/// star-globbing pattern ("a*b", "a**").
enum class StringKind { Plain, GlobStarEnd, GlobStar };

struct Node {
    NodeKind kind = NodeKind::Integer;
    std::size_t column = 0; // 1-based byte column of the node's first token

    std::uint64_t integer = 0; // Integer
    double floating = 0;       // Float
    std::string text;          // String: the literal's contents, raw
    StringKind stringKind = StringKind::Plain;

    FieldRoot root = FieldRoot::Payload; // Field
    std::vector<FieldSegment> path;      // Field: at least one segment

    UnaryOp unaryOp = UnaryOp::Plus;   // Unary: operand in `left`
    BinaryOp binaryOp = BinaryOp::Mul; // Binary: operands in `left`, `right`
    std::size_t operatorColumn = 0;    // Unary, Binary: the operator's column
    std::unique_ptr<Node> left;
    std::unique_ptr<Node> right;

    DataType type = DataType::Unknown; // set by checkFilter()

    Node() = default;
    /// Frees the operands without recursion: a chain of thousands of
    /// operators (`a || b || ...`, a left spine as tall) costs no stack.
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
};

using NodePtr = std::unique_ptr<Node>;

/// The left-associative chain that `top` heads, innermost first: `top`'s
/// left operand, its left operand and so on while each is a Binary node
/// that `inChain` accepts, then `top` (which must be a Binary node
/// `inChain` accepts). `a || b || c` is `(a || b) || c`: a tree as tall as
/// the chain is long, though the expression nests nothing. A pass walks
/// the chain with a loop, visiting the innermost node's left operand and
/// then each node's right operand; it recurses only into those operands,
/// which are tighter operators, unary operators or parentheses: as deep as
/// the expression really nests (bounded by the parser: kMaxFilterNesting).
template <typename N, typename InChain>
std::vector<N*> leftChain(N& top, const InChain& inChain) {
    std::vector<N*> chain{&top};
    for (N* n = top.left.get(); n != nullptr && n->kind == NodeKind::Binary && inChain(*n);
         n = n->left.get())
        chain.push_back(n);
    return {chain.rbegin(), chain.rend()};
}

/// Any Binary node: every binary operator is left-associative.
inline bool anyBinary(const Node&) {
    return true;
}

/// The operator as written ("&&", "<<", ...).
const char* binaryOpText(BinaryOp op);
const char* unaryOpText(UnaryOp op);

} // namespace tracectl::filter
