#include "bus/method_reply.hpp"

#include "common/log.hpp"

#include <cerrno>
#include <cstring>
#include <exception>

namespace tracectl::bus {

MethodReply::MethodReply(sd_bus_message* call) : call_(retain(call)) {}

MethodReply::~MethodReply() {
    if (answered_)
        return;
    const char* member = sd_bus_message_get_member(call_.get());
    log::error(std::string("a call of ") + (member != nullptr ? member : "?") +
               " was never answered; answering Error.Failed");
    returnError(sdbus::Error(SD_BUS_ERROR_FAILED, "the daemon dropped this call (internal error)"));
}

void MethodReply::returnResults() {
    returnWith([](sd_bus_message*) {});
}

void MethodReply::returnResults(const std::string& value) {
    returnWith(
        [&](sd_bus_message* m) { check(sd_bus_message_append(m, "s", value.c_str()), "s"); });
}

void MethodReply::returnObjectPath(const std::string& path) {
    returnWith([&](sd_bus_message* m) { check(sd_bus_message_append(m, "o", path.c_str()), "o"); });
}

void MethodReply::returnObjectPaths(const std::vector<std::string>& paths) {
    returnWith([&](sd_bus_message* m) {
        check(sd_bus_message_open_container(m, 'a', "o"), "ao");
        for (const auto& p : paths)
            check(sd_bus_message_append(m, "o", p.c_str()), "o");
        check(sd_bus_message_close_container(m), "ao");
    });
}

void MethodReply::returnWith(const std::function<void(sd_bus_message*)>& append) {
    if (answered_)
        return;
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_return(call_.get(), &raw);
    MessagePtr reply(raw);
    if (r >= 0) {
        try {
            append(reply.get());
        } catch (const std::exception& e) {
            log::error(std::string("building a reply failed: ") + e.what());
            returnError(sdbus::Error(SD_BUS_ERROR_FAILED,
                                     std::string("building the reply failed: ") + e.what()));
            return;
        }
        r = sd_bus_send(nullptr, reply.get(), nullptr);
    }
    answered_ = true;
    if (r < 0)
        log::warning(std::string("cannot send a reply: ") + std::strerror(-r));
}

void MethodReply::returnError(const sdbus::Error& e) {
    if (answered_)
        return;
    answered_ = true;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    const int set = sd_bus_error_set(&error, e.getName().c_str(), e.getMessage().c_str());
    const int r = set == -ENOMEM ? set : sd_bus_reply_method_error(call_.get(), &error);
    sd_bus_error_free(&error);
    if (r < 0)
        log::warning(std::string("cannot send an error reply: ") + std::strerror(-r));
}

} // namespace tracectl::bus
