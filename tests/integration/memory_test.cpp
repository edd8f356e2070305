// Consumers have a memory limit (tracectld --consumer-memory-max, the
// units' MemoryMax=): a session that cannot fit is refused at Start, and a
// consumer killed for lack of memory is never reported as a success.
#include "child_process.hpp"
#include "eventually.hpp"
#include "sandbox.hpp"
#include "sandbox_suite.hpp"
#include "tracectl_clients.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace tracectl::test;
using namespace std::chrono_literals;
using Options = std::map<std::string, sdbus::Variant>;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
/// The cgroup v1 memory hierarchy, where these machines have one.
constexpr const char* kMemoryCgroupRoot = "/sys/fs/cgroup/memory";
/// The memory cgroup limit of the "oomcg" sessions' consumers.
constexpr std::uint64_t kOomLimit = 24 * kMiB;
/// The daemon's --consumer-memory-max in this suite.
constexpr std::uint64_t kLimit = 2048 * kMiB;

class Memory : public SandboxSuite {
protected:
    static void SetUpTestSuite() {
        // Read by tracectld when the sandbox starts it: its
        // --consumer-memory-max, and a consumer that runs under an
        // address-space limit of 1 GiB.
        const char* real = std::getenv("TRACECTL_CONSUMERD");
        ASSERT_NE(real, nullptr);
        wrapper_ = "/tmp/tracectl-memory-test-consumerd-" + std::to_string(getpid());
        {
            std::ofstream w(wrapper_);
            // Sessions whose output path names "oomcg" run their consumer in a
            // memory cgroup (v1) of kOomLimit: the kernel's OOM killer ends it.
            w << "#!/bin/sh\n"
                 "case \"$*\" in *oomcg*)\n"
                 "  cg="
              << kMemoryCgroupRoot
              << "/tracectl-test-oom-$$\n"
                 "  mkdir \"$cg\" && echo "
              << kOomLimit
              << " > \"$cg/memory.limit_in_bytes\" &&\n"
                 "  echo 0 > \"$cg/memory.swappiness\"; echo $$ > \"$cg/cgroup.procs\" ;;\n"
                 "esac\n"
                 "ulimit -v 1048576\nexec "
              << real << " \"$@\"\n";
        }
        chmod(wrapper_.c_str(), 0755);
        realConsumer_ = real;
        setenv("TRACECTL_CONSUMERD", wrapper_.c_str(), 1);
        setenv("TRACECTL_CONSUMER_MEMORY_MAX", std::to_string(kLimit).c_str(), 1);
        SandboxSuite::SetUpTestSuite();
        unsetenv("TRACECTL_CONSUMER_MEMORY_MAX");
        setenv("TRACECTL_CONSUMERD", realConsumer_.c_str(), 1);
    }
    static void TearDownTestSuite() {
        SandboxSuite::TearDownTestSuite();
        std::remove(wrapper_.c_str());
    }
    static inline std::string wrapper_, realConsumer_;

    /// A session recording tracectl_demo:tick with channels of the given
    /// (sub-buffer size, count), named big0, big1, ...
    std::unique_ptr<SessionClient>
    session(const std::string& name,
            const std::vector<std::pair<std::uint64_t, std::uint64_t>>& channels) {
        auto s = std::make_unique<SessionClient>(
            *bus_, manager_->CreateSession(name, {{"output-path", sdbus::Variant(output(name))}}));
        for (std::size_t i = 0; i < channels.size(); ++i) {
            const std::string channel = "big" + std::to_string(i);
            s->AddChannel("ust", channel,
                          {{"subbuf-size", sdbus::Variant(channels[i].first)},
                           {"subbuf-count", sdbus::Variant(channels[i].second)}});
            s->EnableEvents("ust", channel, "tracectl_demo:tick", {});
        }
        return s;
    }

    static std::string errorMessageOf(const std::function<void()>& call) {
        try {
            call();
        } catch (const sdbus::Error& e) {
            return e.getName() + ": " + e.getMessage();
        }
        return "no error";
    }
};

} // namespace

TEST_F(Memory, ASessionWhoseBuffersCannotFitIsRefusedAtStart) {
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    // cpus x 4 x 1 GiB: above 2 GiB on any machine with one CPU or more.
    auto s = session("too-big", {{1024 * kMiB, 4}});
    const std::string error = errorMessageOf([&] { s->Start({}); });
    EXPECT_NE(error.find("org.tracectl.Tracing1.Error.InvalidArgument"), std::string::npos)
        << error;
    EXPECT_NE(error.find("memory limit of 2048 MiB"), std::string::npos) << error;
    EXPECT_NE(error.find(std::to_string(cpus) + " CPUs"), std::string::npos) << error;
    EXPECT_EQ(s->State(), "created") << "nothing started";
    s->Destroy({});
}

// A consumer that cannot map its buffers refuses them: Start fails, saying
// so, and the session is in state error. Before the fix Start answered
// "Tracing started" and the apps were silently not traced. The consumer
// runs under an address-space limit (RLIMIT_AS, through a wrapper), which
// these machines enforce whatever their cgroup setup (their user managers'
// units get no memory controller on this hybrid hierarchy, so MemoryMax=
// alone would not bite here).
TEST_F(Memory, AConsumerThatCannotMakeTheBuffersFailsTheStart) {
    // 2 x 256 MiB per CPU: far above the wrapper's 1 GiB of address space
    // on a machine with more than one CPU, and above the daemon's own limit
    // check (which the wrapper's smaller limit does not know).
    auto s = session("refused", {{256 * kMiB, 2}});
    ChildProcess app({demoApp(), "1000000", "1000"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(eventually([&] { return !manager_->ListApplications().empty(); }, 10s));
    const std::string error = errorMessageOf([&] { s->Start({}); });
    app.kill();
    EXPECT_NE(error.find("org.tracectl.Tracing1.Error.Failed"), std::string::npos) << error;
    EXPECT_NE(error.find("could not make the buffers"), std::string::npos) << error;
    EXPECT_NE(error.find("state error"), std::string::npos) << error;
    EXPECT_EQ(s->State(), "error");
    EXPECT_NE(s->ErrorReason().find("could not make the buffers"), std::string::npos)
        << s->ErrorReason();
    s->Destroy({});
}

// RingBufferSize counts what the consumer holds: per traced uid, every
// channel's sub-buffers on every CPU (one stream file each), plus the
// metadata channel's 2 x 4 KiB.
TEST_F(Memory, RingBufferSizeCountsEveryTracedUidsBuffers) {
    auto s = session("sized", {{64 * 1024, 4}});
    EXPECT_EQ(s->RingBufferSize(), 0u) << "nothing made before Start";
    s->Start({});
    ChildProcess app({demoApp(), "10", "0"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_EQ(app.wait(30000), 0);
    s->Stop({});
    std::size_t streams = 0;
    for (const auto& f : std::filesystem::directory_iterator(output("sized") + "/ust/uid/0/64-bit"))
        streams += f.path().filename().string().rfind("big0_", 0) == 0 ? 1 : 0;
    ASSERT_GT(streams, 0u);
    EXPECT_EQ(s->RingBufferSize(), 2 * 4096 + streams * 4 * 64 * 1024);
    s->Destroy({});
}

// A consumer the kernel kills for lack of memory while it makes the
// buffers (its memory cgroup allows 24 MiB, the buffers need 64 MiB per
// CPU): Start fails with how the unit ended, read from systemd before the
// unit is collected, and the session is in state error. Before the fix
// Start answered "Tracing started".
TEST_F(Memory, AConsumerKilledWhileMakingTheBuffersFailsTheStart) {
    if (!std::filesystem::exists(std::string(kMemoryCgroupRoot) + "/memory.limit_in_bytes"))
        GTEST_SKIP() << "no cgroup v1 memory hierarchy at " << kMemoryCgroupRoot;
    auto s = session("oomcg", {{32 * kMiB, 2}});
    ChildProcess app({demoApp(), "1000000", "1000"}, {}, sandbox_->dir() + "/log/apps.log");
    ASSERT_TRUE(eventually([&] { return !manager_->ListApplications().empty(); }, 10s));
    const std::string error = errorMessageOf([&] { s->Start({}); });
    app.kill();
    EXPECT_NE(error.find("org.tracectl.Tracing1.Error.Failed"), std::string::npos) << error;
    EXPECT_NE(error.find("is no longer running"), std::string::npos) << error;
    EXPECT_NE(error.find("Result signal"), std::string::npos) << error;
    EXPECT_NE(error.find("state error"), std::string::npos) << error;
    EXPECT_EQ(s->State(), "error");
    s->Destroy({});
    for (const auto& cg : std::filesystem::directory_iterator(kMemoryCgroupRoot))
        if (cg.path().filename().string().rfind("tracectl-test-oom-", 0) == 0)
            rmdir(cg.path().c_str());
}
