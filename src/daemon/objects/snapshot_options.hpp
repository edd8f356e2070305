// Session.RecordSnapshot's a{sv} options.
#pragma once

#include <cstdint>
#include <map>
#include <sdbus-c++/sdbus-c++.h>
#include <string>

namespace tracectl {

/// Reads "max-size" (t, bytes; absent or 0 = no bound), which it returns.
/// "interactive" must have been taken out first (auth::takeInteractive).
/// Throws Error(InvalidArgument) for an unknown key or a wrong type.
uint64_t readSnapshotOptions(const std::map<std::string, sdbus::Variant>& options);

} // namespace tracectl
