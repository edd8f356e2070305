// One typed entry of the a{sv} options dictionary that tracectld's D-Bus
// methods take (CreateSession, RecordSnapshot, SetRotationSchedule, the
// "interactive" flag of every method).
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

/// How an option type is named in messages: its D-Bus signature.
template <typename T>
struct OptionType;
template <>
struct OptionType<std::string> {
    static constexpr const char* kName = "a string (s)";
};
template <>
struct OptionType<uint64_t> {
    static constexpr const char* kName = "a uint64 (t)";
};
template <>
struct OptionType<bool> {
    static constexpr const char* kName = "a boolean (b)";
};

/// The value of option `key` as T. Throws Error(InvalidArgument) "option
/// 'KEY' must be a uint64 (t), not 's'" when the variant holds another type.
template <typename T>
T optionAs(const std::string& key, const sdbus::Variant& value) {
    if (!value.containsValueOfType<T>())
        throw Error(ErrorCode::InvalidArgument, "option '" + key + "' must be " +
                                                    OptionType<T>::kName + ", not '" +
                                                    value.peekValueType() + "'");
    return value.get<T>();
}

} // namespace tracectl
