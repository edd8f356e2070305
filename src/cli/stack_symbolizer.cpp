#include "cli/stack_symbolizer.hpp"

#include <charconv>
#include <cstdio>

namespace tracectl::cli {

namespace {

/// The unsigned number (0x... hex, or decimal) at the start of `s`; its
/// length in `used` (0: none).
std::uint64_t numberAt(std::string_view s, std::size_t& used) {
    std::uint64_t v = 0;
    int base = 10;
    std::size_t skip = 0;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        skip = 2;
    }
    const auto [end, ec] = std::from_chars(s.data() + skip, s.data() + s.size(), v, base);
    used = ec == std::errc() ? static_cast<std::size_t>(end - s.data()) : 0;
    return v;
}

/// The value after `name = ` in `line` (from `from` on), as a view up to
/// the next ", " or " }" (quotes kept), or npos.
std::size_t fieldAt(std::string_view line, std::string_view name, std::size_t from = 0) {
    const std::string key = std::string(name) + " = ";
    for (std::size_t at = line.find(key, from); at != std::string_view::npos;
         at = line.find(key, at + 1))
        if (at == 0 || line[at - 1] == ' ' || line[at - 1] == '{')
            return at + key.size();
    return std::string_view::npos;
}

/// The text of the quoted string at `at` (babeltrace2 escapes `"` and `\`).
std::string quotedAt(std::string_view line, std::size_t at) {
    std::string out;
    if (at >= line.size() || line[at] != '"')
        return out;
    for (std::size_t i = at + 1; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size())
            ++i;
        out += line[i];
    }
    return out;
}

} // namespace

void StackSymbolizer::learn(std::string_view line) {
    const std::size_t a = fieldAt(line, "address");
    const std::size_t e = fieldAt(line, "end");
    const std::size_t n = fieldAt(line, "name");
    const std::size_t m = fieldAt(line, "module");
    if (a == std::string_view::npos || e == std::string_view::npos || n == std::string_view::npos)
        return;
    std::size_t used = 0;
    const std::uint64_t address = numberAt(line.substr(a), used);
    if (used == 0)
        return;
    const std::uint64_t end = numberAt(line.substr(e), used);
    if (used == 0 || end <= address)
        return;
    symbols_[address] = {end, quotedAt(line, n),
                         m == std::string_view::npos ? std::string() : quotedAt(line, m)};
}

std::string StackSymbolizer::nameOf(std::uint64_t address) const {
    auto it = symbols_.upper_bound(address);
    if (it == symbols_.begin())
        return {};
    --it;
    if (address >= it->second.end)
        return {};
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%llx",
                  static_cast<unsigned long long>(address - it->first));
    std::string out = it->second.name + offset;
    if (!it->second.module.empty())
        out += " [" + it->second.module + "]";
    return out;
}

std::string StackSymbolizer::process(std::string_view line) {
    if (line.find(" tracectl_kernel_symbol: ") != std::string_view::npos) {
        learn(line);
        return std::string(line);
    }
    const std::size_t seq = fieldAt(line, "callstack_kernel");
    if (seq == std::string_view::npos || seq >= line.size() || line[seq] != '[' || symbols_.empty())
        return std::string(line);
    const std::size_t close = line.find(" ]", seq);
    if (close == std::string_view::npos)
        return std::string(line);
    std::string out(line.substr(0, seq));
    std::size_t at = seq;
    // Each element reads "[i] = VALUE".
    while (at < close) {
        const std::size_t eq = line.find("] = ", at);
        if (eq == std::string_view::npos || eq >= close)
            break;
        const std::size_t value = eq + 4;
        std::size_t used = 0;
        const std::uint64_t address = numberAt(line.substr(value, close - value), used);
        out.append(line.substr(at, value + used - at));
        at = value + used;
        if (used != 0)
            if (const std::string name = nameOf(address); !name.empty())
                out += " <" + name + ">";
    }
    out.append(line.substr(at));
    return out;
}

} // namespace tracectl::cli
