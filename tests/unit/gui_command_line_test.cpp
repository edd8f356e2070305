// Unit tests of tracectl-gui's command line and of the CreateSession options its dialog makes.
#include "gui/command_line.hpp"
#include "gui/create_request.hpp"

#include <gtest/gtest.h>

using namespace tracectl::gui;

TEST(GuiCommandLine, TheSystemBusByDefault) {
    EXPECT_EQ(parseCommandLine({}), CommandLine(RunGui{BusChoice{}}));
    EXPECT_EQ(parseCommandLine({"--system"}), CommandLine(RunGui{BusChoice{}}));
}

TEST(GuiCommandLine, UserAndAddressChooseTheBus) {
    EXPECT_EQ(parseCommandLine({"--user"}),
              CommandLine(RunGui{BusChoice{BusChoice::Kind::User, {}}}));
    const BusChoice address{BusChoice::Kind::Address, "unix:path=/tmp/x"};
    EXPECT_EQ(parseCommandLine({"--bus-address", "unix:path=/tmp/x"}),
              CommandLine(RunGui{address}));
    EXPECT_EQ(parseCommandLine({"--bus-address=unix:path=/tmp/x"}), CommandLine(RunGui{address}));
}

TEST(GuiCommandLine, HelpAndVersion) {
    EXPECT_EQ(parseCommandLine({"--help"}), CommandLine(ShowHelp{}));
    EXPECT_EQ(parseCommandLine({"-h"}), CommandLine(ShowHelp{}));
    EXPECT_EQ(parseCommandLine({"--version"}), CommandLine(ShowVersion{}));
    EXPECT_NE(usageText().find("--bus-address ADDRESS"), std::string::npos);
}

TEST(GuiCommandLine, UsageErrorsNameTheProblem) {
    const auto error = [](std::vector<std::string> args) {
        const CommandLine c = parseCommandLine(args);
        return std::holds_alternative<UsageError>(c) ? std::get<UsageError>(c).message : "";
    };
    EXPECT_EQ(error({"--user", "--system"}), "--system cannot be combined with another bus option");
    EXPECT_EQ(error({"--bus-address"}), "--bus-address needs a D-Bus address");
    EXPECT_EQ(error({"--bus-address="}), "--bus-address needs a D-Bus address");
    EXPECT_EQ(error({"--user", "--bus-address", "x"}),
              "--bus-address cannot be combined with another bus option");
    EXPECT_EQ(error({"extra"}), "unknown argument 'extra' (see --help)");
}

TEST(GuiCreateRequest, OptionsCarryWhatWasChosenAndLeaveEmptyFieldsToTheDaemon) {
    CreateRequest request;
    request.name = "web";
    auto options = createOptions(request);
    EXPECT_EQ(options.size(), 3u);
    EXPECT_EQ(options.at("mode").get<std::string>(), "normal");
    EXPECT_EQ(options.at("buffer-ownership").get<std::string>(), "per-uid");
    EXPECT_TRUE(options.at("count-events").get<bool>());

    request.outputFolder = "/srv/traces/web";
    request.relayUrl = "net://relay";
    request.mode = "live";
    request.bufferOwnership = "per-pid";
    request.countEvents = false;
    options = createOptions(request);
    EXPECT_EQ(options.size(), 4u);
    EXPECT_EQ(options.at("output-path").get<std::string>(), "/srv/traces/web");
    EXPECT_EQ(options.at("url").get<std::string>(), "net://relay");
    EXPECT_EQ(options.at("mode").get<std::string>(), "live");
    EXPECT_EQ(options.at("buffer-ownership").get<std::string>(), "per-pid");
    EXPECT_FALSE(options.contains("count-events"));
}
