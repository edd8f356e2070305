// Shared by the kernel CTF tests: kernel_records.hpp's steps applied to
// ftrace records, its packet layout written by hand, and babeltrace2 run
// over the result. Written from kernel_records.hpp's text, independently
// of the consumer, so that the tests check the daemon's metadata against
// the specification.
#pragma once

#include "kernel_records.hpp"
#include "metadata/trace_info.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ktest {

namespace kr = tracectl::kernel_records;

using Bytes = std::vector<std::uint8_t>;

inline void putLe(Bytes& b, std::size_t at, std::uint64_t v, std::size_t n) {
    if (b.size() < at + n)
        b.resize(at + n, 0);
    for (std::size_t i = 0; i < n; ++i)
        b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void appendLe(Bytes& b, std::uint64_t v, std::size_t n) {
    putLe(b, b.size(), v, n);
}
inline std::uint32_t getU32(const Bytes& b, std::size_t at) {
    return static_cast<std::uint32_t>(b[at]) | static_cast<std::uint32_t>(b[at + 1]) << 8 |
           static_cast<std::uint32_t>(b[at + 2]) << 16 |
           static_cast<std::uint32_t>(b[at + 3]) << 24;
}

// kernel_records.hpp's steps, applied to one record.
inline Bytes convert(const kr::EventConversion& c, const Bytes& rec) {
    EXPECT_GE(rec.size(), c.minSize);
    Bytes out;
    for (const kr::Step& s : c.steps) {
        if (s.kind == kr::StepKind::Copy) {
            out.insert(out.end(), rec.begin() + s.offset, rec.begin() + s.offset + s.size);
            continue;
        }
        // The lttng-modules conversions, as a builder without a ProcessInfo
        // writes them: a tid is its own tgid, namespace inode 0, vtids [tid].
        switch (s.kind) {
        case kr::StepKind::RwbsFlags: {
            std::string text;
            for (std::size_t i = 0; i < s.size && rec[s.offset + i] != 0; ++i)
                text += static_cast<char>(rec[s.offset + i]);
            appendLe(out, kr::rwbsFlags(text), 4);
            continue;
        }
        case kr::StepKind::PrioFromKernel:
            appendLe(
                out,
                static_cast<std::uint32_t>(static_cast<std::int32_t>(getU32(rec, s.offset)) - 100),
                4);
            continue;
        case kr::StepKind::Tgid:
            appendLe(out, getU32(rec, s.offset), 4);
            continue;
        case kr::StepKind::PidNsInum:
            appendLe(out, 0, 4);
            continue;
        case kr::StepKind::Vtids:
            out.push_back(1);
            appendLe(out, getU32(rec, s.offset), 4);
            continue;
        default:
            break;
        }
        const std::uint32_t loc = getU32(rec, s.offset);
        const bool rel =
            s.kind == kr::StepKind::RelLocString || s.kind == kr::StepKind::RelLocSequence;
        const std::size_t start = (loc & 0xFFFF) + (rel ? s.offset + 4u : 0u);
        const std::size_t length = loc >> 16;
        const bool inside = start + length <= rec.size();
        if (s.kind == kr::StepKind::DataLocFixedText) {
            std::size_t n = 0;
            for (; inside && n < length && n + 1 < s.elementSize && rec[start + n] != 0; ++n)
                out.push_back(rec[start + n]);
            out.insert(out.end(), s.elementSize - n, 0);
        } else if (s.kind == kr::StepKind::DataLocString || s.kind == kr::StepKind::RelLocString) {
            for (std::size_t i = 0; inside && i < length && rec[start + i] != 0; ++i)
                out.push_back(rec[start + i]);
            out.push_back(0);
        } else {
            const std::size_t count = inside ? length / s.elementSize : 0;
            appendLe(out, count, 4);
            out.insert(out.end(), rec.begin() + static_cast<std::ptrdiff_t>(start),
                       rec.begin() + static_cast<std::ptrdiff_t>(start + count * s.elementSize));
        }
    }
    return out;
}

struct Event {
    Event(std::uint16_t eventId, std::uint64_t at, Bytes bytes = {})
        : id(eventId), timestamp(at), payload(std::move(bytes)) {}
    std::uint16_t id;
    std::uint64_t timestamp;
    Bytes payload;
    std::int32_t tid = 42;           ///< the _tid context
    std::string procname = "worker"; ///< the _procname context
    /// When set, the whole event context instead of _tid + _procname.
    std::optional<Bytes> context;
};

// One packet of the kernel_records.hpp layout (the event contexts as the
// events give them).
inline Bytes packet(const tracectl::metadata::Uuid& uuid, std::uint32_t streamId,
                    std::uint64_t instance, std::uint32_t cpu, const std::vector<Event>& events,
                    std::uint64_t seq = 0, std::uint64_t discarded = 3) {
    Bytes b;
    appendLe(b, kr::kPacketMagic, 4);
    b.insert(b.end(), uuid.begin(), uuid.end());
    appendLe(b, streamId, 4);
    appendLe(b, instance, 8);
    appendLe(b, events.front().timestamp, 8);
    appendLe(b, events.back().timestamp, 8);
    const std::size_t sizes = b.size();
    appendLe(b, 0, 8); // content_size
    appendLe(b, 0, 8); // packet_size
    appendLe(b, seq, 8);
    appendLe(b, discarded, 8);
    appendLe(b, cpu, 4);
    EXPECT_EQ(b.size(), kr::kPacketPreambleSize);
    for (const Event& e : events) {
        appendLe(b, e.id, 2);
        appendLe(b, e.timestamp, 8);
        if (e.context) {
            b.insert(b.end(), e.context->begin(), e.context->end());
        } else {
            appendLe(b, static_cast<std::uint32_t>(e.tid), 4);
            char procname[16] = {};
            e.procname.copy(procname, sizeof procname - 1);
            b.insert(b.end(), procname, procname + 16);
        }
        b.insert(b.end(), e.payload.begin(), e.payload.end());
    }
    putLe(b, sizes, b.size() * 8, 8);
    putLe(b, sizes + 8, b.size() * 8, 8);
    return b;
}

inline std::string run(const std::string& command, int& status) {
    std::string out;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr)
        return out;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    const int st = pclose(p);
    status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

inline void writeFile(const std::filesystem::path& p, const void* data, std::size_t size) {
    std::ofstream out(p, std::ios::binary);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    ASSERT_TRUE(out.good()) << p;
}

class TempDir {
public:
    TempDir() {
        std::string t = (std::filesystem::temp_directory_path() / "kernel-bt-XXXXXX").string();
        if (::mkdtemp(t.data()) == nullptr)
            throw std::runtime_error("mkdtemp");
        path_ = t;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

} // namespace ktest
