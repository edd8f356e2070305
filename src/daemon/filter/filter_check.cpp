#include "filter/filter_check.hpp"

#include "filter/filter_error.hpp"

#include <string>
#include <vector>

namespace tracectl::filter {

namespace {

// strutils_test_glob_pattern (lttng-tools src/common/string-utils): the
// first unescaped '*' decides; a pattern whose first star ends it is
// "star at the end only".
StringKind globKind(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '*')
            return i + 1 == text.size() ? StringKind::GlobStarEnd : StringKind::GlobStar;
        if (text[i] == '\\')
            ++i;
    }
    return StringKind::Plain;
}

// strutils_normalize_star_glob_pattern: consecutive unescaped stars become one.
std::string normalizeGlob(const std::string& text) {
    std::string out;
    bool star = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '*') {
            if (star)
                continue;
            star = true;
        } else if (c == '\\') {
            out.push_back(c);
            if (++i == text.size())
                break;
            star = false;
        } else {
            star = false;
        }
        out.push_back(text[i]);
    }
    return out;
}

bool isComparison(BinaryOp op) {
    switch (op) {
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Greater:
    case BinaryOp::Less:
    case BinaryOp::GreaterEqual:
    case BinaryOp::LessEqual:
        return true;
    default:
        return false;
    }
}

bool isLogical(BinaryOp op) {
    return op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr;
}

bool isArithmetic(BinaryOp op) {
    switch (op) {
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod:
    case BinaryOp::Plus:
    case BinaryOp::Minus:
        return true;
    default:
        return false;
    }
}

[[noreturn]] void refuse(std::size_t column, std::string reason) {
    throw FilterError(column, std::move(reason));
}

// The type of Binary `node`, whose operands are typed.
void typeBinary(Node& node) {
    const std::string op = binaryOpText(node.binaryOp);
    const DataType l = node.left->type;
    const DataType r = node.right->type;
    const auto numericOrFloat = [](DataType t) {
        return t == DataType::Numeric || t == DataType::Float;
    };
    if (isComparison(node.binaryOp)) {
        if ((l == DataType::String && numericOrFloat(r)) ||
            (numericOrFloat(l) && r == DataType::String))
            refuse(node.operatorColumn, "binary operation '" + op + "' operand type mismatch");
    } else if (isLogical(node.binaryOp)) {
        if (l == DataType::String || r == DataType::String)
            refuse(node.operatorColumn,
                   "logical binary operation '" + op + "' cannot have string operand");
    } else {
        if (l == DataType::String || r == DataType::String)
            refuse(node.operatorColumn,
                   "bitwise binary operation '" + op + "' cannot have string operand");
        if (l == DataType::Float || r == DataType::Float)
            refuse(node.operatorColumn,
                   "bitwise binary operation '" + op + "' cannot have floating point operand");
    }
    node.type = DataType::Numeric;
}

// Pass 1: the type rules of filter-visitor-generate-ir.c, operands first.
void assignTypes(Node& node) {
    switch (node.kind) {
    case NodeKind::Integer:
        node.type = DataType::Numeric;
        return;
    case NodeKind::Float:
        node.type = DataType::Float;
        return;
    case NodeKind::String:
        node.type = DataType::String;
        node.stringKind = globKind(node.text);
        return;
    case NodeKind::Field:
        node.type = DataType::Expression;
        return;
    case NodeKind::Unary:
        assignTypes(*node.left);
        if (node.left->type == DataType::String)
            refuse(node.operatorColumn, std::string("unary operation '") +
                                            unaryOpText(node.unaryOp) +
                                            "' not allowed on string literal");
        node.type = node.left->type;
        return;
    case NodeKind::Binary:
        break;
    }
    // A chain in a loop, in the order LTTng's recursion refuses: an
    // arithmetic operator from the outermost in, then the operands from
    // the innermost out.
    const std::vector<Node*> chain = leftChain(node, anyBinary);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        if (isArithmetic((*it)->binaryOp))
            refuse((*it)->operatorColumn, std::string("binary operation '") +
                                              binaryOpText((*it)->binaryOp) + "' not supported");
    assignTypes(*chain.front()->left);
    for (Node* link : chain) {
        assignTypes(*link->right);
        typeBinary(*link);
    }
}

// Every node, each before its operands (left first), without recursion.
template <typename Visit>
void forEachNode(Node& root, const Visit& visit) {
    std::vector<Node*> pending{&root};
    while (!pending.empty()) {
        Node& node = *pending.back();
        pending.pop_back();
        visit(node);
        if (node.right)
            pending.push_back(node.right.get());
        if (node.left)
            pending.push_back(node.left.get());
    }
}

// Pass 3: filter-visitor-ir-validate-string.c.
void validateString(const Node& node) {
    const std::string& text = node.text;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\')
            continue;
        if (i + 1 < text.size() && (text[i + 1] == '*' || text[i + 1] == '\\')) {
            ++i;
            continue;
        }
        refuse(node.column, "Unsupported escape character detected in string literal (only "
                            "\\* is allowed)");
    }
}

bool isStringLiteral(const Node& node) {
    return node.kind == NodeKind::String;
}
bool isFullGlob(const Node& node) {
    return isStringLiteral(node) && node.stringKind == StringKind::GlobStar;
}

// Pass 4: filter-visitor-ir-validate-globbing.c, then the string comparator
// rule of filter-visitor-ir-check-binary-comparator.c.
void validateComparison(const Node& node) {
    if (node.kind != NodeKind::Binary)
        return;
    const Node& l = *node.left;
    const Node& r = *node.right;
    const bool eqOrNe = node.binaryOp == BinaryOp::Equal || node.binaryOp == BinaryOp::NotEqual;
    if (isStringLiteral(l) && isStringLiteral(r) &&
        ((isFullGlob(l) && r.stringKind != StringKind::Plain) ||
         (isFullGlob(r) && l.stringKind != StringKind::Plain)))
        refuse(node.operatorColumn, "Cannot compare two globbing patterns");
    if ((isFullGlob(l) || isFullGlob(r)) && !eqOrNe)
        refuse(node.operatorColumn,
               "Only the `==` and `!=` operators are allowed with a globbing pattern");
    if ((l.type == DataType::String || r.type == DataType::String) && !eqOrNe)
        refuse(node.operatorColumn, "Only '==' and '!=' comparators are allowed for strings");
}

} // namespace

void checkFilter(Node& root) {
    assignTypes(root);
    if (root.type == DataType::String)
        refuse(root.column, "String cannot be root data type (the filter must be a condition)");
    if (root.type == DataType::Float)
        refuse(root.column,
               "a floating-point value cannot be root data type (the filter must be a condition)");
    forEachNode(root, [](Node& node) {
        if (node.kind == NodeKind::String && node.stringKind != StringKind::Plain)
            node.text = normalizeGlob(node.text);
    });
    forEachNode(root, [](Node& node) {
        if (node.kind == NodeKind::String)
            validateString(node);
    });
    forEachNode(root, [](Node& node) { validateComparison(node); });
}

} // namespace tracectl::filter
