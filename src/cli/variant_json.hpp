// Generic conversion of D-Bus values (sdbus::Variant) into JSON. Needs no bus connection.
#pragma once

#include "property_map.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <sdbus-c++/Types.h>
#include <string>

namespace tracectl::cli {

/// Converts a D-Bus value of any type to JSON:
/// b -> boolean; y n q i u x t -> integer; d -> number (NaN/inf -> null); s o g -> string;
/// h -> the string "<unix fd>"; v -> its content; arrays and structs -> array;
/// dictionaries a{..} -> object (keys that are not strings are written as their JSON text);
/// an empty Variant -> null. Throws sdbus::Error only if the value is malformed.
nlohmann::json variantToJson(const sdbus::Variant& value);

/// Converts a whole a{sv} property dictionary with variant_to_json().
PropertyMap toPropertyMap(const std::map<std::string, sdbus::Variant>& properties);

} // namespace tracectl::cli
