// The options and checks several verbs share: NAME/-a/-g session selection, numbers and sizes
// as lttng(1) takes them, and how a verb's session defaults.
#pragma once

#include "cli/cli11_fwd.hpp"
#include "cli/session_selection.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracectl::cli {

/// How a command's session option or argument defaults (resolve_session()).
inline constexpr const char* kCurrentSessionHelp =
    "Session (default: the current session, else your only session)";

/// NAME, -a/--all and -g/--glob PATTERN of start, stop and destroy
/// (session_selection.hpp), as CLI11 fills them in.
struct SessionSpecOptions {
    std::string name;
    bool all = false;
    std::string glob;
    CLI::Option* nameOption = nullptr;
    CLI::Option* globOption = nullptr;

    /// The selection given: name and glob only if given.
    SessionSpec spec() const;
};

/// Adds [NAME | -a/--all | -g/--glob PATTERN] to `command`, which acts on
/// the sessions they select; `verb` ("Start") begins each description.
void addSessionSpec(CLI::App& command, SessionSpecOptions& options, const std::string& verb);

/// Makes `option` accept only plain decimal digits that fit in 64 bits (CLI11 alone would
/// wrap "-1" around and clamp what is too big); the usage error names the text.
void acceptWholeNumber(CLI::Option& option);

/// Makes `option` take a size in bytes as lttng(1) takes one (parse_size(): 8M, 64K, 1G,
/// 4096, 0x1000), turned into its decimal byte count for the option's variable; the usage
/// error is parse_size()'s sentence. The caller sets the type name (SIZE).
void acceptSizeInBytes(CLI::Option& option);

/// `list` (items separated by ", ") as lines of at most 80 columns, each
/// indented by two spaces, for a --help footer.
std::string wrappedList(std::string_view list);

/// `text` split at runs of spaces (lttng view --viewer splits its VIEWER so).
std::vector<std::string> splitWords(std::string_view text);

/// `value` if `option` was given, else nullopt.
std::optional<std::string> optionalName(const CLI::Option* option, const std::string& value);

/// The session a verb names by its NAME argument or by -s/--session (LTTng's
/// spelling, bound to the same value), or nullopt if by neither.
std::optional<std::string> optionalSession(const CLI::Option* name, const CLI::Option* session,
                                           const std::string& value);

/// Throws CLI::ValidationError("NAME", ...) unless every name is valid UTF-8 (D-Bus strings
/// are UTF-8: a name that is not cannot even be sent).
void checkUtf8Names(const std::vector<const std::string*>& names);

} // namespace tracectl::cli
