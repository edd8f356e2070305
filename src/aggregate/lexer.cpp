#include "aggregate/lexer.hpp"

#include <cctype>
#include <charconv>

namespace tracectl::aggregate {

namespace {

bool is_identifier_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
/// '$' for the macros a probe description may hold (pid$target::f:entry), which the
/// parser expands.
bool is_probe_char(char c) {
    return is_identifier_char(c) || c == ':' || c == '*' || c == '?' || c == '.' || c == '-' ||
           c == '$';
}

class Lexer {
public:
    explicit Lexer(std::string_view source) : source_(source) {}

    std::vector<Token> run() {
        std::vector<Token> tokens;
        bool in_probes = true; // at a clause's start: probe descriptions
        if (at("#!")) {
            while (pos_ < source_.size() && source_[pos_] != '\n') {
                advance();
            }
        }
        for (;;) {
            skip_space_and_comments();
            Token token;
            token.at = here();
            if (pos_ >= source_.size()) {
                tokens.push_back(std::move(token));
                return tokens;
            }
            const char c = source_[pos_];
            if (in_probes && c == '#') {
                token.kind = Token::Kind::directive;
                advance();
                while (pos_ < source_.size() && source_[pos_] != '\n') {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!in_probes && c == '$') {
                token.kind = Token::Kind::macro;
                advance();
                if (pos_ < source_.size() && source_[pos_] == '$') {
                    token.text += '$'; // $$N: argument N as a string
                    advance();
                }
                while (pos_ < source_.size() && is_identifier_char(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
                if (token.text.empty() || token.text == "$") {
                    throw ProgramError(token.at, "'$' must begin a macro variable ($target, $1)");
                }
            } else if (!in_probes && c == '\'') {
                read_character(token);
            } else if (in_probes && is_probe_char(c)) {
                token.kind = Token::Kind::probe;
                while (pos_ < source_.size() && is_probe_char(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!in_probes && c == '@') {
                token.kind = Token::Kind::aggregation;
                advance();
                while (pos_ < source_.size() && is_identifier_char(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!in_probes && is_identifier_start(c)) {
                token.kind = Token::Kind::identifier;
                while (pos_ < source_.size() && is_identifier_char(source_[pos_])) {
                    token.text += source_[pos_];
                    advance();
                }
            } else if (!in_probes && std::isdigit(static_cast<unsigned char>(c)) != 0) {
                read_integer(token);
            } else if (!in_probes && c == '"') {
                read_string(token);
            } else {
                read_punctuation(token, in_probes);
                if (token.text == "{") {
                    in_probes = false;
                } else if (token.text == "}") {
                    in_probes = true;
                } else if (in_probes && token.text == "/") {
                    in_probes = false; // a predicate: an expression up to "/ {"
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

    void skip_space_and_comments() {
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

    void read_integer(Token& token) {
        token.kind = Token::Kind::integer;
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
        while (pos_ < source_.size() && is_identifier_char(source_[pos_])) {
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

    void read_character(Token& token) {
        token.kind = Token::Kind::integer;
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

    static char escape(char escaped, Position escape_at) {
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
            throw ProgramError(escape_at, std::string("unknown escape '\\") + escaped + "'");
        }
    }

    void read_string(Token& token) {
        token.kind = Token::Kind::string;
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
                const Position escape_at = here();
                advance();
                c = escape(escaped, escape_at);
            }
            token.text += c;
        }
    }

    void read_punctuation(Token& token, bool in_probes) {
        token.kind = Token::Kind::punctuation;
        static constexpr std::string_view multi[] = {
            "<<=", ">>=", "->", "==", "!=", "<=", ">=", "&&", "||", "^^", "++",
            "--",  "+=",  "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"};
        if (!in_probes) {
            for (const std::string_view op : multi) {
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
        const std::string_view singles = in_probes ? ",/{}" : ",;/{}[]()=+-*%<>!?:~&|^";
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
