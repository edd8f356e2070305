#include "aggregate/parser.hpp"

#include "aggregate/lexer.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tracectl::aggregate {

namespace {

std::string describe(const Token& token) {
    switch (token.kind) {
    case Token::Kind::end:
        return "end of program";
    case Token::Kind::string:
        return "string \"" + token.text + "\"";
    case Token::Kind::aggregation:
        return "'@" + token.text + "'";
    default:
        return "'" + token.text + "'";
    }
}

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

    Program run() {
        if (peek().kind == Token::Kind::end) {
            throw ProgramError(peek().at, "empty program: expected a probe description");
        }
        while (peek().kind != Token::Kind::end) {
            program_.clauses.push_back(clause());
        }
        return std::move(program_);
    }

private:
    const Token& peek(std::size_t ahead = 0) const {
        return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
    }
    const Token& take() {
        const Token& token = tokens_[index_];
        if (index_ + 1 < tokens_.size()) {
            ++index_;
        }
        return token;
    }
    bool is(std::string_view punctuation, std::size_t ahead = 0) const {
        const Token& token = peek(ahead);
        return token.kind == Token::Kind::punctuation && token.text == punctuation;
    }
    [[noreturn]] void fail(const Token& token, const std::string& expected) const {
        throw ProgramError(token.at,
                           "syntax error: expected " + expected + ", found " + describe(token));
    }
    const Token& expect(std::string_view punctuation) {
        if (!is(punctuation)) {
            fail(peek(), "'" + std::string(punctuation) + "'");
        }
        return take();
    }

    Clause clause() {
        Clause result;
        references_ = &result.references;
        for (;;) {
            if (peek().kind != Token::Kind::probe) {
                fail(peek(), "a probe description");
            }
            const Token& token = take();
            result.probes.push_back({token.text, token.at, probe_pattern(token.text, token.at)});
            if (!is(",")) {
                break;
            }
            take();
        }
        if (is("/")) {
            take();
            in_predicate_ = true;
            result.predicate = expression();
            in_predicate_ = false;
            expect("/");
        }
        expect("{");
        while (!is("}")) {
            if (is(";")) {
                take();
                continue;
            }
            result.statements.push_back(statement());
            if (!is(";") && !is("}")) {
                fail(peek(), "';' or '}'");
            }
        }
        take();
        return result;
    }

    Statement statement() {
        if (peek().kind != Token::Kind::aggregation) {
            fail(peek(), "an aggregation ('@' or '@name')");
        }
        const Token& name = take();
        Statement result;
        result.at = name.at;
        if (is("[")) {
            take();
            for (;;) {
                result.keys.push_back(expression());
                if (is("]")) {
                    break;
                }
                expect(",");
            }
            take();
        }
        expect("=");
        if (peek().kind != Token::Kind::identifier) {
            fail(peek(), "an aggregating function");
        }
        const Token& function_token = take();
        const Function function = function_by_name(function_token);
        const Token& open = expect("(");
        std::vector<std::unique_ptr<Expression>> arguments;
        if (!is(")")) {
            for (;;) {
                arguments.push_back(expression());
                if (is(")")) {
                    break;
                }
                expect(",");
            }
        }
        take();
        LinearParameters linear;
        check_arguments(function, function_token, open, arguments, linear);
        if (!arguments.empty()) {
            result.argument = std::move(arguments.front());
        }
        result.aggregation = declare(name, function, function_token, result.keys.size(), linear);
        return result;
    }

    static Function function_by_name(const Token& token) {
        static constexpr Function all[] = {Function::count,    Function::sum,      Function::avg,
                                           Function::min,      Function::max,      Function::stddev,
                                           Function::quantize, Function::lquantize};
        for (const Function f : all) {
            if (token.text == function_name(f)) {
                return f;
            }
        }
        throw ProgramError(token.at, "unknown aggregating function '" + token.text +
                                         "' (count, sum, avg, min, max, stddev, quantize, "
                                         "lquantize)");
    }

    static std::int64_t constant(const Expression& e, const char* what) {
        if (e.kind == Expression::Kind::integer) {
            return e.integer;
        }
        if (e.kind == Expression::Kind::unary && e.op == Operator::negate &&
            e.left->kind == Expression::Kind::integer) {
            return -e.left->integer;
        }
        throw ProgramError(e.at,
                           std::string("lquantize( ) ") + what + " must be an integer constant");
    }

    static void check_arguments(Function function, const Token& name, const Token& open,
                                const std::vector<std::unique_ptr<Expression>>& arguments,
                                LinearParameters& linear) {
        const std::size_t n = arguments.size();
        const std::string f = name.text + "( )";
        if (function == Function::count) {
            if (n != 0) {
                throw ProgramError(arguments.front()->at,
                                   f + " takes no arguments, " + std::to_string(n) + " given");
            }
            return;
        }
        if (function != Function::lquantize) {
            if (n != 1) {
                throw ProgramError(n == 0 ? open.at : arguments[1]->at,
                                   f + " takes 1 argument, " + std::to_string(n) + " given");
            }
            return;
        }
        if (n < 3 || n > 4) {
            throw ProgramError(n < 3 ? open.at : arguments[4]->at,
                               f +
                                   " takes 3 or 4 arguments (expression, lower bound, upper "
                                   "bound[, step]), " +
                                   std::to_string(n) + " given");
        }
        linear.low = constant(*arguments[1], "lower bound");
        linear.high = constant(*arguments[2], "upper bound");
        linear.step = n == 4 ? constant(*arguments[3], "step") : 1;
        constexpr std::int64_t int32_min = std::numeric_limits<std::int32_t>::min();
        constexpr std::int64_t int32_max = std::numeric_limits<std::int32_t>::max();
        if (linear.low < int32_min || linear.low > int32_max) {
            throw ProgramError(arguments[1]->at, "lquantize( ) lower bound must be a 32-bit "
                                                 "integer");
        }
        if (linear.high < int32_min || linear.high > int32_max) {
            throw ProgramError(arguments[2]->at, "lquantize( ) upper bound must be a 32-bit "
                                                 "integer");
        }
        if (linear.step <= 0 || linear.step > 65535) {
            throw ProgramError(n == 4 ? arguments[3]->at : open.at,
                               "lquantize( ) step must be from 1 to 65535");
        }
        if (linear.high <= linear.low) {
            throw ProgramError(arguments[2]->at, "lquantize( ) upper bound must be greater "
                                                 "than lower bound");
        }
        if (linear.levels() > 65535) {
            throw ProgramError(n == 4 ? arguments[3]->at : arguments[2]->at,
                               "lquantize( ) has more than 65535 levels: use a larger step");
        }
        if (linear.levels() < 1) {
            throw ProgramError(n == 4 ? arguments[3]->at : arguments[2]->at,
                               "lquantize( ) step is larger than upper bound minus lower bound");
        }
    }

    std::size_t declare(const Token& name, Function function, const Token& function_token,
                        std::size_t key_count, const LinearParameters& linear) {
        auto& all = program_.aggregations;
        const auto found = std::find_if(all.begin(), all.end(),
                                        [&](const auto& a) { return a.name == name.text; });
        if (found == all.end()) {
            all.push_back({name.text, function, key_count, linear, name.at});
            return all.size() - 1;
        }
        const std::string shown = "@" + name.text;
        const std::string first = " (first used at " + std::to_string(found->at.line) + ":" +
                                  std::to_string(found->at.column) + ")";
        if (found->function != function) {
            throw ProgramError(function_token.at, shown + " is an aggregation of " +
                                                      function_name(found->function) +
                                                      "( ): it cannot also use " +
                                                      function_name(function) + "( )" + first);
        }
        if (found->key_count != key_count) {
            throw ProgramError(name.at, shown + " has " + std::to_string(found->key_count) +
                                            " key(s), not " + std::to_string(key_count) + first);
        }
        if (function == Function::lquantize && !(found->linear == linear)) {
            throw ProgramError(function_token.at,
                               shown + " uses lquantize( ) with other bounds or step" + first);
        }
        return static_cast<std::size_t>(found - all.begin());
    }

    // Expressions, by C's precedence.
    std::unique_ptr<Expression> expression() { return logical_or(); }

    std::unique_ptr<Expression> binary(Operator op, const Token& token,
                                       std::unique_ptr<Expression> left,
                                       std::unique_ptr<Expression> right) {
        auto e = std::make_unique<Expression>();
        e->kind = Expression::Kind::binary;
        e->at = token.at;
        e->op = op;
        e->height = 1 + std::max(left->height, right->height);
        e->left = std::move(left);
        e->right = std::move(right);
        check_height(*e);
        return e;
    }

    static void check_height(const Expression& e) {
        if (e.height > max_expression_height) {
            throw ProgramError(e.at, "expression too deep (more than " +
                                         std::to_string(max_expression_height) +
                                         " levels of operators)");
        }
    }

    /// One more level of parentheses or unary operators, for the scope of this.
    struct Nesting {
        explicit Nesting(Parser& parser, const Token& token) : parser_(parser) {
            if (++parser_.nesting_ > max_expression_nesting) {
                throw ProgramError(token.at, "expression nested too deeply (more than " +
                                                 std::to_string(max_expression_nesting) +
                                                 " parentheses and unary operators)");
            }
        }
        ~Nesting() { --parser_.nesting_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;
        Parser& parser_;
    };

    std::unique_ptr<Expression> logical_or() {
        auto left = logical_and();
        while (is("||")) {
            const Token& t = take();
            left = binary(Operator::logical_or, t, std::move(left), logical_and());
        }
        return left;
    }
    std::unique_ptr<Expression> logical_and() {
        auto left = equality();
        while (is("&&")) {
            const Token& t = take();
            left = binary(Operator::logical_and, t, std::move(left), equality());
        }
        return left;
    }
    std::unique_ptr<Expression> equality() {
        auto left = relational();
        while (is("==") || is("!=")) {
            const Token& t = take();
            left = binary(t.text == "==" ? Operator::equal : Operator::not_equal, t,
                          std::move(left), relational());
        }
        return left;
    }
    std::unique_ptr<Expression> relational() {
        auto left = additive();
        for (;;) {
            Operator op;
            if (is("<")) {
                op = Operator::less;
            } else if (is("<=")) {
                op = Operator::less_equal;
            } else if (is(">")) {
                op = Operator::greater;
            } else if (is(">=")) {
                op = Operator::greater_equal;
            } else {
                return left;
            }
            const Token& t = take();
            left = binary(op, t, std::move(left), additive());
        }
    }
    std::unique_ptr<Expression> additive() {
        auto left = multiplicative();
        while (is("+") || is("-")) {
            const Token& t = take();
            left = binary(t.text == "+" ? Operator::add : Operator::subtract, t, std::move(left),
                          multiplicative());
        }
        return left;
    }
    std::unique_ptr<Expression> multiplicative() {
        auto left = unary();
        for (;;) {
            Operator op;
            if (is("*")) {
                op = Operator::multiply;
            } else if (is("/") && !(in_predicate_ && is("{", 1))) {
                op = Operator::divide; // "/ {" closes a predicate instead
            } else if (is("%")) {
                op = Operator::modulo;
            } else {
                return left;
            }
            const Token& t = take();
            left = binary(op, t, std::move(left), unary());
        }
    }
    std::unique_ptr<Expression> unary() {
        if (is("!") || is("-") || is("+")) {
            const Token& t = take();
            const Nesting nesting(*this, t);
            auto operand = unary();
            if (t.text == "+") {
                return operand;
            }
            auto e = std::make_unique<Expression>();
            e->kind = Expression::Kind::unary;
            e->at = t.at;
            e->op = t.text == "!" ? Operator::logical_not : Operator::negate;
            e->height = 1 + operand->height;
            e->left = std::move(operand);
            check_height(*e);
            return e;
        }
        return primary();
    }
    std::unique_ptr<Expression> primary() {
        const Token& t = peek();
        auto e = std::make_unique<Expression>();
        e->at = t.at;
        if (t.kind == Token::Kind::integer) {
            e->kind = Expression::Kind::integer;
            e->integer = take().value;
            return e;
        }
        if (t.kind == Token::Kind::string) {
            e->kind = Expression::Kind::string;
            e->text = take().text;
            return e;
        }
        if (is("(")) {
            const Nesting nesting(*this, take());
            auto inner = expression();
            expect(")");
            return inner;
        }
        if (t.kind != Token::Kind::identifier) {
            fail(t, "an expression");
        }
        take();
        e->kind = Expression::Kind::identifier;
        if (t.text == "args" && is("[")) {
            // args[N]->member: the field `member` (no translators here).
            take();
            if (peek().kind != Token::Kind::integer) {
                fail(peek(), "an argument index");
            }
            take();
            expect("]");
            expect("->");
            if (peek().kind != Token::Kind::identifier) {
                fail(peek(), "a member name");
            }
            const Token& member = take();
            e->at = member.at;
            e->text = member.text;
        } else {
            e->text = t.text;
        }
        auto& refs = *references_;
        if (std::none_of(refs.begin(), refs.end(),
                         [&](const auto& r) { return r.name == e->text; })) {
            refs.push_back({e->text, e->at});
        }
        return e;
    }

    std::vector<Token> tokens_;
    std::size_t index_ = 0;
    bool in_predicate_ = false;
    int nesting_ = 0;
    std::vector<FieldReference>* references_ = nullptr;
    Program program_;
};

} // namespace

std::string probe_pattern(const std::string& text, Position at) {
    std::vector<std::string> parts{""};
    for (const char c : text) {
        if (c == ':') {
            parts.emplace_back();
        } else {
            parts.back() += c;
        }
    }
    if (parts.size() == 1 || parts.size() == 2) {
        if (std::any_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); })) {
            throw ProgramError(at, "invalid probe description '" + text + "'");
        }
        return text;
    }
    if (parts.size() != 4) {
        throw ProgramError(at, "invalid probe description '" + text +
                                   "': expected provider:module:function:name, "
                                   "provider:name or an event name");
    }
    for (std::size_t i : {1, 2}) {
        if (!parts[i].empty() && parts[i] != "*") {
            throw ProgramError(at, "probe description '" + text +
                                       "': module and function parts must be empty or '*' "
                                       "(CTF event records have neither)");
        }
    }
    return (parts[0].empty() ? "*" : parts[0]) + ":" + (parts[3].empty() ? "*" : parts[3]);
}

Program parse_program(std::string_view source) {
    return Parser(tokenize(source)).run();
}

} // namespace tracectl::aggregate
