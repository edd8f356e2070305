// takeActivationSockets: the listening socket systemd passes under the name
// "ust" (LISTEN_FDS/LISTEN_FDNAMES/LISTEN_PID, sd_listen_fds_with_names(3)),
// and nothing else.
#include "service/service_manager.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

namespace {

/// Puts a new AF_UNIX stream socket (listening if `listening`) on
/// SD_LISTEN_FDS_START and sets the LISTEN_* variables for this process.
void passSocket(const char* name, bool listening) {
    const int s = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(s, 0);
    if (listening) {
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        // Abstract address: nothing to clean up.
        const std::string path = "tracectl-test-" + std::to_string(getpid());
        std::memcpy(a.sun_path + 1, path.data(), path.size());
        ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a),
                       static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + path.size())),
                  0);
        ASSERT_EQ(listen(s, 4), 0);
    }
    if (s != SD_LISTEN_FDS_START) {
        ASSERT_EQ(dup2(s, SD_LISTEN_FDS_START), SD_LISTEN_FDS_START);
        close(s);
    }
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
    setenv("LISTEN_FDS", "1", 1);
    setenv("LISTEN_FDNAMES", name, 1);
}

bool isOpen(int fd) {
    return fcntl(fd, F_GETFD) >= 0;
}

TEST(ActivationSockets, NoneWithoutSystemd) {
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    const auto s = tracectl::takeActivationSockets();
    EXPECT_EQ(s.passed, 0);
    EXPECT_FALSE(s.appSocket);
}

TEST(ActivationSockets, TakesTheListeningSocketNamedUst) {
    passSocket("ust", true);
    const auto s = tracectl::takeActivationSockets();
    EXPECT_EQ(s.passed, 1);
    ASSERT_TRUE(s.appSocket);
    EXPECT_EQ(s.appSocket.get(), SD_LISTEN_FDS_START);
    EXPECT_NE(fcntl(s.appSocket.get(), F_GETFL) & O_NONBLOCK, 0);
    EXPECT_NE(fcntl(s.appSocket.get(), F_GETFD) & FD_CLOEXEC, 0);
    // The variables are consumed: children do not see them.
    EXPECT_EQ(std::getenv("LISTEN_FDS"), nullptr);
}

constexpr const char* kConsumerName = "consumer-0123456789abcdef0123456789abcdef";

TEST(ActivationSockets, TakesAConsumerConnectionByItsSession) {
    passSocket(kConsumerName, false);
    const auto s = tracectl::takeActivationSockets();
    EXPECT_EQ(s.passed, 1);
    EXPECT_FALSE(s.appSocket);
    ASSERT_EQ(s.consumerConnections.size(), 1u);
    const auto& [id, fd] = *s.consumerConnections.begin();
    EXPECT_EQ(id, "0123456789abcdef0123456789abcdef");
    EXPECT_EQ(fd.get(), SD_LISTEN_FDS_START);
    EXPECT_NE(fcntl(fd.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST(ActivationSockets, ClosesAConsumerConnectionThatListensOrHasABadName) {
    passSocket(kConsumerName, true);
    EXPECT_TRUE(tracectl::takeActivationSockets().consumerConnections.empty());
    EXPECT_FALSE(isOpen(SD_LISTEN_FDS_START));
    for (const char* name : {"consumer-", "consumer-0123456789ABCDEF0123456789ABCDEF",
                             "consumer-0123456789abcdef0123456789abcde", "consumer-../../x"}) {
        passSocket(name, false);
        const auto s = tracectl::takeActivationSockets();
        EXPECT_TRUE(s.consumerConnections.empty()) << name;
        EXPECT_FALSE(isOpen(SD_LISTEN_FDS_START)) << name;
    }
}

TEST(ActivationSockets, ClosesASocketWithAnotherName) {
    passSocket("tracectld.socket", true);
    const auto s = tracectl::takeActivationSockets();
    EXPECT_EQ(s.passed, 1);
    EXPECT_FALSE(s.appSocket);
    EXPECT_FALSE(isOpen(SD_LISTEN_FDS_START));
}

TEST(ActivationSockets, ClosesASocketThatDoesNotListen) {
    passSocket("ust", false);
    const auto s = tracectl::takeActivationSockets();
    EXPECT_FALSE(s.appSocket);
    EXPECT_FALSE(isOpen(SD_LISTEN_FDS_START));
}

TEST(ActivationSockets, IgnoresSocketsMeantForAnotherProcess) {
    passSocket("ust", true);
    setenv("LISTEN_PID", "1", 1);
    const auto s = tracectl::takeActivationSockets();
    EXPECT_EQ(s.passed, 0);
    EXPECT_FALSE(s.appSocket);
    close(SD_LISTEN_FDS_START);
}

} // namespace
