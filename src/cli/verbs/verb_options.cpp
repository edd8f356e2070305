#include "verb_options.hpp"

#include "cli/quantities.hpp"
#include "cli/utf8.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <system_error>

namespace tracectl::cli {

SessionSpec SessionSpecOptions::spec() const {
    SessionSpec out;
    if (nameOption->count() > 0) {
        out.name = name;
    }
    out.all = all;
    if (globOption->count() > 0) {
        out.glob = glob;
    }
    return out;
}

void addSessionSpec(CLI::App& command, SessionSpecOptions& options, const std::string& verb) {
    options.nameOption =
        command.add_option("NAME", options.name,
                           "Name of the session (default: the current session, see 'tracectl "
                           "set-session')");
    auto* all = command.add_flag("-a,--all", options.all,
                                 verb + " every session you own (even as root, only yours)");
    options.globOption =
        command
            .add_option("-g,--glob", options.glob,
                        verb + " every session you own whose name matches PATTERN (a shell "
                               "glob: *, ?, [...])")
            ->type_name("PATTERN");
    options.nameOption->excludes(all)->excludes(options.globOption);
    all->excludes(options.globOption);
}

void acceptWholeNumber(CLI::Option& option) {
    option.check(CLI::Validator(
        [](std::string& text) -> std::string {
            std::uint64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, value);
            if (text.empty() || ec != std::errc{} || ptr != end) {
                return "'" + text + "' is not a whole number from 0 to 18446744073709551615";
            }
            return {};
        },
        "UINT"));
}

void acceptSizeInBytes(CLI::Option& option) {
    option.transform(CLI::Validator(
        [](std::string& text) -> std::string {
            const SizeParse size = parseSize(text);
            if (!size.bytes) {
                return size.error;
            }
            text = std::to_string(*size.bytes);
            return {};
        },
        "")); // the options' type_name says SIZE
}

std::string wrappedList(std::string_view list) {
    std::string out = "  ";
    std::size_t column = 2;
    while (!list.empty()) {
        const std::size_t comma = list.find(", ");
        const std::string_view item =
            list.substr(0, comma == std::string_view::npos ? comma : comma + 1);
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 2);
        if (column > 2 && column + 1 + item.size() > 80) {
            out += "\n  ";
            column = 2;
        } else if (column > 2) {
            out += ' ';
            ++column;
        }
        out += item;
        column += item.size();
    }
    return out;
}

std::vector<std::string> splitWords(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : text) {
        if (c == ' ') {
            if (!word.empty()) {
                words.push_back(std::move(word));
                word.clear();
            }
        } else {
            word += c;
        }
    }
    if (!word.empty()) {
        words.push_back(std::move(word));
    }
    return words;
}

std::optional<std::string> optionalName(const CLI::Option* option, const std::string& value) {
    return option->count() > 0 ? std::optional<std::string>(value) : std::nullopt;
}

std::optional<std::string> optionalSession(const CLI::Option* name, const CLI::Option* session,
                                           const std::string& value) {
    return name->count() + session->count() > 0 ? std::optional<std::string>(value) : std::nullopt;
}

void checkUtf8Names(const std::vector<const std::string*>& names) {
    for (const std::string* name : names) {
        if (!isValidUtf8(*name)) {
            throw CLI::ValidationError("NAME", "a session name must be valid UTF-8");
        }
    }
}

} // namespace tracectl::cli
