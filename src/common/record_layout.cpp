#include "record_layout.hpp"

#include <algorithm>
#include <unordered_set>

namespace tracectl::record_layout {

namespace {

constexpr std::uint32_t kMagic = 0x59414c54; // "TLAY" little-endian
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kOpBytes = 16;
constexpr std::size_t kRangeBytes = 20;
constexpr std::size_t kProgramHeaderBytes = 10;
constexpr std::size_t kMessageHeaderBytes = 10; // magic, version, has-context, event count

[[noreturn]] void refuse(const std::string& why) {
    throw LayoutError("record layout: " + why);
}

bool validAlignment(std::uint32_t a) noexcept {
    return a >= 1 && a <= 64 && (a & (a - 1)) == 0;
}

std::string at(std::size_t i) {
    return "op " + std::to_string(i) + ": ";
}

bool rangeOrdered(const VariantRange& r, bool isSigned) noexcept {
    return isSigned ? static_cast<std::int64_t>(r.lo) <= static_cast<std::int64_t>(r.hi)
                    : r.lo <= r.hi;
}

// Checks ops[begin, end) as one body; returns nothing, throws on the first
// fault.
void validateBody(const Program& p, std::size_t begin, std::size_t end, std::size_t depth) {
    std::size_t i = begin;
    while (i < end) {
        const Op& op = p.ops[i];
        switch (op.kind) {
        case OpKind::Skip:
            if (!validAlignment(op.alignment))
                refuse(at(i) + "skip alignment " + std::to_string(op.alignment) + " invalid");
            if (op.bits > kMaxSkipBits)
                refuse(at(i) + "skip of " + std::to_string(op.bits) + " bits past the limit");
            if (op.flags != 0 || op.reg != 0)
                refuse(at(i) + "skip with flags or register");
            ++i;
            break;
        case OpKind::Integer:
            if (!validAlignment(op.alignment))
                refuse(at(i) + "integer alignment " + std::to_string(op.alignment) + " invalid");
            if (op.bits < 1 || op.bits > 64)
                refuse(at(i) + "integer size " + std::to_string(op.bits) + " invalid");
            if ((op.flags & ~(kSigned | kReverse)) != 0)
                refuse(at(i) + "integer flags invalid");
            if (op.reg >= p.registers)
                refuse(at(i) + "register " + std::to_string(op.reg) + " out of range");
            ++i;
            break;
        case OpKind::String:
            if (op.alignment != 8 || op.bits != 0 || op.flags != 0 || op.reg != 0)
                refuse(at(i) + "string op must be alignment 8 and nothing else");
            ++i;
            break;
        case OpKind::Sequence:
            if (!validAlignment(op.alignment))
                refuse(at(i) + "sequence alignment " + std::to_string(op.alignment) + " invalid");
            if (op.bits < 1 || op.bits > 64)
                refuse(at(i) + "sequence element size " + std::to_string(op.bits) + " invalid");
            if (op.flags != 0)
                refuse(at(i) + "sequence flags invalid");
            if (op.reg >= p.registers)
                refuse(at(i) + "register " + std::to_string(op.reg) + " out of range");
            ++i;
            break;
        case OpKind::Variant: {
            if (depth + 1 > kMaxNesting)
                refuse(at(i) + "variants nested past " + std::to_string(kMaxNesting));
            if ((op.flags & ~kSigned) != 0)
                refuse(at(i) + "variant flags invalid");
            if (op.reg >= p.registers)
                refuse(at(i) + "register " + std::to_string(op.reg) + " out of range");
            const std::size_t n = op.alignment;
            if (n == 0)
                refuse(at(i) + "variant without choices");
            if (n > end - i - 1)
                refuse(at(i) + "variant choices past the end of their body");
            const std::uint64_t rb = op.rangeBegin();
            const std::uint64_t rc = op.rangeCount();
            if (rb + rc > p.ranges.size())
                refuse(at(i) + "variant ranges out of range");
            const bool isSigned = (op.flags & kSigned) != 0;
            for (std::uint64_t r = rb; r < rb + rc; ++r) {
                if (p.ranges[r].choice >= n)
                    refuse(at(i) + "range " + std::to_string(r) + " selects no choice");
                if (!rangeOrdered(p.ranges[r], isSigned))
                    refuse(at(i) + "range " + std::to_string(r) + " ends before it starts");
            }
            std::uint64_t next = i + 1 + n;
            for (std::size_t k = 0; k < n; ++k) {
                const Op& c = p.ops[i + 1 + k];
                if (c.kind != OpKind::Choice || c.flags != 0 || c.reg != 0)
                    refuse(at(i + 1 + k) + "expected a variant choice");
                if (c.bits != next)
                    refuse(at(i + 1 + k) + "choice body not where the previous one ends");
                if (c.alignment > end - next)
                    refuse(at(i + 1 + k) + "choice body past the end of its variant");
                validateBody(p, next, next + c.alignment, depth + 1);
                next += c.alignment;
            }
            i = next;
            break;
        }
        case OpKind::Choice:
            refuse(at(i) + "choice outside a variant");
        default:
            refuse(at(i) + "unknown op kind " + std::to_string(static_cast<unsigned>(op.kind)));
        }
    }
}

class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}
    void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
    void u16(std::uint16_t v) { le(v, 2); }
    void u32(std::uint32_t v) { le(v, 4); }
    void u64(std::uint64_t v) { le(v, 8); }

    void program(const Program& p) {
        u16(p.registers);
        u32(static_cast<std::uint32_t>(p.ops.size()));
        u32(static_cast<std::uint32_t>(p.ranges.size()));
        for (const Op& op : p.ops) {
            u8(static_cast<std::uint8_t>(op.kind));
            u8(op.flags);
            u16(op.reg);
            u32(op.alignment);
            u64(op.bits);
        }
        for (const VariantRange& r : p.ranges) {
            u64(r.lo);
            u64(r.hi);
            u32(r.choice);
        }
    }

private:
    void le(std::uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; ++i)
            out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
    std::string& out_;
};

class Reader {
public:
    explicit Reader(std::string_view in) : in_(in) {}
    std::uint8_t u8() { return static_cast<std::uint8_t>(le(1)); }
    std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
    std::uint64_t u64() { return le(8); }
    std::size_t left() const noexcept { return in_.size() - pos_; }

    Program program() {
        Program p;
        p.registers = u16();
        const std::uint32_t ops = u32();
        const std::uint32_t ranges = u32();
        if (p.registers > kMaxRegisters)
            refuse(std::to_string(p.registers) + " registers, past the limit");
        if (ops > kMaxOps)
            refuse(std::to_string(ops) + " ops, past the limit");
        if (ranges > kMaxRanges)
            refuse(std::to_string(ranges) + " ranges, past the limit");
        if (left() < std::size_t{ops} * kOpBytes + std::size_t{ranges} * kRangeBytes)
            refuse("truncated program");
        p.ops.resize(ops);
        for (Op& op : p.ops) {
            const std::uint8_t kind = u8();
            if (kind > static_cast<std::uint8_t>(OpKind::Choice))
                refuse("unknown op kind " + std::to_string(kind));
            op.kind = static_cast<OpKind>(kind);
            op.flags = u8();
            op.reg = u16();
            op.alignment = u32();
            op.bits = u64();
        }
        p.ranges.resize(ranges);
        for (VariantRange& r : p.ranges) {
            r.lo = u64();
            r.hi = u64();
            r.choice = u32();
        }
        validate(p);
        return p;
    }

private:
    std::uint64_t le(unsigned n) {
        if (left() < n)
            refuse("truncated input");
        std::uint64_t v = 0;
        for (unsigned i = 0; i < n; ++i)
            v |= std::uint64_t{static_cast<unsigned char>(in_[pos_ + i])} << (8 * i);
        pos_ += n;
        return v;
    }
    std::string_view in_;
    std::size_t pos_ = 0;
};

std::size_t programBytes(const Program& p) {
    return kProgramHeaderBytes + p.ops.size() * kOpBytes + p.ranges.size() * kRangeBytes;
}

void checkLimits(const Program& p) {
    if (p.ops.size() > kMaxOps || p.ranges.size() > kMaxRanges || p.registers > kMaxRegisters)
        refuse("program past the limits");
    validate(p);
}

std::uint64_t alignUp(std::uint64_t pos, std::uint32_t a) noexcept {
    return (pos + a - 1) & ~std::uint64_t{a - 1};
}

} // namespace

void validate(const Program& p) {
    if (p.ops.size() > kMaxOps)
        refuse(std::to_string(p.ops.size()) + " ops, past the limit");
    if (p.ranges.size() > kMaxRanges)
        refuse(std::to_string(p.ranges.size()) + " ranges, past the limit");
    if (p.registers > kMaxRegisters)
        refuse(std::to_string(p.registers) + " registers, past the limit");
    validateBody(p, 0, p.ops.size(), 0);
}

std::string encode(const ChannelLayouts& layouts) {
    if (layouts.events.size() > kMaxEventsPerMessage)
        refuse("too many events in one message");
    std::size_t size = kMessageHeaderBytes;
    if (layouts.context) {
        checkLimits(*layouts.context);
        size += programBytes(*layouts.context);
    }
    for (const auto& [id, program] : layouts.events) {
        checkLimits(program);
        size += 4 + programBytes(program);
    }
    std::string out;
    out.reserve(size);
    Writer w(out);
    w.u32(kMagic);
    w.u8(kVersion);
    w.u8(layouts.context ? 1 : 0);
    if (layouts.context)
        w.program(*layouts.context);
    w.u32(static_cast<std::uint32_t>(layouts.events.size()));
    for (const auto& [id, program] : layouts.events) {
        w.u32(id);
        w.program(program);
    }
    return out;
}

std::vector<std::string> encodeChunks(const ChannelLayouts& layouts, std::size_t maxBytes) {
    std::vector<std::string> out;
    ChannelLayouts chunk;
    chunk.context = layouts.context;
    std::size_t size = kMessageHeaderBytes + (chunk.context ? programBytes(*chunk.context) : 0);
    if (size > maxBytes)
        refuse("context program does not fit in " + std::to_string(maxBytes) + " bytes");
    bool any = chunk.context.has_value();
    for (const auto& event : layouts.events) {
        const std::size_t bytes = 4 + programBytes(event.second);
        if (kMessageHeaderBytes + bytes > maxBytes)
            refuse("event " + std::to_string(event.first) + " program does not fit in " +
                   std::to_string(maxBytes) + " bytes");
        if (size + bytes > maxBytes || chunk.events.size() == kMaxEventsPerMessage) {
            out.push_back(encode(chunk));
            chunk = {};
            size = kMessageHeaderBytes;
        }
        chunk.events.push_back(event);
        size += bytes;
        any = true;
    }
    if (any)
        out.push_back(encode(chunk));
    return out;
}

ChannelLayouts decode(std::string_view bytes) {
    Reader r(bytes);
    if (r.u32() != kMagic)
        refuse("bad magic");
    if (const std::uint8_t v = r.u8(); v != kVersion)
        refuse("unknown version " + std::to_string(v));
    const std::uint8_t hasContext = r.u8();
    if (hasContext > 1)
        refuse("has-context byte " + std::to_string(hasContext) + " is not 0 or 1");
    ChannelLayouts out;
    if (hasContext == 1)
        out.context = r.program();
    const std::uint32_t count = r.u32();
    if (count > kMaxEventsPerMessage)
        refuse(std::to_string(count) + " events, past the limit");
    // Each event takes at least its id and an empty program.
    if (r.left() / (4 + kProgramHeaderBytes) < count)
        refuse("truncated event list");
    out.events.reserve(count);
    std::unordered_set<std::uint32_t> ids;
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t id = r.u32();
        if (!ids.insert(id).second)
            refuse("event id " + std::to_string(id) + " given twice");
        out.events.emplace_back(id, r.program());
    }
    if (r.left() != 0)
        refuse(std::to_string(r.left()) + " bytes after the last event");
    return out;
}

PacketFormat PacketFormat::fromAbi(const Abi& abi) {
    if (abi.bitsPerLong != 32 && abi.bitsPerLong != 64)
        refuse("bits per long " + std::to_string(abi.bitsPerLong) + " invalid");
    for (const std::uint32_t a : {abi.uint8Alignment, abi.uint16Alignment, abi.uint32Alignment,
                                  abi.uint64Alignment, abi.longAlignment})
        if (!validAlignment(a))
            refuse("ABI alignment " + std::to_string(a) + " invalid");
    PacketFormat f;
    f.abi = abi;
    std::uint64_t pos = 0;
    const auto field = [&pos](std::uint32_t alignment, std::uint64_t bits) {
        pos = alignUp(pos, alignment);
        const std::uint64_t start = pos;
        pos += bits;
        return start;
    };
    // trace.packet.header
    field(abi.uint32Alignment, 32); // magic
    for (int i = 0; i < 16; ++i)
        field(abi.uint8Alignment, 8); // uuid
    field(abi.uint32Alignment, 32);   // stream_id
    field(abi.uint64Alignment, 64);   // stream_instance_id
    // struct packet_context, aligned on its largest member
    pos = alignUp(pos, std::max({abi.uint64Alignment, abi.longAlignment, abi.uint32Alignment}));
    field(abi.uint64Alignment, 64); // timestamp_begin
    field(abi.uint64Alignment, 64); // timestamp_end
    f.contentSizeBit = field(abi.uint64Alignment, 64);
    f.packetSizeBit = field(abi.uint64Alignment, 64);
    field(abi.uint64Alignment, 64);            // packet_seq_num
    field(abi.longAlignment, abi.bitsPerLong); // events_discarded
    field(abi.uint32Alignment, 32);            // cpu_id
    f.firstRecordBit = pos;
    return f;
}

} // namespace tracectl::record_layout
