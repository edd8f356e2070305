#include "kernel/instance_ledger.hpp"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <system_error>

namespace tracectl::kernel {

bool InstanceLedger::isInstanceName(const std::string& name) {
    constexpr std::string_view kPrefix = "tracectl-";
    if (name.size() <= kPrefix.size() || name.size() > kPrefix.size() + 64 ||
        name.compare(0, kPrefix.size(), kPrefix) != 0)
        return false;
    return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()), name.end(),
                       [](char c) {
                           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                  (c >= '0' && c <= '9') || c == '_' || c == '-';
                       });
}

std::vector<std::string> InstanceLedger::read() const {
    std::vector<std::string> names;
    if (path_.empty())
        return names;
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line))
        if (isInstanceName(line) && std::find(names.begin(), names.end(), line) == names.end())
            names.push_back(line);
    return names;
}

void InstanceLedger::write(const std::vector<std::string>& names) const {
    const std::filesystem::path next = path_.string() + ".new";
    {
        std::ofstream out(next, std::ios::trunc);
        for (const std::string& n : names)
            out << n << '\n';
        out.flush();
        if (!out)
            throw std::system_error(errno != 0 ? errno : EIO, std::generic_category(),
                                    "writing " + next.string());
    }
    std::error_code ec;
    std::filesystem::rename(next, path_, ec);
    if (ec)
        throw std::system_error(ec, "renaming " + next.string());
}

void InstanceLedger::add(const std::string& name) {
    if (path_.empty() || !isInstanceName(name))
        return;
    std::vector<std::string> names = read();
    if (std::find(names.begin(), names.end(), name) != names.end())
        return;
    names.push_back(name);
    write(names);
}

void InstanceLedger::remove(const std::string& name) {
    if (path_.empty())
        return;
    std::vector<std::string> names = read();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
        return;
    names.erase(it);
    write(names);
}

} // namespace tracectl::kernel
