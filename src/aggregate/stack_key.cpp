#include "aggregate/stack_key.hpp"

#include <cstring>

namespace tracectl::aggregate {

std::string stackKey(bool user, std::int32_t pid, std::string_view addresses, std::size_t limit,
                     std::optional<std::uint64_t> caller) {
    std::string key(1, user ? 'U' : 'K');
    if (user) {
        key.append(reinterpret_cast<const char*>(&pid), sizeof pid);
    }
    std::size_t frames = 0;
    const auto add = [&](std::uint64_t address) {
        if (frames < limit) {
            key.append(reinterpret_cast<const char*>(&address), sizeof address);
            ++frames;
        }
    };
    for (std::size_t at = 0; at + 8 <= addresses.size(); at += 8) {
        std::uint64_t address;
        std::memcpy(&address, addresses.data() + at, 8);
        if (address == 0) {
            break;
        }
        add(address);
        if (at == 0 && caller && *caller != 0) {
            add(*caller);
        }
    }
    return key;
}

std::optional<StackKey> parseStackKey(std::string_view key) {
    if (key.empty() || (key[0] != 'K' && key[0] != 'U')) {
        return std::nullopt;
    }
    StackKey stack;
    stack.user = key[0] == 'U';
    key.remove_prefix(1);
    if (stack.user) {
        if (key.size() < sizeof stack.pid) {
            return std::nullopt;
        }
        std::memcpy(&stack.pid, key.data(), sizeof stack.pid);
        key.remove_prefix(sizeof stack.pid);
    }
    if (key.size() % 8 != 0) {
        return std::nullopt;
    }
    for (std::size_t at = 0; at < key.size(); at += 8) {
        std::uint64_t address;
        std::memcpy(&address, key.data() + at, 8);
        stack.frames.push_back(address);
    }
    return stack;
}

std::vector<std::string> stackFrames(const StackKey& stack, symbols::StackNames& names) {
    std::vector<std::string> out;
    for (const std::uint64_t address : stack.frames) {
        out.push_back(symbols::StackNames::dtraceText(
            stack.user ? names.userFrame(stack.pid, address) : names.kernelFrame(address),
            address));
    }
    return out;
}

std::string stackText(const StackKey& stack, symbols::StackNames& names) {
    std::string text = "\n";
    for (const std::string& frame : stackFrames(stack, names)) {
        text.append(kStackIndent, ' ');
        text += frame;
        text += '\n';
    }
    return text;
}

} // namespace tracectl::aggregate
