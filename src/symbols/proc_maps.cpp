#include "symbols/proc_maps.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>

namespace tracectl::symbols {

namespace {

/// The hex number at the start of `s`, its text removed; false if none.
bool takeHex(std::string_view& s, std::uint64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
    if (ec != std::errc() || end == s.data())
        return false;
    s.remove_prefix(static_cast<std::size_t>(end - s.data()));
    return true;
}

/// The next space-separated word of `s`, removed from it.
std::string_view takeWord(std::string_view& s) {
    const std::size_t begin = s.find_first_not_of(' ');
    if (begin == std::string_view::npos) {
        s = {};
        return {};
    }
    s.remove_prefix(begin);
    const std::size_t end = std::min(s.find(' '), s.size());
    const std::string_view word = s.substr(0, end);
    s.remove_prefix(end);
    return word;
}

} // namespace

std::vector<ProcMapping> parseProcMaps(std::string_view text) {
    // ADDRESS-ADDRESS PERMS OFFSET DEV INODE [PATH]
    std::vector<ProcMapping> out;
    while (!text.empty()) {
        const std::size_t eol = std::min(text.find('\n'), text.size());
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(std::min(eol + 1, text.size()));
        ProcMapping m;
        if (!takeHex(line, m.start) || line.empty() || line.front() != '-')
            continue;
        line.remove_prefix(1);
        if (!takeHex(line, m.end) || m.end <= m.start)
            continue;
        const std::string_view perms = takeWord(line);
        std::string_view offset = takeWord(line);
        takeWord(line); // dev
        takeWord(line); // inode
        if (perms.size() < 3 || perms[2] != 'x' || !takeHex(offset, m.pgoff))
            continue;
        const std::size_t path = line.find_first_not_of(' ');
        if (path == std::string_view::npos || line[path] != '/')
            continue;
        m.path = std::string(line.substr(path));
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<ProcMapping> readProcMaps(std::int32_t pid) {
    if (pid <= 0)
        return {};
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    if (!in)
        return {};
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parseProcMaps(text);
}

} // namespace tracectl::symbols
