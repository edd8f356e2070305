// The lttng-relayd 2.13 codec: what the field lists in relayd_protocol.hpp
// cannot say (the relay's own checks of names and paths), and the names.
#include "relayd_protocol.hpp"

#include <algorithm>
#include <cstring>

namespace tracectl::relayd {

namespace {

/// A name the relay makes a folder of: not empty, no '/', and (`noDot`) no
/// leading '.'.
void checkFolderName(std::string_view name, std::string_view what, bool noDot) {
    if (name.empty())
        throw RelaydProtocolError(std::string(what) + " is empty");
    if ((noDot && name.front() == '.') || name.find('/') != std::string_view::npos)
        throw RelaydProtocolError(std::string(what) + " '" + std::string(name) +
                                  "' is not path-safe (lttng-relayd refuses " +
                                  (noDot ? "a leading '.' or " : "") + "a '/')");
}

/// A relative path the relay appends to a folder: holds no "../" (nor is
/// "..", `wholeDots`).
void checkRelativePath(std::string_view path, std::string_view what, bool wholeDots) {
    if (path.find("../") != std::string_view::npos || (wholeDots && path == ".."))
        throw RelaydProtocolError(std::string(what) + " '" + std::string(path) +
                                  "' walks up ('../')");
}

} // namespace

namespace detail {

void checkPayload(std::string_view name, std::size_t payload) {
    if (payload > kMaxControlPayload)
        throw RelaydProtocolError(std::string(name) + ": a payload of " + std::to_string(payload) +
                                  " bytes exceeds lttng-relayd's control limit of " +
                                  std::to_string(kMaxControlPayload));
}

void pathTooLong(std::string_view name, std::uint32_t length) {
    throw RelaydProtocolError(std::string(name) + ": a path of " + std::to_string(length) +
                              " bytes (at most " + std::to_string(kMaxReplyPathLength - 1) +
                              " are allowed)");
}

void wrongSize(std::size_t size, std::size_t expected, std::string_view name) {
    throw RelaydProtocolError(std::string(name) + ": expected " + std::to_string(expected) +
                              " bytes, got " + std::to_string(size));
}

} // namespace detail

std::string commandName(RelaydCommand command) {
    const auto value = static_cast<std::uint32_t>(command);
    if (value != 0 && value < kCommandNames.size())
        return std::string(kCommandNames[value]);
    return "command " + std::to_string(value);
}

void CreateSessionRequest::validate() const {
    checkFolderName(sessionName, "the session name", true);
    checkFolderName(hostname, "the hostname", true);
    checkRelativePath(basePath, "the base path", false);
    if (std::all_of(sessiondUuid.begin(), sessiondUuid.end(),
                    [](std::uint8_t b) { return b == 0; }))
        throw RelaydProtocolError("the session daemon UUID is nil (lttng-relayd refuses it)");
}

void CreateTraceChunk::validate() const {
    if (overrideName)
        checkFolderName(*overrideName, "the chunk name", false);
}

void AddStream::validate() const {
    checkFolderName(channelName, "the channel name", false);
    checkRelativePath(pathname, "the stream path", true);
}

std::string decodeReplyPath(ByteView bytes) {
    if (bytes.empty())
        return {};
    const auto* chars = reinterpret_cast<const char*>(bytes.data());
    const auto* nul = static_cast<const char*>(std::memchr(chars, 0, bytes.size()));
    if (nul == nullptr)
        throw RelaydProtocolError("relayd reply path is not NUL-terminated");
    if (static_cast<std::size_t>(nul - chars) != bytes.size() - 1)
        throw RelaydProtocolError("relayd reply path holds a NUL byte before its end");
    return std::string(chars, bytes.size() - 1);
}

} // namespace tracectl::relayd
