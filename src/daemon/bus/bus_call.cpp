#include "bus/bus_call.hpp"

namespace tracectl {

std::string boundedErrorMessage(std::string message) {
    if (message.size() <= kMaxErrorMessageBytes)
        return message;
    std::size_t cut = kMaxErrorMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80)
        --cut; // not inside a UTF-8 sequence
    message.resize(cut);
    return message + "...";
}

sdbus::Error toBusError(const Error& e) {
    return sdbus::Error(std::string(errorInfo(e.code()).dbusName), boundedErrorMessage(e.what()));
}

} // namespace tracectl
