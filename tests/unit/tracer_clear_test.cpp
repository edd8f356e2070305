// Recordings::clear (recording_rotation.cpp) over the UST tracer against the real consumer
// (fork/exec), with fake apps (tracer_harness.hpp): a normal session's current chunk is deleted and
// the next one has the whole metadata; a snapshot session's consumer empties its buffers; a clear
// is refused while a rotation is under way; Destroy right behind a clear answers both, once each.
#include "tracer_harness.hpp"

#include <filesystem>

using namespace tracectl;
using namespace tracectl::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string kId = "cccccccccccccccccccccccccccccccc";

class TracerClear : public TracerHarness {
protected:
    /// Registers app `pid` (uid 0) and waits until it runs in the session:
    /// the session's buffers of uid 0, and their files, exist then.
    void registerTraced(pid_t pid) {
        Gate ready;
        registerApp(fakeApp(pid, peers_), ready);
        ASSERT_TRUE(ready.wait());
        ASSERT_TRUE(called(pid, "start"));
    }
};

/// A "metadata" file somewhere below `dir`.
bool hasMetadata(const fs::path& dir) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec))
        if (it->path().filename() == "metadata" && it->file_size() > 0)
            return true;
    return false;
}

} // namespace

TEST_F(TracerClear, ASessionNeverStartedHasNothingToClear) {
    Answers cleared;
    thread_.run([&] { recordings_->clear(kId, cleared.done()); });
    ASSERT_TRUE(cleared.wait());
    EXPECT_FALSE(cleared.at().error);
}

TEST_F(TracerClear, TheCurrentChunkIsDeletedAndTheNextOneHasTheWholeMetadata) {
    const auto s = session(kId, "cleared");
    start(s);
    registerTraced(kFirstPid + 70);
    ASSERT_TRUE(fs::exists(s.outputPath + "/ust"));
    Answers cleared;
    thread_.run([&] { recordings_->clear(kId, cleared.done()); });
    ASSERT_TRUE(cleared.wait());
    ASSERT_FALSE(cleared.at().error) << cleared.at().error->what();
    EXPECT_FALSE(fs::exists(s.outputPath + "/ust")) << "the first chunk is the output folder's";
    EXPECT_FALSE(fs::exists(s.outputPath + "/archives")) << "nothing is archived";
    // The new chunk: one folder <begin>-1 with the trace's whole metadata.
    std::vector<fs::path> chunks;
    for (const auto& e : fs::directory_iterator(s.outputPath))
        chunks.push_back(e.path());
    ASSERT_EQ(chunks.size(), 1u);
    EXPECT_EQ(chunks[0].filename().string().substr(chunks[0].filename().string().size() - 2), "-1");
    EXPECT_TRUE(hasMetadata(chunks[0]));
    // The next rotation archives chunk 1: chunk 0, deleted, keeps its index
    // (numbering goes on as LTTng's; no archive ends in -0).
    Answers started, completed;
    thread_.run([&] { recordings_->rotate(kId, started.withPath(), completed.withPath()); });
    ASSERT_TRUE(started.wait());
    ASSERT_FALSE(started.at().error);
    EXPECT_EQ(started.at().path.substr(started.at().path.size() - 2), "-1");
    ASSERT_TRUE(completed.wait());
}

TEST_F(TracerClear, RefusedWhileARotationIsUnderWay) {
    const auto s = session(kId, "busy");
    start(s);
    registerTraced(kFirstPid + 71);
    Answers started, completed, cleared;
    thread_.run([&] {
        recordings_->rotate(kId, started.withPath(), completed.withPath());
        recordings_->clear(kId, cleared.done());
    });
    ASSERT_TRUE(cleared.wait());
    ASSERT_TRUE(cleared.at().error);
    EXPECT_EQ(cleared.at().error->code(), ErrorCode::WrongState);
    EXPECT_NE(std::string(cleared.at().error->what()).find("rotation"), std::string::npos);
    ASSERT_TRUE(started.wait());
    ASSERT_FALSE(started.at().error);
    ASSERT_TRUE(completed.wait());
    EXPECT_FALSE(completed.at().error);
    EXPECT_TRUE(fs::exists(started.at().path)) << "the rotation archived its chunk";
}

TEST_F(TracerClear, ASnapshotSessionsConsumerEmptiesItsBuffers) {
    const auto s = session(kId, "flight", true);
    start(s);
    registerTraced(kFirstPid + 72);
    Answers cleared;
    thread_.run([&] { recordings_->clear(kId, cleared.done()); });
    ASSERT_TRUE(cleared.wait());
    EXPECT_FALSE(cleared.at().error) << cleared.at().error->what();
}

TEST_F(TracerClear, DestroyRightBehindAClearAnswersBothOnce) {
    const auto s = session(kId, "gone");
    start(s);
    registerTraced(kFirstPid + 73);
    Answers cleared, destroyed;
    thread_.run([&] {
        recordings_->clear(kId, cleared.done());
        destroySession(kId, destroyed.done());
    });
    ASSERT_TRUE(destroyed.wait());
    ASSERT_TRUE(cleared.wait());
    EXPECT_EQ(cleared.count(), 1u);
    EXPECT_EQ(destroyed.count(), 1u);
    EXPECT_LT(cleared.at().rank, destroyed.at().rank);
    started_.clear(); // destroyed already
}
