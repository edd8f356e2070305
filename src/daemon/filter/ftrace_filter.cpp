#include "filter/ftrace_filter.hpp"

#include "filter/filter_ast.hpp"
#include "filter/filter_check.hpp"
#include "filter/filter_error.hpp"
#include "filter/filter_parser.hpp"

#include <optional>
#include <vector>

namespace tracectl::filter {

namespace {

/// The comparison operators ftrace has, as both languages spell them.
bool isComparison(BinaryOp op) {
    return op == BinaryOp::Equal || op == BinaryOp::NotEqual || op == BinaryOp::Greater ||
           op == BinaryOp::Less || op == BinaryOp::GreaterEqual || op == BinaryOp::LessEqual;
}

/// `a OP b` read as `b OP' a`.
BinaryOp mirrored(BinaryOp op) {
    switch (op) {
    case BinaryOp::Greater:
        return BinaryOp::Less;
    case BinaryOp::Less:
        return BinaryOp::Greater;
    case BinaryOp::GreaterEqual:
        return BinaryOp::LessEqual;
    case BinaryOp::LessEqual:
        return BinaryOp::GreaterEqual;
    default:
        return op;
    }
}

class Translator {
public:
    explicit Translator(const FieldLookup& lookup) : lookup_(lookup) {}

    std::string condition(const Node& n) {
        if (n.kind == NodeKind::Unary && n.unaryOp == UnaryOp::Not)
            return "!(" + condition(*n.left) + ")";
        if (n.kind == NodeKind::Binary) {
            if (isLogical(n))
                return logical(n);
            if (n.binaryOp == BinaryOp::BitAnd)
                return bitTest(n);
            if (isComparison(n.binaryOp))
                return comparison(n);
        }
        if (n.kind == NodeKind::Field) {
            const Field named = field(n);
            if (named.isString && *named.isString)
                throw refused(n, "a string field is not a condition");
            return named.name + " != 0";
        }
        throw refused(n, "ftrace filters take comparisons of a field with a constant, joined "
                         "by &&, || and !");
    }

private:
    static bool isLogical(const Node& n) {
        return n.binaryOp == BinaryOp::LogicalAnd || n.binaryOp == BinaryOp::LogicalOr;
    }

    /// `(L) && (R)`, `(L) || (R)`; a chain (leftChain()) in a loop:
    /// `((a) || (b)) || (c)`.
    std::string logical(const Node& top) {
        const std::vector<const Node*> chain = leftChain(top, isLogical);
        std::string out(chain.size(), '(');
        out += condition(*chain.front()->left);
        for (const Node* n : chain)
            out += (n->binaryOp == BinaryOp::LogicalAnd ? ") && (" : ") || (") +
                   condition(*n->right) + ")";
        return out;
    }

    static FilterError refused(const Node& n, const std::string& why) {
        const std::size_t column =
            n.kind == NodeKind::Binary || n.kind == NodeKind::Unary ? n.operatorColumn : n.column;
        return FilterError(column, "not possible in a kernel filter: " + why);
    }

    /// The field `n` names, in ftrace's terms; `isString` nullopt: unknown.
    struct Field {
        std::string name;
        std::optional<bool> isString;
        bool isUnsigned = false;
    };
    Field field(const Node& n) {
        if (n.kind != NodeKind::Field)
            throw refused(n, "a field was expected");
        if (n.path.size() != 1 || n.path.front().index)
            throw refused(n, "ftrace filters have no nested fields or array indexing");
        const std::string& name = n.path.front().name;
        if (n.root == FieldRoot::Context) {
            if (name == "tid" || name == "vtid")
                return {"common_pid", false};
            if (name == "procname")
                return {"COMM", true}; // `comm` would be the event's own field, if it has one
            if (name == "cpu_id")
                return {"CPU", false};
            throw refused(n, "the context $ctx." + name +
                                 " (ftrace filters know $ctx.tid, $ctx.procname and $ctx.cpu_id)");
        }
        if (n.root == FieldRoot::AppContext)
            throw refused(n, "application contexts are UST only");
        if (!lookup_)
            return {name, std::nullopt};
        const std::optional<FtraceField> f = lookup_(name);
        if (!f)
            throw NoSuchField(n.column, "no field '" + name + "'");
        return {f->name, f->isString, f->isUnsigned};
    }

    /// An integer constant, with its sign; nullopt if `n` is not one.
    static std::optional<std::string> integer(const Node& n) {
        if (n.kind == NodeKind::Integer)
            return std::to_string(n.integer);
        if (n.kind == NodeKind::Unary && n.left && n.left->kind == NodeKind::Integer) {
            if (n.unaryOp == UnaryOp::Minus)
                return "-" + std::to_string(n.left->integer);
            if (n.unaryOp == UnaryOp::Plus)
                return std::to_string(n.left->integer);
        }
        return std::nullopt;
    }

    std::string literal(const Node& n) {
        if (auto i = integer(n))
            return *i;
        if (n.kind == NodeKind::Float)
            throw refused(n, "ftrace filters have no floating-point values");
        if (n.kind == NodeKind::String) {
            for (const char c : n.text)
                if (c == '"' || c == '\\' || c == '?' || c == '[' || c == ']')
                    throw refused(n, std::string("the character '") + c +
                                         "' in a string (ftrace reads it otherwise)");
            return "\"" + n.text + "\"";
        }
        throw refused(n, "a constant was expected");
    }

    std::string comparison(const Node& n) {
        const Node* f = n.left.get();
        const Node* c = n.right.get();
        BinaryOp op = n.binaryOp;
        if (f->kind != NodeKind::Field && c->kind == NodeKind::Field) {
            std::swap(f, c);
            op = mirrored(op);
        }
        // `(field & mask) != 0` and `== 0`.
        if (f->kind == NodeKind::Binary && f->binaryOp == BinaryOp::BitAnd && integer(*c) &&
            *integer(*c) == "0" && (op == BinaryOp::Equal || op == BinaryOp::NotEqual))
            return op == BinaryOp::NotEqual ? bitTest(*f) : "!(" + bitTest(*f) + ")";
        if (f->kind != NodeKind::Field)
            throw refused(n, "one side of a comparison must be a field");
        if (c->kind == NodeKind::Field)
            throw refused(n, "ftrace cannot compare two fields");
        const Field named = field(*f);
        const std::string& name = named.name;
        const std::string value = literal(*c);
        if (named.isString && *named.isString != (c->kind == NodeKind::String))
            throw refused(n, "'" + f->path.front().name + "' is a " +
                                 (*named.isString ? "string" : "number") +
                                 " field, compared with " +
                                 (*named.isString ? "a number" : "a string"));
        if (named.isUnsigned && !value.empty() && value.front() == '-')
            throw refused(n, "'" + f->path.front().name +
                                 "' is unsigned in ftrace's record: the kernel takes no "
                                 "negative value for it");
        if (c->kind == NodeKind::String) {
            if (op != BinaryOp::Equal && op != BinaryOp::NotEqual)
                throw refused(n, "strings compare with == and != only");
            if (c->stringKind != StringKind::Plain)
                return op == BinaryOp::Equal ? name + " ~ " + value
                                             : "!(" + name + " ~ " + value + ")";
        }
        return name + " " + binaryOpText(op) + " " + value;
    }

    std::string bitTest(const Node& n) {
        const Node* f = n.left.get();
        const Node* c = n.right.get();
        if (f->kind != NodeKind::Field)
            std::swap(f, c);
        if (f->kind != NodeKind::Field || !integer(*c))
            throw refused(n, "'&' takes a field and an integer constant");
        const Field named = field(*f);
        if (named.isString && *named.isString)
            throw refused(n, "'&' takes a number field");
        return named.name + " & " + *integer(*c);
    }

    const FieldLookup& lookup_;
};

} // namespace

std::string toFtraceFilter(std::string_view expression, const FieldLookup& lookup) {
    const NodePtr tree = parseFilter(expression);
    // LTTng's own type checks (and the glob kind of each string literal).
    checkFilter(*tree);
    return Translator(lookup).condition(*tree);
}

} // namespace tracectl::filter
