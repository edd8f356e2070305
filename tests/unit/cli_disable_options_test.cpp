// Unit tests of `tracectl disable-event` and `tracectl disable-channel`'s
// command lines (cli/disable_options.hpp): domains, PATTERN lists and -a,
// channel names, and the usage errors.
#include "cli/disable_options.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace tracectl::cli;

namespace {

/// `tracectl ARGS...` with only the two disable commands, parsed and finished.
struct Line {
    CLI::App app{"test", "tracectl"};
    DisableCommandLine cl;
    Line() {
        app.require_subcommand(1);
        addDisableCommands(app, cl);
    }
    void parse(std::vector<std::string> args) {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(reversed);
        finishDisableCommands(cl);
    }
};

} // namespace

TEST(CliDisable, DisableEventTakesAPatternListOrAll) {
    Line l;
    l.parse({"disable-event", "-u", "a:x,b:*", "-s", "sess", "-c", "chan"});
    EXPECT_EQ(l.cl.event.domain, Domain::Ust);
    EXPECT_EQ(l.cl.event.patterns, (std::vector<std::string>{"a:x", "b:*"}));
    EXPECT_EQ(l.cl.event.session, "sess");
    EXPECT_EQ(l.cl.event.channel, "chan");

    Line all;
    all.parse({"disable-event", "-k", "--all-events"});
    EXPECT_EQ(all.cl.event.domain, Domain::Kernel);
    EXPECT_EQ(all.cl.event.patterns, (std::vector<std::string>{""})); // every rule
    EXPECT_FALSE(all.cl.event.session);
    EXPECT_EQ(all.cl.event.channel, ""); // channel0
    EXPECT_FALSE(all.cl.disableChannel->parsed());
}

TEST(CliDisable, DisableEventUsageErrors) {
    EXPECT_THROW(Line().parse({"disable-event", "a:x"}), CLI::ParseError); // no domain
    EXPECT_THROW(Line().parse({"disable-event", "-u"}), CLI::ParseError);  // nothing to disable
    EXPECT_THROW(Line().parse({"disable-event", "-u", ","}), CLI::ParseError);
    EXPECT_THROW(Line().parse({"disable-event", "-u", "-a", "a:x"}), CLI::ParseError); // both
    EXPECT_THROW(Line().parse({"disable-event", "-u", "-k", "a:x"}), CLI::ParseError);
}

TEST(CliDisable, DisableChannelTakesANameList) {
    Line l;
    l.parse({"disable-channel", "-k", "one,two", "--session", "s"});
    EXPECT_EQ(l.cl.channel.domain, Domain::Kernel);
    EXPECT_EQ(l.cl.channel.names, (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(l.cl.channel.session, "s");
    EXPECT_THROW(Line().parse({"disable-channel", "-u"}), CLI::ParseError);
    EXPECT_THROW(Line().parse({"disable-channel", "chan"}), CLI::ParseError);
    EXPECT_THROW(Line().parse({"disable-channel", "-u", ",,"}), CLI::ParseError);
}

TEST(CliDisable, SyscallIsTakenWithTheKernelDomainOnly) {
    Line k;
    k.parse({"disable-event", "-k", "--syscall", "write,openat"});
    EXPECT_TRUE(k.cl.event.syscall);
    EXPECT_EQ(k.cl.event.patterns, (std::vector<std::string>{"write", "openat"}));
    Line u;
    EXPECT_THROW(u.parse({"disable-event", "-u", "--syscall", "write"}), CLI::ValidationError);
}

TEST(CliDisable, AnEmptyChannelIsAUsageError) {
    Line l;
    EXPECT_THROW(l.parse({"disable-event", "-u", "-c", "", "a:x"}), CLI::ValidationError);
}
