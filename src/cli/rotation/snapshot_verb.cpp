// tracectl snapshot [record] [NAME | -s NAME] [-m SIZE], as lttng snapshot record is written.
#include "cli/commands.hpp"
#include "cli/verbs/verb_options.hpp"
#include "rotation_verbs.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

namespace tracectl::cli {
namespace {

/// The snapshot command line, as CLI11 fills it in.
struct SnapshotLine {
    std::vector<std::string> words; ///< [record] [NAME]
    std::string session;            ///< -s/--session
    CLI::Option* sessionOption = nullptr;
    std::uint64_t maxBytes = 0;
    std::optional<std::string> name; ///< after check: the session named, if any
};

/// The session named by NAME (after an optional "record") or -s, once.
void checkSnapshotLine(SnapshotLine& cl) {
    std::vector<std::string> words = cl.words;
    if (!words.empty() && words.front() == "record") {
        words.erase(words.begin()); // lttng snapshot record [SESSION]
    } else if (!words.empty() && (words.front() == "add-output" || words.front() == "del-output" ||
                                  words.front() == "list-output")) {
        // LTTng's other snapshot commands: not session names.
        throw CLI::ValidationError(
            "snapshot " + words.front(),
            "tracectl has no snapshot outputs of their own: each snapshot goes to the "
            "session's output, given at 'tracectl create --snapshot' (--output DIR, or "
            "--set-url URL for a relay)");
    }
    if (words.size() > 1 || (words.size() == 1 && cl.sessionOption->count() > 0)) {
        throw CLI::ValidationError("snapshot", "give the session once: NAME or -s NAME");
    }
    std::string name;
    if (words.size() == 1) {
        name = words.front();
    } else if (cl.sessionOption->count() > 0) {
        name = cl.session;
    }
    checkUtf8Names({&name});
    if (!words.empty() || cl.sessionOption->count() > 0) {
        cl.name = name;
    }
}

} // namespace

void addSnapshotVerb(CLI::App& app, VerbTable& verbs) {
    auto cl = std::make_shared<SnapshotLine>();
    auto* snapshot = app.add_subcommand(
        "snapshot", "Record a snapshot of a snapshot session's buffers (as lttng snapshot record)");
    snapshot
        ->add_option("NAME", cl->words,
                     "Name of the session (default: the current session, else your only "
                     "session), after an optional 'record' as lttng snapshot record takes it")
        // Any count, so that the usage line reads "[NAME...]" (CLI11 writes
        // "NAME(0x)" for a bounded count); checkSnapshotLine() takes at most
        // "record" and one name.
        ->expected(0, CLI::detail::expected_max_vector_size)
        ->type_name("");
    cl->sessionOption = snapshot->add_option("-s,--session", cl->session,
                                             "The session, as lttng snapshot record -s");
    auto* maxSize =
        snapshot->add_option("-m,--max-size", cl->maxBytes,
                             "At most SIZE bytes of events (100M, 64K, 1G, 8MiB, 4096: K, M, G "
                             "and KiB, MiB, GiB are powers of 1024), keeping the newest "
                             "sub-buffers of every stream; no bound by default (or 0)");
    acceptSizeInBytes(*maxSize);
    maxSize->type_name("SIZE");
    snapshot->footer("Writes the current content of every buffer of a session created with\n"
                     "'tracectl create --snapshot' (active or stopped) as a complete trace in\n"
                     "OUTPUT/snapshot-1-YYYYmmdd-HHMMSS-N/ and prints that folder. LTTng's\n"
                     "'snapshot record [-s NAME] [-m SIZE]' is accepted as it is written.\n\n"
                     "Example:\n  tracectl snapshot flight --max-size 8M\n"
                     "  tracectl snapshot record -s flight -m 8M");

    verbs.add(*snapshot, {.check = [cl] { checkSnapshotLine(*cl); },
                          .run =
                              [cl](BusClient& bus) {
                                  runSnapshot(bus, cl->name, cl->maxBytes, std::cout, std::cerr);
                                  return ExitStatus::Success;
                              }});
}

} // namespace tracectl::cli
