#include "clock_source.hpp"

#include <ctime>
#include <fstream>
#include <limits>
#include <string>

namespace tracectl::metadata {

namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;
constexpr int kOffsetSamples = 10;

bool readNs(clockid_t clock, std::int64_t& ns) noexcept {
    timespec ts{};
    if (clock_gettime(clock, &ts) != 0)
        return false;
    ns = static_cast<std::int64_t>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec;
    return true;
}

int hexValue(char c) noexcept {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

std::int64_t measureClockOffset() noexcept {
    std::int64_t best = 0;
    std::int64_t bestDelta = std::numeric_limits<std::int64_t>::max();
    for (int i = 0; i < kOffsetSamples; ++i) {
        std::int64_t mono0 = 0;
        std::int64_t real = 0;
        std::int64_t mono1 = 0;
        if (!readNs(CLOCK_MONOTONIC, mono0) || !readNs(CLOCK_REALTIME, real) ||
            !readNs(CLOCK_MONOTONIC, mono1))
            return 0;
        const std::int64_t delta = mono1 - mono0;
        if (delta < bestDelta) {
            bestDelta = delta;
            best = real - (mono0 + delta / 2);
        }
    }
    return best;
}

std::optional<Uuid> parseUuid(std::string_view text) noexcept {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t'))
        text.remove_suffix(1);
    if (text.size() != 36)
        return std::nullopt;
    Uuid uuid{};
    std::size_t byte = 0;
    for (std::size_t i = 0; i < text.size();) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-')
                return std::nullopt;
            ++i;
            continue;
        }
        const int hi = hexValue(text[i]);
        const int lo = hexValue(text[i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        uuid[byte++] = static_cast<std::uint8_t>(hi * 16 + lo);
        i += 2;
    }
    return uuid;
}

std::optional<Uuid> readBootId() {
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string line;
    if (!std::getline(in, line))
        return std::nullopt;
    return parseUuid(line);
}

ClockInfo defaultClock() {
    ClockInfo clock;
    clock.uuid = readBootId();
    clock.offset = measureClockOffset();
    return clock;
}

} // namespace tracectl::metadata
