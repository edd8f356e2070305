// Session.SetRotationSchedule's options: types, bounds, unknown keys.
#include "common/error.hpp"
#include "objects/rotation_schedule_options.hpp"

#include <gtest/gtest.h>

namespace tracectl {
namespace {

using Options = std::map<std::string, sdbus::Variant>;

ErrorCode codeOf(const Options& o) {
    try {
        readRotationSchedule(o);
    } catch (const Error& e) {
        return e.code();
    }
    ADD_FAILURE() << "accepted";
    return ErrorCode::Failed;
}

TEST(RotationScheduleOptions, EmptyClearsTheSchedule) {
    const RotationSchedule s = readRotationSchedule({});
    EXPECT_EQ(s.timerUs, 0u);
    EXPECT_EQ(s.sizeBytes, 0u);
    EXPECT_FALSE(s.any());
}

TEST(RotationScheduleOptions, TimerAndSizeAreRead) {
    const RotationSchedule s =
        readRotationSchedule({{"timer-us", sdbus::Variant(uint64_t{2'000'000})},
                              {"size-bytes", sdbus::Variant(uint64_t{1 << 20})}});
    EXPECT_EQ(s.timerUs, 2'000'000u);
    EXPECT_EQ(s.sizeBytes, 1u << 20);
}

TEST(RotationScheduleOptions, TimerBoundsAreInclusive) {
    EXPECT_EQ(readRotationSchedule({{"timer-us", sdbus::Variant(kMinRotationTimerUs)}}).timerUs,
              kMinRotationTimerUs);
    EXPECT_EQ(readRotationSchedule({{"timer-us", sdbus::Variant(kMaxRotationTimerUs)}}).timerUs,
              kMaxRotationTimerUs);
    EXPECT_EQ(codeOf({{"timer-us", sdbus::Variant(kMinRotationTimerUs - 1)}}),
              ErrorCode::InvalidArgument);
}

// A period that overflowed the steady clock's nanoseconds was accepted and
// never fired (undefined behaviour in the schedule's arithmetic).
TEST(RotationScheduleOptions, TimersBeyondTheMaximumAreRefused) {
    EXPECT_EQ(codeOf({{"timer-us", sdbus::Variant(kMaxRotationTimerUs + 1)}}),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf({{"timer-us", sdbus::Variant(UINT64_MAX)}}), ErrorCode::InvalidArgument);
}

TEST(RotationScheduleOptions, WrongTypesAndUnknownKeysAreRefused) {
    EXPECT_EQ(codeOf({{"timer-us", sdbus::Variant(uint32_t{20000})}}), ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf({{"size-bytes", sdbus::Variant(std::string("1M"))}}),
              ErrorCode::InvalidArgument);
    EXPECT_EQ(codeOf({{"every", sdbus::Variant(uint64_t{1})}}), ErrorCode::InvalidArgument);
}

} // namespace
} // namespace tracectl
