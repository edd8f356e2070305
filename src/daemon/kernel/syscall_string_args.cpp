#include "syscall_string_args.hpp"

#include "syscall_string_abi.h"

#include <algorithm>
#include <string_view>

namespace tracectl::kernel {

namespace {

bool isSysEnter(const EventFormat& format) {
    if (format.name.rfind("sys_enter_", 0) != 0)
        return false;
    return std::any_of(format.fields.begin(), format.fields.end(), [](const FormatField& f) {
        return f.name == "__syscall_nr" && f.offset == TRACECTL_SYSCALL_NR_OFFSET && f.size == 4;
    });
}

bool isCharPointer(std::string_view type) {
    if (type.rfind("const ", 0) == 0)
        type.remove_prefix(6);
    return type == "char *" || type == "char*";
}

bool namesAString(std::string_view name) {
    for (const std::string_view part : {"name", "file", "path", "root", "put_old", "type"})
        if (name.find(part) != std::string_view::npos)
            return true;
    return false;
}

bool isArgumentSlot(const FormatField& f) {
    if (f.size != 8 || f.isArray || f.isDataLoc || f.isRelLoc ||
        f.offset < TRACECTL_SYSCALL_ARGS_OFFSET)
        return false;
    const std::uint32_t rel = f.offset - TRACECTL_SYSCALL_ARGS_OFFSET;
    return rel % 8 == 0 && rel / 8 < TRACECTL_SYSCALL_MAX_ARGS;
}

bool isStringArgument(const FormatField& f) {
    return isArgumentSlot(f) && isCharPointer(f.type) && namesAString(f.name);
}

} // namespace

bool isUserStringArgument(const EventFormat& format, const FormatField& field) {
    return isStringArgument(field) && isSysEnter(format);
}

std::uint64_t userStringArgumentMask(const EventFormat& format) {
    if (!isSysEnter(format))
        return 0;
    std::uint64_t mask = 0;
    for (const FormatField& f : format.fields)
        if (isStringArgument(f))
            mask |= std::uint64_t{1} << ((f.offset - TRACECTL_SYSCALL_ARGS_OFFSET) / 8);
    return mask;
}

} // namespace tracectl::kernel
