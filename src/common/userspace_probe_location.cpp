#include "userspace_probe_location.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace tracectl {

namespace {

/// `text` split at the ':' not escaped by '\', with the escapes removed;
/// `suffix` set to "return" or "args" when the last field ends with an
/// unescaped "%return" or "%args" (which is removed), else "". nullopt for
/// a '\' at the very end or an unescaped '%' elsewhere.
std::optional<std::vector<std::string>> splitFields(std::string_view text, std::string& suffix) {
    std::vector<std::string> fields(1);
    suffix.clear();
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\') {
            if (i + 1 == text.size())
                return std::nullopt;
            fields.back() += text[++i];
        } else if (c == ':') {
            fields.emplace_back();
        } else if (c == '%') {
            if (text.substr(i) != "%return" && text.substr(i) != "%args")
                return std::nullopt;
            suffix = std::string(text.substr(i + 1));
            break;
        } else {
            fields.back() += c;
        }
    }
    return fields;
}

bool isNumber(std::string_view s) {
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return std::all_of(s.begin() + 2, s.end(),
                           [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string escape(std::string_view field) {
    std::string out;
    for (const char c : field) {
        if (c == ':' || c == '%' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

} // namespace

std::optional<UserspaceProbeLocation> parseUserspaceProbeLocation(std::string_view text,
                                                                  std::string& why) {
    std::string suffix;
    const auto fields = splitFields(text, suffix);
    if (!fields) {
        why = "a '%' may only end the location as \"%return\" or \"%args\" (write \"\\%\" for "
              "a '%' in a name), and a '\\' must escape something";
        return std::nullopt;
    }
    UserspaceProbeLocation l;
    const std::vector<std::string>& f = *fields;
    if (f.size() == 4 && f[0] == "sdt") {
        if (!suffix.empty()) {
            why = "\"%" + suffix + "\" applies to ELF functions (elf:PATH:SYMBOL%" + suffix +
                  "), not to SDT probes";
            return std::nullopt;
        }
        l.kind = UserspaceProbeLocation::Kind::Sdt;
        l.path = f[1];
        l.provider = f[2];
        l.probe = f[3];
        if (l.path.empty() || l.provider.empty() || l.probe.empty()) {
            why = "sdt:PATH:PROVIDER:PROBE needs all three";
            return std::nullopt;
        }
        return l;
    }
    if (f.size() == 3 && f[0] == "elf") {
        l.path = f[1];
        l.symbol = f[2];
    } else if (f.size() == 2) {
        l.path = f[0];
        l.symbol = f[1];
    } else {
        why = "expected [elf:]PATH:SYMBOL, [elf:]PATH:SYMBOL%return, [elf:]PATH:SYMBOL%args or "
              "sdt:PATH:PROVIDER:PROBE";
        return std::nullopt;
    }
    l.kind = suffix == "return" ? UserspaceProbeLocation::Kind::FunctionReturn
             : suffix == "args" ? UserspaceProbeLocation::Kind::FunctionArguments
                                : UserspaceProbeLocation::Kind::Function;
    if (l.path.empty() || l.symbol.empty()) {
        why = "[elf:]PATH:SYMBOL needs both a path and a symbol";
        return std::nullopt;
    }
    const auto plus = l.symbol.find('+');
    if (isNumber(l.symbol) ||
        (plus != std::string::npos && isNumber(std::string_view(l.symbol).substr(plus + 1)))) {
        why = "probes on an address or at SYMBOL+OFFSET are not supported (as in LTTng): "
              "give a function's name";
        return std::nullopt;
    }
    return l;
}

std::string formatUserspaceProbeLocation(const UserspaceProbeLocation& l) {
    switch (l.kind) {
    case UserspaceProbeLocation::Kind::Sdt:
        return "sdt:" + escape(l.path) + ":" + escape(l.provider) + ":" + escape(l.probe);
    case UserspaceProbeLocation::Kind::FunctionReturn:
        return "elf:" + escape(l.path) + ":" + escape(l.symbol) + "%return";
    case UserspaceProbeLocation::Kind::FunctionArguments:
        return "elf:" + escape(l.path) + ":" + escape(l.symbol) + "%args";
    case UserspaceProbeLocation::Kind::Function:
        break;
    }
    return "elf:" + escape(l.path) + ":" + escape(l.symbol);
}

} // namespace tracectl
