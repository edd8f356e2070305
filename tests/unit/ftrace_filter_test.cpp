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

TEST(FtraceFilter, ContextsBecomeFtracesOwnFields) {
    EXPECT_EQ(toFtraceFilter("$ctx.tid == 42"), "common_pid == 42");
    EXPECT_EQ(toFtraceFilter("$ctx.vtid == 42"), "common_pid == 42");
    EXPECT_EQ(toFtraceFilter("$ctx.procname == \"bash*\""), "comm ~ \"bash*\"");
    EXPECT_EQ(toFtraceFilter("$ctx.cpu_id == 1"), "CPU == 1");
}

TEST(FtraceFilter, FieldsAreRenamedToFtracesNames) {
    const auto rename = [](const std::string& name) {
        return name == "prev_tid" ? std::string("prev_pid") : name;
    };
    EXPECT_EQ(toFtraceFilter("prev_tid == 7 && next_prio > 100", rename),
              "(prev_pid == 7) && (next_prio > 100)");
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
