// Unit tests of the current-session store (cli/current_session.hpp) on a
// real folder.
#include "cli/current_session.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace tracectl::cli;
namespace fs = std::filesystem;

namespace {

class CurrentSessionTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "tracectl-current-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string contents(const fs::path& file) {
        std::ifstream in(file);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

    fs::path dir_;
};

TEST_F(CurrentSessionTest, NothingIsKeptUntilWritten) {
    const CurrentSession current(dir_, "system");
    EXPECT_EQ(current.file(), dir_ / "tracectl" / "current-session.system");
    EXPECT_EQ(current.read(), std::nullopt);
}

TEST_F(CurrentSessionTest, WriteThenReadGivesTheName) {
    const CurrentSession current(dir_, "user");
    current.write("web-latency");
    EXPECT_EQ(current.read(), "web-latency");
    EXPECT_EQ(contents(current.file()), "web-latency\n");
    struct stat st {};
    ASSERT_EQ(::stat(current.file().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600U);
    ASSERT_EQ(::stat(current.file().parent_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700U);
    // A second write replaces it and leaves no temporary file behind.
    current.write("другое-имя");
    EXPECT_EQ(current.read(), "другое-имя");
    EXPECT_EQ(std::distance(fs::directory_iterator(current.file().parent_path()),
                            fs::directory_iterator()),
              1);
}

TEST_F(CurrentSessionTest, EachBusHasItsOwn) {
    const CurrentSession system(dir_, "system");
    const CurrentSession user(dir_, "user");
    system.write("a");
    user.write("b");
    EXPECT_EQ(system.read(), "a");
    EXPECT_EQ(user.read(), "b");
}

TEST_F(CurrentSessionTest, ForgetIfRemovesOnlyThatName) {
    const CurrentSession current(dir_, "system");
    current.write("kept");
    EXPECT_FALSE(current.forgetIf("other"));
    EXPECT_EQ(current.read(), "kept");
    EXPECT_TRUE(current.forgetIf("kept"));
    EXPECT_EQ(current.read(), std::nullopt);
    EXPECT_FALSE(current.forgetIf("kept"));
}

TEST_F(CurrentSessionTest, WithoutARuntimeFolderNothingIsKeptAndWritingSaysWhy) {
    const CurrentSession current(fs::path(), "system");
    EXPECT_TRUE(current.file().empty());
    EXPECT_EQ(current.read(), std::nullopt);
    try {
        current.write("x");
        FAIL() << "write() without a runtime folder succeeded";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("XDG_RUNTIME_DIR"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(current.forgetIf("x"));
}

TEST_F(CurrentSessionTest, WithoutARuntimeFolderTheConfigFolderKeepsIt) {
    const uid_t me = ::geteuid();
    const std::string home = dir_.string();
    const std::string config = (dir_ / "config").string();
    EXPECT_EQ(CurrentSession::baseFolder("/run/user/1000", config.c_str(), home.c_str(), me),
              "/run/user/1000");
    // A shell with no login session (su, sudo, a container): as lttng's $HOME/.lttngrc,
    // the folders made when first written.
    EXPECT_EQ(CurrentSession::baseFolder(nullptr, config.c_str(), home.c_str(), me), config);
    EXPECT_EQ(CurrentSession::baseFolder(nullptr, nullptr, home.c_str(), me), dir_ / ".config");
    // Relative or empty values are not set (the XDG base directory specification).
    EXPECT_EQ(CurrentSession::baseFolder("run", "", home.c_str(), me), dir_ / ".config");
    EXPECT_EQ(CurrentSession::baseFolder("", "c", "home", me), "");
    EXPECT_EQ(CurrentSession::baseFolder(nullptr, nullptr, nullptr, me), "");
    // Another user's environment kept (su without -, setpriv): nothing is kept.
    EXPECT_EQ(CurrentSession::baseFolder(nullptr, nullptr, home.c_str(), me + 1), "");
    EXPECT_EQ(CurrentSession::baseFolder(nullptr, config.c_str(), nullptr, me + 1), "");
}

TEST_F(CurrentSessionTest, AMissingConfigFolderIsMade) {
    const CurrentSession deeper(dir_ / "a" / "b", "system");
    deeper.write("kept");
    EXPECT_EQ(deeper.read(), "kept");
    const CurrentSession current(dir_ / ".config", "system");
    EXPECT_EQ(current.file(), dir_ / ".config" / "tracectl" / "current-session.system");
    current.write("kept");
    EXPECT_EQ(current.read(), "kept");
    struct stat st {};
    ASSERT_EQ(::stat((dir_ / ".config").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700U);
}

TEST_F(CurrentSessionTest, AFileThatHoldsNoNameIsReportedNotUsed) {
    const CurrentSession current(dir_, "system");
    current.write("good");
    for (const std::string& bad :
         {std::string(""), std::string("\n"), std::string("two\nlines\n"), std::string("tab\there"),
          std::string("\xff\xfe"), std::string(300, 'a'), std::string("nul\0byte", 8)}) {
        std::ofstream(current.file(), std::ios::trunc) << bad;
        EXPECT_THROW(current.read(), std::runtime_error) << "contents: " << bad;
        EXPECT_FALSE(current.forgetIf("good")); // a bad file is never taken for a name
    }
}

TEST_F(CurrentSessionTest, ASymbolicLinkIsNotFollowed) {
    const CurrentSession current(dir_, "system");
    fs::create_directory(dir_ / "tracectl");
    std::ofstream(dir_ / "elsewhere") << "victim\n";
    fs::create_symlink(dir_ / "elsewhere", current.file());
    EXPECT_THROW(current.read(), std::runtime_error);
}

TEST_F(CurrentSessionTest, AFifoIsRefusedWithoutWaitingOnIt) {
    const CurrentSession current(dir_, "system");
    fs::create_directory(dir_ / "tracectl", dir_);
    fs::permissions(dir_ / "tracectl", fs::perms::owner_all);
    ASSERT_EQ(::mkfifo(current.file().c_str(), 0600), 0);
    try {
        current.read(); // blocked forever in open() before the fix
        FAIL() << "a FIFO was read as a current session";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos)
            << e.what();
    }
    current.write("replaced"); // set-session replaces it
    EXPECT_EQ(current.read(), "replaced");
}

TEST_F(CurrentSessionTest, AFolderOthersMayWriteToOrASymbolicLinkIsRefused) {
    const CurrentSession current(dir_, "system");
    current.write("mine");
    fs::permissions(dir_ / "tracectl", fs::perms::owner_all | fs::perms::group_write |
                                           fs::perms::others_write | fs::perms::others_exec);
    EXPECT_THROW(current.read(), std::runtime_error);
    EXPECT_THROW(current.write("other"), std::runtime_error);
    EXPECT_FALSE(current.forgetIf("mine"));
    fs::permissions(dir_ / "tracectl", fs::perms::owner_all);
    EXPECT_EQ(current.read(), "mine");

    // The folder itself a symbolic link to one that is the caller's: refused too.
    fs::rename(dir_ / "tracectl", dir_ / "real");
    fs::create_directory_symlink(dir_ / "real", dir_ / "tracectl");
    EXPECT_THROW(current.read(), std::runtime_error);
    EXPECT_THROW(current.write("x"), std::runtime_error);
}

TEST_F(CurrentSessionTest, NamesThatCannotBeSessionNamesAreNotWritten) {
    const CurrentSession current(dir_, "system");
    EXPECT_THROW(current.write(""), std::runtime_error);
    EXPECT_THROW(current.write("a\nb"), std::runtime_error);
    EXPECT_THROW(current.write(std::string(256, 'n')), std::runtime_error);
    EXPECT_EQ(current.read(), std::nullopt);
}

TEST(CurrentSessionKey, AddressKeysAreStableAndDistinct) {
    // FNV-1a 64 of the empty string is its offset basis.
    EXPECT_EQ(CurrentSession::addressBusKey(""), "address-cbf29ce484222325");
    EXPECT_EQ(CurrentSession::addressBusKey("unix:path=/run/a"),
              CurrentSession::addressBusKey("unix:path=/run/a"));
    EXPECT_NE(CurrentSession::addressBusKey("unix:path=/run/a"),
              CurrentSession::addressBusKey("unix:path=/run/b"));
    EXPECT_EQ(CurrentSession::addressBusKey("x").size(), std::string("address-").size() + 16);
}

} // namespace
