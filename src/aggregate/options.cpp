#include "aggregate/options.hpp"

#include <cctype>

namespace tracectl::aggregate {

namespace {

bool valid_number_with_suffix(const std::string& value,
                              std::initializer_list<const char*> suffixes) {
    std::size_t digits = 0;
    while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits])) != 0) {
        ++digits;
    }
    if (digits == 0 || digits > 18) {
        return false;
    }
    const std::string suffix = value.substr(digits);
    if (suffix.empty()) {
        return true;
    }
    for (const char* s : suffixes) {
        std::string lower;
        for (const char c : suffix) {
            lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (lower == s) {
            return true;
        }
    }
    return false;
}

} // namespace

void apply_options(const std::vector<OptionSetting>& settings, RunOptions& options) {
    for (const OptionSetting& s : settings) {
        const auto flag = [&](bool& into) {
            if (!s.value.empty()) {
                throw ProgramError(s.at, "option " + s.name + " takes no value");
            }
            into = true;
        };
        const auto rate = [&](std::string& into) {
            if (!valid_number_with_suffix(s.value,
                                          {"ns", "nsec", "us", "usec", "ms", "msec", "s", "sec",
                                           "m", "min", "h", "hour", "d", "day", "hz"})) {
                throw ProgramError(s.at, "option " + s.name +
                                             " needs a rate or a time, as "
                                             "in 10hz or 100ms, not '" +
                                             s.value + "'");
            }
            into = s.value;
        };
        if (s.name == "quiet") {
            flag(options.quiet);
        } else if (s.name == "aggsortkey") {
            flag(options.aggsortkey);
        } else if (s.name == "aggsortrev") {
            flag(options.aggsortrev);
        } else if (s.name == "defaultargs") {
            flag(options.defaultargs);
        } else if (s.name == "switchrate") {
            rate(options.switchrate);
        } else if (s.name == "aggrate") {
            rate(options.aggrate);
        } else if (s.name == "bufsize") {
            if (!valid_number_with_suffix(s.value, {"k", "m", "g", "t"})) {
                throw ProgramError(s.at,
                                   "option bufsize needs a size, as in 4m, not '" + s.value + "'");
            }
            options.bufsize = s.value;
        } else if (s.name == "destructive") {
            throw ProgramError(s.at, "option destructive is refused: destructive actions are "
                                     "not available (tracectl dtrace never acts on the "
                                     "traced system)");
        } else {
            throw ProgramError(s.at, "unknown option '" + s.name +
                                         "' (quiet, switchrate, aggrate, bufsize, defaultargs, "
                                         "aggsortkey, aggsortrev)");
        }
    }
}

OptionSetting option_from_text(const std::string& text) {
    const std::size_t eq = text.find('=');
    return {text.substr(0, eq), eq == std::string::npos ? std::string() : text.substr(eq + 1),
            Position{0, 0}};
}

} // namespace tracectl::aggregate
