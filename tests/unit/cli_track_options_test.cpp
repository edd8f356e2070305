// `tracectl track` / `untrack` on the command line (cli/track_options.hpp):
// what each command line resolves to, its usage errors, and show's
// "Process attribute tracking" section.
#include "cli/track_options.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <vector>

using namespace tracectl::cli;

namespace {

/// Stand-in password and group databases.
std::optional<std::uint32_t> users(const std::string& name) {
    if (name == "alice")
        return 1001;
    return std::nullopt;
}
std::optional<std::uint32_t> groups(const std::string& name) {
    if (name == "wheel")
        return 10;
    return std::nullopt;
}

/// `tracectl track|untrack ARGS...` parsed and resolved; throws
/// CLI::ParseError as tracectl's parser does.
TrackCall parse(bool track, std::vector<std::string> args) {
    CLI::App app{"test", "tracectl"};
    TrackFlags flags;
    addTrackCommand(app, track, flags);
    args.insert(args.begin(), track ? "track" : "untrack");
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
    return resolveTrackCall(flags, track, users, groups);
}

/// The usage error of `args`, or nullopt if they are accepted.
std::optional<std::string> usageError(bool track, std::vector<std::string> args) {
    try {
        parse(track, std::move(args));
    } catch (const CLI::ParseError& e) {
        EXPECT_NE(e.get_exit_code(), 0);
        return std::string{e.what()};
    }
    return std::nullopt;
}

} // namespace

TEST(CliTrack, ValuesAreCommaSeparatedNumbersForTheNamedAttribute) {
    const TrackCall call = parse(true, {"-u", "-s", "web", "--vpid", "12,34"});
    EXPECT_EQ(call, (TrackCall{true, Domain::Ust, "web", "vpid", {12, 34}, false}));
    EXPECT_EQ(parse(false, {"-u", "--vgid=7"}),
              (TrackCall{false, Domain::Ust, std::nullopt, "vgid", {7}, false}));
    EXPECT_EQ(parse(true, {"-k", "--pid", "1"}).attribute, "pid");
    EXPECT_EQ(parse(true, {"-u", "--vpid", "4294967295"}).values,
              std::vector<std::uint32_t>{4294967295u});
}

TEST(CliTrack, AllGoesAloneWithTheAttribute) {
    EXPECT_EQ(parse(true, {"-u", "--vpid", "--all"}),
              (TrackCall{true, Domain::Ust, std::nullopt, "vpid", {}, true}));
    EXPECT_EQ(parse(false, {"-u", "-a", "--vuid"}),
              (TrackCall{false, Domain::Ust, std::nullopt, "vuid", {}, true}));
    EXPECT_TRUE(usageError(true, {"-u", "--vpid", "1", "--all"}));
    EXPECT_TRUE(usageError(true, {"-u", "--vpid"}));
}

TEST(CliTrack, UsersAndGroupsByNameOrIdPidsByNumberOnly) {
    EXPECT_EQ(parse(true, {"-u", "--vuid", "alice,0"}).values,
              (std::vector<std::uint32_t>{1001, 0}));
    EXPECT_EQ(parse(true, {"-k", "--gid", "wheel"}).values, std::vector<std::uint32_t>{10});
    auto e = usageError(true, {"-u", "--vuid", "mallory"});
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("'mallory' is not a user id or a known user name"), std::string::npos) << *e;
    e = usageError(true, {"-u", "--vpid", "alice"});
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("not a whole number"), std::string::npos) << *e;
    EXPECT_TRUE(usageError(true, {"-u", "--vpid", "4294967296"}));
    EXPECT_TRUE(usageError(true, {"-u", "--vpid", "1x"}));
}

TEST(CliTrack, OneAttributeOfTheChosenDomain) {
    auto e = usageError(true, {"-u", "--pid", "1"});
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("kernel (-k) attribute"), std::string::npos) << *e;
    e = usageError(true, {"-k", "--vuid", "1"});
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("user-space (-u) attribute"), std::string::npos) << *e;
    EXPECT_TRUE(usageError(true, {"-u"}));
    EXPECT_TRUE(usageError(true, {"--vpid", "1"})); // no domain
    EXPECT_TRUE(usageError(true, {"-u", "-k", "--vpid", "1"}));
    e = usageError(false, {"-u", "--vpid", "1", "--vuid", "2"});
    ASSERT_TRUE(e);
    EXPECT_NE(e->find("one attribute at a time"), std::string::npos) << *e;
}

TEST(CliTrack, ShowPrintsEveryTrackerAllNoneOrItsValues) {
    PropertyMap props;
    props["ProcessAttributeTrackers"] = nlohmann::json::array({
        nlohmann::json::array({"ust", "vpid", false, nlohmann::json::array({12u, 34u})}),
        nlohmann::json::array({"ust", "vuid", false, nlohmann::json::array()}),
        nlohmann::json::array({"kernel", "pid", true, nlohmann::json::array()}),
    });
    EXPECT_EQ(formatTrackingSection(props), "Process attribute tracking:\n"
                                            "  ust vpid: 12, 34\n"
                                            "  ust vuid: none\n"
                                            "  kernel pid: all\n");
    EXPECT_EQ(formatTrackingSection({}), "");
}
