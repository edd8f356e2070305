#include "app_socket.hpp"

#include "common/log.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <system_error>

namespace tracectl {

AppEndpoints AppEndpoints::system() {
    return {"/run/lttng/lttng-ust-sock-8", "/lttng-ust-wait-8"};
}

AppEndpoints AppEndpoints::user(const std::string& lttngHome, uid_t euid) {
    return {lttngHome + "/.lttng/lttng-ust-sock-8", "/lttng-ust-wait-8-" + std::to_string(euid)};
}

UniqueFd listenForApps(const std::string& path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        throw std::system_error(ENAMETOOLONG, std::generic_category(), "app socket " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
        std::filesystem::create_directories(dir);
        chmod(dir.c_str(), 0755);
    }
    UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd)
        throw std::system_error(errno, std::generic_category(), "socket");
    unlink(path.c_str()); // a stale socket of a previous daemon; the instance lock guards a
                          // live one
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0)
        throw std::system_error(errno, std::generic_category(), "bind " + path);
    if (chmod(path.c_str(), 0666) < 0)
        throw std::system_error(errno, std::generic_category(), "chmod " + path);
    if (listen(fd.get(), SOMAXCONN) < 0)
        throw std::system_error(errno, std::generic_category(), "listen " + path);
    return fd;
}

WaitShm::WaitShm(const std::string& name) : name_(name) {
    const long page = sysconf(_SC_PAGESIZE);
    size_ = page > 0 ? static_cast<std::size_t>(page) : 4096;
    // An app may have created it first; under fs.protected_regular an
    // O_CREAT open of it would fail with EACCES.
    UniqueFd fd(shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0));
    if (!fd && errno == ENOENT) {
        const mode_t old = umask(0);
        // 0644 for the global page (apps only read it), as lttng-sessiond does.
        fd.reset(shm_open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
        umask(old);
    }
    if (!fd) {
        log::warning("cannot open the wake-up page " + name + ": " + std::strerror(errno) +
                     "; apps already waiting will connect at their next retry");
        return;
    }
    struct stat st {};
    if (fstat(fd.get(), &st) == 0 && static_cast<std::size_t>(st.st_size) < size_ &&
        ftruncate(fd.get(), static_cast<off_t>(size_)) < 0) {
        log::warning("cannot size the wake-up page " + name + ": " + std::strerror(errno));
        return;
    }
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED) {
        log::warning("cannot map the wake-up page " + name + ": " + std::strerror(errno));
        return;
    }
    page_ = p;
    auto* word = static_cast<int32_t*>(page_);
    __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
    const long woken = syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
    log::debug("wake-up page " + name + ": woke " + std::to_string(woken < 0 ? 0 : woken) +
               " waiting apps");
}

WaitShm::~WaitShm() {
    if (page_ == nullptr)
        return;
    __atomic_store_n(static_cast<int32_t*>(page_), 0, __ATOMIC_SEQ_CST);
    munmap(page_, size_);
}

} // namespace tracectl
