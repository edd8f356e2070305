// Unit tests of the verb table (cli/verbs/verb.hpp) and the options verbs share
// (cli/verbs/verb_options.hpp): which handler a parse selects, session selection, whole
// numbers and sizes as lttng(1) takes them, UTF-8 names, --help footers, --viewer words.
#include "cli/verbs/verb.hpp"
#include "cli/verbs/verb_options.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace tracectl::cli;

namespace {

/// Parses `args` (after the program name) with `app`.
void parse(CLI::App& app, std::vector<std::string> args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
}

} // namespace

TEST(CliVerbs, TheTableFindsTheHandlerOfTheVerbParsed) {
    CLI::App app{"test", "tracectl"};
    app.require_subcommand(1);
    VerbTable verbs;
    int chosen = 0;
    verbs.add(*app.add_subcommand("one"), {.check = [&chosen] { chosen = 1; }});
    verbs.add(*app.add_subcommand("two"), {.check = [&chosen] { chosen = 2; }});
    EXPECT_EQ(verbs.parsed(), nullptr);
    parse(app, {"two"});
    const VerbHandler* handler = verbs.parsed();
    ASSERT_NE(handler, nullptr);
    ASSERT_TRUE(handler->check);
    EXPECT_FALSE(handler->run);
    handler->check();
    EXPECT_EQ(chosen, 2);
}

TEST(CliVerbs, SessionSpecKeepsOnlyWhatWasGiven) {
    CLI::App app{"test", "tracectl"};
    SessionSpecOptions options;
    addSessionSpec(*app.add_subcommand("start"), options, "Start");
    parse(app, {"start", "-g", "web-*"});
    const SessionSpec spec = options.spec();
    EXPECT_FALSE(spec.name);
    EXPECT_EQ(spec.glob, "web-*");
    EXPECT_FALSE(spec.all);

    CLI::App both{"test", "tracectl"};
    SessionSpecOptions refused;
    addSessionSpec(*both.add_subcommand("stop"), refused, "Stop");
    EXPECT_THROW(parse(both, {"stop", "web", "--all"}), CLI::ParseError);
}

TEST(CliVerbs, WholeNumbersAreDecimalDigitsThatFit) {
    std::uint64_t value = 0;
    CLI::App app{"test", "tracectl"};
    acceptWholeNumber(*app.add_option("--n", value));
    parse(app, {"--n", "18446744073709551615"});
    EXPECT_EQ(value, UINT64_MAX);
    for (const char* text : {"-1", "18446744073709551616", "1x", ""}) {
        CLI::App refusing{"test", "tracectl"};
        acceptWholeNumber(*refusing.add_option("--n", value));
        EXPECT_THROW(parse(refusing, {"--n", text}), CLI::ValidationError) << text;
    }
}

TEST(CliVerbs, SizesTakeLttngSuffixes) {
    std::uint64_t bytes = 0;
    CLI::App app{"test", "tracectl"};
    acceptSizeInBytes(*app.add_option("--size", bytes));
    parse(app, {"--size", "8M"});
    EXPECT_EQ(bytes, std::uint64_t{8} << 20);

    CLI::App refusing{"test", "tracectl"};
    acceptSizeInBytes(*refusing.add_option("--size", bytes));
    EXPECT_THROW(parse(refusing, {"--size", "3Q"}), CLI::ValidationError);
}

TEST(CliVerbs, NamesMustBeUtf8) {
    const std::string good = "web-latency";
    const std::string bad = "\xff";
    EXPECT_NO_THROW(checkUtf8Names({&good}));
    EXPECT_THROW(checkUtf8Names({&good, &bad}), CLI::ValidationError);
}

TEST(CliVerbs, WrappedListsStayWithinEightyColumns) {
    EXPECT_EQ(wrappedList("a, b, c"), "  a, b, c");
    const std::string longItem(70, 'x');
    EXPECT_EQ(wrappedList(longItem + ", " + longItem), "  " + longItem + ",\n  " + longItem);
}

TEST(CliVerbs, ViewerWordsSplitAtRunsOfSpaces) {
    EXPECT_EQ(splitWords("  babeltrace2   --names=all "),
              (std::vector<std::string>{"babeltrace2", "--names=all"}));
    EXPECT_TRUE(splitWords("   ").empty());
}
