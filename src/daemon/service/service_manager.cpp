#include "service_manager.hpp"

#include "common/log.hpp"
#include "restart/consumer_fd_store.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <system_error>
#include <systemd/sd-daemon.h>

namespace tracectl {

ActivationSockets takeActivationSockets() {
    ActivationSockets out;
    char** names = nullptr;
    const int n = sd_listen_fds_with_names(1, &names);
    if (n < 0)
        throw std::system_error(-n, std::generic_category(), "sd_listen_fds_with_names");
    out.passed = n;
    for (int i = 0; i < n; ++i) {
        UniqueFd fd(SD_LISTEN_FDS_START + i);
        const std::string name = names != nullptr && names[i] != nullptr ? names[i] : "";
        std::free(names != nullptr ? names[i] : nullptr);
        if (const std::string session = sessionOfConsumerFdName(name); !session.empty()) {
            if (sd_is_socket_unix(fd.get(), SOCK_STREAM, 0, nullptr, 0) <= 0 ||
                fcntl(fd.get(), F_SETFD, FD_CLOEXEC) < 0) {
                log::warning("ignoring the fd '" + name +
                             "' passed by systemd: not a connected AF_UNIX stream socket");
                continue;
            }
            out.consumerConnections[session] = std::move(fd);
            continue;
        }
        if (name != kAppSocketFdName) {
            log::warning("ignoring socket '" + name + "' passed by systemd (expected one named '" +
                         std::string(kAppSocketFdName) + "', FileDescriptorName=)");
            continue;
        }
        if (sd_is_socket_unix(fd.get(), SOCK_STREAM, 1, nullptr, 0) <= 0) {
            log::warning("ignoring the socket '" + name +
                         "' passed by systemd: not a listening AF_UNIX stream socket");
            continue;
        }
        if (out.appSocket) {
            log::warning("ignoring a second socket named '" + name + "' passed by systemd");
            continue;
        }
        const int flags = fcntl(fd.get(), F_GETFL);
        if (flags < 0 || fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) < 0 ||
            fcntl(fd.get(), F_SETFD, FD_CLOEXEC) < 0)
            throw std::system_error(errno, std::generic_category(), "fcntl on the passed socket");
        out.appSocket = std::move(fd);
    }
    std::free(names);
    return out;
}

void notifyReady(const std::string& status) {
    const std::string text = "READY=1\nSTATUS=" + status;
    sd_notify(0, text.c_str());
}

void notifyStopping(const std::string& status) {
    const std::string text = "STOPPING=1\nSTATUS=" + status;
    sd_notify(0, text.c_str());
}

} // namespace tracectl
