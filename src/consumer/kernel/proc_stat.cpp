#include "proc_stat.hpp"

#include "common/unique_fd.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <unistd.h>

namespace tracectl::consumer::kernel {

namespace {

// Field `index` (0-based) of the space-separated `fields`.
std::string_view field(std::string_view fields, int index) noexcept {
    std::size_t pos = 0;
    for (int i = 0;; ++i) {
        pos = fields.find_first_not_of(" \n", pos);
        if (pos == std::string_view::npos)
            return {};
        const std::size_t end = std::min(fields.find_first_of(" \n", pos), fields.size());
        if (i == index)
            return fields.substr(pos, end - pos);
        pos = end;
    }
}

template <typename T>
bool number(std::string_view text, T& out) noexcept {
    if (text.empty())
        return false;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && p == text.data() + text.size();
}

} // namespace

std::optional<ProcStat> parseProcStat(std::string_view line) noexcept {
    const std::size_t open = line.find('(');
    const std::size_t close = line.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
        return std::nullopt;
    ProcStat s;
    std::string_view pid = line.substr(0, open);
    while (!pid.empty() && pid.back() == ' ')
        pid.remove_suffix(1);
    if (!number(pid, s.pid))
        return std::nullopt;
    const std::string_view comm = line.substr(open + 1, close - open - 1);
    std::copy_n(comm.data(), std::min(comm.size(), s.comm.size() - 1), s.comm.data());
    // After ')': field 3 is index 0.
    const std::string_view rest = line.substr(close + 1);
    const std::string_view state = field(rest, 0);
    if (state.size() != 1)
        return std::nullopt;
    s.state = state[0];
    if (!number(field(rest, 4 - 3), s.ppid) || !number(field(rest, 9 - 3), s.flags) ||
        !number(field(rest, 18 - 3), s.priority))
        return std::nullopt;
    const std::string_view cpu = field(rest, 39 - 3);
    if (!cpu.empty() && !number(cpu, s.processor))
        return std::nullopt;
    return s;
}

namespace {

// The value of `key` ("Tgid:") in a status text, up to its line's end;
// empty when the key is not at the start of a line.
std::optional<std::string_view> statusValue(std::string_view status,
                                            std::string_view key) noexcept {
    std::size_t at = 0;
    while (!status.substr(at).starts_with(key)) {
        at = status.find('\n', at);
        if (at == std::string_view::npos)
            return std::nullopt;
        ++at;
    }
    std::string_view value = status.substr(at + key.size());
    return value.substr(0, value.find('\n'));
}

} // namespace

std::size_t parseNsPids(std::string_view status, std::span<std::int32_t> out) noexcept {
    const auto line = statusValue(status, "NSpid:");
    if (!line)
        return 0;
    std::string_view rest = *line;
    std::size_t n = 0;
    while (n < out.size()) {
        const std::size_t begin = rest.find_first_not_of(" \t");
        if (begin == std::string_view::npos)
            break;
        rest = rest.substr(begin);
        const std::size_t end = std::min(rest.find_first_of(" \t"), rest.size());
        if (!number(rest.substr(0, end), out[n]))
            break;
        ++n;
        rest = rest.substr(end);
    }
    return n;
}

std::optional<std::int32_t> parseTgid(std::string_view status) noexcept {
    const auto line = statusValue(status, "Tgid:");
    if (!line)
        return std::nullopt;
    const std::string_view value = *line;
    const std::size_t begin = value.find_first_not_of(" \t");
    if (begin == std::string_view::npos)
        return std::nullopt;
    std::int32_t tgid = 0;
    if (!number(value.substr(begin), tgid))
        return std::nullopt;
    return tgid;
}

std::optional<std::string_view> readSmallFile(const char* path, std::span<char> buffer) noexcept {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    UniqueFd guard(fd);
    std::size_t got = 0;
    while (got < buffer.size()) {
        const ssize_t n = ::read(fd, buffer.data() + got, buffer.size() - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return std::nullopt;
        }
        if (n == 0)
            break;
        got += static_cast<std::size_t>(n);
    }
    return std::string_view(buffer.data(), got);
}

} // namespace tracectl::consumer::kernel
