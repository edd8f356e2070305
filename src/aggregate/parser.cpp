#include "aggregate/parser.hpp"

#include "aggregate/format.hpp"
#include "aggregate/lexer.hpp"
#include "aggregate/program_checks.hpp"
#include "aggregate/user_probes.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

namespace tracectl::aggregate {

namespace {

std::string describe(const Token& token) {
    switch (token.kind) {
    case Token::Kind::End:
        return "end of program";
    case Token::Kind::String:
        return "string \"" + token.text + "\"";
    case Token::Kind::Aggregation:
        return "'@" + token.text + "'";
    case Token::Kind::Macro:
        return "'$" + token.text + "'";
    case Token::Kind::Directive:
        return "'#" + token.text + "'";
    default:
        return "'" + token.text + "'";
    }
}

/// Names D reserves for its built-in variables: never a variable of the program.
bool isBuiltinName(const std::string& name) {
    static const char* const names[] = {
        "timestamp", "vtimestamp", "walltimestamp", "cpu",      "pid",       "ppid",
        "tid",       "execname",   "probeprov",     "probemod", "probefunc", "probename",
        "args",      "curthread",  "uid",           "gid",      "errno"};
    const bool argument =
        name.size() == 4 && name.rfind("arg", 0) == 0 && name[3] >= '0' && name[3] <= '9';
    return argument || std::any_of(std::begin(names), std::end(names),
                                   [&](const char* n) { return name == n; });
}

/// Why a function or action is refused, if it is.
std::optional<std::string> refusal(const std::string& name) {
    if (name == "speculation" || name == "speculate" || name == "commit" || name == "discard") {
        return "speculations (" + name +
               ") are not supported: over recorded events there is nothing to keep back";
    }
    if (name.rfind("copyin", 0) == 0 || name.rfind("copyout", 0) == 0) {
        return name + "() reads or writes a live process's memory: not available over "
                      "recorded events";
    }
    if (name == "jstack") {
        return "jstack() is not supported: it needs a Java VM's ustack helper; use ustack()";
    }
    if (name == "system" || name == "raise" || name == "stop" || name == "panic" ||
        name == "breakpoint" || name == "chill") {
        return name + "() is a destructive action: not available (tracectl dtrace never "
                      "acts on the traced system)";
    }
    if (name == "speculative" || name == "func" || name == "ufunc" || name == "sym" ||
        name == "usym" || name == "mod" || name == "umod" || name == "uaddr") {
        return name + "() needs symbols of a live system: not supported";
    }
    return std::nullopt;
}

class Parser {
public:
    Parser(std::vector<Token> tokens, const Macros& macros)
        : tokens_(std::move(tokens)), macros_(macros) {}

    Program run() {
        if (peek().kind == Token::Kind::End) {
            throw ProgramError(peek().at, "empty program: expected a probe description");
        }
        while (peek().kind != Token::Kind::End) {
            if (peek().kind == Token::Kind::Directive) {
                directive(take());
                continue;
            }
            program_.clauses.push_back(clause());
        }
        if (program_.clauses.empty()) {
            throw ProgramError(peek().at, "empty program: expected a probe description");
        }
        checkStackPlacement(program_);
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
        return token.kind == Token::Kind::Punctuation && token.text == punctuation;
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

    void directive(const Token& token) {
        std::istringstream words(token.text);
        std::vector<std::string> w;
        for (std::string word; words >> word;) {
            w.push_back(word);
        }
        if (w.empty() || w[0] != "pragma") {
            throw ProgramError(token.at, "preprocessor directive '#" +
                                             (w.empty() ? std::string() : w[0]) +
                                             "' is not supported (tracectl dtrace does not run "
                                             "the C preprocessor)");
        }
        if (w.size() >= 2 && w[1] == "ident") {
            return; // #pragma ident: a comment for the source control
        }
        if (w.size() < 3 || w[1] != "D" || w[2] != "option") {
            throw ProgramError(token.at, "unsupported pragma '#" + token.text +
                                             "': expected #pragma D option NAME[=VALUE]");
        }
        if (w.size() != 4) {
            throw ProgramError(token.at, "#pragma D option takes one NAME or NAME=VALUE");
        }
        const std::size_t eq = w[3].find('=');
        program_.options.push_back({w[3].substr(0, eq),
                                    eq == std::string::npos ? std::string() : w[3].substr(eq + 1),
                                    token.at});
    }

    Clause clause() {
        Clause result;
        references_ = &result.references;
        for (;;) {
            if (peek().kind != Token::Kind::Probe) {
                fail(peek(), "a probe description");
            }
            const Token& token = take();
            result.probes.push_back(
                probeDescription(expandMacros(token.text, token.at), token.at, macros_.target));
            if (!is(",")) {
                break;
            }
            take();
        }
        if (is("/")) {
            take();
            inPredicate_ = true;
            result.predicate = expression();
            inPredicate_ = false;
            expect("/");
        }
        if (!is("{") && !result.predicate) {
            // No body: dtrace(1)'s default action, as for an empty one (`dtrace -n BEGIN`).
            return result;
        }
        if (!is("{")) {
            fail(peek(), "'{' (the actions after a predicate)");
        }
        take();
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
        const Token& first = peek();
        if (first.kind == Token::Kind::Identifier) {
            if (is("(", 1)) {
                return actionStatement();
            }
            return assignment();
        }
        if (first.kind != Token::Kind::Aggregation) {
            fail(peek(), "a statement (an aggregation, an assignment or an action)");
        }
        const Token& name = take();
        Statement result;
        result.at = name.at;
        if (is("[")) {
            take();
            result.keys = expressionList("]", false);
        }
        expect("=");
        if (peek().kind != Token::Kind::Identifier) {
            fail(peek(), "an aggregating function");
        }
        const Token& functionToken = take();
        const Function function = functionByName(functionToken);
        const Token& open = expect("(");
        std::vector<std::unique_ptr<Expression>> arguments = expressionList(")", true);
        LinearParameters linear;
        LogLinearParameters logLinear;
        checkArguments(function, functionToken, open, arguments, linear, logLinear);
        if (!arguments.empty()) {
            result.argument = std::move(arguments.front());
        }
        result.aggregation =
            declare(name, function, functionToken, result.keys.size(), linear, logLinear);
        return result;
    }

    Statement assignment() {
        Statement result;
        result.kind = Statement::Kind::Assign;
        result.at = peek().at;
        result.target = variableTarget();
        const Token& op = peek();
        if (is("++") || is("--")) {
            take();
            result.compound = true;
            result.op = op.text == "++" ? Operator::Add : Operator::Subtract;
            auto one = std::make_unique<Expression>();
            one->at = op.at;
            one->integer = 1;
            result.argument = std::move(one);
            return result;
        }
        static const std::pair<const char*, Operator> compounds[] = {
            {"+=", Operator::Add},        {"-=", Operator::Subtract}, {"*=", Operator::Multiply},
            {"/=", Operator::Divide},     {"%=", Operator::Modulo},   {"&=", Operator::BitAnd},
            {"|=", Operator::BitOr},      {"^=", Operator::BitXor},   {"<<=", Operator::ShiftLeft},
            {">>=", Operator::ShiftRight}};
        for (const auto& [text, o] : compounds) {
            if (is(text)) {
                take();
                result.compound = true;
                result.op = o;
                result.argument = expression();
                return result;
            }
        }
        expect("=");
        result.argument = expression();
        return result;
    }

    /// The variable an assignment writes: declares it at its first assignment.
    std::unique_ptr<Expression> variableTarget() {
        const Token& name = take();
        auto e = std::make_unique<Expression>();
        e->kind = Expression::Kind::Variable;
        e->at = name.at;
        VariableScope scope = VariableScope::Global;
        std::string variable = name.text;
        if ((name.text == "this" || name.text == "self") && is("->")) {
            take();
            if (peek().kind != Token::Kind::Identifier) {
                fail(peek(), "a variable name after '" + name.text + "->'");
            }
            scope = name.text == "this" ? VariableScope::ClauseLocal : VariableScope::ThreadLocal;
            variable = take().text;
        } else if (isBuiltinName(name.text) || name.text == "this" || name.text == "self") {
            throw ProgramError(name.at,
                               "'" + name.text + "' is a built-in variable: it cannot be assigned");
        } else if (std::find(programFields_.begin(), programFields_.end(), name.text) !=
                   programFields_.end()) {
            throw ProgramError(name.at, "'" + name.text +
                                            "' is read as an event field before this assignment "
                                            "(D declares a variable at its first assignment: "
                                            "assign it earlier, in BEGIN for instance)");
        }
        if (is("[")) {
            refuseClauseLocalArray(scope, name.at);
            keys(*e); // a global or thread-local associative array
        }
        e->text = variable;
        e->variable = declareVariable(variable, scope, e->arguments.size(), name.at);
        return e;
    }

    /// D has no clause-local associative arrays (this->name[key]).
    static void refuseClauseLocalArray(VariableScope scope, Position at) {
        if (scope == VariableScope::ClauseLocal) {
            throw ProgramError(at, "clause-local variables cannot be associative arrays in D "
                                   "(this->name[key]): use a global or self-> array");
        }
    }

    std::size_t declareVariable(const std::string& name, VariableScope scope, std::size_t keyCount,
                                Position at) {
        auto& all = program_.variables;
        const auto found = std::find_if(all.begin(), all.end(), [&](const auto& v) {
            return v.name == name && v.scope == scope;
        });
        if (found == all.end()) {
            all.push_back({name, scope, keyCount, at});
            return all.size() - 1;
        }
        if (found->keyCount != keyCount) {
            throw ProgramError(at, "variable '" + name + "' has " +
                                       std::to_string(found->keyCount) + " key(s), not " +
                                       std::to_string(keyCount) + " (first used at " +
                                       std::to_string(found->at.line) + ":" +
                                       std::to_string(found->at.column) + ")");
        }
        return static_cast<std::size_t>(found - all.begin());
    }

    static std::optional<Action> actionByName(const std::string& name) {
        static const std::pair<const char*, Action> all[] = {{"printf", Action::Printf},
                                                             {"printa", Action::Printa},
                                                             {"print", Action::Print},
                                                             {"trace", Action::Trace},
                                                             {"exit", Action::Exit},
                                                             {"clear", Action::Clear},
                                                             {"trunc", Action::Trunc},
                                                             {"normalize", Action::Normalize},
                                                             {"denormalize", Action::Denormalize}};
        for (const auto& [text, action] : all) {
            if (name == text) {
                return action;
            }
        }
        return std::nullopt;
    }

    Statement actionStatement() {
        const Token& name = take();
        if (auto why = refusal(name.text)) {
            throw ProgramError(name.at, *why);
        }
        const auto action = actionByName(name.text);
        if (!action && (name.text == "stack" || name.text == "ustack")) {
            // The stack of the firing, printed (dt_print_stack, dt_print_ustack).
            Statement result;
            result.kind = Statement::Kind::Action;
            result.action = Action::Stack;
            result.at = name.at;
            result.arguments.push_back(call(name));
            return result;
        }
        if (!action) {
            throw ProgramError(name.at, "unknown action '" + name.text +
                                            "' (printf, printa, print, trace, exit, clear, "
                                            "trunc, normalize, denormalize, stack, ustack)");
        }
        Statement result;
        result.kind = Statement::Kind::Action;
        result.action = *action;
        result.at = name.at;
        const Token& open = expect("(");
        std::vector<std::unique_ptr<Expression>> arguments = expressionList(")", true);
        const auto countError = [&](const std::string& wanted) {
            return ProgramError(open.at, name.text + "() takes " + wanted + ", " +
                                             std::to_string(arguments.size()) + " given");
        };
        const auto isAggregation = [](const Expression& e) {
            return e.kind == Expression::Kind::Aggregation;
        };
        std::size_t firstArgument = 0;
        switch (*action) {
        case Action::Printf: {
            if (arguments.empty() || arguments[0]->kind != Expression::Kind::String) {
                throw ProgramError(arguments.empty() ? open.at : arguments[0]->at,
                                   "printf() needs a format string constant first");
            }
            result.format = parseFormat(arguments[0]->text, arguments[0]->at, false);
            result.hasFormat = true;
            firstArgument = 1;
            if (arguments.size() - 1 != result.format.argumentCount()) {
                throw ProgramError(
                    arguments[0]->at,
                    "printf() format has " + std::to_string(result.format.argumentCount()) +
                        " conversion(s) but " + std::to_string(arguments.size() - 1) +
                        " argument(s) are given");
            }
            break;
        }
        case Action::Printa: {
            if (!arguments.empty() && arguments[0]->kind == Expression::Kind::String) {
                result.format = parseFormat(arguments[0]->text, arguments[0]->at, true);
                result.hasFormat = true;
                firstArgument = 1;
            }
            if (arguments.size() <= firstArgument) {
                throw countError("one or more aggregations (after an optional format)");
            }
            for (std::size_t i = firstArgument; i < arguments.size(); ++i) {
                if (!isAggregation(*arguments[i])) {
                    throw ProgramError(arguments[i]->at, "printa() prints aggregations: "
                                                         "expected '@name'");
                }
            }
            break;
        }
        case Action::Print:
        case Action::Trace:
            if (arguments.size() != 1) {
                throw countError("1 argument");
            }
            if (isAggregation(*arguments[0])) {
                throw ProgramError(arguments[0]->at, name.text + "() cannot take an "
                                                                 "aggregation: use printa()");
            }
            break;
        case Action::Exit:
            if (arguments.size() != 1) {
                throw countError("1 argument (the exit status)");
            }
            break;
        case Action::Clear:
        case Action::Denormalize:
            if (arguments.size() != 1 || !isAggregation(*arguments[0])) {
                throw ProgramError(arguments.empty() ? open.at : arguments[0]->at,
                                   name.text + "() takes one aggregation ('@name')");
            }
            break;
        case Action::Trunc:
        case Action::Normalize: {
            const bool normalize = *action == Action::Normalize;
            if (arguments.empty() || !isAggregation(*arguments[0]) || arguments.size() > 2 ||
                (normalize && arguments.size() != 2)) {
                throw ProgramError(arguments.empty() ? open.at : arguments[0]->at,
                                   normalize ? "normalize() takes an aggregation and a factor"
                                             : "trunc() takes an aggregation and an optional "
                                               "number of entries to keep");
            }
            break;
        }
        case Action::Stack:
            break; // stack() and ustack(), above
        }
        const bool takesAggregation = *action == Action::Clear || *action == Action::Trunc ||
                                      *action == Action::Normalize ||
                                      *action == Action::Denormalize;
        for (std::size_t i = firstArgument; i < arguments.size(); ++i) {
            if (isAggregation(*arguments[i]) && *action != Action::Printa &&
                !(takesAggregation && i == 0)) {
                throw ProgramError(arguments[i]->at, name.text + "() argument #" +
                                                         std::to_string(i + 1) +
                                                         " cannot be an aggregation");
            }
            result.arguments.push_back(std::move(arguments[i]));
        }
        return result;
    }

    static Function functionByName(const Token& token) {
        static constexpr Function kAll[] = {
            Function::Count,    Function::Sum,       Function::Avg,
            Function::Min,      Function::Max,       Function::Stddev,
            Function::Quantize, Function::Lquantize, Function::Llquantize};
        for (const Function f : kAll) {
            if (token.text == functionName(f)) {
                return f;
            }
        }
        throw ProgramError(token.at, "unknown aggregating function '" + token.text +
                                         "' (count, sum, avg, min, max, stddev, quantize, "
                                         "lquantize, llquantize)");
    }

    static std::int64_t constant(const Expression& e, const char* what,
                                 const char* function = "lquantize") {
        if (e.kind == Expression::Kind::Integer) {
            return e.integer;
        }
        if (e.kind == Expression::Kind::Unary && e.op == Operator::Negate &&
            e.left->kind == Expression::Kind::Integer) {
            return -e.left->integer;
        }
        throw ProgramError(e.at,
                           std::string(function) + "() " + what + " must be an integer constant");
    }

    static void checkLogLinear(const Token& open,
                               const std::vector<std::unique_ptr<Expression>>& arguments,
                               LogLinearParameters& p) {
        if (arguments.size() != 5) {
            throw ProgramError(open.at, "llquantize() takes 5 arguments (expression, factor, "
                                        "low magnitude, high magnitude, steps), " +
                                            std::to_string(arguments.size()) + " given");
        }
        p.factor = constant(*arguments[1], "factor", "llquantize");
        p.low = constant(*arguments[2], "low magnitude", "llquantize");
        p.high = constant(*arguments[3], "high magnitude", "llquantize");
        p.steps = constant(*arguments[4], "number of steps", "llquantize");
        if (p.factor < 2 || p.factor > 65535) {
            throw ProgramError(arguments[1]->at, "llquantize() factor must be from 2 to 65535");
        }
        if (p.low < 0 || p.low > 65535) {
            throw ProgramError(arguments[2]->at, "llquantize() low magnitude must be from 0 "
                                                 "to 65535");
        }
        if (p.high <= p.low || p.high > 65535) {
            throw ProgramError(arguments[3]->at, "llquantize() high magnitude must be greater "
                                                 "than the low magnitude");
        }
        if (p.steps < p.factor || p.steps > 65535 || p.steps % p.factor != 0) {
            throw ProgramError(arguments[4]->at, "llquantize() number of steps must be a "
                                                 "multiple of the factor, at most 65535");
        }
        // factor^(high + 1) must fit in 63 bits.
        std::int64_t power = 1;
        for (std::int64_t m = 0; m <= p.high; ++m) {
            if (power > std::numeric_limits<std::int64_t>::max() / p.factor) {
                throw ProgramError(arguments[3]->at, "llquantize() factor to the high "
                                                     "magnitude plus one overflows 64 bits");
            }
            power *= p.factor;
        }
    }

    static void checkArguments(Function function, const Token& name, const Token& open,
                               const std::vector<std::unique_ptr<Expression>>& arguments,
                               LinearParameters& linear, LogLinearParameters& logLinear) {
        if (function == Function::Llquantize) {
            checkLogLinear(open, arguments, logLinear);
            return;
        }
        const std::size_t n = arguments.size();
        const std::string f = name.text + "()";
        if (function == Function::Count) {
            if (n != 0) {
                throw ProgramError(arguments.front()->at,
                                   f + " takes no arguments, " + std::to_string(n) + " given");
            }
            return;
        }
        if (function != Function::Lquantize) {
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
        constexpr std::int64_t kInt32Min = std::numeric_limits<std::int32_t>::min();
        constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
        if (linear.low < kInt32Min || linear.low > kInt32Max) {
            throw ProgramError(arguments[1]->at, "lquantize() lower bound must be a 32-bit "
                                                 "integer");
        }
        if (linear.high < kInt32Min || linear.high > kInt32Max) {
            throw ProgramError(arguments[2]->at, "lquantize() upper bound must be a 32-bit "
                                                 "integer");
        }
        if (linear.step <= 0 || linear.step > 65535) {
            throw ProgramError(n == 4 ? arguments[3]->at : open.at,
                               "lquantize() step must be from 1 to 65535");
        }
        if (linear.high <= linear.low) {
            throw ProgramError(arguments[2]->at, "lquantize() upper bound must be greater "
                                                 "than lower bound");
        }
        if (linear.levels() > 65535) {
            throw ProgramError(n == 4 ? arguments[3]->at : arguments[2]->at,
                               "lquantize() has more than 65535 levels: use a larger step");
        }
        if (linear.levels() < 1) {
            throw ProgramError(n == 4 ? arguments[3]->at : arguments[2]->at,
                               "lquantize() step is larger than upper bound minus lower bound");
        }
    }

    std::size_t declare(const Token& name, Function function, const Token& functionToken,
                        std::size_t keyCount, const LinearParameters& linear,
                        const LogLinearParameters& logLinear) {
        auto& all = program_.aggregations;
        const auto found = std::find_if(all.begin(), all.end(),
                                        [&](const auto& a) { return a.name == name.text; });
        if (found == all.end()) {
            all.push_back({name.text, function, keyCount, linear, logLinear, name.at});
            return all.size() - 1;
        }
        const std::string shown = "@" + name.text;
        const std::string first = " (first used at " + std::to_string(found->at.line) + ":" +
                                  std::to_string(found->at.column) + ")";
        if (found->function != function) {
            throw ProgramError(functionToken.at, shown + " is an aggregation of " +
                                                     functionName(found->function) +
                                                     "(): it cannot also use " +
                                                     functionName(function) + "()" + first);
        }
        if (found->keyCount != keyCount) {
            throw ProgramError(name.at, shown + " has " + std::to_string(found->keyCount) +
                                            " key(s), not " + std::to_string(keyCount) + first);
        }
        if (function == Function::Lquantize && !(found->linear == linear)) {
            throw ProgramError(functionToken.at,
                               shown + " uses lquantize() with other bounds or step" + first);
        }
        if (function == Function::Llquantize && !(found->logLinear == logLinear)) {
            throw ProgramError(functionToken.at,
                               shown + " uses llquantize() with other parameters" + first);
        }
        return static_cast<std::size_t>(found - all.begin());
    }

    // Expressions, by C's precedence.
    std::unique_ptr<Expression> expression() { return conditional(); }

    std::unique_ptr<Expression> conditional() {
        auto condition = logicalOr();
        if (!is("?")) {
            return condition;
        }
        const Token& t = take();
        const Nesting nesting(*this, t);
        auto then = expression();
        expect(":");
        auto otherwise = conditional();
        auto e = std::make_unique<Expression>();
        e->kind = Expression::Kind::Ternary;
        e->at = t.at;
        e->height = 1 + std::max({condition->height, then->height, otherwise->height});
        e->left = std::move(condition);
        e->right = std::move(then);
        e->third = std::move(otherwise);
        checkHeight(*e);
        return e;
    }

    std::unique_ptr<Expression> binary(Operator op, const Token& token,
                                       std::unique_ptr<Expression> left,
                                       std::unique_ptr<Expression> right) {
        auto e = std::make_unique<Expression>();
        e->kind = Expression::Kind::Binary;
        e->at = token.at;
        e->op = op;
        e->height = 1 + std::max(left->height, right->height);
        e->left = std::move(left);
        e->right = std::move(right);
        checkHeight(*e);
        return e;
    }

    static void checkHeight(const Expression& e) {
        if (e.height > kMaxExpressionHeight) {
            throw ProgramError(e.at, "expression too deep (more than " +
                                         std::to_string(kMaxExpressionHeight) +
                                         " levels of operators)");
        }
    }

    /// One more level of parentheses or unary operators, for the scope of this.
    struct Nesting {
        explicit Nesting(Parser& parser, const Token& token) : parser_(parser) {
            if (++parser_.nesting_ > kMaxExpressionNesting) {
                throw ProgramError(token.at, "expression nested too deeply (more than " +
                                                 std::to_string(kMaxExpressionNesting) +
                                                 " parentheses and unary operators)");
            }
        }
        ~Nesting() { --parser_.nesting_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;

    private:
        Parser& parser_;
    };

    std::unique_ptr<Expression> logicalOr() {
        std::vector<std::unique_ptr<Expression>> terms;
        std::vector<const Token*> ops;
        terms.push_back(logicalXor());
        while (is("||")) {
            ops.push_back(&take());
            terms.push_back(logicalXor());
        }
        return balanced(Operator::LogicalOr, terms, ops, 0, terms.size());
    }
    /// terms[from..to) joined by `op` (|| or &&) as a balanced tree: a
    /// flat chain of thousands of terms is not nesting (issue 40, B7), and
    /// for these operators ((a || b) || c) and (a || (b || c)) have the
    /// same value and evaluate their operands in the same order, short
    /// circuit included. ops[i] is the operator between terms i and i+1.
    std::unique_ptr<Expression> balanced(Operator op,
                                         std::vector<std::unique_ptr<Expression>>& terms,
                                         const std::vector<const Token*>& ops, std::size_t from,
                                         std::size_t to) {
        if (to - from == 1) {
            return std::move(terms[from]);
        }
        const std::size_t mid = from + (to - from) / 2;
        auto left = balanced(op, terms, ops, from, mid);
        auto right = balanced(op, terms, ops, mid, to);
        return binary(op, *ops[mid - 1], std::move(left), std::move(right));
    }
    /// a ^^ b: (!!a) != (!!b).
    std::unique_ptr<Expression> logicalXor() {
        auto left = binaryLevel(0);
        while (is("^^")) {
            const Token& t = take();
            left =
                binary(Operator::NotEqual, t, truth(t, std::move(left)), truth(t, binaryLevel(0)));
        }
        return left;
    }
    std::unique_ptr<Expression> truth(const Token& t, std::unique_ptr<Expression> e) {
        for (int i = 0; i < 2; ++i) {
            auto n = std::make_unique<Expression>();
            n->kind = Expression::Kind::Unary;
            n->at = t.at;
            n->op = Operator::LogicalNot;
            n->height = 1 + e->height;
            n->left = std::move(e);
            checkHeight(*n);
            e = std::move(n);
        }
        return e;
    }
    /// The left-associative binary operators from && (the loosest) to * (the
    /// tightest), one level each, as C orders them (K&R 2nd ed., A.7).
    using Level = std::vector<std::pair<std::string_view, Operator>>;
    static const std::vector<Level>& binaryLevels() {
        static const std::vector<Level> levels = {
            {{"&&", Operator::LogicalAnd}},
            {{"|", Operator::BitOr}},
            {{"^", Operator::BitXor}},
            {{"&", Operator::BitAnd}},
            {{"==", Operator::Equal}, {"!=", Operator::NotEqual}},
            {{"<", Operator::Less},
             {"<=", Operator::LessEqual},
             {">", Operator::Greater},
             {">=", Operator::GreaterEqual}},
            {{"<<", Operator::ShiftLeft}, {">>", Operator::ShiftRight}},
            {{"+", Operator::Add}, {"-", Operator::Subtract}},
            {{"*", Operator::Multiply}, {"/", Operator::Divide}, {"%", Operator::Modulo}},
        };
        return levels;
    }
    /// The operator of binary level `level` the next token is, if any.
    std::optional<Operator> operatorAt(std::size_t level) const {
        for (const auto& [text, op] : binaryLevels()[level]) {
            if (is(text)) {
                if (op == Operator::Divide && inPredicate_ &&
                    (is("{", 1) || peek(1).kind == Token::Kind::End)) {
                    // "/ {" closes a predicate instead (and "/" at the end, which then
                    // lacks its actions)
                    return std::nullopt;
                }
                return op;
            }
        }
        return std::nullopt;
    }
    /// An expression of binary level `level` and tighter (0: && and tighter).
    std::unique_ptr<Expression> binaryLevel(std::size_t level) {
        if (level == binaryLevels().size()) {
            return unary();
        }
        if (level == 0) { // &&: balanced, as ||
            std::vector<std::unique_ptr<Expression>> terms;
            std::vector<const Token*> ops;
            terms.push_back(binaryLevel(1));
            while (is("&&")) {
                ops.push_back(&take());
                terms.push_back(binaryLevel(1));
            }
            return balanced(Operator::LogicalAnd, terms, ops, 0, terms.size());
        }
        auto left = binaryLevel(level + 1);
        while (const std::optional<Operator> op = operatorAt(level)) {
            const Token& t = take();
            left = binary(*op, t, std::move(left), binaryLevel(level + 1));
        }
        return left;
    }
    std::unique_ptr<Expression> unary() {
        if (is("--") || is("++")) {
            // No lvalue can follow in an expression here: "--1" is -(-1), "++x" is +(+x).
            const Token& t = take();
            const Nesting outer(*this, t);
            const Nesting inner(*this, t);
            auto operand = unary();
            if (t.text == "++") {
                return operand;
            }
            for (int i = 0; i < 2; ++i) {
                auto e = std::make_unique<Expression>();
                e->kind = Expression::Kind::Unary;
                e->at = t.at;
                e->op = Operator::Negate;
                e->height = 1 + operand->height;
                e->left = std::move(operand);
                checkHeight(*e);
                operand = std::move(e);
            }
            return operand;
        }
        if (is("!") || is("-") || is("+") || is("~")) {
            const Token& t = take();
            const Nesting nesting(*this, t);
            auto operand = unary();
            if (t.text == "+") {
                return operand;
            }
            auto e = std::make_unique<Expression>();
            e->kind = Expression::Kind::Unary;
            e->at = t.at;
            e->op = t.text == "!"   ? Operator::LogicalNot
                    : t.text == "~" ? Operator::BitNot
                                    : Operator::Negate;
            e->height = 1 + operand->height;
            e->left = std::move(operand);
            checkHeight(*e);
            return e;
        }
        return primary();
    }
    std::unique_ptr<Expression> primary() {
        const Token& t = peek();
        auto e = std::make_unique<Expression>();
        e->at = t.at;
        if (t.kind == Token::Kind::Integer) {
            e->kind = Expression::Kind::Integer;
            e->integer = take().value;
            return e;
        }
        if (t.kind == Token::Kind::String) {
            e->kind = Expression::Kind::String;
            e->text = take().text;
            return e;
        }
        if (t.kind == Token::Kind::Macro) {
            return macro(take());
        }
        if (t.kind == Token::Kind::Aggregation) {
            take();
            const auto& all = program_.aggregations;
            const auto found = std::find_if(all.begin(), all.end(),
                                            [&](const auto& a) { return a.name == t.text; });
            if (found == all.end()) {
                throw ProgramError(t.at, "aggregation '@" + t.text +
                                             "' is used before any statement feeds it");
            }
            e->kind = Expression::Kind::Aggregation;
            e->text = t.text;
            e->variable = static_cast<std::size_t>(found - all.begin());
            return e;
        }
        if (is("(") && peek(1).kind == Token::Kind::Identifier && isTypeWord(peek(1).text)) {
            return cast();
        }
        if (is("(")) {
            const Nesting nesting(*this, take());
            auto inner = expression();
            expect(")");
            return inner;
        }
        if (t.kind != Token::Kind::Identifier) {
            fail(t, "an expression");
        }
        take();
        if (auto why = refusal(t.text)) {
            throw ProgramError(t.at, *why);
        }
        if (t.text == "curthread" || t.text == "vtimestamp" || t.text == "ppid" ||
            t.text == "errno") {
            throw ProgramError(t.at, "built-in variable '" + t.text +
                                         "' is not recorded in the traces: not supported");
        }
        if (is("(")) {
            return call(t);
        }
        if ((t.text == "this" || t.text == "self") && is("->")) {
            take();
            if (peek().kind != Token::Kind::Identifier) {
                fail(peek(), "a variable name after '" + t.text + "->'");
            }
            const Token& name = take();
            const VariableScope scope =
                t.text == "this" ? VariableScope::ClauseLocal : VariableScope::ThreadLocal;
            const auto& all = program_.variables;
            if (scope == VariableScope::ClauseLocal &&
                std::none_of(all.begin(), all.end(), [&](const auto& v) {
                    return v.scope == scope && v.name == name.text;
                })) {
                throw ProgramError(name.at, "clause-local variable 'this->" + name.text +
                                                "' is used before any clause assigns it");
            }
            e->kind = Expression::Kind::Variable;
            e->text = name.text;
            if (is("[")) {
                refuseClauseLocalArray(scope, t.at);
                keys(*e); // self->name[key, ...]: a thread-local associative array
            }
            e->variable = declareVariable(name.text, scope, e->arguments.size(), name.at);
            return e;
        }
        if (const auto v = globalVariable(t.text)) {
            e->kind = Expression::Kind::Variable;
            e->text = t.text;
            e->variable = *v;
            if (is("[")) {
                keys(*e);
            }
            const std::size_t keyCount = program_.variables[*v].keyCount;
            if (e->arguments.size() != keyCount) {
                throw ProgramError(t.at, "variable '" + t.text + "' has " +
                                             std::to_string(keyCount) + " key(s), not " +
                                             std::to_string(e->arguments.size()));
            }
            return e;
        }
        e->kind = Expression::Kind::Identifier;
        if (std::find(programFields_.begin(), programFields_.end(), t.text) ==
            programFields_.end()) {
            programFields_.push_back(t.text);
        }
        if (t.text == "args" && is("[")) {
            // args[N]->member: the field `member` (no translators here).
            take();
            if (peek().kind != Token::Kind::Integer) {
                fail(peek(), "an argument index");
            }
            take();
            expect("]");
            expect("->");
            if (peek().kind != Token::Kind::Identifier) {
                fail(peek(), "a member name");
            }
            const Token& member = take();
            e->at = member.at;
            e->text = member.text;
            e->payloadMember = true;
        } else {
            e->text = t.text;
        }
        auto& refs = *references_;
        if (std::none_of(refs.begin(), refs.end(), [&](const auto& r) {
                return r.name == e->text && r.payload == e->payloadMember;
            })) {
            refs.push_back({e->text, e->at, e->payloadMember, {}});
        }
        return e;
    }

    /// Expressions separated by "," up to `close`, which is taken too; none
    /// only if `may_be_empty` (a call's "()").
    std::vector<std::unique_ptr<Expression>> expressionList(std::string_view close,
                                                            bool mayBeEmpty) {
        std::vector<std::unique_ptr<Expression>> list;
        if (!mayBeEmpty || !is(close)) {
            for (;;) {
                list.push_back(expression());
                if (is(close)) {
                    break;
                }
                expect(",");
            }
        }
        take();
        return list;
    }

    /// `[key, ...]` of an associative array: one more level of nesting, and the keys'
    /// heights count in the variable's.
    void keys(Expression& e) {
        const Nesting nesting(*this, take());
        for (auto& key : expressionList("]", false)) {
            e.height = std::max(e.height, 1 + key->height);
            e.arguments.push_back(std::move(key));
        }
        checkHeight(e);
    }

    static bool isTypeWord(const std::string& word) {
        static const char* const words[] = {
            "char",    "short",   "int",      "long",      "signed",       "unsigned", "int8_t",
            "int16_t", "int32_t", "int64_t",  "uint8_t",   "uint16_t",     "uint32_t", "uint64_t",
            "size_t",  "ssize_t", "intptr_t", "uintptr_t", "string",       "uchar_t",  "ushort_t",
            "uint_t",  "ulong_t", "pid_t",    "id_t",      "processorid_t"};
        return std::any_of(std::begin(words), std::end(words),
                           [&](const char* w) { return word == w; });
    }

    /// `(type) operand`: C's integer types (and D's fixed-width and system ones); the
    /// operand keeps its low sizeof(type) bytes, sign- or zero-extended.
    std::unique_ptr<Expression> cast() {
        const Token& open = take();
        const Nesting nesting(*this, open);
        std::string type;
        while (peek().kind == Token::Kind::Identifier && isTypeWord(peek().text)) {
            type += (type.empty() ? "" : " ") + take().text;
        }
        expect(")");
        if (type == "string") {
            throw ProgramError(open.at, "(string) casts are not supported: use stringof()");
        }
        static const std::pair<const char*, int> sizes[] = {{"char", -1},
                                                            {"signed char", -1},
                                                            {"unsigned char", 1},
                                                            {"short", -2},
                                                            {"short int", -2},
                                                            {"unsigned short", 2},
                                                            {"unsigned short int", 2},
                                                            {"int", -4},
                                                            {"signed", -4},
                                                            {"signed int", -4},
                                                            {"unsigned", 4},
                                                            {"unsigned int", 4},
                                                            {"long", -8},
                                                            {"long int", -8},
                                                            {"unsigned long", 8},
                                                            {"unsigned long int", 8},
                                                            {"long long", -8},
                                                            {"long long int", -8},
                                                            {"unsigned long long", 8},
                                                            {"unsigned long long int", 8},
                                                            {"int8_t", -1},
                                                            {"int16_t", -2},
                                                            {"int32_t", -4},
                                                            {"int64_t", -8},
                                                            {"uint8_t", 1},
                                                            {"uint16_t", 2},
                                                            {"uint32_t", 4},
                                                            {"uint64_t", 8},
                                                            {"size_t", 8},
                                                            {"ssize_t", -8},
                                                            {"intptr_t", -8},
                                                            {"uintptr_t", 8},
                                                            {"uchar_t", 1},
                                                            {"ushort_t", 2},
                                                            {"uint_t", 4},
                                                            {"ulong_t", 8},
                                                            {"pid_t", -4},
                                                            {"id_t", -4},
                                                            {"processorid_t", -4}};
        const auto* found = std::find_if(std::begin(sizes), std::end(sizes),
                                         [&](const auto& s) { return type == s.first; });
        if (found == std::end(sizes)) {
            throw ProgramError(open.at, "unknown type '" + type + "' in a cast");
        }
        auto operand = unary();
        auto e = std::make_unique<Expression>();
        e->kind = Expression::Kind::Unary;
        e->at = open.at;
        e->op = found->second < 0 ? Operator::CastSigned : Operator::CastUnsigned;
        e->integer = found->second < 0 ? -found->second : found->second;
        e->height = 1 + operand->height;
        e->left = std::move(operand);
        checkHeight(*e);
        return e;
    }

    std::optional<std::size_t> globalVariable(const std::string& name) const {
        const auto& all = program_.variables;
        for (std::size_t i = 0; i < all.size(); ++i) {
            if (all[i].scope == VariableScope::Global && all[i].name == name) {
                return i;
            }
        }
        return std::nullopt;
    }

    /// A subroutine call in an expression: stringof, strjoin, substr, strlen, lltostr,
    /// inet_ntoa, inet_ntop, stack, ustack; argument counts are checked here, types when
    /// bound. stack([N]) and ustack([N]) become calls on the identifiers of the context
    /// fields they read (stackCall).
    std::unique_ptr<Expression> call(const Token& name) {
        static const struct {
            const char* name;
            std::size_t min;
            std::size_t max;
        } known[] = {{"stringof", 1, 1},  {"strjoin", 2, 2}, {"substr", 2, 3},
                     {"strlen", 1, 1},    {"lltostr", 1, 1}, {"inet_ntoa", 1, 1},
                     {"inet_ntop", 2, 2}, {"stack", 0, 1},   {"ustack", 0, 1}};
        const auto* found = std::find_if(std::begin(known), std::end(known),
                                         [&](const auto& k) { return name.text == k.name; });
        if (found == std::end(known)) {
            static const char* const aggregating[] = {"count",    "sum",       "avg",
                                                      "min",      "max",       "stddev",
                                                      "quantize", "lquantize", "llquantize"};
            if (std::any_of(std::begin(aggregating), std::end(aggregating),
                            [&](const char* f) { return name.text == f; })) {
                throw ProgramError(name.at, name.text +
                                                "() is an aggregating function: use it as "
                                                "@name[keys] = " +
                                                name.text + "()");
            }
            if (actionByName(name.text)) {
                throw ProgramError(name.at, name.text + "() is an action: it gives no value");
            }
            throw ProgramError(name.at, "unknown function '" + name.text +
                                            "' (stringof, strjoin, substr, strlen, lltostr, "
                                            "inet_ntoa, inet_ntop, stack, ustack)");
        }
        const Nesting nesting(*this, take()); // (
        auto e = std::make_unique<Expression>();
        e->kind = Expression::Kind::Call;
        e->at = name.at;
        e->text = name.text;
        e->arguments = expressionList(")", true);
        const std::size_t n = e->arguments.size();
        if (n < found->min || n > found->max) {
            throw ProgramError(name.at,
                               name.text + "() takes " + std::to_string(found->min) +
                                   (found->max != found->min ? " to " + std::to_string(found->max)
                                                             : std::string()) +
                                   " argument(s), " + std::to_string(n) + " given");
        }
        for (const auto& a : e->arguments) {
            e->height = std::max(e->height, 1 + a->height);
            if (a->kind == Expression::Kind::Aggregation) {
                throw ProgramError(a->at, name.text + "() cannot take an aggregation");
            }
        }
        if (name.text == "stack" || name.text == "ustack") {
            stackCall(*e);
        }
        checkHeight(*e);
        return e;
    }

    /// stack([N]), ustack([N]): N (a positive integer constant; by default DTrace's
    /// stackframes, 20, and ustackframes, 100) in `integer`, and as arguments the
    /// identifiers of what they read, referenced like any the program names: the context
    /// field callstack_kernel (lttng-modules' callstack-kernel), or callstack_user
    /// (callstack-user) and pid.
    void stackCall(Expression& e) {
        const bool user = e.text == "ustack";
        e.integer = user ? 100 : 20;
        e.written = e.text + "()";
        if (!e.arguments.empty()) {
            const Expression& n = *e.arguments.front();
            if (n.kind != Expression::Kind::Integer || n.integer <= 0) {
                throw ProgramError(n.at, e.text + "() takes a positive integer constant: the "
                                                  "number of frames");
            }
            e.integer = n.integer;
            e.written = e.text + "(" + std::to_string(n.integer) + ")";
        }
        e.arguments.clear();
        for (const char* field : user ? std::vector<const char*>{"callstack_user", "pid"}
                                      : std::vector<const char*>{"callstack_kernel"}) {
            auto id = std::make_unique<Expression>();
            id->kind = Expression::Kind::Identifier;
            id->at = e.at;
            id->text = field;
            auto& refs = *references_;
            if (std::none_of(refs.begin(), refs.end(),
                             [&](const auto& r) { return r.name == field && !r.payload; })) {
                refs.push_back({field, e.at, false, e.written});
            }
            e.arguments.push_back(std::move(id));
        }
    }

    /// A probe description with its macros $target and $N replaced by their text, as
    /// dtrace(1M) expands them (pid$target::malloc:entry).
    std::string expandMacros(const std::string& text, Position at) const {
        std::string out;
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] != '$') {
                out += text[i];
                continue;
            }
            std::size_t end = i + 1;
            while (end < text.size() &&
                   (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_')) {
                ++end;
            }
            const std::string name = text.substr(i + 1, end - i - 1);
            i = end - 1;
            if (name == "target") {
                if (!macros_.target) {
                    throw ProgramError(at, "$target is undefined: give -c COMMAND or -p PID");
                }
                out += std::to_string(*macros_.target);
                continue;
            }
            std::size_t n = 0;
            const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
            if (name.empty() || ec != std::errc() || ptr != name.data() + name.size()) {
                throw ProgramError(at, "probe description '" + text +
                                           "': unknown macro variable '$" + name +
                                           "' ($target, $1..)");
            }
            if (n >= 1 && n <= macros_.arguments.size()) {
                out += macros_.arguments[n - 1];
            } else if (!macros_.defaultArgs) {
                throw ProgramError(at, "probe description '" + text + "': macro argument $" + name +
                                           " is not given");
            }
        }
        return out;
    }

    /// $target, $N (an integer: the argument must be one), $$N (the argument as a string).
    std::unique_ptr<Expression> macro(const Token& t) {
        auto e = std::make_unique<Expression>();
        e->at = t.at;
        if (t.text == "target") {
            if (!macros_.target) {
                throw ProgramError(t.at, "$target is undefined: give -c COMMAND or -p PID");
            }
            e->integer = *macros_.target;
            return e;
        }
        const bool asString = t.text.front() == '$';
        const std::string digits = asString ? t.text.substr(1) : t.text;
        std::size_t n = 0;
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
            throw ProgramError(t.at,
                               "unknown macro variable '$" + t.text + "' ($target, $1.., $$1..)");
        }
        std::optional<std::string> value;
        if (n >= 1 && n <= macros_.arguments.size()) {
            value = macros_.arguments[n - 1];
        } else if (!macros_.defaultArgs) {
            throw ProgramError(t.at, "macro argument $" + t.text +
                                         " is not given (or set option defaultargs)");
        }
        if (asString) {
            e->kind = Expression::Kind::String;
            e->text = value.value_or("");
            return e;
        }
        if (!value) {
            return e; // 0
        }
        std::int64_t number = 0;
        const auto [p2, ec2] =
            std::from_chars(value->data(), value->data() + value->size(), number);
        if (value->empty() || ec2 != std::errc() || p2 != value->data() + value->size()) {
            throw ProgramError(t.at, "macro argument $" + t.text + " ('" + *value +
                                         "') is not an integer: use $$" + t.text);
        }
        e->integer = number;
        return e;
    }

    std::vector<Token> tokens_;
    const Macros& macros_;
    std::vector<std::string> programFields_; // identifiers read as fields so far
    std::size_t index_ = 0;
    bool inPredicate_ = false;
    int nesting_ = 0;
    std::vector<FieldReference>* references_ = nullptr;
    Program program_;
};

} // namespace

std::vector<std::string> probeFields(const std::string& text) {
    std::vector<std::string> parts{""};
    for (const char c : text) {
        if (c == ':') {
            parts.emplace_back();
        } else {
            parts.back() += c;
        }
    }
    return parts;
}

std::string probePattern(const std::string& text, Position at) {
    const std::vector<std::string> parts = probeFields(text);
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

namespace {

/// "tick-10ms" -> 10000000; no unit: hertz (the profile provider's rule).
std::int64_t tickPeriodUnchecked(const std::string& spec, const std::string& text, Position at) {
    std::size_t digits = 0;
    while (digits < spec.size() && std::isdigit(static_cast<unsigned char>(spec[digits])) != 0) {
        ++digits;
    }
    std::int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(spec.data(), spec.data() + digits, n);
    if (digits == 0 || ec != std::errc() || n <= 0) {
        throw ProgramError(at, "invalid timer probe '" + text + "': expected tick-N[unit]");
    }
    const std::string unit = spec.substr(digits);
    if (unit.empty() || unit == "hz") {
        if (n > 1000000000) {
            throw ProgramError(at, "timer probe '" + text +
                                       "' is faster than the shortest period, 200us (5000hz, "
                                       "illumos's profile provider's minimum)");
        }
        return 1000000000 / n;
    }
    if (const auto ns = timeUnitNs(unit)) {
        if (n > std::numeric_limits<std::int64_t>::max() / *ns) {
            throw ProgramError(at, "timer probe '" + text + "': period too long");
        }
        return n * *ns;
    }
    throw ProgramError(at, "invalid timer probe '" + text + "': unknown unit '" + unit +
                               "' (ns, us, ms, s, m, h, d, hz)");
}

/// tick_period_unchecked, refused below shortest_tick_ns.
std::int64_t tickPeriod(const std::string& spec, const std::string& text, Position at) {
    const std::int64_t ns = tickPeriodUnchecked(spec, text, at);
    if (ns < kShortestTickNs) {
        throw ProgramError(at, "timer probe '" + text +
                                   "' is faster than the shortest period, 200us (5000hz, "
                                   "illumos's profile provider's minimum)");
    }
    return ns;
}

} // namespace

ProbeDescription probeDescription(const std::string& text, Position at,
                                  std::optional<std::int64_t> target) {
    const std::vector<std::string> parts = probeFields(text);
    const std::string& name = parts.back();
    const std::string provider = parts.size() > 1 ? parts.front() : std::string();
    ProbeDescription probe{text, at, {}, ProbeKind::Event, 0, std::nullopt};
    if ((name == "BEGIN" || name == "END" || name == "ERROR") &&
        (parts.size() == 1 || provider == "dtrace")) {
        probe.kind = name == "BEGIN" ? ProbeKind::Begin
                     : name == "END" ? ProbeKind::End
                                     : ProbeKind::Error;
        probe.pattern = "dtrace:" + name;
        return probe;
    }
    if ((parts.size() == 1 || provider == "profile") &&
        (name.rfind("tick-", 0) == 0 || name.rfind("profile-", 0) == 0)) {
        if (name.rfind("profile-", 0) == 0) {
            throw ProgramError(at, "profile-N probes fire on every CPU at a live system's "
                                   "interrupts: not available over recorded events (tick-N "
                                   "is)");
        }
        probe.kind = ProbeKind::Tick;
        probe.tickNs = tickPeriod(name.substr(5), text, at);
        probe.pattern = "profile:" + name;
        return probe;
    }
    if ((probe.user = userProbe(parts, target, text, at))) {
        probe.pattern = userProbeEvent(*probe.user);
        return probe;
    }
    probe.pattern = probePattern(text, at);
    return probe;
}

Program parseProgram(std::string_view source, const Macros& macros) {
    return Parser(tokenize(source), macros).run();
}

} // namespace tracectl::aggregate
