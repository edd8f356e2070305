#include "aggregate/aggregation_set.hpp"

#include <algorithm>
#include <functional>

namespace tracectl::aggregate {

std::size_t KeyHash::operator()(const Key& key) const noexcept {
    std::size_t h = 0x9e3779b97f4a7c15ULL;
    for (const KeyValue& v : key) {
        const std::size_t part = std::holds_alternative<std::int64_t>(v)
                                     ? std::hash<std::int64_t>{}(std::get<std::int64_t>(v))
                                     : std::hash<std::string>{}(std::get<std::string>(v));
        h ^= part + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    }
    return h;
}

AggregationSet::AggregationSet(const Program& program)
    : normal(program.aggregations.size(), 1), declarations_(program.aggregations),
      tables_(program.aggregations.size()), keyBytes_(program.aggregations.size()),
      unkeyed_(program.aggregations.size(), nullptr) {}

AggregationState& AggregationSet::state(std::size_t aggregation, Key&& key,
                                        const std::vector<std::uint8_t>& keyBytes) {
    auto& table = tables_[aggregation];
    const auto found = table.find(key);
    if (found != table.end()) {
        return found->second;
    }
    if (keyBytes_[aggregation].empty()) {
        keyBytes_[aggregation] = keyBytes;
    }
    const auto& d = declarations_[aggregation];
    return table.try_emplace(std::move(key), d.function, d.linear, d.logLinear).first->second;
}

void AggregationSet::merge(AggregationSet&& other) {
    for (std::size_t a = 0; a < tables_.size(); ++a) {
        for (auto& [key, other_state] : other.tables_[a]) {
            Key copy = key;
            state(a, std::move(copy), other.keyBytes_[a]).merge(other_state);
        }
    }
    errors += other.errors;
}

bool keyLess(const Key& a, const Key& b) noexcept {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::vector<AggregationSet::Entry> AggregationSet::sorted(std::size_t aggregation) const {
    std::vector<Entry> entries;
    for (const auto& [key, state] : tables_[aggregation]) {
        entries.push_back({&key, &state});
    }
    const Order o = order;
    const auto less = [o](const Entry& a, const Entry& b) {
        if (o.byKey && *a.key != *b.key) {
            return keyLess(*a.key, *b.key);
        }
        const long double va = a.state->sortValue();
        const long double vb = b.state->sortValue();
        if (va != vb) {
            return va < vb;
        }
        return keyLess(*a.key, *b.key);
    };
    std::sort(entries.begin(), entries.end(),
              [&](const Entry& a, const Entry& b) { return o.reverse ? less(b, a) : less(a, b); });
    return entries;
}

void AggregationSet::clear(std::size_t aggregation) {
    for (auto& [key, state] : tables_[aggregation]) {
        state.clear();
    }
}

void AggregationSet::truncate(std::size_t aggregation, std::optional<std::int64_t> keep) {
    const Order saved = order;
    order = Order{};
    const auto entries = sorted(aggregation);
    order = saved;
    std::vector<Key> removed;
    const auto n = static_cast<std::int64_t>(entries.size());
    for (std::int64_t i = 0; i < n; ++i) {
        const bool kept = keep && (*keep > 0 ? i >= n - *keep : i < -*keep);
        if (!kept) {
            removed.push_back(*entries[static_cast<std::size_t>(i)].key);
        }
    }
    for (const Key& key : removed) {
        tables_[aggregation].erase(key);
    }
    unkeyed_[aggregation] = nullptr;
}

} // namespace tracectl::aggregate
