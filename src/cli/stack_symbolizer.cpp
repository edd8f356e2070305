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

void StackSymbolizer::learnSymbol(std::string_view line) {
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
    names_.learnKernelSymbol(address, end, quotedAt(line, n),
                             m == std::string_view::npos ? std::string() : quotedAt(line, m));
    ++learnt_;
}

void StackSymbolizer::learnMapping(std::string_view line) {
    // The payload's fields, after the context's (which may have a pid too).
    const std::size_t s = fieldAt(line, "start");
    if (s == std::string_view::npos)
        return;
    const std::size_t e = fieldAt(line, "end", s);
    const std::size_t o = fieldAt(line, "pgoff", s);
    const std::size_t p = fieldAt(line, "pid", s);
    const std::size_t f = fieldAt(line, "path", s);
    if (e == std::string_view::npos || o == std::string_view::npos || p == std::string_view::npos ||
        f == std::string_view::npos)
        return;
    std::size_t used[4] = {};
    const std::uint64_t start = numberAt(line.substr(s), used[0]);
    const std::uint64_t end = numberAt(line.substr(e), used[1]);
    const std::uint64_t pgoff = numberAt(line.substr(o), used[2]);
    const std::uint64_t pid = numberAt(line.substr(p), used[3]);
    if (used[0] == 0 || used[1] == 0 || used[2] == 0 || used[3] == 0)
        return;
    names_.learnMapping(static_cast<std::int32_t>(pid), start, end, pgoff, quotedAt(line, f));
    userTexts_.clear();
    ++learnt_;
}

void StackSymbolizer::learnThread(std::string_view line) {
    // The payload's fields: the last structure (the context's have a tid, maybe a pid).
    const std::size_t payload = line.rfind('{');
    if (payload == std::string_view::npos)
        return;
    const std::size_t t = fieldAt(line, "tid", payload);
    const std::size_t p = fieldAt(line, "pid", payload);
    if (t == std::string_view::npos || p == std::string_view::npos)
        return;
    std::size_t used[2] = {};
    const std::uint64_t tid = numberAt(line.substr(t), used[0]);
    const std::uint64_t pid = numberAt(line.substr(p), used[1]);
    if (used[0] == 0 || used[1] == 0)
        return;
    names_.learnThread(static_cast<std::int32_t>(tid), static_cast<std::int32_t>(pid));
    userTexts_.clear();
    ++learnt_;
}

namespace {

/// " <name+0xOFF [object]>" ("" for vmlinux: " <name+0xOFF>") for a frame with a symbol,
/// " <[object]+0xFILEOFFSET>" for one without, "" for none.
std::string viewText(const std::optional<symbols::StackNames::Frame>& frame) {
    if (!frame)
        return {};
    char offset[32];
    if (!frame->symbol) {
        std::snprintf(offset, sizeof offset, "+0x%llx",
                      static_cast<unsigned long long>(frame->fileOffset));
        return " <[" + frame->object + "]" + offset + ">";
    }
    std::snprintf(offset, sizeof offset, "+0x%llx",
                  static_cast<unsigned long long>(frame->symbol->offset));
    std::string out = " <" + frame->symbol->name + offset;
    if (frame->object != "vmlinux")
        out += " [" + frame->object + "]";
    return out + ">";
}

/// The pid of the event of `context` (the line up to its call stack): its pid, vpid or
/// tid context field; -1 without one.
std::int32_t eventPid(std::string_view context) {
    for (const char* name : {"pid", "vpid", "tid"}) {
        const std::size_t at = fieldAt(context, name);
        if (at == std::string_view::npos)
            continue;
        std::size_t used = 0;
        const std::uint64_t pid = numberAt(context.substr(at), used);
        if (used != 0)
            return static_cast<std::int32_t>(pid);
    }
    return -1;
}

} // namespace

template <typename Name>
std::string StackSymbolizer::nameSequence(std::string_view line, std::string_view field,
                                          Name name) {
    const std::size_t seq = fieldAt(line, field);
    if (seq == std::string_view::npos || seq >= line.size() || line[seq] != '[')
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
            out += name(address);
    }
    out.append(line.substr(at));
    return out;
}

std::string StackSymbolizer::process(std::string_view line) {
    if (line.find(" tracectl_kernel_symbol: ") != std::string_view::npos) {
        learnSymbol(line);
        return std::string(line);
    }
    if (line.find(" tracectl_vm_map: ") != std::string_view::npos) {
        learnMapping(line);
        return std::string(line);
    }
    if (line.find(" tracectl_thread: ") != std::string_view::npos) {
        learnThread(line);
        return std::string(line);
    }
    if (names_.empty())
        return std::string(line);
    std::string out = nameSequence(line, "callstack_kernel", [this](std::uint64_t address) {
        return viewText(names_.kernelFrame(address));
    });
    const std::size_t user = fieldAt(out, "callstack_user");
    if (user == std::string::npos)
        return out;
    const std::int32_t pid = eventPid(std::string_view(out).substr(0, user));
    if (pid < 0)
        return out;
    return nameSequence(out, "callstack_user", [this, pid](std::uint64_t address) {
        const auto [text, added] = userTexts_.try_emplace({pid, address});
        if (added)
            text->second = viewText(names_.userFrame(pid, address));
        return text->second;
    });
}

} // namespace tracectl::cli
