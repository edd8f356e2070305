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

bool atEnd(const std::string& type) {
    return type.empty() || type.front() == '\0';
}

template <typename T>
nlohmann::json readBasic(sdbus::Message& msg) {
    T value{};
    msg >> value;
    return nlohmann::json(value);
}

nlohmann::json readValue(sdbus::Message& msg);

nlohmann::json readDictionary(sdbus::Message& msg, const std::string& arrayContents) {
    // array_contents is "{KV}"; the entry signature is "KV".
    const std::string entry = arrayContents.substr(1, arrayContents.size() - 2);
    auto object = nlohmann::json::object();
    msg.enterContainer(arrayContents);
    while (msg.enterDictEntry(entry)) {
        const nlohmann::json key = readValue(msg);
        nlohmann::json value = readValue(msg);
        object[key.is_string() ? key.get<std::string>() : key.dump()] = std::move(value);
        msg.exitDictEntry();
    }
    msg.clearFlags();
    msg.exitContainer();
    return object;
}

/// Reads values until the end of the current container into a JSON array.
nlohmann::json readSequence(sdbus::Message& msg) {
    auto array = nlohmann::json::array();
    std::string type;
    std::string contents;
    for (msg.peekType(type, contents); !atEnd(type); msg.peekType(type, contents)) {
        array.push_back(readValue(msg));
    }
    return array;
}

nlohmann::json readValue(sdbus::Message& msg) {
    std::string type;
    std::string contents;
    msg.peekType(type, contents);
    if (atEnd(type)) {
        throw std::runtime_error("malformed D-Bus value: missing data");
    }
    switch (type.front()) {
    case 'b':
        return readBasic<bool>(msg);
    case 'y':
        return readBasic<std::uint8_t>(msg);
    case 'n':
        return readBasic<std::int16_t>(msg);
    case 'q':
        return readBasic<std::uint16_t>(msg);
    case 'i':
        return readBasic<std::int32_t>(msg);
    case 'u':
        return readBasic<std::uint32_t>(msg);
    case 'x':
        return readBasic<std::int64_t>(msg);
    case 't':
        return readBasic<std::uint64_t>(msg);
    case 'd': {
        double value = 0;
        msg >> value;
        return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
    }
    case 's':
        return readBasic<std::string>(msg);
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
        nlohmann::json value = readValue(msg);
        msg.exitVariant();
        return value;
    }
    case 'a': {
        if (!contents.empty() && contents.front() == '{') {
            return readDictionary(msg, contents);
        }
        msg.enterContainer(contents);
        nlohmann::json array = readSequence(msg);
        msg.exitContainer();
        return array;
    }
    case 'r': // sd-bus names a struct 'r' (SD_BUS_TYPE_STRUCT), not '('
    case '(': {
        msg.enterStruct(contents);
        nlohmann::json fields = readSequence(msg);
        msg.exitStruct();
        return fields;
    }
    default:
        throw std::runtime_error("malformed D-Bus value: unknown type '" + type + "'");
    }
}

/// Found by argument-dependent lookup from sdbus-c++'s Struct reader.
sdbus::Message& operator>>(sdbus::Message& msg, AnyValue& item) {
    item.json = readValue(msg); // the value is a variant: read_value unwraps it
    return msg;
}

} // namespace
} // namespace tracectl::cli

namespace sdbus {
template <>
struct signature_of<tracectl::cli::AnyValue> {
    static constexpr bool kIsValid = true;
    static const std::string str() { return "v"; }
};
} // namespace sdbus

namespace tracectl::cli {

nlohmann::json variantToJson(const sdbus::Variant& value) {
    if (value.isEmpty()) {
        return nullptr;
    }
    const sdbus::Variant wrapped{sdbus::Struct<sdbus::Variant>{value}};
    auto read = wrapped.get<sdbus::Struct<AnyValue>>();
    return std::move(std::get<0>(read).json);
}

PropertyMap toPropertyMap(const std::map<std::string, sdbus::Variant>& properties) {
    PropertyMap result;
    for (const auto& [name, value] : properties) {
        result.emplace(name, variantToJson(value));
    }
    return result;
}

} // namespace tracectl::cli
