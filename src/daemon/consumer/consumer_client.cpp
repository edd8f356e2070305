#include "consumer_client.hpp"

#include "apps/ust_error.hpp"
#include "common/error.hpp"
#include "common/fd_passing.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <lttng/ust-error.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace tracectl {

namespace cp = consumer_protocol;

ConsumerClient::ConsumerClient(UniqueFd socket)
    : socket_(std::move(socket)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake_)
        throw Error(ErrorCode::Failed, std::string("eventfd: ") + std::strerror(errno));
    const int flags = fcntl(socket_.get(), F_GETFL);
    fcntl(socket_.get(), F_SETFL, flags & ~O_NONBLOCK);
    timeval tv{10, 0};
    setsockopt(socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(socket_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

cp::Message ConsumerClient::call(const cp::Message& request, int passFd) {
    std::optional<cp::Message> reply;
    try {
        cp::writeMessage(socket_.get(), request);
        if (passFd >= 0) {
            const std::byte marker{0};
            const int fds[1] = {passFd};
            sendWithFds(socket_.get(), std::span<const std::byte>(&marker, 1), fds);
        }
        for (;;) {
            reply = cp::readMessage(socket_.get());
            auto* done = reply ? std::get_if<cp::RotationCompleted>(&*reply) : nullptr;
            if (done == nullptr)
                break;
            keep(std::move(*done)); // not the reply: the consumer's own news
        }
    } catch (const std::system_error& e) {
        // SO_RCVTIMEO/SO_SNDTIMEO expired: say so rather than "EAGAIN".
        if (e.code() == std::errc::resource_unavailable_try_again)
            throw Error(ErrorCode::Failed, std::string("the consumer did not answer ") +
                                               std::string(cp::messageName(cp::typeOf(request))) +
                                               " within 10 s (stopped or overloaded?)");
        throw Error(ErrorCode::Failed, std::string("the consumer failed: ") + e.what());
    } catch (const std::exception& e) {
        throw Error(ErrorCode::Failed, std::string("the consumer failed: ") + e.what());
    }
    if (!reply)
        throw Error(ErrorCode::Failed, "the consumer closed its socket");
    if (const auto* err = std::get_if<cp::ErrorReply>(&*reply))
        throw Error(ErrorCode::Failed, "the consumer refused " +
                                           std::string(cp::messageName(cp::typeOf(request))) +
                                           ": " + err->message);
    return *reply;
}

void ConsumerClient::hello(const std::string& daemonVersion) {
    cp::Hello h;
    h.version = daemonVersion;
    if (!std::holds_alternative<cp::HelloReply>(call(h)))
        throw Error(ErrorCode::Failed, "the consumer answered Hello with something else");
}

ConsumerChannel ConsumerClient::createChannel(const cp::CreateChannel& request) {
    const auto reply = call(request);
    const auto* created = std::get_if<cp::ChannelCreated>(&reply);
    if (created == nullptr || created->key != request.key)
        throw Error(ErrorCode::Failed, "the consumer answered CreateChannel with something else");
    ConsumerChannel out;
    out.key = request.key;
    lttng_ust_abi_object_data* obj = nullptr;
    int r = lttng_ust_ctl_recv_channel_from_consumer(socket_.get(), &obj);
    if (r < 0)
        throw Error(ErrorCode::Failed,
                    "receiving a channel from the consumer: " + ustErrorString(r));
    out.channel.reset(obj);
    for (;;) {
        obj = nullptr;
        r = lttng_ust_ctl_recv_stream_from_consumer(socket_.get(), &obj);
        if (r == -LTTNG_UST_ERR_NOENT)
            break;
        if (r < 0)
            throw Error(ErrorCode::Failed,
                        "receiving a stream from the consumer: " + ustErrorString(r));
        out.streams.emplace_back(obj);
        if (out.streams.size() > created->streamCount)
            throw Error(ErrorCode::Failed, "the consumer sent more streams than announced");
    }
    return out;
}

void ConsumerClient::pushMetadata(uint64_t key, uint64_t offset, const std::string& bytes) {
    for (std::size_t done = 0; done < bytes.size();) {
        const std::size_t n = std::min(bytes.size() - done, cp::kMaxMetadataChunk);
        cp::PushMetadata m;
        m.key = key;
        m.offset = offset + done;
        m.bytes = bytes.substr(done, n);
        call(m);
        done += n;
    }
}

void ConsumerClient::flushChannel(uint64_t key) {
    call(cp::FlushChannel{key});
}
void ConsumerClient::destroyChannel(uint64_t key) {
    call(cp::DestroyChannel{key});
}
void ConsumerClient::shutdown() {
    call(cp::Shutdown{});
}
void ConsumerClient::recordSnapshot(const cp::RecordSnapshot& request, int dirFd) {
    if (!std::holds_alternative<cp::Ok>(call(request, dirFd)))
        throw Error(ErrorCode::Failed, "the consumer answered RecordSnapshot with something else");
}

void ConsumerClient::rotate(const cp::Rotate& request) {
    call(request);
}

void ConsumerClient::keep(cp::RotationCompleted done) {
    completed_.push_back(std::move(done));
    const uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof one);
}

bool ConsumerClient::readUnsolicited() {
    for (;;) {
        pollfd p{socket_.get(), POLLIN, 0};
        if (poll(&p, 1, 0) <= 0)
            return true;
        std::optional<cp::Message> m;
        try {
            m = cp::readMessage(socket_.get());
        } catch (const std::exception& e) {
            throw Error(ErrorCode::Failed, std::string("the consumer failed: ") + e.what());
        }
        if (!m)
            return false;
        auto* done = std::get_if<cp::RotationCompleted>(&*m);
        if (done == nullptr)
            throw Error(ErrorCode::Failed, "the consumer sent " +
                                               std::string(cp::messageName(cp::typeOf(*m))) +
                                               " unasked");
        keep(std::move(*done));
    }
}

std::vector<cp::RotationCompleted> ConsumerClient::takeCompleted() {
    uint64_t n = 0;
    (void)!read(wake_.get(), &n, sizeof n);
    return std::exchange(completed_, {});
}

} // namespace tracectl
