#include "kernel_symbols.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string_view>
#include <system_error>
#include <unistd.h>

namespace tracectl::consumer::kernel {

KernelSymbols KernelSymbols::parse(std::string_view text) {
    KernelSymbols out;
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t eol = text.find('\n', at);
        if (eol == std::string_view::npos)
            eol = text.size();
        std::string_view line = text.substr(at, eol - at);
        at = eol + 1;
        const std::size_t space = line.find(' ');
        if (space == std::string_view::npos || space + 3 > line.size() || line[space + 2] != ' ')
            continue;
        const char type = line[space + 1];
        if (type != 't' && type != 'T' && type != 'w' && type != 'W')
            continue;
        std::uint64_t address = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + space, address, 16);
        if (ec != std::errc() || end != line.data() + space || address == 0)
            continue;
        std::string_view rest = line.substr(space + 3);
        std::string_view module;
        if (const std::size_t tab = rest.find('\t'); tab != std::string_view::npos) {
            module = rest.substr(tab + 1);
            rest = rest.substr(0, tab);
            if (module.size() >= 2 && module.front() == '[' && module.back() == ']')
                module = module.substr(1, module.size() - 2);
        }
        if (rest.empty())
            continue;
        out.symbols_.push_back({address, 0, std::string(rest), std::string(module)});
    }
    std::stable_sort(out.symbols_.begin(), out.symbols_.end(),
                     [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
    // One symbol per address (aliases: the first listed), each up to the next.
    out.symbols_.erase(
        std::unique(out.symbols_.begin(), out.symbols_.end(),
                    [](const Symbol& a, const Symbol& b) { return a.address == b.address; }),
        out.symbols_.end());
    for (std::size_t i = 0; i < out.symbols_.size(); ++i)
        out.symbols_[i].end =
            i + 1 < out.symbols_.size() ? out.symbols_[i + 1].address : out.symbols_[i].address + 1;
    return out;
}

KernelSymbols KernelSymbols::read(int fd) {
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw std::system_error(errno, std::generic_category(), "reading /proc/kallsyms");
        if (n == 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return parse(text);
}

std::size_t KernelSymbols::find(std::uint64_t address) const noexcept {
    const auto it =
        std::upper_bound(symbols_.begin(), symbols_.end(), address,
                         [](std::uint64_t a, const Symbol& s) { return a < s.address; });
    if (it == symbols_.begin())
        return kNpos;
    const auto& s = *(it - 1);
    return address < s.end ? static_cast<std::size_t>(it - 1 - symbols_.begin()) : kNpos;
}

} // namespace tracectl::consumer::kernel
