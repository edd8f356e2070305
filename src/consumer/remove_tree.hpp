// Deleting a closed trace chunk (Session.Clear: consumer_protocol::Rotate
// with `discard`): a directory tree below an OutputDir, removed entry by
// entry relative to directory fds, never following a symlink out of it.
#pragma once

#include <string_view>

namespace tracectl::consumer {

/// Removes the entry `name` (no '/') of the directory `dirFd`: a file or
/// symlink is unlinked, a directory emptied first (depth first, at most
/// kMaxDepth levels below it) and then removed. A missing entry is no
/// error. Throws std::system_error with the failing entry's name (what was
/// removed before stays removed).
void removeTree(int dirFd, std::string_view name);

/// Deepest directory level removeTree() descends to (a trace chunk has 5:
/// ust/uid/<uid>/<bits>-bit/index).
inline constexpr int kMaxRemoveDepth = 32;

} // namespace tracectl::consumer
