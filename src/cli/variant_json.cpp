#include "variant_json.hpp"

#include <cmath>
#include <sdbus-c++/Message.h>
#include <sdbus-c++/TypeTraits.h>
#include <stdexcept>
#include <utility>

// sdbus-c++ 1.2 can only read a Variant through a statically known C++ type. To walk a value
// of a type known only at run time, the value is wrapped in a struct "(v)" and read back as
// Struct<AnyValue>, AnyValue being a type of signature "v" whose reader walks the message
// with peekType()/enter*()/exit*().

namespace tracectl::cli {
namespace {

/// A D-Bus value of any type, read generically; on the wire it is a variant.
struct AnyValue {
    nlohmann::json json;
};

bool at_end(const std::string& type) {
    return type.empty() || type.front() == '\0';
}

template <typename T>
nlohmann::json read_basic(sdbus::Message& msg) {
    T value{};
    msg >> value;
    return nlohmann::json(value);
}

nlohmann::json read_value(sdbus::Message& msg);

nlohmann::json read_dictionary(sdbus::Message& msg, const std::string& array_contents) {
    // array_contents is "{KV}"; the entry signature is "KV".
    const std::string entry = array_contents.substr(1, array_contents.size() - 2);
    auto object = nlohmann::json::object();
    msg.enterContainer(array_contents);
    while (msg.enterDictEntry(entry)) {
        const nlohmann::json key = read_value(msg);
        nlohmann::json value = read_value(msg);
        object[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(value);
        msg.exitDictEntry();
    }
    msg.clearFlags();
    msg.exitContainer();
    return object;
}

/// Reads values until the end of the current container into a JSON array.
nlohmann::json read_sequence(sdbus::Message& msg) {
    auto array = nlohmann::json::array();
    std::string type;
    std::string contents;
    for (msg.peekType(type, contents); !at_end(type); msg.peekType(type, contents)) {
        array.push_back(read_value(msg));
    }
    return array;
}

nlohmann::json read_value(sdbus::Message& msg) {
    std::string type;
    std::string contents;
    msg.peekType(type, contents);
    if (at_end(type)) {
        throw std::runtime_error("malformed D-Bus value: missing data");
    }
    switch (type.front()) {
    case 'b':
        return read_basic<bool>(msg);
    case 'y':
        return read_basic<std::uint8_t>(msg);
    case 'n':
        return read_basic<std::int16_t>(msg);
    case 'q':
        return read_basic<std::uint16_t>(msg);
    case 'i':
        return read_basic<std::int32_t>(msg);
    case 'u':
        return read_basic<std::uint32_t>(msg);
    case 'x':
        return read_basic<std::int64_t>(msg);
    case 't':
        return read_basic<std::uint64_t>(msg);
    case 'd': {
        double value = 0;
        msg >> value;
        return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
    }
    case 's':
        return read_basic<std::string>(msg);
    case 'o': {
        sdbus::ObjectPath path;
        msg >> path;
        return nlohmann::json(static_cast<const std::string&>(path));
    }
    case 'g': {
        sdbus::Signature signature;
        msg >> signature;
        return nlohmann::json(static_cast<const std::string&>(signature));
    }
    case 'h': {
        sdbus::UnixFd fd;
        msg >> fd;
        return nlohmann::json("<unix fd>");
    }
    case 'v': {
        msg.enterVariant(contents);
        nlohmann::json value = read_value(msg);
        msg.exitVariant();
        return value;
    }
    case 'a': {
        if (!contents.empty() && contents.front() == '{') {
            return read_dictionary(msg, contents);
        }
        msg.enterContainer(contents);
        nlohmann::json array = read_sequence(msg);
        msg.exitContainer();
        return array;
    }
    case 'r': // sd-bus names a struct 'r' (SD_BUS_TYPE_STRUCT), not '('
    case '(': {
        msg.enterStruct(contents);
        nlohmann::json fields = read_sequence(msg);
        msg.exitStruct();
        return fields;
    }
    default:
        throw std::runtime_error("malformed D-Bus value: unknown type '" + type + "'");
    }
}

/// Found by argument-dependent lookup from sdbus-c++'s Struct reader.
sdbus::Message& operator>>(sdbus::Message& msg, AnyValue& item) {
    item.json = read_value(msg); // the value is a variant: read_value unwraps it
    return msg;
}

} // namespace
} // namespace tracectl::cli

namespace sdbus {
template <>
struct signature_of<tracectl::cli::AnyValue> {
    static constexpr bool is_valid = true;
    static const std::string str() { return "v"; }
};
} // namespace sdbus

namespace tracectl::cli {

nlohmann::json variant_to_json(const sdbus::Variant& value) {
    if (value.isEmpty()) {
        return nullptr;
    }
    const sdbus::Variant wrapped{sdbus::Struct<sdbus::Variant>{value}};
    auto read = wrapped.get<sdbus::Struct<AnyValue>>();
    return std::move(std::get<0>(read).json);
}

PropertyMap to_property_map(const std::map<std::string, sdbus::Variant>& properties) {
    PropertyMap result;
    for (const auto& [name, value] : properties) {
        result.emplace(name, variant_to_json(value));
    }
    return result;
}

} // namespace tracectl::cli
