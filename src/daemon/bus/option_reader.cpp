#include "bus/option_reader.hpp"

#include "bus/sd_bus_handles.hpp"
#include "common/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace tracectl::bus {

namespace {

template <typename T>
sdbus::Variant readBasic(sd_bus_message* m, char type) {
    T value{};
    check(sd_bus_message_read_basic(m, type, &value), "read option value");
    return sdbus::Variant(value);
}

/// A string-like value with its own type: s as std::string, o as
/// sdbus::ObjectPath, g as sdbus::Signature (an option wanting s refuses
/// the other two).
sdbus::Variant readString(sd_bus_message* m, char type) {
    const char* raw = nullptr;
    check(sd_bus_message_read_basic(m, type, &raw), "read option value");
    std::string value(raw != nullptr ? raw : "");
    if (type == 'o')
        return sdbus::Variant(sdbus::ObjectPath(std::move(value)));
    if (type == 'g')
        return sdbus::Variant(sdbus::Signature(std::move(value)));
    return sdbus::Variant(std::move(value));
}

/// The variant's value, the read position inside it. Throws
/// Error(InvalidArgument) for a type no option takes.
sdbus::Variant readValue(sd_bus_message* m, const std::string& key, const std::string& type) {
    if (type == "as") {
        // String by string, in linear time, up to the bound.
        check(sd_bus_message_enter_container(m, 'a', "s"), "read option value");
        std::vector<std::string> out;
        for (;;) {
            const char* s = nullptr;
            if (check(sd_bus_message_read_basic(m, 's', &s), "read option value") == 0)
                break;
            if (out.size() == kMaxOptionArrayItems)
                throw Error(ErrorCode::InvalidArgument, "option '" + key + "' holds more than " +
                                                            std::to_string(kMaxOptionArrayItems) +
                                                            " strings");
            out.emplace_back(s != nullptr ? s : "");
        }
        check(sd_bus_message_exit_container(m), "read option value");
        return sdbus::Variant(out);
    }
    if (type.size() == 1) {
        switch (type[0]) {
        case 'b': {
            int value = 0;
            check(sd_bus_message_read_basic(m, 'b', &value), "read option value");
            return sdbus::Variant(value != 0);
        }
        case 'y':
            return readBasic<uint8_t>(m, 'y');
        case 'n':
            return readBasic<int16_t>(m, 'n');
        case 'q':
            return readBasic<uint16_t>(m, 'q');
        case 'i':
            return readBasic<int32_t>(m, 'i');
        case 'u':
            return readBasic<uint32_t>(m, 'u');
        case 'x':
            return readBasic<int64_t>(m, 'x');
        case 't':
            return readBasic<uint64_t>(m, 't');
        case 'd':
            return readBasic<double>(m, 'd');
        case 's':
        case 'o':
        case 'g':
            return readString(m, type[0]);
        default:
            break;
        }
    }
    throw Error(ErrorCode::InvalidArgument,
                "option '" + key + "' has a value of type '" + type + "', which no option takes");
}

} // namespace

std::string readStringArgument(sd_bus_message* m) {
    const char* s = nullptr;
    check(sd_bus_message_read_basic(m, 's', &s), "read string argument");
    return s != nullptr ? s : "";
}

std::map<std::string, sdbus::Variant> readOptions(sd_bus_message* m) {
    std::map<std::string, sdbus::Variant> options;
    check(sd_bus_message_enter_container(m, 'a', "{sv}"), "read options a{sv}");
    for (;;) {
        const int r = check(sd_bus_message_enter_container(m, 'e', "sv"), "read option");
        if (r == 0)
            break;
        if (options.size() == kMaxOptionEntries)
            throw Error(ErrorCode::InvalidArgument,
                        "more than " + std::to_string(kMaxOptionEntries) + " options in one call");
        const char* rawKey = nullptr;
        check(sd_bus_message_read_basic(m, 's', &rawKey), "read option key");
        const std::string key(rawKey != nullptr ? rawKey : "");
        const char* contents = nullptr;
        check(sd_bus_message_peek_type(m, nullptr, &contents), "read option value type");
        const std::string type(contents != nullptr ? contents : "");
        check(sd_bus_message_enter_container(m, 'v', type.c_str()), "read option value");
        sdbus::Variant value = readValue(m, key, type);
        check(sd_bus_message_exit_container(m), "read option value");
        check(sd_bus_message_exit_container(m), "read option");
        if (!options.emplace(key, std::move(value)).second)
            throw Error(ErrorCode::InvalidArgument,
                        "option '" + key + "' is given twice; give each option once");
    }
    check(sd_bus_message_exit_container(m), "read options a{sv}");
    return options;
}

} // namespace tracectl::bus
