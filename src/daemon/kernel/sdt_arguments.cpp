#include "kernel/sdt_arguments.hpp"

#include <array>
#include <cctype>
#include <stdexcept>

namespace tracectl::kernel {

namespace {

/// ftrace's name (without '%') of x86-64 register `reg` in any of its
/// widths ("rdi", "edi", "di", "dil"; "r8", "r8d", "r8w", "r8b"), or "".
std::string registerName(std::string_view reg) {
    struct Row {
        const char* ftrace;
        std::array<const char*, 4> names;
    };
    static constexpr Row kRows[] = {
        {"ax", {"rax", "eax", "ax", "al"}},  {"bx", {"rbx", "ebx", "bx", "bl"}},
        {"cx", {"rcx", "ecx", "cx", "cl"}},  {"dx", {"rdx", "edx", "dx", "dl"}},
        {"si", {"rsi", "esi", "si", "sil"}}, {"di", {"rdi", "edi", "di", "dil"}},
        {"bp", {"rbp", "ebp", "bp", "bpl"}}, {"sp", {"rsp", "esp", "sp", "spl"}},
        {"ip", {"rip", "eip", "ip", "ip"}},
    };
    for (const Row& row : kRows)
        for (const char* name : row.names)
            if (reg == name)
                return row.ftrace;
    // r8 .. r15 with an optional d/w/b suffix
    if (reg.size() >= 2 && reg[0] == 'r' && std::isdigit(static_cast<unsigned char>(reg[1]))) {
        std::size_t i = 1;
        while (i < reg.size() && std::isdigit(static_cast<unsigned char>(reg[i])))
            ++i;
        const int n = std::stoi(std::string(reg.substr(1, i - 1)));
        const std::string_view suffix = reg.substr(i);
        if (n >= 8 && n <= 15 &&
            (suffix.empty() || suffix == "d" || suffix == "w" || suffix == "b"))
            return "r" + std::to_string(n);
    }
    return {};
}

std::string typeOf(int size) {
    switch (size) {
    case 1:
        return "u8";
    case 2:
        return "u16";
    case 4:
        return "u32";
    case 8:
        return "u64";
    case -1:
        return "s8";
    case -2:
        return "s16";
    case -4:
        return "s32";
    case -8:
        return "s64";
    default:
        return {};
    }
}

bool isInteger(std::string_view s) {
    std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (i == s.size())
        return false;
    if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        for (std::size_t j = i + 2; j < s.size(); ++j)
            if (!std::isxdigit(static_cast<unsigned char>(s[j])))
                return false;
        return true;
    }
    for (; i < s.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(s[i])))
            return false;
    return true;
}

/// One operand in ftrace's fetch syntax, or "" if it is not one we know.
std::string operand(std::string_view op) {
    if (op.size() > 1 && op[0] == '%')
        return registerName(op.substr(1)).empty() ? "" : "%" + registerName(op.substr(1));
    if (op.size() > 1 && op[0] == '$')
        return isInteger(op.substr(1)) ? "\\" + std::string(op.substr(1)) : "";
    const auto open = op.find('(');
    if (open == std::string_view::npos || op.back() != ')')
        return {};
    const std::string_view offset = op.substr(0, open);
    const std::string_view inner = op.substr(open + 1, op.size() - open - 2);
    if (inner.size() < 2 || inner[0] != '%' || inner.find(',') != std::string_view::npos)
        return {}; // indexed (base,index,scale) forms
    const std::string reg = registerName(inner.substr(1));
    if (reg.empty() || reg == "ip" || (!offset.empty() && !isInteger(offset)))
        return {}; // RIP-relative (a symbol's address) or a symbolic offset
    std::string off = offset.empty() ? "+0" : std::string(offset);
    if (off[0] != '-' && off[0] != '+')
        off = "+" + off;
    return off + "(%" + reg + ")";
}

} // namespace

std::string sdtFetchArguments(std::string_view spec) {
    std::string out;
    std::size_t index = 0;
    std::size_t pos = 0;
    while (pos < spec.size()) {
        while (pos < spec.size() && spec[pos] == ' ')
            ++pos;
        if (pos == spec.size())
            break;
        std::size_t end = spec.find(' ', pos);
        if (end == std::string_view::npos)
            end = spec.size();
        const std::string_view arg = spec.substr(pos, end - pos);
        pos = end;
        const auto at = arg.find('@');
        const std::string name = "arg" + std::to_string(index);
        if (at == std::string_view::npos || !isInteger(arg.substr(0, at)))
            throw std::invalid_argument("argument " + std::to_string(index) + " (\"" +
                                        std::string(arg) + "\") has no SIZE@ prefix");
        const std::string type = typeOf(std::stoi(std::string(arg.substr(0, at))));
        const std::string fetch = operand(arg.substr(at + 1));
        if (type.empty() || fetch.empty())
            throw std::invalid_argument("argument " + std::to_string(index) + " (\"" +
                                        std::string(arg) +
                                        "\") is in a form uprobe_events cannot fetch");
        if (!out.empty())
            out += ' ';
        out += name + "=" + fetch + ":" + type;
        ++index;
    }
    return out;
}

} // namespace tracectl::kernel
