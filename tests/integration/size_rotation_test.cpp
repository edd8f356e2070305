// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Size-based rotation (tracectl enable-rotation --size) counts every
// domain's bytes: a kernel-only session, a kernel-and-UST session and a
// network session (to a real lttng-relayd) each rotate once their current
// trace chunk holds the size, within what the buffers hold, and every
// archive is a trace babeltrace2 reads. The writer is the test thread's own
// write(2) calls, recorded as system calls (filtered on its tid).
#include "child_process.hpp"
#include "kernel_trace_support.hpp"
#include "relay_support.hpp"
#include "sandbox_suite.hpp"
#include "trace_counts.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace tracectl::test;

namespace {

using Options = std::map<std::string, sdbus::Variant>;

constexpr std::uint64_t kSize = std::uint64_t{2} << 20;     // --size 2M
constexpr std::uint64_t kSubbuf = std::uint64_t{256} << 10; // every channel's sub-buffer
constexpr std::uint64_t kSubbufCount = 4;

const Options kChannel{{"subbuf-size", sdbus::Variant(kSubbuf)},
                       {"subbuf-count", sdbus::Variant(kSubbufCount)}};

/// The folders directly below `dir`, sorted (none if it does not exist).
std::vector<std::string> foldersIn(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_directory())
            out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

/// What an archive holds: the bytes of its stream files (data and
/// metadata, as the consumer counts a chunk; index files left out) and how
/// many data streams it has.
struct ChunkFiles {
    std::uint64_t bytes = 0;
    std::size_t dataStreams = 0;
};

ChunkFiles chunkFiles(const std::string& dir) {
    ChunkFiles out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory() && it->path().filename() == "index") {
            it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file())
            continue;
        out.bytes += it->file_size();
        if (it->path().filename() != "metadata")
            ++out.dataStreams;
    }
    return out;
}

class SizeRotation : public SandboxSuite {
protected:
    static void SetUpTestSuite() {
        SandboxSuite::SetUpTestSuite();
        relayWork_ = makeNobodyFolder("tracectl-size-rotation");
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        if (std::getenv("TRACECTL_SANDBOX_KEEP") == nullptr)
            fs::remove_all(relayWork_, ec);
        SandboxSuite::TearDownTestSuite();
    }
    static inline std::string relayWork_;

    void SetUp() override {
        SandboxSuite::SetUp();
        ASSERT_TRUE(manager_->KernelTracingAvailable());
    }

    /// Session `s` records the write(2) calls of this thread in a kernel
    /// channel of kChannel's sub-buffers, and rotates every kSize bytes.
    void recordOwnWrites(SessionClient& s) {
        s.AddChannel("kernel", "k", kChannel);
        s.EnableEvents("kernel", "k", "write",
                       {{"syscall", sdbus::Variant(true)},
                        {"filter", sdbus::Variant("$ctx.tid == " + std::to_string(::gettid()))}});
        s.SetRotationSchedule({{"size-bytes", sdbus::Variant(kSize)}});
    }

    /// Writes to /dev/null, 100 calls every 5 ms (about 1 MB of events a
    /// second), until `archived()` counts two archives or 16 MiB worth of
    /// calls were made (then the session never rotated). Returns the calls
    /// made.
    ///
    /// Once `s` reports its current chunk at the size, the writer waits for
    /// the rotation to complete (the figure starts again) before it writes
    /// on: the consumer has seen the size then, and what a loaded machine
    /// delays is the rotation's round trips, which a writer running on
    /// through them would pour into the archive.
    std::uint64_t writeUntilTwoArchives(SessionClient& s,
                                        const std::function<std::size_t()>& archived) {
        const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
        EXPECT_GE(fd, 0);
        std::uint64_t calls = 0;
        constexpr std::uint64_t kMaxCalls = (std::uint64_t{16} << 20) / 48; // >= 48 B a call
        while (archived() < 2 && calls < kMaxCalls) {
            for (int i = 0; i < 100; ++i, ++calls)
                EXPECT_EQ(::write(fd, "x", 1), 1);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            if (chunkBytes(s) >= kSize) {
                EXPECT_TRUE(
                    eventually([&] { return chunkBytes(s) < kSize; }, std::chrono::seconds(20)))
                    << "the chunk held the size and no rotation followed";
            }
        }
        ::close(fd);
        return calls;
    }

    /// The session's "chunk-bytes" figure (Session.Statistics).
    static std::uint64_t chunkBytes(SessionClient& s) {
        const auto figures = s.Statistics();
        const auto it = figures.find("chunk-bytes");
        return it == figures.end() ? 0 : it->second.get<std::uint64_t>();
    }

    /// Stops `s` and waits for any rotation under way to end.
    static void stopAndSettle(SessionClient& s) {
        s.Stop({});
        ASSERT_TRUE(eventually([&] { return s.State() == "stopped"; }, std::chrono::seconds(20)))
            << s.State();
    }

    /// Every archive in `archives` holds at least kSize bytes, and at most
    /// what the buffers held when the consumer saw the size besides, and the
    /// rest of the packet that crossed it; babeltrace2 reads it. The
    /// consumer is woken at each sub-buffer, but a loaded machine may run it
    /// late: a stream's ring then holds up to all its sub-buffers (more
    /// would be discarded, and the write count would say so).
    static void expectArchivesOfTheSize(const std::vector<std::string>& archives) {
        ASSERT_GE(archives.size(), 2u) << "the session never rotated on its size";
        for (const auto& a : archives) {
            const ChunkFiles f = chunkFiles(a);
            EXPECT_GE(f.bytes, kSize) << a << ": rotated before its chunk held the size";
            EXPECT_LE(f.bytes, kSize + (f.dataStreams * kSubbufCount + 1) * kSubbuf)
                << a << ": rotated late (" << f.dataStreams << " data streams)";
            EXPECT_TRUE(fs::exists(a + "/kernel/metadata")) << a;
            countEvents(a); // fails the test if babeltrace2 cannot read it
        }
    }

    /// syscall_entry_write records in `dir`, every chunk (all are this thread's).
    static std::uint64_t writesIn(const std::string& dir) {
        const auto counts = countEvents(dir);
        return counts["events"].value("syscall_entry_write", std::uint64_t{0});
    }
};

TEST_F(SizeRotation, AKernelOnlySessionRotatesOnItsSize) {
    const std::string dir = output("size-kernel");
    auto s = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession("size-kernel", {{"output-path", sdbus::Variant(dir)}}));
    recordOwnWrites(*s);
    s->Start({});
    const std::uint64_t calls =
        writeUntilTwoArchives(*s, [&] { return foldersIn(dir + "/archives").size(); });
    stopAndSettle(*s);
    expectArchivesOfTheSize(foldersIn(dir + "/archives"));
    EXPECT_EQ(writesIn(dir), calls) << "archives and the current chunk hold each write once";
    s->Destroy({});
}

TEST_F(SizeRotation, AKernelAndUstSessionCountsBothDomains) {
    const std::string dir = output("size-both");
    auto s = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession("size-both", {{"output-path", sdbus::Variant(dir)}}));
    s->AddChannel("ust", "channel0", kChannel);
    s->EnableEvents("ust", "channel0", "tracectl_demo:tick", {});
    recordOwnWrites(*s);
    s->Start({});
    // A slow app beside the fast kernel writer: the app's bytes alone would
    // take minutes to reach the size.
    constexpr int kTicks = 3000;
    ChildProcess app({demoApp(), std::to_string(kTicks), "1000"}, {},
                     sandbox_->dir() + "/log/apps.log");
    const std::uint64_t calls =
        writeUntilTwoArchives(*s, [&] { return foldersIn(dir + "/archives").size(); });
    ASSERT_EQ(app.wait(60000), 0);
    stopAndSettle(*s);
    const auto archives = foldersIn(dir + "/archives");
    expectArchivesOfTheSize(archives);
    EXPECT_EQ(writesIn(dir), calls);
    EXPECT_EQ(countTicks(dir), kTicks) << "archives and the current chunk hold each tick once";
    s->Destroy({});
}

TEST_F(SizeRotation, ANetworkSessionCountsItsKernelBytes) {
    RelayDaemon relay(relayWork_ + "/relay");
    auto s = std::make_unique<SessionClient>(
        *bus_, manager_->CreateSession("size-net", {{"url", sdbus::Variant(relay.url())}}));
    recordOwnWrites(*s);
    s->Start({});
    const auto archives = [&] {
        const auto sessions = relay.sessionDirs("size-net");
        return sessions.size() != 1 ? std::vector<std::string>{}
                                    : foldersIn(sessions.front() + "/archives");
    };
    const std::uint64_t calls = writeUntilTwoArchives(*s, [&] { return archives().size(); });
    stopAndSettle(*s);
    // The relay closes an archive when the consumer's rotation completes.
    ASSERT_TRUE(eventually([&] { return archives().size() >= 2; }, std::chrono::seconds(20)));
    expectArchivesOfTheSize(archives());
    s->Destroy({});
    EXPECT_EQ(writesIn(relay.sessionDir("size-net")), calls);
}

} // namespace
