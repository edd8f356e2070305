// tracectl aggregate --session, against the sandbox's tracectld: an active session is
// rotated first and everything it recorded up to then is aggregated; a stopped one is
// read whole; someone else's session is refused with the daemon's error. The expected
// values follow from what the demo app emits (tests/apps/tracectl_demo_app.c: tick i has
// seq = i).
#include "child_process.hpp"
#include "multi_user.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using namespace tracectl::test;

namespace {

class AggregateSession : public MultiUserSuite {
protected:
    static RunResult cli(std::vector<std::string> argv) {
        const char* tracectl = std::getenv("TRACECTL");
        argv.insert(argv.begin(), tracectl != nullptr ? tracectl : "tracectl");
        return run(argv, RunOptions{});
    }

    /// The value of the only entry of aggregation `name` in `json` (tracectl aggregate
    /// --json output); -1 if there is none.
    static long long only_value(const std::string& json, const std::string& name) {
        const nlohmann::json parsed = nlohmann::json::parse(json);
        for (const auto& a : parsed["aggregations"]) {
            if (a["name"] == name && a["entries"].size() == 1) {
                return a["entries"][0]["value"].get<long long>();
            }
        }
        return -1;
    }
};

constexpr const char* kProgram =
    "tracectl_demo:tick { @n = count(); @s = sum(seq); } tracectl_demo:done { @d = max(count); }";

} // namespace

TEST_F(AggregateSession, ActiveSessionIsRotatedThenStoppedOneIsReadWhole) {
    const std::string dir = output("agg-session");
    ASSERT_EQ(cli({"create", "agg-session", "--output", dir}).exitCode, 0);
    ASSERT_EQ(cli({"enable-event", "-u", "tracectl_demo:*", "-s", "agg-session"}).exitCode, 0);
    ASSERT_EQ(cli({"start", "agg-session"}).exitCode, 0);
    {
        ChildProcess app({demoApp(), "100", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    // Active: rotated, the archive holds everything so far.
    const RunResult active = cli({"aggregate", "--session", "agg-session", "--json", kProgram});
    ASSERT_EQ(active.exitCode, 0) << active.describe();
    EXPECT_EQ(only_value(active.out, "n"), 100) << active.out << active.err;
    EXPECT_EQ(only_value(active.out, "s"), 99 * 100 / 2);
    EXPECT_EQ(only_value(active.out, "d"), 100);
    EXPECT_TRUE(std::filesystem::is_directory(dir + "/archives")) << dir;
    // More events, then stopped: the archive and the current chunk together.
    {
        ChildProcess app({demoApp(), "50", "0"}, {}, sandbox_->dir() + "/log/apps.log");
        ASSERT_EQ(app.wait(30000), 0);
    }
    ASSERT_EQ(cli({"stop", "agg-session"}).exitCode, 0);
    const RunResult stopped = cli({"aggregate", "--session", "agg-session", "--json", kProgram});
    ASSERT_EQ(stopped.exitCode, 0) << stopped.describe();
    EXPECT_EQ(only_value(stopped.out, "n"), 150) << stopped.out << stopped.err;
    EXPECT_EQ(only_value(stopped.out, "s"), 99 * 100 / 2 + 49 * 50 / 2);
    // Text output too, and the program is checked before the daemon is asked anything.
    const RunResult text =
        cli({"aggregate", "--session", "agg-session", "tracectl_demo:tick { @ = count(); }"});
    EXPECT_EQ(text.exitCode, 0) << text.describe();
    EXPECT_EQ(text.out, "\n              150\n");
    const RunResult bad = cli({"aggregate", "--session", "no-such-session", "x:y { @ = cnt(); }"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("tracectl: aggregate: 1:11: unknown aggregating function"),
              std::string::npos)
        << bad.err;
    EXPECT_EQ(cli({"destroy", "agg-session"}).exitCode, 0);
}

TEST_F(AggregateSession, NoSuchSessionAndSomeoneElsesSession) {
    const RunResult missing =
        cli({"aggregate", "--session", "no-such-session", "x:y { @ = count(); }"});
    EXPECT_EQ(missing.exitCode, 1);
    EXPECT_NE(missing.err.find(kNoSuchSession), std::string::npos) << missing.err;
    // alice's session, asked for by bob: by name it is none of his; by its object path,
    // the daemon's refusal, shown as it is.
    const std::string path = createAs("alice", "agg-alice", homeOutput("alice", "agg-alice"));
    const char* tracectl = std::getenv("TRACECTL");
    ASSERT_NE(tracectl, nullptr);
    const std::string program = "tracectl_demo:tick { @ = count(); }";
    const RunResult by_name = as("bob", {tracectl, "aggregate", "--session", "agg-alice", program});
    EXPECT_EQ(by_name.exitCode, 1) << by_name.describe();
    EXPECT_EQ(by_name.err.rfind(std::string("tracectl: ") + kNoSuchSession, 0), 0u) << by_name.err;
    const RunResult by_path = as("bob", {tracectl, "aggregate", "--session", path, program});
    EXPECT_EQ(by_path.exitCode, 1) << by_path.describe();
    EXPECT_EQ(by_path.err.rfind(std::string("tracectl: ") + kAccessDenied, 0), 0u) << by_path.err;
    EXPECT_EQ(by_path.out, "");
}
