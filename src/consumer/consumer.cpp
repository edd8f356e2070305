#include "consumer.hpp"

#include "common/log.hpp"
#include "config.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

namespace tracectl::consumer {

namespace cp = consumer_protocol;

namespace {

/// Most requests handled per wake-up, so streams get drained in between.
constexpr int kRequestsPerWakeup = 16;
/// A reply or ust-ctl transfer blocked longer than this means the daemon
/// stopped reading: give up on it (SO_SNDTIMEO).
constexpr time_t kSendTimeoutSeconds = 30;

/// The reply for a failed request, from the exception that says why.
cp::ErrorReply errorFor(const std::exception& e) {
    if (const auto* r = dynamic_cast<const RequestError*>(&e))
        return {r->kind(), r->what()};
    if (dynamic_cast<const UstError*>(&e) != nullptr)
        return {cp::ErrorKind::Tracer, e.what()};
    if (dynamic_cast<const StreamError*>(&e) != nullptr ||
        dynamic_cast<const std::system_error*>(&e) != nullptr)
        return {cp::ErrorKind::Io, e.what()};
    return {cp::ErrorKind::Tracer, e.what()};
}

std::string truncated(std::string s) {
    if (s.size() > cp::kMaxText)
        s.resize(cp::kMaxText);
    for (char& c : s) {
        if (c == '\0')
            c = '?';
    }
    return s;
}

} // namespace

Consumer::Consumer(EventLoop& loop, UniqueFd socket, OutputDir root)
    : loop_(loop), sock_(std::move(socket)), root_(std::move(root)) {
    const int flags = ::fcntl(sock_.get(), F_GETFL);
    if (flags < 0 || ::fcntl(sock_.get(), F_SETFL, flags & ~O_NONBLOCK) < 0)
        throw std::system_error(errno, std::generic_category(), "fcntl(command socket)");
    timeval tv{};
    tv.tv_sec = kSendTimeoutSeconds;
    if (::setsockopt(sock_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
        throw std::system_error(errno, std::generic_category(), "SO_SNDTIMEO");
    sd_event_source* s = nullptr;
    const int r = sd_event_add_io(loop_.get(), &s, sock_.get(), EPOLLIN, &Consumer::onSocket, this);
    if (r < 0)
        throw std::system_error(-r, std::generic_category(), "sd_event_add_io(command socket)");
    source_.reset(s);
}

Consumer::~Consumer() {
    source_.reset();
    channels_.clear();
}

void Consumer::stop(int code) noexcept {
    if (stopping_)
        return;
    stopping_ = true;
    source_.reset();
    for (auto& [key, ch] : channels_)
        ch->drainAndClose(false);
    channels_.clear();
    loop_.exit(code);
}

int Consumer::onSocket(sd_event_source*, int, std::uint32_t, void* userdata) {
    static_cast<Consumer*>(userdata)->readRequests();
    return 0;
}

void Consumer::readRequests() {
    for (int i = 0; i < kRequestsPerWakeup && !stopping_; ++i) {
        cp::MessageReader::Status status;
        try {
            status = reader_.readFrom(sock_.get());
        } catch (const cp::TruncatedFrame& e) {
            log::error(std::string("daemon connection lost: ") + e.what());
            stop(ExitDaemonLost);
            return;
        } catch (const cp::ProtocolError& e) {
            log::error(std::string("malformed request from the daemon: ") + e.what());
            // Framing is lost: say why (best effort), then leave.
            reply(cp::ErrorReply{cp::ErrorKind::Protocol, truncated(e.what())});
            stop(ExitProtocolError);
            return;
        } catch (const std::system_error& e) {
            log::error(std::string("daemon connection lost: ") + e.what());
            stop(ExitDaemonLost);
            return;
        }
        switch (status) {
        case cp::MessageReader::Status::WouldBlock:
            return;
        case cp::MessageReader::Status::Eof:
            log::notice("the daemon closed the connection; draining and exiting");
            stop(ExitDaemonLost);
            return;
        case cp::MessageReader::Status::Complete:
            dispatch(reader_.take());
            break;
        }
    }
}

Channel& Consumer::channel(std::uint64_t key) {
    const auto it = channels_.find(key);
    if (it == channels_.end())
        throw RequestError(cp::ErrorKind::UnknownChannel, "no channel " + std::to_string(key));
    return *it->second;
}

void Consumer::dispatch(cp::Message&& request) {
    const cp::MessageType type = cp::typeOf(request);
    log::debug(std::string("request ") + std::string(cp::messageName(type)));

    if (const auto* hello = std::get_if<cp::Hello>(&request)) {
        if (hello->protocolVersion != cp::kVersion) {
            reply(cp::ErrorReply{cp::ErrorKind::VersionMismatch,
                                 "protocol version " + std::to_string(hello->protocolVersion) +
                                     " not supported; this consumer speaks " +
                                     std::to_string(cp::kVersion)});
            return;
        }
        greeted_ = true;
        log::info("daemon " + hello->version + " connected");
        reply(
            cp::HelloReply{cp::kVersion, static_cast<std::uint32_t>(::getpid()), TRACECTL_VERSION});
        return;
    }
    if (!greeted_) {
        reply(cp::ErrorReply{cp::ErrorKind::Protocol, "the first request must be Hello"});
        return;
    }

    try {
        if (const auto* create = std::get_if<cp::CreateChannel>(&request)) {
            createChannel(*create);
            return;
        }
        if (const auto* push = std::get_if<cp::PushMetadata>(&request)) {
            channel(push->key).pushMetadata(push->offset, push->bytes);
        } else if (const auto* flush = std::get_if<cp::FlushChannel>(&request)) {
            channel(flush->key).flush();
        } else if (const auto* destroy = std::get_if<cp::DestroyChannel>(&request)) {
            channel(destroy->key).drainAndClose(false);
            channels_.erase(destroy->key);
        } else if (std::holds_alternative<cp::Shutdown>(request)) {
            for (auto& [key, ch] : channels_)
                ch->drainAndClose(false);
            channels_.clear();
            if (reply(cp::Ok{}))
                stop(ExitOk);
            return;
        } else {
            throw RequestError(cp::ErrorKind::Protocol,
                               std::string(cp::messageName(type)) + " is not a request");
        }
    } catch (const std::exception& e) {
        log::warning(std::string(cp::messageName(type)) + " failed: " + e.what());
        reply(errorFor(e));
        return;
    }
    reply(cp::Ok{});
}

void Consumer::createChannel(const cp::CreateChannel& request) {
    if (channels_.count(request.key) != 0)
        throw RequestError(cp::ErrorKind::ChannelExists,
                           "channel " + std::to_string(request.key) + " exists");
    auto ch = std::make_unique<Channel>(loop_, root_, request);
    Channel& created = *ch;
    channels_.emplace(request.key, std::move(ch));
    log::info("channel " + std::to_string(request.key) + " (" +
              (created.isMetadata() ? std::string("metadata") : request.name) + ") in " +
              request.outputDir + ": " + std::to_string(created.streamCount()) + " streams");
    if (!reply(cp::ChannelCreated{request.key, created.streamCount()}))
        return;
    try {
        created.sendToDaemon(sock_.get());
    } catch (const std::exception& e) {
        // The daemon is inside liblttng-ust-ctl's byte stream: no reply can
        // follow, the connection is unusable.
        log::error(std::string("sending channel buffers to the daemon failed: ") + e.what());
        const auto* ust = dynamic_cast<const UstError*>(&e);
        stop(ust != nullptr && ust->code() == -EPIPE ? ExitDaemonLost : ExitFailure);
    }
}

bool Consumer::reply(const cp::Message& m) noexcept {
    try {
        cp::writeMessage(sock_.get(), m);
        return true;
    } catch (const std::exception& e) {
        log::error(std::string("cannot reply to the daemon: ") + e.what());
        stop(ExitDaemonLost);
        return false;
    }
}

} // namespace tracectl::consumer
