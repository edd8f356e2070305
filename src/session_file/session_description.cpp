// The schema's names of the data model's enumerations.
#include "session_file/session_description.hpp"

namespace tracectl::session_file {

const char* toString(DomainType d) noexcept {
    switch (d) {
    case DomainType::Kernel:
        return "KERNEL";
    case DomainType::Ust:
        return "UST";
    case DomainType::Jul:
        return "JUL";
    case DomainType::Log4j:
        return "LOG4J";
    case DomainType::Python:
        return "PYTHON";
    }
    return "?";
}

const char* toString(BufferType b) noexcept {
    switch (b) {
    case BufferType::PerPid:
        return "PER_PID";
    case BufferType::PerUid:
        return "PER_UID";
    case BufferType::Global:
        return "GLOBAL";
    }
    return "?";
}

const char* toString(LoglevelType l) noexcept {
    switch (l) {
    case LoglevelType::All:
        return "ALL";
    case LoglevelType::Range:
        return "RANGE";
    case LoglevelType::Single:
        return "SINGLE";
    }
    return "?";
}

} // namespace tracectl::session_file
