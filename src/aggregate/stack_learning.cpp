#include "aggregate/stack_learning.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tracectl::aggregate {

namespace {

constexpr std::string_view kKernelSymbolEvent = "tracectl_kernel_symbol";
constexpr std::string_view kVmMapEvent = "tracectl_vm_map";
constexpr std::string_view kThreadEvent = "tracectl_thread";

/// Member `name` of `payload` (babeltrace2 drops the fields' leading '_' of CTF 1.8).
const bt_field* member(const bt_field* payload, const char* name) {
    return bt_field_structure_borrow_member_field_by_name_const(payload, name);
}

std::optional<std::uint64_t> unsignedOf(const bt_field* payload, const char* name) {
    const bt_field* f = member(payload, name);
    if (f == nullptr ||
        !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
        return std::nullopt;
    }
    return bt_field_integer_unsigned_get_value(f);
}

std::optional<std::int64_t> signedOf(const bt_field* payload, const char* name) {
    const bt_field* f = member(payload, name);
    if (f == nullptr ||
        !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
        return std::nullopt;
    }
    return bt_field_integer_signed_get_value(f);
}

std::optional<std::string> stringOf(const bt_field* payload, const char* name) {
    const bt_field* f = member(payload, name);
    if (f == nullptr || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING) {
        return std::nullopt;
    }
    return std::string(bt_field_string_get_value(f), bt_field_string_get_length(f));
}

} // namespace

bool tellsStackNames(std::string_view name) noexcept {
    return name == kKernelSymbolEvent || name == kVmMapEvent || name == kThreadEvent;
}

void learnStackNames(const bt_event* event, symbols::StackNames& names) {
    const bt_field* payload = bt_event_borrow_payload_field_const(event);
    if (payload == nullptr) {
        return;
    }
    const std::string_view name = bt_event_class_get_name(bt_event_borrow_class_const(event));
    if (name == kKernelSymbolEvent) {
        const auto address = unsignedOf(payload, "address");
        const auto end = unsignedOf(payload, "end");
        auto symbol = stringOf(payload, "name");
        auto module = stringOf(payload, "module");
        if (address && end && symbol && module) {
            names.learnKernelSymbol(*address, *end, std::move(*symbol), std::move(*module));
        }
        return;
    }
    if (name == kThreadEvent) {
        const auto tid = signedOf(payload, "tid");
        const auto pid = signedOf(payload, "pid");
        if (tid && pid) {
            names.learnThread(static_cast<std::int32_t>(*tid), static_cast<std::int32_t>(*pid));
        }
        return;
    }
    const auto start = unsignedOf(payload, "start");
    const auto end = unsignedOf(payload, "end");
    const auto pgoff = unsignedOf(payload, "pgoff");
    const auto pid = signedOf(payload, "pid");
    auto path = stringOf(payload, "path");
    if (start && end && pgoff && pid && path) {
        names.learnMapping(static_cast<std::int32_t>(*pid), *start, *end, *pgoff, std::move(*path));
    }
}

} // namespace tracectl::aggregate
