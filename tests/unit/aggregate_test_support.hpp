// A stand-in event class for the aggregate unit tests: a name, a domain and a table of
// fields, in place of libbabeltrace2's field classes.
#pragma once

#include "aggregate/aggregation_set.hpp"
#include "aggregate/binding.hpp"
#include "aggregate/evaluation.hpp"
#include "aggregate/parser.hpp"

#include <map>
#include <string>
#include <vector>

namespace tracectl::aggregate::testing {

class TableEventClass final : public EventClassView {
public:
    struct Field {
        std::string name;
        FieldScope scope;
        FieldKind kind;
        std::uint8_t bytes = 8; ///< FieldDescription::bytes
    };
    TableEventClass(std::string name, std::string domain, std::vector<Field> fields)
        : name_(std::move(name)), domain_(std::move(domain)), fields_(std::move(fields)) {}

    std::string name() const override { return name_; }
    std::string domain() const override { return domain_; }
    std::optional<FieldDescription> find(FieldScope scope, std::string_view name) const override {
        std::uint64_t index = 0;
        for (const Field& f : fields_) {
            if (f.scope != scope) {
                continue;
            }
            if (f.name == name) {
                return FieldDescription{scope, index, f.kind, f.bytes};
            }
            ++index;
        }
        if (scope == FieldScope::Timestamp) {
            return FieldDescription{scope, 0, FieldKind::SignedInteger};
        }
        return std::nullopt;
    }

    /// The slot values of one event record, given each field's value by name (integers
    /// and strings), in the order `bound.slots` wants them. String values view `strings`.
    std::vector<Value> slots(const BoundEventClass& bound,
                             const std::map<std::string, std::int64_t>& integers,
                             const std::map<std::string, std::string>& strings) const {
        std::vector<Value> values;
        for (const FieldDescription& d : bound.slots) {
            std::uint64_t index = 0;
            Value v;
            for (const Field& f : fields_) {
                if (f.scope != d.scope) {
                    continue;
                }
                if (index++ == d.index || d.scope == FieldScope::Timestamp) {
                    if (f.kind == FieldKind::String) {
                        v.string = strings.at(f.name);
                    } else {
                        v.integer = integers.at(f.name);
                    }
                    break;
                }
            }
            values.push_back(v);
        }
        return values;
    }

private:
    std::string name_;
    std::string domain_;
    std::vector<Field> fields_;
};

} // namespace tracectl::aggregate::testing
