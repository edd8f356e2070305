#include "tsdl_text.hpp"

#include "common/utf8.hpp"

#include <array>
#include <ctime>
#include <stdexcept>

namespace tracectl::metadata {

namespace {

// Length of the well-formed UTF-8 sequence at `s[i]`, or 0.
std::size_t utf8Length(std::string_view s, std::size_t i) noexcept {
    char32_t cp = 0;
    return decodeUtf8(s, i, cp);
}

bool isIdentifierByte(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The reserved words of babeltrace2's TSDL scanner (lexer.l).
constexpr std::array<std::string_view, 28> kKeywords = {
    "align",   "const",          "char",    "clock",   "double", "enum",     "env",
    "event",   "floating_point", "float",   "integer", "int",    "long",     "short",
    "signed",  "stream",         "string",  "struct",  "trace",  "callsite", "typealias",
    "typedef", "unsigned",       "variant", "void",    "_Bool",  "_Complex", "_Imaginary"};

} // namespace

std::string substitute(std::string_view pattern, std::initializer_list<std::string_view> values) {
    std::string out;
    std::size_t reserve = pattern.size();
    for (const std::string_view v : values)
        reserve += v.size();
    out.reserve(reserve);
    const auto* value = values.begin();
    std::size_t from = 0;
    for (std::size_t at = pattern.find("{}"); at != std::string_view::npos;
         at = pattern.find("{}", from)) {
        if (value == values.end())
            throw std::logic_error("substitute: more placeholders than values");
        out.append(pattern.substr(from, at - from));
        out.append(*value++);
        from = at + 2;
    }
    if (value != values.end())
        throw std::logic_error("substitute: more values than placeholders");
    out.append(pattern.substr(from));
    return out;
}

void appendStringLiteral(std::string& out, std::string_view text) {
    out += '"';
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
            ++i;
        } else if (c == '\n') {
            out += "\\n";
            ++i;
        } else if (byte < 0x20 || byte == 0x7F) {
            // Always three digits: the scanner reads up to three.
            out += '\\';
            out += static_cast<char>('0' + ((byte >> 6) & 7));
            out += static_cast<char>('0' + ((byte >> 3) & 7));
            out += static_cast<char>('0' + (byte & 7));
            ++i;
        } else if (const std::size_t len = utf8Length(text, i); len != 0) {
            out.append(text.substr(i, len));
            i += len;
        } else {
            out += "\xEF\xBF\xBD"; // U+FFFD
            ++i;
        }
    }
    out += '"';
}

std::string stringLiteral(std::string_view text) {
    std::string out;
    appendStringLiteral(out, text);
    return out;
}

std::string fieldIdentifier(std::string_view name) {
    std::string id;
    id.reserve(name.size() + 2);
    id += '_';
    for (const char c : name)
        id += isIdentifierByte(c) ? c : '_';
    if (isTsdlKeyword(id))
        id += '_';
    return id;
}

bool isTsdlKeyword(std::string_view word) noexcept {
    for (const std::string_view k : kKeywords) {
        if (k == word)
            return true;
    }
    return false;
}

std::string uuidToString(const Uuid& uuid) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    s.reserve(36);
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            s += '-';
        s += kHex[uuid[i] >> 4];
        s += kHex[uuid[i] & 0xF];
    }
    return s;
}

std::string iso8601LocalTime(std::int64_t seconds) {
    const auto t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    if (localtime_r(&t, &tm) == nullptr)
        return {};
    std::array<char, 64> buf{};
    const std::size_t n = std::strftime(buf.data(), buf.size(), "%Y%m%dT%H%M%S%z", &tm);
    return std::string(buf.data(), n);
}

} // namespace tracectl::metadata
