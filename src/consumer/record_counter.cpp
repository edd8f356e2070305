#include "record_counter.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace tracectl::consumer {

namespace {

using record_layout::Op;
using record_layout::OpKind;
using record_layout::Program;

constexpr std::uint32_t kExtendedId = 65535;

inline std::uint64_t alignUp(std::uint64_t pos, std::uint32_t a) noexcept {
    return (pos + a - 1) & ~std::uint64_t{a - 1};
}

// Reads `bits` (1..64) bits at bit `pos` as CTF does: little-endian fields
// start at the least significant bit of their first byte, big-endian ones
// at the most significant. The caller checked pos + bits <= the limit.
inline std::uint64_t readBits(const unsigned char* data, std::uint64_t pos, std::uint64_t bits,
                              bool bigEndian) noexcept {
    std::uint64_t v = 0;
    if ((pos & 7) == 0) {
        // The usual case, whole bytes of a C integer type: one load (the
        // sequence lengths and variant tags of every record go through here).
        const unsigned char* p = data + pos / 8;
        const bool swap = bigEndian != (std::endian::native == std::endian::big);
        switch (bits) {
        case 8:
            return p[0];
        case 16: {
            std::uint16_t x;
            std::memcpy(&x, p, sizeof x);
            return swap ? __builtin_bswap16(x) : x;
        }
        case 32: {
            std::uint32_t x;
            std::memcpy(&x, p, sizeof x);
            return swap ? __builtin_bswap32(x) : x;
        }
        case 64: {
            std::uint64_t x;
            std::memcpy(&x, p, sizeof x);
            return swap ? __builtin_bswap64(x) : x;
        }
        default:
            break;
        }
    }
    if ((pos & 7) == 0 && (bits & 7) == 0) {
        const unsigned char* p = data + pos / 8;
        const unsigned n = static_cast<unsigned>(bits / 8);
        if (bigEndian) {
            for (unsigned i = 0; i < n; ++i)
                v = (v << 8) | p[i];
        } else {
            for (unsigned i = n; i-- > 0;)
                v = (v << 8) | p[i];
        }
        return v;
    }
    for (std::uint64_t i = 0; i < bits; ++i) {
        const std::uint64_t b = pos + i;
        if (bigEndian) {
            v = (v << 1) | ((data[b / 8] >> (7 - (b % 8))) & 1u);
        } else {
            v |= std::uint64_t{(data[b / 8] >> (b % 8)) & 1u} << i;
        }
    }
    return v;
}

inline std::uint64_t signExtend(std::uint64_t v, std::uint64_t bits) noexcept {
    if (bits >= 64)
        return v;
    const std::uint64_t m = std::uint64_t{1} << (bits - 1);
    v &= (m << 1) - 1;
    return (v ^ m) - m;
}

// One walk over one packet's bytes, up to `limit` bits.
class Walker {
public:
    Walker(const unsigned char* data, std::uint64_t limit, bool bigEndian, std::uint64_t* regs)
        : data_(data), limit_(limit), bigEndian_(bigEndian), regs_(regs) {}

    // Steps over `p` from `pos`; false (why() set) if the bytes do not fit.
    bool run(const Program& p, std::uint64_t& pos) {
        const std::uint64_t end = body(p, 0, p.ops.size(), pos);
        if (end == kFailed)
            return false;
        pos = end;
        return true;
    }
    const char* why() const noexcept { return why_; }

private:
    static constexpr std::uint64_t kFailed = ~std::uint64_t{0};

    std::uint64_t fail(const char* why) {
        why_ = why;
        return kFailed;
    }

    // Steps over ops [i, end) from `pos`: the position after them, or
    // kFailed. Positions and the limit are locals, so that the register
    // stores (uint64_t too) cannot be taken to change them.
    std::uint64_t body(const Program& p, std::size_t i, std::size_t end, std::uint64_t pos) {
        const Op* ops = p.ops.data();
        const std::uint64_t limit = limit_;
        while (i < end) {
            const Op& op = ops[i];
            switch (op.kind) {
            case OpKind::Skip:
                pos = alignUp(pos, op.alignment) + op.bits;
                if (pos > limit)
                    return fail("field past content_size");
                ++i;
                break;
            case OpKind::Integer: {
                pos = alignUp(pos, op.alignment);
                if (pos > limit || op.bits > limit - pos)
                    return fail("integer past content_size");
                const bool big = bigEndian_ != ((op.flags & record_layout::kReverse) != 0);
                std::uint64_t v = readBits(data_, pos, op.bits, big);
                if ((op.flags & record_layout::kSigned) != 0)
                    v = signExtend(v, op.bits);
                regs_[op.reg] = v;
                pos += op.bits;
                ++i;
                break;
            }
            case OpKind::String: {
                pos = alignUp(pos, 8);
                const std::uint64_t first = pos / 8;
                const std::uint64_t endByte = limit / 8;
                if (first >= endByte)
                    return fail("string past content_size");
                // Most strings are short: look at a few bytes before memchr.
                const std::uint64_t quick = std::min<std::uint64_t>(endByte - first, 16);
                std::uint64_t at = first;
                while (at < first + quick && data_[at] != 0)
                    ++at;
                if (at == first + quick) {
                    const void* nul = std::memchr(data_ + at, 0, endByte - at);
                    if (nul == nullptr)
                        return fail("string without its NUL byte before content_size");
                    at = static_cast<std::uint64_t>(static_cast<const unsigned char*>(nul) - data_);
                }
                pos = (at + 1) * 8;
                ++i;
                break;
            }
            case OpKind::Sequence: {
                pos = alignUp(pos, op.alignment);
                if (pos > limit)
                    return fail("sequence past content_size");
                const std::uint64_t count = regs_[op.reg];
                if (count != 0) {
                    const std::uint64_t stride = alignUp(op.bits, op.alignment);
                    const std::uint64_t room = limit - pos;
                    // No division on this path (it ran for every record):
                    // (count - 1) * stride, checked for overflow.
                    std::uint64_t span = 0;
                    if (op.bits > room || __builtin_mul_overflow(count - 1, stride, &span) ||
                        span > room - op.bits)
                        return fail("sequence length past content_size");
                    pos += span + op.bits;
                }
                ++i;
                break;
            }
            case OpKind::Variant: {
                const std::uint64_t tag = regs_[op.reg];
                const bool isSigned = (op.flags & record_layout::kSigned) != 0;
                const auto* r = p.ranges.data() + op.rangeBegin();
                const auto* rEnd = r + op.rangeCount();
                for (; r != rEnd; ++r) {
                    const bool in =
                        isSigned
                            ? static_cast<std::int64_t>(tag) >= static_cast<std::int64_t>(r->lo) &&
                                  static_cast<std::int64_t>(tag) <= static_cast<std::int64_t>(r->hi)
                            : tag >= r->lo && tag <= r->hi;
                    if (in)
                        break;
                }
                if (r == rEnd)
                    return fail("variant tag selects no choice");
                const Op& choice = ops[i + 1 + r->choice];
                pos = body(p, static_cast<std::size_t>(choice.bits),
                           static_cast<std::size_t>(choice.bits) + choice.alignment, pos);
                if (pos == kFailed)
                    return kFailed;
                const Op& last = ops[i + op.alignment];
                i = static_cast<std::size_t>(last.bits) + last.alignment;
                break;
            }
            case OpKind::Choice:
                return fail("choice outside a variant"); // validate() refuses it
            }
        }
        return pos;
    }

    const unsigned char* data_;
    std::uint64_t limit_;
    bool bigEndian_;
    std::uint64_t* regs_;
    const char* why_ = "";
};

} // namespace

void RecordCounter::declare(const record_layout::ChannelLayouts& layouts) {
    // Check everything first: a refused call changes nothing.
    if (layouts.context) {
        record_layout::validate(*layouts.context);
        if (context_ && *context_ != *layouts.context)
            throw record_layout::LayoutError("record layout: channel context declared twice, "
                                             "differently");
    }
    std::uint32_t maxId = 0;
    for (const auto& [id, program] : layouts.events) {
        if (id >= kMaxEventIds)
            throw record_layout::LayoutError("record layout: event id " + std::to_string(id) +
                                             " past the limit");
        record_layout::validate(program);
        if (knows(id) && programs_[id] != program)
            throw record_layout::LayoutError("record layout: event " + std::to_string(id) +
                                             " declared twice, differently");
        maxId = std::max(maxId, id + 1);
    }
    if (maxId > steps_.size()) {
        programs_.resize(maxId);
        steps_.resize(maxId);
    }
    if (layouts.context && !context_) {
        context_ = *layouts.context;
        contextStep_ = stepFor(*context_);
        registers_ = std::max(registers_, context_->registers);
    }
    for (const auto& [id, program] : layouts.events) {
        if (!knows(id)) {
            programs_[id] = program;
            steps_[id] = stepFor(program);
            registers_ = std::max(registers_, program.registers);
        }
    }
}

RecordCounter::Step RecordCounter::stepFor(const record_layout::Program& p) noexcept {
    if (p.ops.empty())
        return Step{Step::Fixed, 1, 0};
    if (p.ops.size() == 1 && p.ops[0].kind == OpKind::Skip)
        return Step{Step::Fixed, p.ops[0].alignment, p.ops[0].bits};
    return Step{Step::Walk, 1, 0};
}

std::optional<std::uint64_t>
RecordCounter::contentSize(std::span<const std::byte> packet) const noexcept {
    if (packet.size() < format_.contentSizeBit / 8 + 8)
        return std::nullopt;
    return readBits(reinterpret_cast<const unsigned char*>(packet.data()), format_.contentSizeBit,
                    64, format_.abi.bigEndian);
}

CountResult RecordCounter::count(std::span<const std::byte> packet, std::uint64_t fromBit,
                                 std::uint64_t contentSizeBits) const {
    CountResult result;
    const std::uint64_t first = fromBit == 0 ? format_.firstRecordBit : fromBit;
    result.stopBit = first;
    const auto malformed = [&result](std::uint64_t at, const char* why) {
        result.stop = CountResult::Stop::Malformed;
        result.stopBit = at;
        result.why = why;
        return result;
    };
    if (packet.size() > (std::uint64_t{1} << 60) / 8 || contentSizeBits > packet.size() * 8)
        return malformed(first, "content_size past the end of the packet");
    if (contentSizeBits < format_.firstRecordBit)
        return malformed(first, "content_size before the end of the packet context");
    if (first > contentSizeBits)
        return malformed(first, "start past content_size");
    if (first < format_.firstRecordBit)
        return malformed(first, "start inside the packet header or context");

    std::array<std::uint64_t, record_layout::kMaxRegisters> regs;
    std::fill_n(regs.begin(), registers_, 0);
    const auto* data = reinterpret_cast<const unsigned char*>(packet.data());
    const std::uint64_t limit = contentSizeBits;
    const record_layout::Abi& abi = format_.abi;
    const bool big = abi.bigEndian;
    const std::uint32_t extendedAlign = std::max(abi.uint32Alignment, abi.uint64Alignment);
    Walker walker(data, limit, big, regs.data());

    // Locals only in the loop: nothing it writes can alias what it reads.
    const Step* const steps = steps_.data();
    const std::size_t stepCount = steps_.size();
    const Step context = contextStep_;
    const std::uint32_t a16 = abi.uint16Alignment;
    const std::uint32_t a32 = abi.uint32Alignment;
    const std::uint32_t a64 = abi.uint64Alignment;
    std::uint64_t records = 0;
    std::uint64_t start = first;
    std::uint64_t pos = first;
    const char* fault = nullptr;
    bool unknown = false;
    while (pos < limit) {
        start = pos;
        // struct event_header_large
        pos = alignUp(pos, a16);
        if (pos > limit || limit - pos < 16) {
            fault = "event header past content_size";
            break;
        }
        std::uint32_t id = static_cast<std::uint32_t>(readBits(data, pos, 16, big));
        pos += 16;
        if (id == kExtendedId) {
            pos = alignUp(pos, extendedAlign);
            if (pos > limit || limit - pos < 32) {
                fault = "extended event header past content_size";
                break;
            }
            id = static_cast<std::uint32_t>(readBits(data, pos, 32, big));
            pos = alignUp(pos + 32, a64) + 64;
        } else {
            pos = alignUp(pos, a32) + 32;
        }
        if (pos > limit) {
            fault = "event header past content_size";
            break;
        }
        if (context.kind == Step::Unknown || id >= stepCount || steps[id].kind == Step::Unknown) {
            unknown = true;
            break;
        }
        if (context.kind == Step::Fixed) {
            pos = alignUp(pos, context.alignment) + context.bits;
        } else if (!walker.run(*context_, pos)) {
            fault = walker.why();
            break;
        }
        const Step step = steps[id];
        if (step.kind == Step::Fixed) {
            pos = alignUp(pos, step.alignment) + step.bits;
            if (pos > limit) {
                fault = "field past content_size";
                break;
            }
        } else if (!walker.run(programs_[id], pos)) {
            fault = walker.why();
            break;
        }
        ++records;
    }
    result.records = records;
    if (fault != nullptr)
        return malformed(start, fault);
    if (unknown) {
        result.stop = CountResult::Stop::UnknownEvent;
        result.stopBit = start;
        return result;
    }
    result.stop = CountResult::Stop::End;
    result.stopBit = limit;
    return result;
}

} // namespace tracectl::consumer
