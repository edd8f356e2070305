// Our copy of lttng-ust 2.13's bytecode checks, on hand-made hostile bytecode.
#include "filter/bytecode_ops.hpp"
#include "filter/bytecode_validator.hpp"
#include "filter/filter_compiler.hpp"

#include <gtest/gtest.h>
#include <initializer_list>
#include <string>

using namespace tracectl::filter;

namespace {

FilterBytecode make(std::initializer_list<int> code, std::initializer_list<int> reloc = {}) {
    FilterBytecode bc;
    for (int b : code)
        bc.data.push_back(static_cast<std::uint8_t>(b));
    bc.relocOffset = static_cast<std::uint32_t>(bc.data.size());
    for (int b : reloc)
        bc.data.push_back(static_cast<std::uint8_t>(b));
    return bc;
}

std::string problem(const FilterBytecode& bc) {
    return bytecodeProblem(bc).value_or("(accepted)");
}

constexpr int kLoadS64 = 0x41, kReturn = 0x01, kEq = 0x0c, kRef = 0x3b, kAnd = 0x39, kCast = 0x43;

} // namespace

TEST(BytecodeValidator, AcceptsTheSmallest) {
    EXPECT_EQ(problem(make({kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0, kReturn})), "(accepted)");
    // a: LOAD_FIELD_REF 0xffff, RETURN; reloc {0, "a"}.
    EXPECT_EQ(problem(make({kRef, 0xff, 0xff, kReturn}, {0, 0, 'a', 0})), "(accepted)");
}

TEST(BytecodeValidator, RefusesSizesAndOffsets) {
    FilterBytecode big = make({kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0, kReturn});
    big.data.resize(kUstBytecodeMaxLen + 1);
    EXPECT_NE(problem(big).find("larger than LTTNG_UST_ABI_FILTER_BYTECODE_MAX_LEN"),
              std::string::npos);
    FilterBytecode off = make({kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0, kReturn});
    off.relocOffset = 11;
    EXPECT_NE(problem(off).find("not within the data"), std::string::npos);
    EXPECT_NE(problem(make({})).find("no code"), std::string::npos);
}

TEST(BytecodeValidator, RefusesBadInstructions) {
    EXPECT_NE(problem(make({0})).find("unknown bytecode op"), std::string::npos);
    EXPECT_NE(problem(make({200})).find("unknown bytecode op"), std::string::npos);
    EXPECT_NE(problem(make({0x05})).find("arithmetic"), std::string::npos);
    EXPECT_NE(problem(make({0x18})).find("specialized"), std::string::npos);
    EXPECT_NE(problem(make({0x3c, 0, 0})).find("linked field reference"), std::string::npos);
    EXPECT_NE(problem(make({kLoadS64, 1, 0})).find("overflow"), std::string::npos);
    EXPECT_NE(problem(make({0x40, 'a', 'b'})).find("NUL-terminated"), std::string::npos);
    EXPECT_NE(problem(make({kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0})).find("without RETURN"),
              std::string::npos);
    EXPECT_NE(problem(make({kReturn})).find("empty stack"), std::string::npos);
    EXPECT_NE(problem(make({kEq, kReturn})).find("empty stack"), std::string::npos);
    // GET_SYMBOL naming past the reloc table.
    EXPECT_NE(problem(make({0x51, 0x52, 9, 0, 0x56, kReturn}, {1, 0, 'a', 0})).find("get symbol"),
              std::string::npos);
}

TEST(BytecodeValidator, RefusesBadRelocations) {
    // Field reference without a reloc entry.
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kReturn})).find("no reloc entry"), std::string::npos);
    // Reloc pointing into the middle of an instruction, past the code, at a
    // literal; names unterminated or empty; a truncated entry.
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kReturn}, {1, 0, 'a', 0})).find("points to no"),
              std::string::npos);
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kReturn}, {0x40, 0, 'a', 0})).find("points to no"),
              std::string::npos);
    EXPECT_NE(problem(make({kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0, kReturn}, {0, 0, 'a', 0}))
                  .find("unknown reloc op type"),
              std::string::npos);
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kReturn}, {0, 0, 'a'})).find("not NUL-terminated"),
              std::string::npos);
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kReturn}, {0, 0, 0})).find("empty reloc name"),
              std::string::npos);
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kReturn}, {0, 0, 'a', 0, 0})).find("truncated"),
              std::string::npos);
    EXPECT_NE(problem(make({0x46, 0xff, 0xff, kReturn}, {0, 0, 'a', 0})).find("$ctx."),
              std::string::npos);
}

TEST(BytecodeValidator, RefusesBadControlFlowAndTypes) {
    // AND jumping backwards, or to no instruction start, or leaving a
    // different stack.
    EXPECT_NE(problem(make({kLoadS64, 1,        0, 0, 0, 0, 0, 0, 0, kAnd, 0,
                            0,        kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0,    kReturn}))
                  .find("loops"),
              std::string::npos);
    EXPECT_NE(problem(make({kLoadS64, 1,        0, 0, 0, 0, 0, 0, 0, kAnd, 13,
                            0,        kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0,    kReturn}))
                  .find("merge point"),
              std::string::npos);
    // AND on a field value not cast to s64.
    EXPECT_NE(problem(make({kRef, 0xff, 0xff, kAnd, 7, 0, kRef, 0xff, 0xff, kCast, kReturn},
                           {0, 0, 'a', 0, 6, 0, 'b', 0}))
                  .find("expects an s64"),
              std::string::npos);
    // String compared with a number; star-glob compared with <; ~ on a double.
    EXPECT_NE(problem(make({0x40, 'a', 0, kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0, kEq, kReturn}))
                  .find("type mismatch"),
              std::string::npos);
    EXPECT_NE(problem(make({0x40, 'a', 0, 0x4c, 'b', '*', 'c', 0, 0x0f, kReturn})).find("mismatch"),
              std::string::npos);
    EXPECT_NE(problem(make({0x42, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0x62, kReturn})).find("bitwise"),
              std::string::npos);
    // LOAD_FIELD without a root pointer.
    EXPECT_NE(problem(make({kLoadS64, 1, 0, 0, 0, 0, 0, 0, 0, 0x56, kReturn})).find("pointer"),
              std::string::npos);
}

TEST(BytecodeValidator, StackHoldsTenValues) {
    FilterBytecode ten;
    for (int i = 0; i < 10; ++i) {
        ten.data.push_back(kLoadS64);
        ten.data.insert(ten.data.end(), 8, 0);
    }
    for (int i = 0; i < 9; ++i)
        ten.data.push_back(0x09); // BIT_AND
    ten.data.push_back(kReturn);
    ten.relocOffset = static_cast<std::uint32_t>(ten.data.size());
    EXPECT_EQ(problem(ten), "(accepted)");
    FilterBytecode eleven;
    for (int i = 0; i < 11; ++i) {
        eleven.data.push_back(kLoadS64);
        eleven.data.insert(eleven.data.end(), 8, 0);
    }
    for (int i = 0; i < 10; ++i)
        eleven.data.push_back(0x09);
    eleven.data.push_back(kReturn);
    eleven.relocOffset = static_cast<std::uint32_t>(eleven.data.size());
    EXPECT_NE(problem(eleven).find("stack full"), std::string::npos);
}
