// ConsumerFdStore: what it tells the service manager (sd_notify(3) FDSTORE=1,
// FDNAME=, FDSTOREREMOVE=1), read from a $NOTIFY_SOCKET of the test's own,
// and the connections a previous daemon stored.
#include "restart/consumer_fd_store.hpp"

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

using tracectl::ConsumerFdStore;
using tracectl::UniqueFd;

constexpr const char* kId = "0123456789abcdef0123456789abcdef";

/// A datagram socket bound to an abstract address, set as $NOTIFY_SOCKET.
class NotifySocket {
public:
    NotifySocket() {
        fd_.reset(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        const std::string name = "tracectl-fdstore-test-" + std::to_string(getpid());
        std::memcpy(a.sun_path + 1, name.data(), name.size());
        const int on = 1;
        setsockopt(fd_.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
        bound_ =
            bind(fd_.get(), reinterpret_cast<sockaddr*>(&a),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) == 0;
        setenv("NOTIFY_SOCKET", ("@" + name).c_str(), 1);
    }
    ~NotifySocket() { unsetenv("NOTIFY_SOCKET"); }
    bool bound() const { return bound_; }

    /// The next message (non-blocking: "" if none) and the fd it carried.
    std::string receive(UniqueFd* passed) {
        std::array<char, 4096> text{};
        iovec iov{text.data(), text.size()};
        alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 4) + CMSG_SPACE(sizeof(ucred))>
            control{};
        msghdr m{};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control.data();
        m.msg_controllen = control.size();
        const ssize_t n = recvmsg(fd_.get(), &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
            return "";
        for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
                if (passed != nullptr)
                    passed->reset(fd);
                else
                    close(fd);
            }
        return std::string(text.data(), static_cast<std::size_t>(n));
    }

private:
    UniqueFd fd_;
    bool bound_ = false;
};

ino_t inodeOf(int fd) {
    struct stat st {};
    return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

TEST(ConsumerFdStore, NamesAreConsumerAndTheSessionIdInLowercaseHex) {
    EXPECT_EQ(tracectl::sessionOfConsumerFdName(std::string("consumer-") + kId), kId);
    for (const char* bad :
         {"", "consumer-", "ust", "consumer-0123", "Consumer-0123456789abcdef0123456789abcdef",
          "consumer-0123456789ABCDEF0123456789abcdef", "consumer-0123456789abcdef0123456789abcdef0",
          "consumer-../0123456789abcdef0123456789ab"})
        EXPECT_EQ(tracectl::sessionOfConsumerFdName(bad), "") << bad;
}

TEST(ConsumerFdStore, StoresNothingWithoutAServiceManager) {
    unsetenv("NOTIFY_SOCKET");
    ConsumerFdStore store;
    EXPECT_FALSE(store.enabled());
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd a(sv[0]), b(sv[1]);
    EXPECT_FALSE(store.keep(kId, a.get()));
}

TEST(ConsumerFdStore, KeepsAndForgetsAConnectionByItsSessionsName) {
    NotifySocket manager;
    ASSERT_TRUE(manager.bound());
    ConsumerFdStore store;
    ASSERT_TRUE(store.enabled());
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    UniqueFd a(sv[0]), b(sv[1]);
    ASSERT_TRUE(store.keep(kId, a.get()));
    UniqueFd passed;
    EXPECT_EQ(manager.receive(&passed), std::string("FDSTORE=1\nFDNAME=consumer-") + kId);
    ASSERT_TRUE(passed);
    EXPECT_EQ(inodeOf(passed.get()), inodeOf(a.get())); // the connection itself
    store.forget(kId);
    EXPECT_EQ(manager.receive(nullptr), std::string("FDSTOREREMOVE=1\nFDNAME=consumer-") + kId);
}

TEST(ConsumerFdStore, GivesBackWhatAPreviousDaemonStoredAndDropsTheRest) {
    NotifySocket manager;
    ASSERT_TRUE(manager.bound());
    int one[2], two[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, one), 0);
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, two), 0);
    UniqueFd consumerOne(one[1]), consumerTwo(two[1]);
    const ino_t kept = inodeOf(one[0]);
    const std::string other = "fedcba9876543210fedcba9876543210";
    std::map<std::string, UniqueFd> passed;
    passed[kId] = UniqueFd(one[0]);
    passed[other] = UniqueFd(two[0]);
    ConsumerFdStore store(std::move(passed));
    EXPECT_TRUE(store.has(kId));
    UniqueFd taken = store.take(kId);
    EXPECT_EQ(inodeOf(taken.get()), kept);
    EXPECT_FALSE(store.has(kId));
    EXPECT_FALSE(store.take(kId));
    // The other one is let go: out of the store, and closed here, so its
    // consumer sees the end of its connection.
    EXPECT_EQ(store.dropUntaken(), std::vector<std::string>{other});
    EXPECT_EQ(manager.receive(nullptr), "FDSTOREREMOVE=1\nFDNAME=consumer-" + other);
    char byte = 0;
    EXPECT_EQ(read(consumerTwo.get(), &byte, 1), 0);
    EXPECT_FALSE(store.has(other));
}

} // namespace
