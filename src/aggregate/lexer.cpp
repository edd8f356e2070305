#include "aggregate/lexer.hpp"

#include <cctype>
#include <charconv>

namespace tracectl::aggregate {

namespace {

bool isIdentifierStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool isIdentifierChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
/// '$' for the macros a probe description may hold (pid$target::f:entry), which the
/// parser expands.
bool isProbeChar(char c) {
    return isIdentifierChar(c) || c == ':' || c == '*' || c == '?' || c == '.' || c == '-' ||
           c == '$';
}

class Lexer {
public:
    explicit Lexer(std::string_view source) : source_(source) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        bool inProbes = true; // at a clause's start: probe descriptions
        if (at("#!")) {
            while (pos_ < source_.size() && source_[pos_] != '\n') {
                advance();
            }
        }
        for (;;) {
            skipSpaceAndComments();
            Token token;
            token.at = here();
            if (pos_ >= source_.size()) {
                tokens.push_back(std::move(token));
                return tokens;
            }
            const char c = source_[pos_];
            if (inProbes && c == '#') {
                token.kind = Token::Kind::Directive;
                advance();
                while (pos_ < source_.size() && source_[pos_] != '\n') {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!inProbes && c == '$') {
                token.kind = Token::Kind::Macro;
                advance();
                if (pos_ < source_.size() && source_[pos_] == '$') {
                    token.text += '$'; // $$N: argument N as a string
                    advance();
                }
                while (pos_ < source_.size() && isIdentifierChar(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
                if (token.text.empty() || token.text == "$") {
                    throw ProgramError(token.at, "'$' must begin a macro variable ($target, $1)");
                }
            } else if (!inProbes && c == '\'') {
                readCharacter(token);
            } else if (inProbes && isProbeChar(c)) {
                token.kind = Token::Kind::Probe;
                while (pos_ < source_.size() && isProbeChar(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!inProbes && c == '@') {
                token.kind = Token::Kind::Aggregation;
                advance();
                while (pos_ < source_.size() && isIdentifierChar(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!inProbes && isIdentifierStart(c)) {
                token.kind = Token::Kind::Identifier;
                while (pos_ < source_.size() && isIdentifierChar(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!inProbes && std::isdigit(static_cast<unsigned char>(c)) != 0) {
                readInteger(token);
            } else if (!inProbes && c == '"') {
                readString(token);
            } else {
                readPunctuation(token, inProbes);
                if (token.text == "{") {
                    inProbes = false;
                } else if (token.text == "}") {
                    inProbes = true;
                } else if (inProbes && token.text == "/") {
                    inProbes = false; // a predicate: an expression up to "/ {"
                }
            }
            tokens.push_back(std::move(token));
        }
    }

private:
    Position here() const { return {line_, column_}; }

    void advance() {
        if (source_[pos_] == '\n') {
            ++line_;
            column_ = 1;
        } else {
            ++column_;
        }
        ++pos_;
    }

    bool at(std::string_view text) const { return source_.substr(pos_, text.size()) == text; }

    void skipSpaceAndComments() {
        while (pos_ < source_.size()) {
            if (std::isspace(static_cast<unsigned char>(source_[pos_])) != 0) {
                advance();
            } else if (at("//")) {
                while (pos_ < source_.size() && source_[pos_] != '\n') {
                    advance();
                }
            } else if (at("/*")) {
                const Position start = here();
                advance();
                advance();
                while (pos_ < source_.size() && !at("*/")) {
                    advance();
                }
                if (pos_ >= source_.size()) {
                    throw ProgramError(start, "unterminated comment");
                }
                advance();
                advance();
            } else {
                return;
            }
        }
    }

    void readInteger(Token& token) {
        token.kind = Token::Kind::Integer;
        int base = 10;
        std::size_t start = pos_;
        if (at("0x") || at("0X")) {
            base = 16;
            advance();
            advance();
            start = pos_;
        } else if (at("0") && pos_ + 1 < source_.size() &&
                   std::isdigit(static_cast<unsigned char>(source_[pos_ + 1])) != 0) {
            base = 8;
        }
        while (pos_ < source_.size() && isIdentifierChar(source_[pos_])) {
            advance();
        }
        std::string_view digits = source_.substr(start, pos_ - start);
        // C's suffixes u, l, ul, ll, ull (any case): D's integers are 64-bit here anyway.
        while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' ||
                                   digits.back() == 'l' || digits.back() == 'L')) {
            digits.remove_suffix(1);
        }
        std::uint64_t value = 0;
        const auto [ptr, ec] =
            std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
        if (digits.empty() || ec == std::errc::invalid_argument ||
            ptr != digits.data() + digits.size()) {
            throw ProgramError(token.at, "invalid integer constant '" +
                                             std::string(source_.substr(start, pos_ - start)) +
                                             "'");
        }
        if (ec == std::errc::result_out_of_range || value > static_cast<std::uint64_t>(INT64_MAX)) {
            throw ProgramError(token.at, "integer constant too large");
        }
        token.value = static_cast<std::int64_t>(value);
        token.text = std::string(digits);
    }

    void readCharacter(Token& token) {
        token.kind = Token::Kind::Integer;
        advance(); // '
        if (pos_ >= source_.size() || source_[pos_] == '\n' || source_[pos_] == '\'') {
            throw ProgramError(token.at, "empty or unterminated character constant");
        }
        char c = source_[pos_];
        advance();
        if (c == '\\') {
            if (pos_ >= source_.size()) {
                throw ProgramError(token.at, "unterminated character constant");
            }
            c = escape(source_[pos_], here());
            advance();
        }
        if (pos_ >= source_.size() || source_[pos_] != '\'') {
            throw ProgramError(token.at, "unterminated character constant");
        }
        advance();
        token.value = static_cast<unsigned char>(c);
        token.text = std::to_string(token.value);
    }

    static char escape(char escaped, Position escapeAt) {
        switch (escaped) {
        case 'n':
            return '\n';
        case 't':
            return '\t';
        case 'r':
            return '\r';
        case 'a':
            return '\a';
        case 'b':
            return '\b';
        case 'f':
            return '\f';
        case 'v':
            return '\v';
        case '0':
            return '\0';
        case '\\':
        case '"':
        case '\'':
        case '?':
            return escaped;
        default:
            throw ProgramError(escapeAt, std::string("unknown escape '\\") + escaped + "'");
        }
    }

    void readString(Token& token) {
        token.kind = Token::Kind::String;
        advance(); // "
        for (;;) {
            if (pos_ >= source_.size() || source_[pos_] == '\n') {
                throw ProgramError(token.at, "unterminated string");
            }
            char c = source_[pos_];
            advance();
            if (c == '"') {
                return;
            }
            if (c == '\\') {
                if (pos_ >= source_.size()) {
                    throw ProgramError(token.at, "unterminated string");
                }
                const char escaped = source_[pos_];
                const Position escapeAt = here();
                advance();
                c = escape(escaped, escapeAt);
            }
            token.text += c;
        }
    }

    void readPunctuation(Token& token, bool inProbes) {
        token.kind = Token::Kind::Punctuation;
        static constexpr std::string_view kMulti[] = {
            "<<=", ">>=", "->", "==", "!=", "<=", ">=", "&&", "||", "^^", "++",
            "--",  "+=",  "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"};
        if (!inProbes) {
            for (const std::string_view op : kMulti) {
                if (at(op)) {
                    token.text = std::string(op);
                    for (std::size_t i = 0; i < op.size(); ++i) {
                        advance();
                    }
                    return;
                }
            }
        }
        const char c = source_[pos_];
        const std::string_view singles = inProbes ? ",/{}" : ",;/{}[]()=+-*%<>!?:~&|^";
        if (singles.find(c) == std::string_view::npos) {
            const bool printable = std::isprint(static_cast<unsigned char>(c)) != 0;
            throw ProgramError(token.at, printable ? std::string("unexpected character '") + c + "'"
                                                   : std::string("unexpected byte in program"));
        }
        token.text = std::string(1, c);
        advance();
    }

    std::string_view source_;
    std::size_t pos_ = 0;
    int line_ = 1;
    int column_ = 1;
};

} // namespace

std::vector<Token> tokenize(std::string_view source) {
    return Lexer(source).run();
}

} // namespace tracectl::aggregate
