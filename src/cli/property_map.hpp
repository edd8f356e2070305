// The properties of one D-Bus object, as plain data.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace tracectl::cli {

/// Property name -> value, as received from org.freedesktop.DBus.Properties.GetAll or
/// ObjectManager.GetManagedObjects. Values keep their D-Bus type as JSON (see variant_json.hpp):
/// integers are JSON numbers, strings and object paths JSON strings, arrays and structs JSON
/// arrays, dictionaries JSON objects.
using PropertyMap = std::map<std::string, nlohmann::json>;

} // namespace tracectl::cli
