// ftrace `format` files and header_page, parsed (src/daemon/kernel/format_file.hpp),
// against the real files of tests/unit/data/kernel and against garbage.
#include "kernel_fixtures.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace tracectl::kernel;

namespace {

FormatField field(std::string type, std::string name, std::uint32_t offset, std::uint32_t size,
                  bool isSigned) {
    FormatField f;
    f.elementType = type;
    f.type = std::move(type);
    f.name = std::move(name);
    f.offset = offset;
    f.size = size;
    f.isSigned = isSigned;
    return f;
}

FormatField array(std::string type, std::string name, std::uint32_t offset, std::uint32_t size,
                  bool isSigned, std::uint32_t length) {
    FormatField f = field(std::move(type), std::move(name), offset, size, isSigned);
    f.isArray = true;
    f.arrayLength = length;
    return f;
}

FormatField loc(bool rel, std::string type, std::string element, std::string name,
                std::uint32_t offset) {
    FormatField f = field(std::move(type), std::move(name), offset, 4, false);
    f.elementType = std::move(element);
    (rel ? f.isRelLoc : f.isDataLoc) = true;
    return f;
}

std::vector<FormatField> common() {
    return {field("unsigned short", "common_type", 0, 2, false),
            field("unsigned char", "common_flags", 2, 1, false),
            field("unsigned char", "common_preempt_count", 3, 1, false),
            field("int", "common_pid", 4, 4, true)};
}

TEST(KernelFormatFile, SchedSwitch) {
    const EventFormat f = ktest::format("sched_switch");
    EXPECT_EQ(f.name, "sched_switch");
    EXPECT_EQ(f.id, 372);
    std::vector<FormatField> want = common();
    want.push_back(array("char", "prev_comm", 8, 16, false, 16));
    want.push_back(field("pid_t", "prev_pid", 24, 4, true));
    want.push_back(field("int", "prev_prio", 28, 4, true));
    want.push_back(field("long", "prev_state", 32, 8, true));
    want.push_back(array("char", "next_comm", 40, 16, false, 16));
    want.push_back(field("pid_t", "next_pid", 56, 4, true));
    want.push_back(field("int", "next_prio", 60, 4, true));
    EXPECT_EQ(f.fields, want);
    EXPECT_TRUE(f.fields[0].isCommon());
    EXPECT_FALSE(f.fields[4].isCommon());
}

TEST(KernelFormatFile, DataLocString) {
    const EventFormat f = ktest::format("sched_process_exec");
    ASSERT_EQ(f.fields.size(), 7u);
    EXPECT_EQ(f.fields[4], loc(false, "__data_loc char[]", "char", "filename", 8));
    EXPECT_EQ(f.fields[5], field("pid_t", "pid", 12, 4, true));
    EXPECT_EQ(f.fields[6], field("pid_t", "old_pid", 16, 4, true));
}

TEST(KernelFormatFile, DataLocArraysAndBool) {
    const EventFormat f = ktest::format("dma_map_sg");
    ASSERT_EQ(f.fields.size(), 13u);
    EXPECT_EQ(f.fields[7], field("bool", "truncated", 20, 1, false));
    EXPECT_EQ(f.fields[8], loc(false, "__data_loc u64[]", "u64", "phys_addrs", 24));
    EXPECT_EQ(f.fields[10], loc(false, "__data_loc unsigned int[]", "unsigned int", "lengths", 32));
    EXPECT_EQ(f.fields[11], field("enum dma_data_direction", "dir", 36, 4, false));
}

TEST(KernelFormatFile, DataLocWithoutBrackets) {
    const EventFormat f = ktest::format("ipi_send_cpumask");
    EXPECT_EQ(f.fields[4], loc(false, "__data_loc cpumask_t", "cpumask_t", "cpumask", 8));
    EXPECT_EQ(f.fields[5], field("void *", "callsite", 16, 8, false));
}

TEST(KernelFormatFile, RelLoc) {
    const EventFormat f = ktest::format("foo_rel_loc");
    EXPECT_EQ(f.fields[4], loc(true, "__rel_loc char[]", "char", "foo", 8));
    EXPECT_EQ(f.fields[6], loc(true, "__rel_loc unsigned long[]", "unsigned long", "bitmask", 16));
    EXPECT_EQ(f.fields[7], loc(true, "__rel_loc cpumask_t", "cpumask_t", "cpumask", 20));
}

TEST(KernelFormatFile, EveryFixtureParses) {
    for (const char* name : {"sched_process_fork", "sys_enter_write", "sys_exit_write",
                             "sys_enter_openat", "net_dev_xmit", "netif_receive_skb",
                             "irq_handler_entry", "block_rq_issue", "sys_enter"}) {
        SCOPED_TRACE(name);
        const EventFormat f = ktest::format(name);
        EXPECT_EQ(f.name, name);
        EXPECT_GE(f.fields.size(), 5u);
    }
    const EventFormat raw = ktest::format("sys_enter");
    EXPECT_EQ(raw.fields[5], array("unsigned long", "args", 16, 48, false, 6));
    // 8-byte `int` fields: the size is what counts.
    EXPECT_EQ(ktest::format("sys_enter_openat").fields[5], field("int", "dfd", 16, 8, false));
}

TEST(KernelFormatFile, HeaderPage) {
    const PageFormat p = parseHeaderPage(ktest::fixture("header_page"));
    EXPECT_EQ(p.timestampOffset, 0u);
    EXPECT_EQ(p.timestampSize, 8u);
    EXPECT_EQ(p.commitOffset, 8u);
    EXPECT_EQ(p.commitSize, 8u);
    EXPECT_EQ(p.dataOffset, 16u);
    EXPECT_EQ(p.dataSize, 4080u);
    EXPECT_EQ(p.pageSize, 4096u);
    EXPECT_THROW(parseHeaderPage("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"),
                 FormatError);
}

TEST(KernelFormatFile, FieldLineForms) {
    EXPECT_EQ(parseFieldLine("\tfield:char name[0];\toffset:8;\tsize:0;\tsigned:0;").arrayLength,
              0u);
    const FormatField n =
        parseFieldLine("\tfield:u8 mac[ETH_ALEN];\toffset:8;\tsize:6;\tsigned:0;");
    EXPECT_TRUE(n.isArray);
    EXPECT_FALSE(n.arrayLength);
    EXPECT_EQ(n.name, "mac");
    EXPECT_EQ(n.elementType, "u8");
    // signed: is optional (old kernels).
    EXPECT_FALSE(parseFieldLine("field:int x;\toffset:8;\tsize:4;").isSigned);
}

struct Bad {
    const char* text;
    std::size_t line;
};

TEST(KernelFormatFile, GarbageThrowsWithTheLine) {
    const std::string head = "name: e\nID: 7\nformat:\n";
    const Bad cases[] = {
        {"", 0},
        {"ID: 3\n", 1},
        {"name: e\nformat:\n", 2},
        {"name: e\nID: 0\nformat:\n", 2},
        {"name: e\nID: 70000\nformat:\n", 2},
        {"name: e\nID: x\nformat:\n", 2},
        {"name: bad name\nID: 1\nformat:\n", 1},
        {"name: e\nID: 7\nformat:\nprint fmt: \"\"\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:8;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:8;\tsize:y;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:65535;\tsize:4;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int;\toffset:8;\tsize:4;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:x;\toffset:8;\tsize:4;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:8;\tsize:4;\tsigned:2;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:8;\tsize:4;\tcolour:2;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:8;\tsize:4;\toffset:8;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x;\toffset:8;\tsize:4;\n"
         "\tfield:int x;\toffset:12;\tsize:4;\n",
         5},
        {"name: e\nID: 7\nformat:\n\tfield:__data_loc char[] s;\toffset:8;\tsize:8;\n", 4},
        {"name: e\nID: 7\nformat:\n\tfield:int x];\toffset:8;\tsize:4;\n", 4},
        {"name: e\nID: 7\nformat:\nfoo\n", 4},
    };
    for (const Bad& b : cases) {
        SCOPED_TRACE(b.text);
        try {
            parseFormat(b.text);
            ADD_FAILURE() << "accepted";
        } catch (const FormatError& e) {
            if (b.line != 0) {
                EXPECT_EQ(e.line(), b.line) << e.what();
            }
            EXPECT_NE(std::string(e.what()).find("format line"), std::string::npos);
        }
    }
}

TEST(KernelFormatFile, RandomBytesNeverCrash) {
    const std::string base = ktest::fixture("sched_switch.format");
    std::mt19937 rng(42);
    for (int i = 0; i < 3000; ++i) {
        std::string s = base;
        const int edits = 1 + static_cast<int>(rng() % 8);
        for (int k = 0; k < edits; ++k) {
            const std::size_t at = rng() % s.size();
            switch (rng() % 3) {
            case 0:
                s[at] = static_cast<char>(rng() % 256);
                break;
            case 1:
                s.erase(at, 1 + rng() % 10);
                break;
            default:
                s.insert(at, 1, static_cast<char>(rng() % 256));
            }
            if (s.empty())
                s = "x";
        }
        try {
            const EventFormat f = parseFormat(s);
            for (const FormatField& ff : f.fields)
                EXPECT_LE(ff.offset + ff.size, 65535u);
        } catch (const FormatError&) {
        }
    }
}

} // namespace
