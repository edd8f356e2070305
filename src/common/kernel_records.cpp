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

bool takesFourBytes(StepKind k) noexcept {
    return k != StepKind::Copy && k != StepKind::RwbsFlags;
}

Step decodeStep(Reader& r, std::size_t conversion, std::size_t index) {
    const std::string where =
        "conversion " + std::to_string(conversion) + " step " + std::to_string(index) + ": ";
    Step s;
    const std::uint8_t kind = r.u8();
    if (kind > static_cast<std::uint8_t>(kLastStepKind) &&
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
    } else if (takesFourBytes(s.kind) && s.size != 4) {
        refuse(where + "a location, prio or tid is 4 bytes, not " + std::to_string(s.size));
    }
    const bool lttngValue = s.kind >= StepKind::RwbsFlags && s.kind <= StepKind::Vtids;
    if (s.kind == StepKind::DataLocFixedText ? (s.elementSize == 0 || s.elementSize > kMaxFixedText)
        : lttngValue                         ? s.elementSize != 1
                                             : !validElementSize(s.elementSize))
        refuse(where + "element size " + std::to_string(s.elementSize));
    if (static_cast<std::uint32_t>(s.offset) + s.size > 65535)
        refuse(where + "reaches past byte 65535");
    return s;
}

// The bytes each of a role's offsets reads (0: unused).
std::array<std::uint16_t, 4> taskFieldSizes(TaskRole role) noexcept {
    switch (role) {
    case TaskRole::SchedSwitch:
        return {4, 4, 16, 4};
    case TaskRole::ProcessExec:
        return {4, 4, 0, 0};
    case TaskRole::TaskRename:
        return {4, 16, 0, 0};
    case TaskRole::None:
        break;
    }
    return {0, 0, 0, 0};
}

TaskFields decodeTask(Reader& r, std::uint16_t minSize, std::size_t conversion) {
    const std::string where = "conversion " + std::to_string(conversion) + ": ";
    TaskFields t;
    const std::uint8_t role = r.u8();
    if (role > static_cast<std::uint8_t>(TaskRole::TaskRename))
        refuse(where + "unknown task role " + std::to_string(role));
    t.role = static_cast<TaskRole>(role);
    if (t.role == TaskRole::None)
        return t;
    const std::array<std::uint16_t, 4> sizes = taskFieldSizes(t.role);
    for (std::size_t i = 0; i < t.at.size(); ++i) {
        t.at[i] = r.u16();
        // Records shorter than minSize are never read: within it, every
        // task field is in the record.
        if (sizes[i] != 0 && std::uint32_t{t.at[i]} + sizes[i] > minSize)
            refuse(where + "task field " + std::to_string(i) + " reaches past the record's " +
                   std::to_string(minSize) + " bytes");
    }
    return t;
}

} // namespace

std::uint32_t rwbsFlags(std::string_view text) noexcept {
    if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
        text = text.substr(0, nul);
    std::uint32_t flags = 0;
    std::size_t i = 0;
    const auto isOperation = [](char c) {
        return c == 'W' || c == 'D' || c == 'F' || c == 'R' || c == 'N' || c == 'Z';
    };
    // blk_fill_rwbs writes exactly one operation: an 'F' followed by
    // another operation letter is REQ_PREFLUSH (a flush request is "FF").
    if (text.size() >= 2 && text[0] == 'F' && isOperation(text[1])) {
        flags |= RwbsPreflush;
        i = 1;
    }
    if (i < text.size()) {
        switch (text[i++]) {
        case 'W':
            if (i < text.size() && text[i] == 'Z') // write zeroes: no lttng bit
                ++i;
            else
                flags |= RwbsWrite;
            break;
        case 'D':
            flags |= RwbsDiscard;
            if (i < text.size() && text[i] == 'E') {
                flags |= RwbsSecure;
                ++i;
            }
            break;
        case 'F':
            flags |= RwbsFlush;
            break;
        case 'R':
            flags |= RwbsRead;
            break;
        case 'Z': // zone operations ("ZA", "ZR", "ZRA", "ZF", "ZO", "ZC")
            if (i < text.size())
                ++i;
            if (i < text.size() && text[i - 1] == 'R' && text[i] == 'A')
                ++i;
            break;
        default: // 'N' and unknown operations: no bit
            break;
        }
    }
    for (; i < text.size(); ++i) {
        switch (text[i]) {
        case 'F':
            flags |= RwbsFua;
            break;
        case 'A':
            flags |= RwbsRahead;
            break;
        case 'S':
            flags |= RwbsSync;
            break;
        case 'M':
            flags |= RwbsMeta;
            break;
        default: // 'U'/'a' (REQ_ATOMIC) has no lttng-modules bit
            break;
        }
    }
    return flags;
}

std::string encode(const std::vector<EventConversion>& conversions) {
    std::string out;
    std::size_t bytes = 4;
    for (const EventConversion& c : conversions)
        bytes += kConversionHeaderBytes + kStepBytes * c.steps.size() + 1 + 2 * c.task.at.size();
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
        out.push_back(static_cast<char>(c.task.role));
        if (c.task.role != TaskRole::None)
            for (const std::uint16_t at : c.task.at)
                putU16(out, at);
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
        c.task = decodeTask(r, c.minSize, i);
        out.push_back(std::move(c));
    }
    if (r.remaining() != 0)
        refuse(std::to_string(r.remaining()) + " trailing bytes");
    return out;
}

} // namespace tracectl::kernel_records
