#include "format_file.hpp"

#include <charconv>
#include <set>

namespace tracectl::kernel {

namespace {

constexpr std::size_t kMaxQuoted = 200;

std::string quote(std::string_view text) {
    std::string out;
    for (const char c : text.substr(0, kMaxQuoted)) {
        const auto u = static_cast<unsigned char>(c);
        if (u == '\t')
            out += "\\t";
        else if (u < 0x20 || u >= 0x7F)
            out += '?';
        else
            out += c;
    }
    if (text.size() > kMaxQuoted)
        out += "...";
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
    return isIdentStart(c) || (c >= '0' && c <= '9');
}
bool isIdentifier(std::string_view s) {
    if (s.empty() || !isIdentStart(s.front()))
        return false;
    for (const char c : s)
        if (!isIdentChar(c))
            return false;
    return true;
}

std::optional<std::uint32_t> parseNumber(std::string_view s) {
    s = trim(s);
    std::uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
        return std::nullopt;
    return v;
}

// "key:value" attribute of a field line.
struct Attribute {
    std::string_view key, value;
};

std::vector<Attribute> splitAttributes(std::string_view line) {
    std::vector<Attribute> out;
    while (!line.empty()) {
        const std::size_t semi = line.find(';');
        const std::string_view part = trim(line.substr(0, semi));
        line = semi == std::string_view::npos ? std::string_view{} : line.substr(semi + 1);
        if (part.empty())
            continue;
        const std::size_t colon = part.find(':');
        if (colon == std::string_view::npos)
            out.push_back({part, {}});
        else
            out.push_back({trim(part.substr(0, colon)), trim(part.substr(colon + 1))});
    }
    return out;
}

void parseDeclaration(std::string_view decl, FormatField& f, std::size_t n, std::string_view line) {
    decl = trim(decl);
    if (decl.empty())
        throw FormatError(n, "empty field declaration", line);
    std::string_view type;
    if (decl.back() == ']') {
        // TYPE NAME[N], or __data_loc TYPE[] NAME never ends in ']'.
        const std::size_t open = decl.rfind('[');
        if (open == std::string_view::npos)
            throw FormatError(n, "unbalanced ']' in field declaration", line);
        const std::string_view len = decl.substr(open + 1, decl.size() - open - 2);
        std::string_view head = trim(decl.substr(0, open));
        std::size_t start = head.size();
        while (start > 0 && isIdentChar(head[start - 1]))
            --start;
        f.name = std::string(head.substr(start));
        type = trim(head.substr(0, start));
        f.isArray = true;
        if (trim(len).empty())
            f.arrayLength = 0;
        else
            f.arrayLength = parseNumber(len);
        f.elementType = std::string(type);
    } else {
        std::size_t start = decl.size();
        while (start > 0 && isIdentChar(decl[start - 1]))
            --start;
        f.name = std::string(decl.substr(start));
        type = trim(decl.substr(0, start));
        f.elementType = std::string(type);
    }
    if (!isIdentifier(f.name) || (f.name[0] >= '0' && f.name[0] <= '9'))
        throw FormatError(n, "field declaration does not end in a name", line);
    if (type.empty())
        throw FormatError(n, "field '" + f.name + "' has no type", line);
    f.type = std::string(type);
    for (const std::string_view prefix :
         {std::string_view("__data_loc"), std::string_view("__rel_loc")}) {
        if (type.rfind(prefix, 0) == 0 &&
            (type.size() == prefix.size() || type[prefix.size()] == ' ')) {
            if (f.isArray)
                throw FormatError(n, "a location field cannot be a fixed array", line);
            (prefix == "__data_loc" ? f.isDataLoc : f.isRelLoc) = true;
            std::string_view element = trim(type.substr(prefix.size()));
            if (element.size() >= 2 && element.substr(element.size() - 2) == "[]")
                element = trim(element.substr(0, element.size() - 2));
            if (element.empty())
                throw FormatError(n, "location field '" + f.name + "' has no element type", line);
            f.elementType = std::string(element);
        }
    }
}

} // namespace

FormatError::FormatError(std::size_t line, const std::string& reason, std::string_view text)
    : std::runtime_error("format line " + std::to_string(line) + ": " + reason + ": \"" +
                         quote(text) + "\""),
      line_(line) {}

FormatField parseFieldLine(std::string_view line, std::size_t n) {
    const std::vector<Attribute> attrs = splitAttributes(line);
    if (attrs.empty() || attrs.front().key != "field")
        throw FormatError(n, "expected 'field:'", line);
    FormatField f;
    parseDeclaration(attrs.front().value, f, n, line);
    bool haveOffset = false, haveSize = false, haveSigned = false;
    for (std::size_t i = 1; i < attrs.size(); ++i) {
        const Attribute& a = attrs[i];
        const std::optional<std::uint32_t> v = parseNumber(a.value);
        bool* seen = nullptr;
        if (a.key == "offset")
            seen = &haveOffset;
        else if (a.key == "size")
            seen = &haveSize;
        else if (a.key == "signed")
            seen = &haveSigned;
        else
            throw FormatError(n, "unknown attribute '" + std::string(a.key) + "'", line);
        if (*seen)
            throw FormatError(n, "attribute '" + std::string(a.key) + "' given twice", line);
        *seen = true;
        if (!v)
            throw FormatError(n, "attribute '" + std::string(a.key) + "' is not a number", line);
        if (a.key == "offset")
            f.offset = *v;
        else if (a.key == "size")
            f.size = *v;
        else if (*v > 1)
            throw FormatError(n, "signed is neither 0 nor 1", line);
        else
            f.isSigned = *v == 1;
    }
    if (!haveOffset || !haveSize)
        throw FormatError(n, "field line without offset or size", line);
    if (std::uint64_t{f.offset} + f.size > 65535)
        throw FormatError(n, "field reaches past 65535 bytes", line);
    if ((f.isDataLoc || f.isRelLoc) && f.size != 4)
        throw FormatError(n, "location field whose size is not 4", line);
    return f;
}

EventFormat parseFormat(std::string_view text) {
    EventFormat out;
    enum class State { Name, Id, Format, Fields, Done } state = State::Name;
    std::set<std::string> names;
    std::size_t n = 0;
    while (!text.empty() && state != State::Done) {
        const std::size_t nl = text.find('\n');
        const std::string_view raw = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++n;
        const std::string_view line = trim(raw);
        if (raw.find('\0') != std::string_view::npos)
            throw FormatError(n, "NUL byte", raw);
        switch (state) {
        case State::Name:
            if (line.rfind("name:", 0) != 0)
                throw FormatError(n, "expected 'name:'", raw);
            out.name = std::string(trim(line.substr(5)));
            if (!isIdentifier(out.name))
                throw FormatError(n, "event name is not an identifier", raw);
            state = State::Id;
            break;
        case State::Id: {
            if (line.rfind("ID:", 0) != 0)
                throw FormatError(n, "expected 'ID:'", raw);
            const std::optional<std::uint32_t> id = parseNumber(line.substr(3));
            if (!id || *id == 0 || *id > 65535)
                throw FormatError(n, "ID is not a number in 1..65535", raw);
            out.id = static_cast<std::uint16_t>(*id);
            state = State::Format;
            break;
        }
        case State::Format:
            if (line != "format:")
                throw FormatError(n, "expected 'format:'", raw);
            state = State::Fields;
            break;
        case State::Fields:
            if (line.empty()) {
                // The blank line between the common and the event's own fields.
                continue;
            }
            if (line.rfind("print fmt:", 0) == 0) {
                state = State::Done;
                break;
            }
            out.fields.push_back(parseFieldLine(raw, n));
            if (!names.insert(out.fields.back().name).second)
                throw FormatError(n, "field '" + out.fields.back().name + "' given twice", raw);
            break;
        case State::Done:
            break;
        }
    }
    if (state == State::Name || state == State::Id || state == State::Format)
        throw FormatError(n, "format text ends before its field list", {});
    if (out.fields.empty())
        throw FormatError(n, "format without fields", {});
    return out;
}

PageFormat parseHeaderPage(std::string_view text) {
    PageFormat p;
    bool ts = false, commit = false, data = false;
    std::size_t n = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view raw = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        ++n;
        if (trim(raw).empty())
            continue;
        const FormatField f = parseFieldLine(raw, n);
        if (f.name == "timestamp") {
            p.timestampOffset = f.offset;
            p.timestampSize = f.size;
            ts = true;
        } else if (f.name == "commit") {
            p.commitOffset = f.offset;
            p.commitSize = f.size;
            commit = true;
        } else if (f.name == "data") {
            p.dataOffset = f.offset;
            p.dataSize = f.size;
            data = true;
        }
    }
    if (!ts || !commit || !data)
        throw FormatError(n, "header_page lacks timestamp, commit or data", {});
    if (p.dataOffset < p.timestampOffset + p.timestampSize ||
        p.dataOffset < p.commitOffset + p.commitSize || p.dataSize == 0)
        throw FormatError(n, "header_page's data does not follow its header", {});
    p.pageSize = p.dataOffset + p.dataSize;
    return p;
}

} // namespace tracectl::kernel
