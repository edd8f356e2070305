#include "kernel_records.hpp"

namespace tracectl::kernel_records {

namespace {

constexpr std::size_t kConversionHeaderBytes = 8; // ftraceId, ctfId, minSize, stepCount
constexpr std::size_t kStepBytes = 7;             // kind, offset, size, elementSize

void putU16(std::string& out, std::uint16_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>(v >> 8));
}

void putU32(std::string& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

[[noreturn]] void refuse(const std::string& why) {
    throw DecodeError("kernel conversions: " + why);
}

// Little-endian reads over `bytes`, refusing to go past its end.
class Reader {
public:
    explicit Reader(std::string_view bytes) : bytes_(bytes) {}

    std::uint8_t u8() {
        need(1);
        return static_cast<std::uint8_t>(bytes_[pos_++]);
    }
    std::uint16_t u16() {
        need(2);
        const auto lo = static_cast<std::uint8_t>(bytes_[pos_]);
        const auto hi = static_cast<std::uint8_t>(bytes_[pos_ + 1]);
        pos_ += 2;
        return static_cast<std::uint16_t>(lo | (hi << 8));
    }
    std::uint32_t u32() {
        need(4);
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i)
            v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes_[pos_ + i])) << (8 * i);
        pos_ += 4;
        return v;
    }
    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

private:
    void need(std::size_t n) const {
        if (remaining() < n)
            refuse("truncated at byte " + std::to_string(pos_));
    }

    std::string_view bytes_;
    std::size_t pos_ = 0;
};

bool validElementSize(std::uint16_t s) noexcept {
    return s == 1 || s == 2 || s == 4 || s == 8;
}

Step decodeStep(Reader& r, std::size_t conversion, std::size_t index) {
    const std::string where =
        "conversion " + std::to_string(conversion) + " step " + std::to_string(index) + ": ";
    Step s;
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(StepKind::RelLocSequence) &&
        kind != static_cast<std::uint8_t>(StepKind::UserString))
        refuse(where + "unknown kind " + std::to_string(kind));
    s.kind = static_cast<StepKind>(kind);
    s.offset = r.u16();
    s.size = r.u16();
    s.elementSize = r.u16();
    if (s.size == 0)
        refuse(where + "size 0");
    if (s.kind == StepKind::UserString) {
        if (s.size != 8)
            refuse(where + "a user string's pointer is 8 bytes, not " + std::to_string(s.size));
        if (s.offset < 16 || (s.offset - 16) % 8 != 0 || (s.offset - 16) / 8 >= 6)
            refuse(where + "a user string's pointer at " + std::to_string(s.offset) +
                   " is no system call argument");
    } else if (s.kind != StepKind::Copy && s.size != 4) {
        refuse(where + "a location is 4 bytes, not " + std::to_string(s.size));
    }
    if (!validElementSize(s.elementSize))
        refuse(where + "element size " + std::to_string(s.elementSize));
    if (static_cast<std::uint32_t>(s.offset) + s.size > 65535)
        refuse(where + "reaches past byte 65535");
    return s;
}

} // namespace

std::string encode(const std::vector<EventConversion>& conversions) {
    std::string out;
    std::size_t bytes = 4;
    for (const EventConversion& c : conversions)
        bytes += kConversionHeaderBytes + kStepBytes * c.steps.size();
    out.reserve(bytes);
    putU32(out, static_cast<std::uint32_t>(conversions.size()));
    for (const EventConversion& c : conversions) {
        putU16(out, c.ftraceId);
        putU16(out, c.ctfId);
        putU16(out, c.minSize);
        putU16(out, static_cast<std::uint16_t>(c.steps.size()));
        for (const Step& s : c.steps) {
            out.push_back(static_cast<char>(s.kind));
            putU16(out, s.offset);
            putU16(out, s.size);
            putU16(out, s.elementSize);
        }
    }
    return out;
}

std::vector<EventConversion> decode(std::string_view bytes) {
    Reader r(bytes);
    const std::uint32_t count = r.u32();
    if (count > kMaxConversions)
        refuse(std::to_string(count) + " conversions (at most " + std::to_string(kMaxConversions) +
               ")");
    // Each conversion takes at least its header: a count the bytes cannot
    // hold is refused before reserving for it.
    if (count > r.remaining() / kConversionHeaderBytes)
        refuse("truncated: " + std::to_string(count) + " conversions announced");
    std::vector<EventConversion> out;
    out.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        EventConversion c;
        c.ftraceId = r.u16();
        c.ctfId = r.u16();
        c.minSize = r.u16();
        const std::uint16_t steps = r.u16();
        if (steps > kMaxSteps)
            refuse("conversion " + std::to_string(i) + ": " + std::to_string(steps) +
                   " steps (at most " + std::to_string(kMaxSteps) + ")");
        c.steps.reserve(steps);
        for (std::uint16_t j = 0; j < steps; ++j)
            c.steps.push_back(decodeStep(r, i, j));
        out.push_back(std::move(c));
    }
    if (r.remaining() != 0)
        refuse(std::to_string(r.remaining()) + " trailing bytes");
    return out;
}

} // namespace tracectl::kernel_records
