#include "filter/filter_parser.hpp"

#include "filter/filter_error.hpp"
#include "filter/filter_lexer.hpp"

#include <utility>
#include <vector>

namespace tracectl::filter {

const char* binaryOpText(BinaryOp op) {
    switch (op) {
    case BinaryOp::Mul:
        return "*";
    case BinaryOp::Div:
        return "/";
    case BinaryOp::Mod:
        return "%";
    case BinaryOp::Plus:
        return "+";
    case BinaryOp::Minus:
        return "-";
    case BinaryOp::ShiftRight:
        return ">>";
    case BinaryOp::ShiftLeft:
        return "<<";
    case BinaryOp::LogicalAnd:
        return "&&";
    case BinaryOp::LogicalOr:
        return "||";
    case BinaryOp::BitAnd:
        return "&";
    case BinaryOp::BitOr:
        return "|";
    case BinaryOp::BitXor:
        return "^";
    case BinaryOp::Equal:
        return "==";
    case BinaryOp::NotEqual:
        return "!=";
    case BinaryOp::Greater:
        return ">";
    case BinaryOp::Less:
        return "<";
    case BinaryOp::GreaterEqual:
        return ">=";
    case BinaryOp::LessEqual:
        return "<=";
    }
    return "?";
}

const char* unaryOpText(UnaryOp op) {
    switch (op) {
    case UnaryOp::Plus:
        return "+";
    case UnaryOp::Minus:
        return "-";
    case UnaryOp::Not:
        return "!";
    case UnaryOp::BitNot:
        return "~";
    }
    return "?";
}

namespace {

struct Level {
    TokenKind token;
    BinaryOp op;
};

// The binary levels, loosest first (filter-parser.y: logical_or_expression
// down to multiplicative_expression).
const std::vector<std::vector<Level>>& levels() {
    static const std::vector<std::vector<Level>> table = {
        {{TokenKind::LogicalOr, BinaryOp::LogicalOr}},
        {{TokenKind::LogicalAnd, BinaryOp::LogicalAnd}},
        {{TokenKind::Equal, BinaryOp::Equal}, {TokenKind::NotEqual, BinaryOp::NotEqual}},
        {{TokenKind::Less, BinaryOp::Less},
         {TokenKind::Greater, BinaryOp::Greater},
         {TokenKind::LessEqual, BinaryOp::LessEqual},
         {TokenKind::GreaterEqual, BinaryOp::GreaterEqual}},
        {{TokenKind::BitOr, BinaryOp::BitOr}},
        {{TokenKind::BitXor, BinaryOp::BitXor}},
        {{TokenKind::BitAnd, BinaryOp::BitAnd}},
        {{TokenKind::ShiftLeft, BinaryOp::ShiftLeft},
         {TokenKind::ShiftRight, BinaryOp::ShiftRight}},
        {{TokenKind::Plus, BinaryOp::Plus}, {TokenKind::Minus, BinaryOp::Minus}},
        {{TokenKind::Star, BinaryOp::Mul},
         {TokenKind::Slash, BinaryOp::Div},
         {TokenKind::Percent, BinaryOp::Mod}},
    };
    return table;
}

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

    NodePtr run() {
        NodePtr root = binary(0);
        if (peek().kind != TokenKind::End)
            unexpected();
        return root;
    }

private:
    struct Depth {
        explicit Depth(Parser& owner) : parser(owner) {
            if (++parser.depth_ > kMaxFilterNesting)
                throw FilterError(parser.peek().column, "expression nested too deeply (more than " +
                                                            std::to_string(kMaxFilterNesting) +
                                                            " parentheses and unary operators)");
        }
        ~Depth() { --parser.depth_; }
        Depth(const Depth&) = delete;
        Depth& operator=(const Depth&) = delete;
        Parser& parser;
    };

    const Token& peek(std::size_t ahead = 0) const {
        const std::size_t i = pos_ + ahead;
        return i < tokens_.size() ? tokens_[i] : tokens_.back();
    }
    const Token& take() {
        const Token& token = peek();
        if (pos_ < tokens_.size() - 1)
            ++pos_;
        return token;
    }
    [[noreturn]] void unexpected() const {
        throw FilterError(peek().column, "syntax error: unexpected " + describeToken(peek()));
    }
    void expect(TokenKind kind, const char* what) {
        if (peek().kind != kind)
            throw FilterError(peek().column, std::string("syntax error: expected ") + what +
                                                 ", got " + describeToken(peek()));
        take();
    }

    // One binary level; left-associative, iterative: a chain of any length
    // (`a || b || c ...`) nests nothing and costs no stack, here or in the
    // passes that follow (leftChain()). What it costs is bytecode, whose
    // size generateBytecode() bounds as lttng does.
    NodePtr binary(std::size_t level) {
        if (level == levels().size())
            return unary();
        NodePtr left = binary(level + 1);
        for (;;) {
            const Level* match = nullptr;
            for (const auto& candidate : levels()[level])
                if (peek().kind == candidate.token)
                    match = &candidate;
            if (match == nullptr)
                break;
            const std::size_t opColumn = take().column;
            NodePtr right = binary(level + 1);
            auto node = std::make_unique<Node>();
            node->kind = NodeKind::Binary;
            node->binaryOp = match->op;
            node->column = left->column;
            node->operatorColumn = opColumn;
            node->left = std::move(left);
            node->right = std::move(right);
            left = std::move(node);
        }
        return left;
    }

    NodePtr unary() {
        UnaryOp op;
        switch (peek().kind) {
        case TokenKind::Plus:
            op = UnaryOp::Plus;
            break;
        case TokenKind::Minus:
            op = UnaryOp::Minus;
            break;
        case TokenKind::Not:
            op = UnaryOp::Not;
            break;
        case TokenKind::BitNot:
            op = UnaryOp::BitNot;
            break;
        default:
            return primary();
        }
        auto node = std::make_unique<Node>();
        node->kind = NodeKind::Unary;
        node->unaryOp = op;
        node->column = take().column;
        node->operatorColumn = node->column;
        Depth guard(*this);
        node->left = unary();
        return node;
    }

    NodePtr primary() {
        const Token& token = peek();
        auto node = std::make_unique<Node>();
        node->column = token.column;
        switch (token.kind) {
        case TokenKind::Integer:
            node->kind = NodeKind::Integer;
            node->integer = token.integer;
            take();
            return node;
        case TokenKind::Float:
            node->kind = NodeKind::Float;
            node->floating = token.floating;
            take();
            return node;
        case TokenKind::String:
            node->kind = NodeKind::String;
            node->text = token.text;
            take();
            return node;
        case TokenKind::LParen: {
            take();
            Depth guard(*this);
            NodePtr inner = binary(0);
            expect(TokenKind::RParen, "')'");
            return inner;
        }
        case TokenKind::Identifier:
        case TokenKind::GlobalIdentifier:
            return field();
        default:
            unexpected();
        }
    }

    FieldSegment segment() {
        const Token& name = peek();
        if (name.kind != TokenKind::Identifier && name.kind != TokenKind::GlobalIdentifier)
            unexpected();
        FieldSegment seg;
        seg.name = name.text;
        seg.column = name.column;
        take();
        if (peek().kind != TokenKind::LBracket)
            return seg;
        const std::size_t bracket = take().column;
        if (peek().kind != TokenKind::Integer || peek(1).kind != TokenKind::RBracket)
            throw FilterError(bracket, "Expecting constant index in array expression");
        seg.index = take().integer;
        take();
        if (peek().kind == TokenKind::LBracket)
            throw FilterError(peek().column, "only one index per field is supported");
        return seg;
    }

    NodePtr field() {
        auto node = std::make_unique<Node>();
        node->kind = NodeKind::Field;
        node->column = peek().column;
        std::vector<FieldSegment> segments;
        segments.push_back(segment());
        while (peek().kind == TokenKind::Dot || peek().kind == TokenKind::Arrow) {
            take();
            segments.push_back(segment());
        }
        const FieldSegment& first = segments.front();
        if (first.name[0] == '$') {
            if (first.name == "$ctx")
                node->root = FieldRoot::Context;
            else if (first.name == "$app")
                node->root = FieldRoot::AppContext;
            else
                throw FilterError(first.column, "Unexpected identifier '" + first.name + "'");
            if (first.index)
                throw FilterError(first.column, "'" + first.name + "' cannot be indexed");
            if (segments.size() == 1)
                throw FilterError(first.column, "Expecting identifier after '" + first.name + "'");
            segments.erase(segments.begin());
        }
        node->path = std::move(segments);
        return node;
    }

    std::vector<Token> tokens_;
    std::size_t pos_ = 0;
    std::size_t depth_ = 0;
};

} // namespace

NodePtr parseFilter(std::string_view expression) {
    return Parser(tokenize(expression)).run();
}

} // namespace tracectl::filter
