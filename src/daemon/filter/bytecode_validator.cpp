#include "filter/bytecode_validator.hpp"

#include "filter/bytecode_ops.hpp"

#include <cstring>
#include <map>
#include <string_view>
#include <vector>

namespace tracectl::filter {

namespace {

// The validator's register types (lttng-ust enum entry_type).
enum class Reg { S64, U64, Double, String, StarGlob, Ptr, Unknown };

struct Insn {
    std::size_t offset;
    Op op;
};

std::string at(std::size_t offset) {
    return " at offset " + std::to_string(offset);
}

bool isNumeric(Reg r) {
    return r == Reg::S64 || r == Reg::U64 || r == Reg::Double;
}

class Validator {
public:
    explicit Validator(const FilterBytecode& bc) : data_(bc.data), relocOffset_(bc.relocOffset) {}

    std::optional<std::string> run() {
        if (data_.size() > kUstBytecodeMaxLen)
            return "bytecode of " + std::to_string(data_.size()) +
                   " bytes is larger than LTTNG_UST_ABI_FILTER_BYTECODE_MAX_LEN (" +
                   std::to_string(kUstBytecodeMaxLen) + ")";
        if (relocOffset_ > data_.size())
            return "reloc offset " + std::to_string(relocOffset_) + " is not within the data";
        if (relocOffset_ == 0)
            return "the bytecode has no code";
        if (auto problem = decode())
            return problem;
        if (auto problem = relocations())
            return problem;
        return execute();
    }

private:
    template <typename T>
    T read(std::size_t offset) const {
        T value;
        std::memcpy(&value, &data_[offset], sizeof value);
        return value;
    }

    // Bytes of the instruction at `pc` (operand included), or an error.
    std::optional<std::string> sizeOf(std::size_t pc, std::size_t& size) const {
        const auto code = static_cast<std::uint8_t>(data_[pc]);
        const auto op = static_cast<Op>(code);
        const std::string where = " (opcode " + std::to_string(code) + ")" + at(pc);
        if (code == 0 || code >= kOpCount)
            return "unknown bytecode op" + where;
        if (code >= static_cast<std::uint8_t>(Op::Mul) &&
            code <= static_cast<std::uint8_t>(Op::Minus))
            return "unsupported bytecode op (arithmetic)" + where;
        if ((code >= static_cast<std::uint8_t>(Op::EqString) &&
             code <= static_cast<std::uint8_t>(Op::LeS64Double)) ||
            (code >= static_cast<std::uint8_t>(Op::UnaryPlusS64) &&
             code <= static_cast<std::uint8_t>(Op::UnaryNotDouble)) ||
            (code >= static_cast<std::uint8_t>(Op::LoadFieldS8) &&
             code <= static_cast<std::uint8_t>(Op::LoadFieldDouble)) ||
            op == Op::EqStarGlobString || op == Op::NeStarGlobString || op == Op::CastNop ||
            op == Op::GetIndexU16 || op == Op::ReturnS64)
            return "specialized bytecode op not accepted as input" + where;
        if ((code >= static_cast<std::uint8_t>(Op::LoadFieldRefString) &&
             code <= static_cast<std::uint8_t>(Op::LoadFieldRefDouble)) ||
            (code >= static_cast<std::uint8_t>(Op::GetContextRefString) &&
             code <= static_cast<std::uint8_t>(Op::GetContextRefDouble)) ||
            op == Op::LoadFieldRefUserString || op == Op::LoadFieldRefUserSequence)
            return "linked field reference not accepted as input" + where;
        if (op == Op::GetSymbolField)
            return "unexpected get symbol field" + where;
        switch (op) {
        case Op::And:
        case Op::Or:
        case Op::LoadFieldRef:
        case Op::GetContextRef:
        case Op::GetSymbol:
            size = 3;
            break;
        case Op::LoadS64:
        case Op::LoadDouble:
        case Op::GetIndexU64:
            size = 9;
            break;
        case Op::LoadString:
        case Op::LoadStarGlobString: {
            const std::uint8_t* operand = data_.data() + pc + 1;
            const void* nul = std::memchr(operand, 0, relocOffset_ - pc - 1);
            if (nul == nullptr)
                return "string operand not NUL-terminated within the code" + at(pc);
            size = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - operand) + 2;
            break;
        }
        default:
            size = 1;
            break;
        }
        if (pc + size > relocOffset_)
            return "bytecode overflow: instruction" + at(pc) + " runs past the code";
        if (op == Op::GetSymbol) {
            const std::size_t symbol = read<std::uint16_t>(pc + 1);
            const std::size_t tableLen = data_.size() - relocOffset_;
            if (symbol >= tableLen ||
                std::memchr(&data_[relocOffset_ + symbol], 0, tableLen - symbol) == nullptr)
                return "get symbol operand" + at(pc) + " names no string of the reloc table";
        }
        return std::nullopt;
    }

    std::optional<std::string> decode() {
        starts_.assign(relocOffset_, false);
        for (std::size_t pc = 0; pc < relocOffset_;) {
            std::size_t size = 0;
            if (auto problem = sizeOf(pc, size))
                return problem;
            starts_[pc] = true;
            insns_.push_back({pc, static_cast<Op>(data_[pc])});
            pc += size;
        }
        return std::nullopt;
    }

    std::optional<std::string> relocations() {
        std::map<std::size_t, bool> linked;
        for (const auto& insn : insns_)
            if (insn.op == Op::LoadFieldRef || insn.op == Op::GetContextRef)
                linked[insn.offset] = false;
        for (std::size_t off = relocOffset_; off < data_.size();) {
            if (off + sizeof(std::uint16_t) >= data_.size())
                return "truncated reloc entry" + at(off);
            const std::size_t target = read<std::uint16_t>(off);
            const std::size_t nameAt = off + sizeof(std::uint16_t);
            const void* nul = std::memchr(&data_[nameAt], 0, data_.size() - nameAt);
            if (nul == nullptr)
                return "reloc name not NUL-terminated" + at(off);
            const std::string_view name(reinterpret_cast<const char*>(&data_[nameAt]),
                                        static_cast<const std::uint8_t*>(nul) - &data_[nameAt]);
            if (name.empty())
                return "empty reloc name" + at(off);
            if (target >= relocOffset_ || !starts_[target])
                return "reloc" + at(off) + " points to no instruction (" + std::to_string(target) +
                       ")";
            const auto op = static_cast<Op>(data_[target]);
            if (op == Op::GetContextRef && !name.starts_with("$ctx.") && !name.starts_with("$app."))
                return "context reloc name '" + std::string(name) + "' is neither $ctx. nor $app.";
            if (op == Op::LoadFieldRef || op == Op::GetContextRef)
                linked[target] = true;
            else if (op != Op::GetSymbol)
                return "unknown reloc op type " + std::to_string(data_[target]) + at(target);
            off = nameAt + name.size() + 1;
        }
        for (const auto& [offset, isLinked] : linked)
            if (!isLinked)
                return "field reference" + at(offset) + " has no reloc entry";
        return std::nullopt;
    }

    bool push(Reg r) {
        if (stack_.size() >= kInterpreterStackLen)
            return false;
        stack_.push_back(r);
        return true;
    }

    static bool sameStack(const std::vector<Reg>& a, const std::vector<Reg>& b) {
        if (a.size() != b.size())
            return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i] != Reg::Unknown && b[i] != Reg::Unknown && a[i] != b[i])
                return false;
        return true;
    }

    // bin_op_compare_check: ax is the top, bx below it.
    static std::optional<std::string> compareCheck(Reg ax, Reg bx, Op op, std::size_t pc) {
        const bool eqNe = op == Op::Eq || op == Op::Ne;
        const auto mismatch = "type mismatch for binary comparator" + at(pc);
        if (ax == Reg::Ptr || bx == Reg::Ptr)
            return "unknown type for binary comparator" + at(pc);
        if (ax == Reg::Unknown || bx == Reg::Unknown)
            return std::nullopt;
        if (ax == Reg::String)
            return bx == Reg::String || (bx == Reg::StarGlob && eqNe) ? std::nullopt
                                                                      : std::optional(mismatch);
        if (ax == Reg::StarGlob)
            return bx == Reg::String && eqNe ? std::nullopt : std::optional(mismatch);
        return isNumeric(bx) ? std::nullopt : std::optional(mismatch);
    }

    std::optional<std::string> step(const Insn& insn, bool& returned) {
        const std::size_t pc = insn.offset;
        const auto empty = "empty stack" + at(pc);
        const auto full =
            "stack full (more than " + std::to_string(kInterpreterStackLen) + " values)" + at(pc);
        switch (insn.op) {
        case Op::Return:
            if (stack_.empty())
                return empty;
            if (stack_.back() == Reg::StarGlob)
                return "unexpected register type at end of bytecode" + at(pc);
            returned = true;
            return std::nullopt;
        case Op::Eq:
        case Op::Ne:
        case Op::Gt:
        case Op::Lt:
        case Op::Ge:
        case Op::Le: {
            if (stack_.size() < 2)
                return empty;
            if (auto problem = compareCheck(stack_.back(), stack_[stack_.size() - 2], insn.op, pc))
                return problem;
            stack_.pop_back();
            stack_.back() = Reg::S64;
            return std::nullopt;
        }
        case Op::BitRshift:
        case Op::BitLshift:
        case Op::BitAnd:
        case Op::BitOr:
        case Op::BitXor: {
            if (stack_.size() < 2)
                return empty;
            for (Reg r : {stack_.back(), stack_[stack_.size() - 2]})
                if (r != Reg::S64 && r != Reg::U64 && r != Reg::Unknown)
                    return "bitwise operator on a non-integer value" + at(pc);
            stack_.pop_back();
            stack_.back() = Reg::U64;
            return std::nullopt;
        }
        case Op::UnaryPlus:
        case Op::UnaryMinus:
        case Op::UnaryNot: {
            if (stack_.empty())
                return empty;
            Reg& r = stack_.back();
            if (!isNumeric(r) && r != Reg::Unknown)
                return "unary op can only be applied to numeric or floating point registers" +
                       at(pc);
            // Generic unary plus/minus leave a dynamically typed value; the
            // validator runs before lttng-ust specializes them.
            if (insn.op != Op::UnaryNot)
                r = Reg::Unknown;
            return std::nullopt;
        }
        case Op::UnaryBitNot: {
            if (stack_.empty())
                return empty;
            Reg& r = stack_.back();
            if (r != Reg::S64 && r != Reg::U64 && r != Reg::Unknown)
                return "unary bitwise op can only be applied to numeric registers" + at(pc);
            r = Reg::U64;
            return std::nullopt;
        }
        case Op::And:
        case Op::Or: {
            if (stack_.empty())
                return empty;
            const std::size_t skip = read<std::uint16_t>(pc + 1);
            if (skip <= pc)
                return "loops are not allowed in bytecode" + at(pc);
            if (stack_.back() != Reg::S64 && stack_.back() != Reg::U64)
                return "logical operator expects an s64 or u64 value" + at(pc);
            auto [it, added] = merges_.try_emplace(skip, stack_);
            if (!added && !sameStack(it->second, stack_))
                return "merge points differ for offset " + std::to_string(skip);
            stack_.pop_back();
            return std::nullopt;
        }
        case Op::LoadFieldRef:
        case Op::GetContextRef:
            return push(Reg::Unknown) ? std::nullopt : std::optional(full);
        case Op::LoadString:
            return push(Reg::String) ? std::nullopt : std::optional(full);
        case Op::LoadStarGlobString:
            return push(Reg::StarGlob) ? std::nullopt : std::optional(full);
        case Op::LoadS64:
            return push(Reg::S64) ? std::nullopt : std::optional(full);
        case Op::LoadDouble:
            return push(Reg::Double) ? std::nullopt : std::optional(full);
        case Op::CastToS64:
        case Op::CastDoubleToS64: {
            if (stack_.empty())
                return empty;
            Reg& r = stack_.back();
            if (insn.op == Op::CastDoubleToS64 ? r != Reg::Double
                                               : !(isNumeric(r) || r == Reg::Unknown))
                return "cast op applied to a value of the wrong type" + at(pc);
            r = Reg::S64;
            return std::nullopt;
        }
        case Op::GetContextRoot:
        case Op::GetAppContextRoot:
        case Op::GetPayloadRoot:
            return push(Reg::Ptr) ? std::nullopt : std::optional(full);
        case Op::LoadField:
        case Op::GetSymbol:
        case Op::GetIndexU64:
            if (stack_.empty())
                return empty;
            if (stack_.back() != Reg::Ptr)
                return "expecting pointer on top of stack" + at(pc);
            if (insn.op == Op::LoadField)
                stack_.back() = Reg::Unknown;
            return std::nullopt;
        default:
            return "unexpected bytecode op" + at(pc);
        }
    }

    std::optional<std::string> execute() {
        for (const auto& insn : insns_) {
            if (auto it = merges_.find(insn.offset); it != merges_.end()) {
                if (!sameStack(it->second, stack_))
                    return "merge points differ for offset " + std::to_string(insn.offset);
                merges_.erase(it);
            }
            bool returned = false;
            if (auto problem = step(insn, returned))
                return problem;
            if (returned) {
                if (!merges_.empty())
                    return "unexpected merge point at offset " +
                           std::to_string(merges_.begin()->first);
                return std::nullopt;
            }
        }
        return std::string("the bytecode ends without RETURN");
    }

    const std::vector<std::uint8_t>& data_;
    std::size_t relocOffset_;
    std::vector<bool> starts_;
    std::vector<Insn> insns_;
    std::vector<Reg> stack_;
    std::map<std::size_t, std::vector<Reg>> merges_;
};

} // namespace

std::optional<std::string> bytecodeProblem(const FilterBytecode& bytecode) {
    return Validator(bytecode).run();
}

} // namespace tracectl::filter
