#include "filter/filter_lexer.hpp"

#include "filter/filter_error.hpp"

#include <charconv>
#include <cstdio>
#include <system_error>

namespace tracectl::filter {

namespace {

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
bool isOctal(char c) {
    return c >= '0' && c <= '7';
}
bool isHex(char c) {
    return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool isLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

std::string showChar(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F)
        return std::string("'") + c + "'";
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "\\x%02X", byte);
    return std::string("byte ") + buffer;
}

class Lexer {
public:
    explicit Lexer(std::string_view input) : in_(input) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        for (;;) {
            skipBlanksAndComments();
            if (pos_ >= in_.size())
                break;
            tokens.push_back(next());
        }
        Token end;
        end.kind = TokenKind::End;
        end.column = in_.size() + 1;
        tokens.push_back(std::move(end));
        return tokens;
    }

private:
    char at(std::size_t i) const { return i < in_.size() ? in_[i] : '\0'; }
    [[noreturn]] void fail(std::size_t index, std::string reason) const {
        throw FilterError(index + 1, std::move(reason));
    }

    void skipBlanksAndComments() {
        while (pos_ < in_.size()) {
            const char c = in_[pos_];
            if (c == ' ' || c == '\t' || c == '\n') {
                ++pos_;
            } else if (c == '/' && at(pos_ + 1) == '*') {
                // An unterminated comment runs to the end, as flex does at EOF.
                const auto close = in_.find("*/", pos_ + 2);
                pos_ = close == std::string_view::npos ? in_.size() : close + 2;
            } else if (c == '/' && at(pos_ + 1) == '/') {
                const auto newline = in_.find('\n', pos_ + 2);
                pos_ = newline == std::string_view::npos ? in_.size() : newline + 1;
            } else {
                break;
            }
        }
    }

    // Length of a universal character name (\uXXXX, \UXXXXXXXX) at i, or 0.
    std::size_t universalChar(std::size_t i) const {
        if (at(i) != '\\')
            return 0;
        const std::size_t digits = at(i + 1) == 'u' ? 4 : at(i + 1) == 'U' ? 8 : 0;
        if (digits == 0)
            return 0;
        for (std::size_t k = 0; k < digits; ++k)
            if (!isHex(at(i + 2 + k)))
                return 0;
        return 2 + digits;
    }

    // Length of an identifier's non-digit character at i, or 0.
    std::size_t identifierStart(std::size_t i) const {
        if (isLetter(at(i)) || at(i) == ':')
            return 1;
        return universalChar(i);
    }

    std::size_t identifierEnd(std::size_t i) const {
        for (;;) {
            if (isDigit(at(i))) {
                ++i;
                continue;
            }
            const std::size_t n = identifierStart(i);
            if (n == 0)
                return i;
            i += n;
        }
    }

    Token make(TokenKind kind, std::size_t start, std::size_t length) {
        Token token;
        token.kind = kind;
        token.column = start + 1;
        token.text = std::string(in_.substr(start, length));
        pos_ = start + length;
        return token;
    }

    Token next() {
        const std::size_t start = pos_;
        const char c = in_[pos_];
        const char n = at(pos_ + 1);
        if (c == '\0')
            fail(start, "NUL byte in the expression");
        if (c == '"' || c == '\'')
            return literal(start, start + 1, c);
        if (c == 'L' && (n == '"' || n == '\''))
            return literal(start, start + 2, n);
        if (isDigit(c) || (c == '.' && isDigit(n)))
            return number(start);
        if (c == '$') {
            if (identifierStart(pos_ + 1) == 0)
                fail(start, "unexpected character '$'");
            return make(TokenKind::GlobalIdentifier, start, identifierEnd(pos_ + 1) - start);
        }
        if (c == ':') {
            if (n == '=')
                fail(start, "unexpected token ':='");
            if (!isDigit(n) && identifierStart(pos_ + 1) == 0)
                fail(start, "unexpected token ':'");
        }
        if (identifierStart(pos_) != 0)
            return make(TokenKind::Identifier, start, identifierEnd(pos_) - start);
        return punctuator(start, c, n);
    }

    Token punctuator(std::size_t start, char c, char n) {
        struct Two {
            char a, b;
            TokenKind kind;
        };
        static constexpr Two kTwos[] = {
            {'-', '>', TokenKind::Arrow},        {'>', '>', TokenKind::ShiftRight},
            {'<', '<', TokenKind::ShiftLeft},    {'=', '=', TokenKind::Equal},
            {'!', '=', TokenKind::NotEqual},     {'<', '=', TokenKind::LessEqual},
            {'>', '=', TokenKind::GreaterEqual}, {'&', '&', TokenKind::LogicalAnd},
            {'|', '|', TokenKind::LogicalOr},
        };
        for (const auto& two : kTwos)
            if (c == two.a && n == two.b)
                return make(two.kind, start, 2);
        if (c == '.' && n == '.' && at(start + 2) == '.')
            fail(start, "unexpected token '...'");
        switch (c) {
        case '[':
            return make(TokenKind::LBracket, start, 1);
        case ']':
            return make(TokenKind::RBracket, start, 1);
        case '(':
            return make(TokenKind::LParen, start, 1);
        case ')':
            return make(TokenKind::RParen, start, 1);
        case '.':
            return make(TokenKind::Dot, start, 1);
        case '*':
            return make(TokenKind::Star, start, 1);
        case '+':
            return make(TokenKind::Plus, start, 1);
        case '-':
            return make(TokenKind::Minus, start, 1);
        case '%':
            return make(TokenKind::Percent, start, 1);
        case '/':
            return make(TokenKind::Slash, start, 1);
        case '<':
            return make(TokenKind::Less, start, 1);
        case '>':
            return make(TokenKind::Greater, start, 1);
        case '!':
            return make(TokenKind::Not, start, 1);
        case '&':
            return make(TokenKind::BitAnd, start, 1);
        case '^':
            return make(TokenKind::BitXor, start, 1);
        case '|':
            return make(TokenKind::BitOr, start, 1);
        case '~':
            return make(TokenKind::BitNot, start, 1);
        case '{':
        case '}':
        case ';':
        case '=':
        case ',':
            fail(start, std::string("unexpected token '") + c + "'");
        default:
            fail(start, "unexpected character " + showChar(c));
        }
    }

    // An escape sequence as lttng's scanner knows them (ESCSEQ), at i ('\\').
    bool isEscapeSequence(std::size_t i) const {
        const char e = at(i + 1);
        switch (e) {
        case '\'':
        case '"':
        case '?':
        case '\\':
        case 'a':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
        case 'v':
            return true;
        case 'x':
            return isHex(at(i + 2));
        case 'u':
        case 'U':
            return universalChar(i) != 0;
        default:
            return isOctal(e);
        }
    }

    // A "..." or '...' literal whose body starts at `body`.
    Token literal(std::size_t start, std::size_t body, char quote) {
        Token token;
        token.kind = TokenKind::String;
        token.column = start + 1;
        std::size_t i = body;
        for (;;) {
            if (i >= in_.size())
                fail(start, quote == '"' ? "unterminated string literal"
                                         : "unterminated character constant");
            const char c = in_[i];
            if (c == quote)
                break;
            if (c == '\0')
                fail(i, "NUL byte in the expression");
            if (c == '\\' && isEscapeSequence(i))
                fail(i, "escape sequences not supported yet");
            if (c != '\n') // the scanner drops newlines inside literals
                token.text.push_back(c);
            ++i;
        }
        if (quote == '\'' && token.text.empty())
            fail(start, "empty character constant");
        pos_ = i + 1;
        return token;
    }

    std::size_t digitsEnd(std::size_t i, bool (*pred)(char)) const {
        while (pred(at(i)))
            ++i;
        return i;
    }

    // [Ee][+-]?D+ (or [Pp] for hexadecimal floats) at i: its end, or i.
    std::size_t exponentEnd(std::size_t i, char lower) const {
        if (at(i) != lower && at(i) != lower - 'a' + 'A')
            return i;
        std::size_t j = i + 1;
        if (at(j) == '+' || at(j) == '-')
            ++j;
        const std::size_t end = digitsEnd(j, isDigit);
        return end == j ? i : end;
    }

    std::size_t floatSuffixEnd(std::size_t i) const {
        const char c = at(i);
        return (c == 'f' || c == 'F' || c == 'l' || c == 'L') ? i + 1 : i;
    }

    std::size_t integerSuffixEnd(std::size_t i) const {
        bool unsignedSeen = false;
        if (at(i) == 'u' || at(i) == 'U') {
            unsignedSeen = true;
            ++i;
        }
        if (at(i) == 'l' || at(i) == 'L') {
            i += at(i + 1) == at(i) ? 2 : 1;
            if (!unsignedSeen && (at(i) == 'u' || at(i) == 'U'))
                ++i;
        }
        return i;
    }

    Token floating(std::size_t start, std::size_t valueEnd, std::size_t end, bool hex) {
        Token token = make(TokenKind::Float, start, end - start);
        const char* first = in_.data() + start + (hex ? 2 : 0);
        const char* last = in_.data() + valueEnd;
        double value = 0;
        const auto result = std::from_chars(
            first, last, value, hex ? std::chars_format::hex : std::chars_format::general);
        if (result.ec == std::errc::result_out_of_range)
            fail(start, "floating-point constant out of range: " + token.text);
        if (result.ec != std::errc() || result.ptr != last)
            fail(start, "invalid floating-point constant: " + token.text);
        token.floating = value;
        return token;
    }

    Token integer(std::size_t start, std::size_t digitsBegin, std::size_t digitsStop,
                  unsigned base) {
        const std::size_t end = integerSuffixEnd(digitsStop);
        Token token = make(TokenKind::Integer, start, end - start);
        std::uint64_t value = 0;
        if (digitsBegin < digitsStop) {
            const auto result = std::from_chars(in_.data() + digitsBegin, in_.data() + digitsStop,
                                                value, static_cast<int>(base));
            if (result.ec == std::errc::result_out_of_range)
                fail(start, "integer constant does not fit in 64 bits: " + token.text);
            if (result.ec != std::errc() || result.ptr != in_.data() + digitsStop)
                fail(start, "invalid integer constant: " + token.text);
        }
        token.integer = value;
        return token;
    }

    Token number(std::size_t start) {
        if (in_[start] == '0' && (at(start + 1) == 'x' || at(start + 1) == 'X')) {
            const std::size_t h1 = start + 2;
            const std::size_t h1End = digitsEnd(h1, isHex);
            if (at(h1End) == '.') {
                const std::size_t h2End = digitsEnd(h1End + 1, isHex);
                if (h1End == h1 && h2End == h1End + 1)
                    fail(start, "invalid hexadecimal floating-point constant");
                const std::size_t valueEnd = exponentEnd(h2End, 'p');
                return floating(start, valueEnd, floatSuffixEnd(valueEnd), true);
            }
            if (h1End == h1)
                fail(start, "invalid hexadecimal constant");
            const std::size_t expEnd = exponentEnd(h1End, 'p');
            if (expEnd != h1End)
                return floating(start, expEnd, floatSuffixEnd(expEnd), true);
            return integer(start, h1, h1End, 16);
        }
        const std::size_t dEnd = digitsEnd(start, isDigit);
        if (at(dEnd) == '.') {
            const std::size_t fracEnd = digitsEnd(dEnd + 1, isDigit);
            const std::size_t valueEnd = exponentEnd(fracEnd, 'e');
            return floating(start, valueEnd, floatSuffixEnd(valueEnd), false);
        }
        const std::size_t expEnd = exponentEnd(dEnd, 'e');
        if (expEnd != dEnd)
            return floating(start, expEnd, floatSuffixEnd(expEnd), false);
        if (in_[start] == '0') {
            for (std::size_t i = start + 1; i < dEnd; ++i)
                if (!isOctal(in_[i]))
                    fail(i, "invalid digit '" + std::string(1, in_[i]) + "' in octal constant");
            return integer(start, start + 1, dEnd, 8);
        }
        return integer(start, start, dEnd, 10);
    }

    std::string_view in_;
    std::size_t pos_ = 0;
};

} // namespace

std::vector<Token> tokenize(std::string_view expression) {
    return Lexer(expression).run();
}

std::string describeToken(const Token& token) {
    switch (token.kind) {
    case TokenKind::Integer:
    case TokenKind::Float:
        return "constant " + token.text;
    case TokenKind::String:
        return "string \"" + token.text + "\"";
    case TokenKind::Identifier:
    case TokenKind::GlobalIdentifier:
        return "identifier '" + token.text + "'";
    case TokenKind::End:
        return "end of expression";
    default:
        return "'" + token.text + "'";
    }
}

} // namespace tracectl::filter
