// LTTng filter expressions translated into tracefs' filter syntax
// (filter/ftrace_filter.hpp): what translates, exactly, and what is
// refused with the place.
#include "filter/filter_error.hpp"
#include "filter/ftrace_filter.hpp"

#include <gtest/gtest.h>

using tracectl::filter::FilterError;
using tracectl::filter::toFtraceFilter;

TEST(FtraceFilter, ComparisonsOfAFieldWithAConstant) {
    EXPECT_EQ(toFtraceFilter("prev_pid != 0"), "prev_pid != 0");
    EXPECT_EQ(toFtraceFilter("count >= 0x10"), "count >= 16");
    EXPECT_EQ(toFtraceFilter("3 < fd"), "fd > 3") << "a constant first is mirrored";
    EXPECT_EQ(toFtraceFilter("ret == -1"), "ret == -1");
    EXPECT_EQ(toFtraceFilter("len <= 0777"), "len <= 511");
}

TEST(FtraceFilter, StringsAndGlobs) {
    EXPECT_EQ(toFtraceFilter("name == \"lo\""), "name == \"lo\"");
    EXPECT_EQ(toFtraceFilter("name != \"eth0\""), "name != \"eth0\"");
    // A '*' makes it a glob, which ftrace spells `~` (== compares exactly).
    EXPECT_EQ(toFtraceFilter("name == \"eth*\""), "name ~ \"eth*\"");
    EXPECT_EQ(toFtraceFilter("name != \"*0\""), "!(name ~ \"*0\")");
}

TEST(FtraceFilter, LogicAndBitTests) {
    EXPECT_EQ(toFtraceFilter("a == 1 && (b == 2 || !(c == 3))"),
              "(a == 1) && ((b == 2) || (!(c == 3)))");
    EXPECT_EQ(toFtraceFilter("flags & 4"), "flags & 4");
    EXPECT_EQ(toFtraceFilter("(flags & 4) != 0"), "flags & 4");
    EXPECT_EQ(toFtraceFilter("(flags & 4) == 0"), "!(flags & 4)");
}

// A chain is translated in a loop (leftChain()), as the tree nests it.
TEST(FtraceFilter, AChainOfLogicalOperatorsIsNotNesting) {
    EXPECT_EQ(toFtraceFilter("a == 1 || b == 2 && c == 3 || d == 4"),
              "((a == 1) || ((b == 2) && (c == 3))) || (d == 4)");
    std::string chain = "a == 0";
    for (int i = 1; i < 1500; ++i)
        chain += " || a == " + std::to_string(i);
    const std::string ftrace = toFtraceFilter(chain);
    EXPECT_EQ(ftrace.rfind(std::string(1499, '(') + "a == 0) || (a == 1))", 0), 0u);
    const std::string last = ") || (a == 1499)";
    EXPECT_EQ(ftrace.substr(ftrace.size() - last.size()), last);
}

TEST(FtraceFilter, ContextsBecomeFtracesOwnFields) {
    EXPECT_EQ(toFtraceFilter("$ctx.tid == 42"), "common_pid == 42");
    EXPECT_EQ(toFtraceFilter("$ctx.vtid == 42"), "common_pid == 42");
    EXPECT_EQ(toFtraceFilter("$ctx.procname == \"bash*\""), "COMM ~ \"bash*\"");
    EXPECT_EQ(toFtraceFilter("$ctx.cpu_id == 1"), "CPU == 1");
}

// An event with a number field prev_pid (the trace's prev_tid) and a
// string field comm.
std::optional<tracectl::filter::FtraceField> lookup(const std::string& name) {
    if (name == "prev_tid")
        return tracectl::filter::FtraceField{"prev_pid", false};
    if (name == "next_prio")
        return tracectl::filter::FtraceField{"next_prio", false};
    if (name == "comm")
        return tracectl::filter::FtraceField{"comm", true};
    return std::nullopt;
}

TEST(FtraceFilter, FieldsAreRenamedToFtracesNames) {
    EXPECT_EQ(toFtraceFilter("prev_tid == 7 && next_prio > 100", lookup),
              "(prev_pid == 7) && (next_prio > 100)");
    EXPECT_EQ(toFtraceFilter("comm == \"a*\"", lookup), "comm ~ \"a*\"");
}

// Found by a fresh-user pass: type mismatches reached the kernel, which
// refused them only at Start; and $ctx.procname became `comm`, which in an
// event with a comm field of its own (sched_wakeup's) is that field.
TEST(FtraceFilter, TypesAreCheckedAndProcnameIsTheCurrentTask) {
    EXPECT_EQ(toFtraceFilter("$ctx.procname == \"sleep*\"", lookup), "COMM ~ \"sleep*\"");
    EXPECT_THROW(toFtraceFilter("comm == 5", lookup), FilterError);
    EXPECT_THROW(toFtraceFilter("prev_tid == \"abc\"", lookup), FilterError);
    EXPECT_THROW(toFtraceFilter("comm & 1", lookup), FilterError);
    EXPECT_THROW(toFtraceFilter("$ctx.procname == 3", lookup), FilterError);
    // A field the event lacks: NoSuchField (the rule then skips the event).
    EXPECT_THROW(toFtraceFilter("fd == 1", lookup), tracectl::filter::NoSuchField);
    EXPECT_NO_THROW(toFtraceFilter("fd == 1")) << "without a lookup names are taken as they are";
}

TEST(FtraceFilter, WhatFtraceCannotEvaluateIsRefusedWithThePlace) {
    const auto column = [](const std::string& expression) -> std::size_t {
        try {
            toFtraceFilter(expression);
        } catch (const FilterError& e) {
            // LTTng's own refusals ('+', ordering strings) keep its wording.
            EXPECT_NE(std::string(e.what()).find("Invalid filter expression at column"),
                      std::string::npos)
                << expression << ": " << e.what();
            return e.column();
        }
        ADD_FAILURE() << expression << " was accepted";
        return 0;
    };
    EXPECT_EQ(column("a + 1 == 2"), 3u) << "arithmetic";
    EXPECT_EQ(column("a == b"), 3u) << "two fields";
    EXPECT_EQ(column("a == 1.5"), 6u) << "floating point";
    EXPECT_EQ(column("a[2] == 1"), 1u) << "indexing";
    EXPECT_EQ(column("$ctx.vpid == 1"), 1u) << "a context ftrace lacks";
    EXPECT_EQ(column("$app.x:y == 1"), 1u);
    EXPECT_EQ(column("name > \"a\""), 6u) << "strings order";
    EXPECT_EQ(column("name == \"a?b\""), 9u) << "ftrace would read ? as a glob";
    EXPECT_GT(column("a | 1"), 0u);
    // A syntax error is LTTng's own message.
    EXPECT_THROW(toFtraceFilter("a == "), FilterError);
}

// Found by a fresh-user pass: `dfd == -100` on a system call (ftrace stores
// every argument unsigned) was accepted, and the kernel refused it only at
// Start ("Illegal integer value").
TEST(FtraceFilter, ANegativeConstantForAnUnsignedFieldIsRefused) {
    const auto syscall =
        [](const std::string& name) -> std::optional<tracectl::filter::FtraceField> {
        if (name == "dfd")
            return tracectl::filter::FtraceField{"dfd", false, true};
        if (name == "filename")
            return tracectl::filter::FtraceField{"filename", true, false};
        return std::nullopt;
    };
    EXPECT_THROW(toFtraceFilter("dfd == -100", syscall), FilterError);
    EXPECT_THROW(toFtraceFilter("-1 < dfd", syscall), FilterError);
    EXPECT_EQ(toFtraceFilter("dfd == 4294967196", syscall), "dfd == 4294967196");
    EXPECT_EQ(toFtraceFilter("filename == \"/etc/*\"", syscall), "filename ~ \"/etc/*\"");
    EXPECT_THROW(toFtraceFilter("filename", syscall), FilterError);
}
