#include "aggregate/trace_reader.hpp"

#include "aggregate/evaluation.hpp"
#include "aggregate/stack_learning.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <babeltrace2/babeltrace.h>
#include <cmath>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace tracectl::aggregate {

namespace fs = std::filesystem;

std::vector<std::string> findTraces(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        throw TraceReadError("no such file or directory: " + path);
    }
    std::vector<std::string> traces;
    if (fs::is_regular_file(fs::path(path) / "metadata", ec)) {
        traces.push_back(path);
    }
    for (auto it = fs::recursive_directory_iterator(
             path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_directory(ec) && fs::is_regular_file(it->path() / "metadata", ec)) {
            traces.push_back(it->path().string());
        }
    }
    if (ec) {
        throw TraceReadError("cannot read " + path + ": " + ec.message());
    }
    std::sort(traces.begin(), traces.end());
    if (traces.empty()) {
        throw TraceReadError("no CTF trace (a folder with a metadata file) under " + path);
    }
    return traces;
}

namespace {

struct GraphDeleter {
    void operator()(bt_graph* g) const noexcept { bt_graph_put_ref(g); }
};
struct ValueDeleter {
    void operator()(bt_value* v) const noexcept { bt_value_put_ref(v); }
};
struct PluginDeleter {
    void operator()(const bt_plugin* p) const noexcept { bt_plugin_put_ref(p); }
};
struct ErrorDeleter {
    void operator()(const bt_error* e) const noexcept { bt_error_release(e); }
};

/// babeltrace2's first error cause on this thread, if any (and clears it).
std::string takeBtError() {
    std::unique_ptr<const bt_error, ErrorDeleter> error(bt_current_thread_take_error());
    if (!error || bt_error_get_cause_count(error.get()) == 0) {
        return {};
    }
    // The last cause is the root one (the first appended).
    const auto n = bt_error_get_cause_count(error.get());
    const char* message =
        bt_error_cause_get_message(bt_error_borrow_cause_by_index(error.get(), n - 1));
    return message != nullptr ? std::string(": ") + message : std::string();
}

class Bt2EventClass final : public EventClassView {
public:
    Bt2EventClass(const bt_event_class* eventClass, const bt_stream_class* streamClass,
                  std::string domain)
        : eventClass_(eventClass), streamClass_(streamClass), domain_(std::move(domain)) {}

    std::string name() const override {
        const char* n = bt_event_class_get_name(eventClass_);
        return n != nullptr ? n : "";
    }
    std::string domain() const override { return domain_; }

    std::optional<FieldDescription> find(FieldScope scope, std::string_view name) const override {
        const bt_field_class* structure = nullptr;
        switch (scope) {
        case FieldScope::Payload:
            structure = bt_event_class_borrow_payload_field_class_const(eventClass_);
            break;
        case FieldScope::SpecificContext:
            structure = bt_event_class_borrow_specific_context_field_class_const(eventClass_);
            break;
        case FieldScope::CommonContext:
            structure = bt_stream_class_borrow_event_common_context_field_class_const(streamClass_);
            break;
        case FieldScope::PacketContext:
            structure = bt_stream_class_borrow_packet_context_field_class_const(streamClass_);
            break;
        case FieldScope::Timestamp:
            return FieldDescription{FieldScope::Timestamp, 0, FieldKind::SignedInteger};
        }
        if (structure == nullptr ||
            bt_field_class_get_type(structure) != BT_FIELD_CLASS_TYPE_STRUCTURE) {
            return std::nullopt;
        }
        const std::uint64_t count = bt_field_class_structure_get_member_count(structure);
        for (std::uint64_t i = 0; i < count; ++i) {
            const bt_field_class_structure_member* member =
                bt_field_class_structure_borrow_member_by_index_const(structure, i);
            if (name != bt_field_class_structure_member_get_name(member)) {
                continue;
            }
            const bt_field_class_type type = bt_field_class_get_type(
                bt_field_class_structure_member_borrow_field_class_const(member));
            FieldKind kind = FieldKind::Unusable;
            if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
                kind = FieldKind::SignedInteger;
            } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
                kind = FieldKind::UnsignedInteger;
            } else if (type == BT_FIELD_CLASS_TYPE_BOOL) {
                kind = FieldKind::Boolean;
            } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_REAL)) {
                kind = FieldKind::Real;
            } else if (type == BT_FIELD_CLASS_TYPE_STRING) {
                kind = FieldKind::String;
            }
            const bt_field_class* memberClass =
                bt_field_class_structure_member_borrow_field_class_const(member);
            if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY)) {
                // callstack_kernel, callstack_user: u64 elements.
                const bt_field_class* element =
                    bt_field_class_array_borrow_element_field_class_const(memberClass);
                if (bt_field_class_type_is(bt_field_class_get_type(element),
                                           BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) &&
                    bt_field_class_integer_get_field_value_range(element) == 64) {
                    kind = FieldKind::Addresses;
                }
            }
            FieldDescription found{scope, i, kind};
            if (kind == FieldKind::SignedInteger || kind == FieldKind::UnsignedInteger) {
                const std::uint64_t bits =
                    bt_field_class_integer_get_field_value_range(memberClass);
                found.bytes = bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
            } else if (kind == FieldKind::Boolean) {
                found.bytes = 4;
            }
            return found;
        }
        return std::nullopt;
    }

    std::optional<std::string> payloadMemberName(std::uint64_t index) const override {
        const bt_field_class* structure =
            bt_event_class_borrow_payload_field_class_const(eventClass_);
        if (structure == nullptr ||
            bt_field_class_get_type(structure) != BT_FIELD_CLASS_TYPE_STRUCTURE ||
            index >= bt_field_class_structure_get_member_count(structure)) {
            return std::nullopt;
        }
        return std::string(bt_field_class_structure_member_get_name(
            bt_field_class_structure_borrow_member_by_index_const(structure, index)));
    }

private:
    const bt_event_class* eventClass_;
    const bt_stream_class* streamClass_;
    std::string domain_;
};

std::string traceDomain(const bt_stream* stream) {
    const bt_trace* trace = bt_stream_borrow_trace_const(stream);
    const bt_value* value = bt_trace_borrow_environment_entry_value_by_name_const(trace, "domain");
    if (value != nullptr && bt_value_is_string(value)) {
        return bt_value_string_get(value);
    }
    return {};
}

/// What every worker shares: the binder (its record of which fields were found spans
/// every trace), the number of sinks that have begun, and a stop request.
struct Shared {
    Binder* binder = nullptr;
    std::mutex binderMutex;
    std::size_t sinks = 0;
    std::atomic<std::size_t> sinksBegun{0};
    std::atomic<bool> stop{false};
};

/// One worker's state: its event classes' bindings and its own aggregations.
struct Run {
    Shared* shared = nullptr;
    AggregationSet* aggregations = nullptr;
    /// Where the records of tracectl_kernel_symbol and tracectl_vm_map go (null: nowhere),
    /// under `namesMutex` (workers share it).
    symbols::StackNames* names = nullptr;
    std::mutex* namesMutex = nullptr;
    std::unordered_set<const bt_event_class*> namingClasses;
    std::vector<std::string> addressBuffers; ///< by slot: FieldKind::Addresses' bytes
    EventSink* sink = nullptr;               ///< time order: records go there instead
    bool finished = false;                   ///< the sink asked to stop
    std::unordered_map<const bt_event_class*, std::unique_ptr<BoundEventClass>> bound;
    std::array<std::pair<const bt_event_class*, const BoundEventClass*>, 16> cache{};
    std::vector<Value> slots;
    std::uint64_t eventRecords = 0;
    std::uint64_t matchedRecords = 0;
    std::uint64_t discardedEvents = 0;
    bool discardedExact = true;
    std::exception_ptr error;

    const BoundEventClass& bind(const bt_event_class* eventClass, const bt_stream* stream) {
        auto& slot = bound[eventClass];
        if (!slot) {
            const Bt2EventClass view(eventClass, bt_stream_borrow_class_const(stream),
                                     traceDomain(stream));
            const std::lock_guard lock(shared->binderMutex);
            slot = std::make_unique<BoundEventClass>(shared->binder->bind(view));
            if (slot->slots.size() > slots.size()) {
                slots.resize(slot->slots.size());
                addressBuffers.resize(slot->slots.size());
            }
            if (names != nullptr && tellsStackNames(view.name())) {
                namingClasses.insert(eventClass);
            }
        }
        return *slot;
    }

    void streamBegins(const bt_stream* stream) {
        const bt_stream_class* streamClass = bt_stream_borrow_class_const(stream);
        const std::uint64_t n = bt_stream_class_get_event_class_count(streamClass);
        for (std::uint64_t i = 0; i < n; ++i) {
            bind(bt_stream_class_borrow_event_class_by_index_const(streamClass, i), stream);
        }
    }

    void event(const bt_message* message) {
        ++eventRecords;
        const bt_event* event = bt_message_event_borrow_event_const(message);
        const bt_event_class* eventClass = bt_event_borrow_class_const(event);
        // A small direct-mapped cache in front of the map: streams interleave a few event
        // classes record by record.
        auto& cached = cache[(reinterpret_cast<std::uintptr_t>(eventClass) >> 4) % cache.size()];
        if (cached.first != eventClass) {
            cached = {eventClass, &bind(eventClass, bt_event_borrow_stream_const(event))};
        }
        const BoundEventClass& b = *cached.second;
        if (!namingClasses.empty() && namingClasses.count(eventClass) != 0) {
            const std::lock_guard lock(*namesMutex);
            learnStackNames(event, *names);
        }
        if (b.clauses.empty() && (sink == nullptr || !sink->wantsEveryRecord())) {
            return;
        }
        if (!b.clauses.empty()) {
            ++matchedRecords;
        }
        const bt_field* scopes[4] = {nullptr, nullptr, nullptr, nullptr};
        for (std::size_t i = 0; i < b.slots.size(); ++i) {
            const FieldDescription& d = b.slots[i];
            Value& v = slots[i];
            if (d.scope == FieldScope::Timestamp) {
                std::int64_t ns = 0;
                if (bt_message_event_borrow_stream_class_default_clock_class_const(message) !=
                    nullptr) {
                    bt_clock_snapshot_get_ns_from_origin(
                        bt_message_event_borrow_default_clock_snapshot_const(message), &ns);
                }
                v.integer = ns;
                continue;
            }
            const auto s = static_cast<std::size_t>(d.scope);
            if (scopes[s] == nullptr) {
                switch (d.scope) {
                case FieldScope::Payload:
                    scopes[s] = bt_event_borrow_payload_field_const(event);
                    break;
                case FieldScope::SpecificContext:
                    scopes[s] = bt_event_borrow_specific_context_field_const(event);
                    break;
                case FieldScope::CommonContext:
                    scopes[s] = bt_event_borrow_common_context_field_const(event);
                    break;
                case FieldScope::PacketContext: {
                    const bt_packet* packet = bt_event_borrow_packet_const(event);
                    scopes[s] =
                        packet != nullptr ? bt_packet_borrow_context_field_const(packet) : nullptr;
                    break;
                }
                case FieldScope::Timestamp:
                    break;
                }
                if (scopes[s] == nullptr) {
                    v = Value{};
                    continue;
                }
            }
            const bt_field* f =
                bt_field_structure_borrow_member_field_by_index_const(scopes[s], d.index);
            switch (d.kind) {
            case FieldKind::SignedInteger:
                v.integer = bt_field_integer_signed_get_value(f);
                break;
            case FieldKind::UnsignedInteger:
                v.integer = static_cast<std::int64_t>(bt_field_integer_unsigned_get_value(f));
                break;
            case FieldKind::Boolean:
                v.integer = bt_field_bool_get_value(f) ? 1 : 0;
                break;
            case FieldKind::Real: {
                const double real =
                    bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_SINGLE_PRECISION_REAL
                        ? static_cast<double>(bt_field_real_single_precision_get_value(f))
                        : bt_field_real_double_precision_get_value(f);
                v.integer = std::isfinite(real) && std::fabs(real) < 9.2e18
                                ? static_cast<std::int64_t>(real)
                                : 0;
                break;
            }
            case FieldKind::String:
                v.string =
                    std::string_view(bt_field_string_get_value(f), bt_field_string_get_length(f));
                break;
            case FieldKind::Addresses: {
                std::string& bytes = addressBuffers[i];
                bytes.clear();
                const std::uint64_t n = bt_field_array_get_length(f);
                for (std::uint64_t k = 0; k < n; ++k) {
                    const std::uint64_t a = bt_field_integer_unsigned_get_value(
                        bt_field_array_borrow_element_field_by_index_const(f, k));
                    bytes.append(reinterpret_cast<const char*>(&a), sizeof a);
                }
                v.string = bytes;
                break;
            }
            case FieldKind::Unusable:
                break;
            }
        }
        if (sink != nullptr) {
            std::int64_t ns = 0;
            if (bt_message_event_borrow_stream_class_default_clock_class_const(message) !=
                nullptr) {
                bt_clock_snapshot_get_ns_from_origin(
                    bt_message_event_borrow_default_clock_snapshot_const(message), &ns);
            }
            if (!sink->event(b, slots.data(), ns)) {
                finished = true;
            }
            return;
        }
        execute(b, slots.data(), *aggregations);
    }
};

struct Sink {
    Run* run = nullptr;
    bool begun = false;
};

bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* iterator,
                                                           void* data) {
    Sink& sink = *static_cast<Sink*>(data);
    Run& run = *sink.run;
    if (run.shared->stop.load(std::memory_order_relaxed)) {
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    bt_message_array_const messages;
    std::uint64_t count = 0;
    switch (bt_message_iterator_next(iterator, &messages, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    std::uint64_t i = 0;
    try {
        for (; i < count && !run.finished; ++i) {
            const bt_message* m = messages[i];
            const bt_message_type type = bt_message_get_type(m);
            if (type == BT_MESSAGE_TYPE_EVENT) {
                run.event(m);
            } else if (type == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
                std::uint64_t discarded = 0;
                if (bt_message_discarded_events_get_count(m, &discarded) ==
                    BT_PROPERTY_AVAILABILITY_AVAILABLE) {
                    run.discardedEvents += discarded;
                } else {
                    run.discardedEvents += 1;
                    run.discardedExact = false;
                }
            } else if (type == BT_MESSAGE_TYPE_STREAM_BEGINNING) {
                run.streamBegins(bt_message_stream_beginning_borrow_stream_const(m));
                if (!sink.begun) {
                    sink.begun = true;
                    // The last sink to begin, of every worker, checks the references:
                    // every stream class (of every trace) is bound by then.
                    Shared& shared = *run.shared;
                    if (shared.sinksBegun.fetch_add(1) + 1 == shared.sinks) {
                        const std::lock_guard lock(shared.binderMutex);
                        shared.binder->checkReferences();
                    }
                }
            }
            bt_message_put_ref(m);
        }
        if (run.finished) {
            for (; i < count; ++i) {
                bt_message_put_ref(messages[i]);
            }
            return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
        }
    } catch (...) {
        run.error = std::current_exception();
        run.shared->stop = true;
        for (; i < count; ++i) {
            bt_message_put_ref(messages[i]);
        }
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

} // namespace

namespace {

class Graph {
public:
    /// A graph with a source.ctf.fs component per directory, no sinks yet.
    explicit Graph(const std::vector<std::string>& directories) {
        const bt_plugin* found = nullptr;
        if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &found) !=
            BT_PLUGIN_FIND_STATUS_OK) {
            throw TraceReadError("babeltrace2's \"ctf\" plugin not found" + takeBtError());
        }
        plugin_.reset(found);
        const bt_component_class_source* fsClass =
            bt_plugin_borrow_source_component_class_by_name_const(plugin_.get(), "fs");
        graph_.reset(bt_graph_create(0));
        if (fsClass == nullptr || !graph_) {
            throw TraceReadError("babeltrace2's source.ctf.fs is unavailable" + takeBtError());
        }
        for (std::size_t d = 0; d < directories.size(); ++d) {
            std::unique_ptr<bt_value, ValueDeleter> params(bt_value_map_create());
            std::unique_ptr<bt_value, ValueDeleter> inputs(bt_value_array_create());
            if (!params || !inputs ||
                bt_value_array_append_string_element(inputs.get(), directories[d].c_str()) !=
                    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK ||
                bt_value_map_insert_entry(params.get(), "inputs", inputs.get()) !=
                    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
                throw TraceReadError("out of memory");
            }
            const bt_component_source* source = nullptr;
            const std::string name = "source-" + std::to_string(d);
            if (bt_graph_add_source_component(graph_.get(), fsClass, name.c_str(), params.get(),
                                              BT_LOGGING_LEVEL_WARNING,
                                              &source) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
                throw TraceReadError("cannot read " + directories[d] + " as a CTF trace" +
                                     takeBtError());
            }
            sources_.push_back(source);
        }
    }

    /// Every output port (one per stream) of every source: (source index, port name),
    /// sorted. A port's name names its stream's files, so every graph built on the same
    /// directories has the same ports, whatever order the source lists them in.
    std::vector<std::pair<std::size_t, std::string>> ports() const {
        std::vector<std::pair<std::size_t, std::string>> all;
        for (std::size_t d = 0; d < sources_.size(); ++d) {
            const std::uint64_t n = bt_component_source_get_output_port_count(sources_[d]);
            for (std::uint64_t p = 0; p < n; ++p) {
                all.emplace_back(d, portName(sources_[d], p));
            }
        }
        std::sort(all.begin(), all.end());
        return all;
    }

    /// Connects a sink feeding `run` to each port of `share` (of ports()); the other
    /// ports stay unconnected (their streams are read by other graphs).
    void connect(const std::vector<std::pair<std::size_t, std::string>>& share, Run& run) {
        std::size_t index = 0;
        for (std::size_t d = 0; d < sources_.size(); ++d) {
            const bt_component_source* source = sources_[d];
            const std::uint64_t ports = bt_component_source_get_output_port_count(source);
            for (std::uint64_t p = 0; p < ports; ++p, ++index) {
                if (!std::binary_search(share.begin(), share.end(),
                                        std::make_pair(d, portName(source, p)))) {
                    continue;
                }
                auto sink = std::make_unique<Sink>();
                sink->run = &run;
                const bt_component_sink* component = nullptr;
                const std::string name = "aggregate-" + std::to_string(index);
                if (bt_graph_add_simple_sink_component(graph_.get(), name.c_str(), nullptr, consume,
                                                       nullptr, sink.get(), &component) !=
                        BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
                    bt_graph_connect_ports(
                        graph_.get(),
                        bt_component_source_borrow_output_port_by_index_const(source, p),
                        bt_component_sink_borrow_input_port_by_index_const(component, 0),
                        nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                    throw TraceReadError("cannot build the babeltrace2 graph" + takeBtError());
                }
                sinks_.push_back(std::move(sink));
            }
        }
    }

    /// Connects every port of every source to one muxer (filter.utils.muxer), and the
    /// muxer to one sink feeding `run`: records in time order.
    void connectInOrder(Run& run) {
        const bt_plugin* found = nullptr;
        if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &found) !=
            BT_PLUGIN_FIND_STATUS_OK) {
            throw TraceReadError("babeltrace2's \"utils\" plugin not found" + takeBtError());
        }
        utils_.reset(found);
        const bt_component_class_filter* muxerClass =
            bt_plugin_borrow_filter_component_class_by_name_const(utils_.get(), "muxer");
        const bt_component_filter* muxer = nullptr;
        if (muxerClass == nullptr ||
            bt_graph_add_filter_component(graph_.get(), muxerClass, "muxer", nullptr,
                                          BT_LOGGING_LEVEL_WARNING,
                                          &muxer) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            throw TraceReadError("babeltrace2's filter.utils.muxer is unavailable" + takeBtError());
        }
        for (const bt_component_source* source : sources_) {
            const std::uint64_t ports = bt_component_source_get_output_port_count(source);
            for (std::uint64_t p = 0; p < ports; ++p) {
                // The muxer always has one free input port, its last.
                const std::uint64_t inputs = bt_component_filter_get_input_port_count(muxer);
                if (bt_graph_connect_ports(
                        graph_.get(),
                        bt_component_source_borrow_output_port_by_index_const(source, p),
                        bt_component_filter_borrow_input_port_by_index_const(muxer, inputs - 1),
                        nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                    throw TraceReadError("cannot build the babeltrace2 graph" + takeBtError());
                }
            }
        }
        auto sink = std::make_unique<Sink>();
        sink->run = &run;
        const bt_component_sink* component = nullptr;
        if (bt_graph_add_simple_sink_component(graph_.get(), "dtrace", nullptr, consume, nullptr,
                                               sink.get(),
                                               &component) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
            bt_graph_connect_ports(graph_.get(),
                                   bt_component_filter_borrow_output_port_by_index_const(muxer, 0),
                                   bt_component_sink_borrow_input_port_by_index_const(component, 0),
                                   nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            throw TraceReadError("cannot build the babeltrace2 graph" + takeBtError());
        }
        sinks_.push_back(std::move(sink));
    }

    /// Runs the graph to its end; `run.error` holds what a sink threw.
    void run(Run& run) {
        if (sinks_.empty()) {
            return;
        }
        bt_graph_run_status status;
        do {
            status = bt_graph_run(graph_.get());
        } while (status == BT_GRAPH_RUN_STATUS_AGAIN);
        if (run.error) {
            bt_current_thread_clear_error();
            return;
        }
        if (run.shared->stop) {
            bt_current_thread_clear_error(); // another worker failed: its error is reported
            return;
        }
        if (status != BT_GRAPH_RUN_STATUS_OK) {
            throw TraceReadError("reading the trace failed" + takeBtError());
        }
    }

private:
    static std::string portName(const bt_component_source* source, std::uint64_t index) {
        const char* name = bt_port_get_name(bt_port_output_as_port_const(
            bt_component_source_borrow_output_port_by_index_const(source, index)));
        return name != nullptr ? name : std::to_string(index);
    }

    std::unique_ptr<const bt_plugin, PluginDeleter> plugin_;
    std::unique_ptr<const bt_plugin, PluginDeleter> utils_;
    std::unique_ptr<bt_graph, GraphDeleter> graph_;
    std::vector<const bt_component_source*> sources_;
    std::vector<std::unique_ptr<Sink>> sinks_;
};

} // namespace

ReadStatistics readTraces(const std::vector<std::string>& directories, const Program& program,
                          Binder& binder, AggregationSet& aggregations) {
    Graph first(directories);
    Shared shared;
    shared.binder = &binder;
    std::mutex namesMutex;
    const auto ports = first.ports();
    shared.sinks = ports.size();
    // Streams are independent and aggregating needs no order: several graphs, each
    // reading a share of the streams, one per thread (libbabeltrace2 objects are never
    // shared between them), then their aggregations are merged.
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t workers =
        std::max<std::size_t>(1, std::min({cores, shared.sinks, std::size_t{8}}));
    std::vector<std::unique_ptr<AggregationSet>> sets;
    std::vector<std::unique_ptr<Run>> runs;
    for (std::size_t w = 0; w < workers; ++w) {
        sets.push_back(std::make_unique<AggregationSet>(program));
        auto run = std::make_unique<Run>();
        run->shared = &shared;
        run->aggregations = sets.back().get();
        run->names = aggregations.stackNames.get();
        run->namesMutex = &namesMutex;
        runs.push_back(std::move(run));
    }
    std::vector<std::vector<std::pair<std::size_t, std::string>>> shares(workers);
    for (std::size_t i = 0; i < ports.size(); ++i) {
        shares[i % workers].push_back(ports[i]); // stays sorted
    }
    first.connect(shares[0], *runs[0]);
    std::vector<std::exception_ptr> failures(workers);
    {
        std::vector<std::jthread> threads;
        for (std::size_t w = 1; w < workers; ++w) {
            threads.emplace_back([&, w] {
                try {
                    Graph graph(directories);
                    graph.connect(shares[w], *runs[w]);
                    graph.run(*runs[w]);
                } catch (...) {
                    failures[w] = std::current_exception();
                    shared.stop = true;
                }
            });
        }
        try {
            first.run(*runs[0]);
        } catch (...) {
            failures[0] = std::current_exception();
            shared.stop = true;
        }
    } // joins every worker
    for (std::size_t w = 0; w < workers; ++w) {
        if (runs[w]->error) {
            std::rethrow_exception(runs[w]->error);
        }
    }
    for (const auto& failure : failures) {
        if (failure) {
            std::rethrow_exception(failure);
        }
    }
    if (shared.sinksBegun < shared.sinks || shared.sinks == 0) {
        binder.checkReferences();
    }
    ReadStatistics statistics;
    for (std::size_t w = 0; w < workers; ++w) {
        aggregations.merge(std::move(*sets[w]));
        statistics.eventRecords += runs[w]->eventRecords;
        statistics.matchedRecords += runs[w]->matchedRecords;
        statistics.eventClasses += runs[w]->bound.size();
        statistics.discardedEvents += runs[w]->discardedEvents;
        statistics.discardedExact = statistics.discardedExact && runs[w]->discardedExact;
    }
    return statistics;
}

ReadStatistics readTracesInOrder(const std::vector<std::string>& directories, Binder& binder,
                                 EventSink& sink) {
    Graph graph(directories);
    Shared shared;
    shared.binder = &binder;
    // One sink sees every stream begin, but not before records of the first: the field
    // references are checked once every stream began, at the end.
    shared.sinks = 2;
    AggregationSet unused(Program{});
    std::mutex namesMutex;
    Run run;
    run.shared = &shared;
    run.aggregations = &unused;
    run.names = sink.stackNames();
    run.namesMutex = &namesMutex;
    run.sink = &sink;
    graph.connectInOrder(run);
    graph.run(run);
    if (run.error) {
        std::rethrow_exception(run.error);
    }
    binder.checkReferences();
    ReadStatistics statistics;
    statistics.eventRecords = run.eventRecords;
    statistics.matchedRecords = run.matchedRecords;
    statistics.eventClasses = run.bound.size();
    statistics.discardedEvents = run.discardedEvents;
    statistics.discardedExact = run.discardedExact;
    return statistics;
}

} // namespace tracectl::aggregate
