/* tracectl-bench-count: counts the event records and the discarded events
 * of a CTF trace, with libbabeltrace2 (src.ctf.fs), at C speed: the
 * benchmark's traces hold tens of millions of events, too many for
 * tests/integration/count_events.py (python3-bt2, ~150 k events/s), which
 * reports the same two numbers (and checks sequence numbers).
 *
 * Usage: tracectl-bench-count [--by-kind] [--tids TID,...] TRACE_DIR...
 *   TRACE_DIR  a CTF trace folder (the one holding the "metadata" file, e.g.
 *              <output>/ust/uid/0/64-bit); several are counted together
 *
 * Prints one JSON line:
 *   {"events": <event records>, "discarded": <events the tracer discarded>,
 *    "discarded_messages": <discarded-events messages>,
 *    "discarded_unknown": <such messages without a count>}
 * With --by-kind, two more keys: "sched" and "syscall", the records whose
 * event class is named sched_* and syscall_* (a kernel trace: ftrace's sched
 * tracepoints, system calls as lttng-modules names them).
 * With --tids, one more key: "own", the records whose common context field
 * "tid" (a kernel trace's: the thread that was running when the event was
 * recorded) is one of these thread ids (bench/compare's idle self-cost: the
 * consumer's own events).
 * "discarded" sums the counts babeltrace2 derives from the packet contexts'
 * events_discarded (the WARNING lines of `babeltrace2 TRACE_DIR`).
 * Every data stream is read by a sink of its own (no muxer): the order of
 * the events does not matter for counting.
 * Exit status: 0, or 1 if the trace cannot be read. */
#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TIDS 4096

struct counts {
    uint64_t events;
    uint64_t discarded;
    uint64_t discardedMessages;
    uint64_t discardedUnknown;
    int byKind;
    uint64_t sched;
    uint64_t syscall;
    int64_t tids[MAX_TIDS];
    int ntids;
    uint64_t own;
};

/* 1 if the event's common context has an integer field "tid" whose value
 * is one of c->tids. */
static int isOwn(const struct counts* c, const bt_event* event) {
    const bt_field* ctx = bt_event_borrow_common_context_field_const(event);
    const bt_field* tid;
    int64_t value;

    if (ctx == NULL)
        return 0;
    tid = bt_field_structure_borrow_member_field_by_name_const(ctx, "tid");
    if (tid == NULL)
        return 0;
    if (bt_field_class_type_is(bt_field_get_class_type(tid), BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        value = bt_field_integer_signed_get_value(tid);
    else if (bt_field_class_type_is(bt_field_get_class_type(tid),
                                    BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        value = (int64_t)bt_field_integer_unsigned_get_value(tid);
    else
        return 0;
    for (int i = 0; i < c->ntids; i++)
        if (c->tids[i] == value)
            return 1;
    return 0;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* it,
                                                                  void* data) {
    struct counts* c = data;
    bt_message_array_const msgs;
    uint64_t n = 0;

    switch (bt_message_iterator_next(it, &msgs, &n)) {
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
    for (uint64_t i = 0; i < n; i++) {
        const bt_message* m = msgs[i];

        if (bt_message_get_type(m) == BT_MESSAGE_TYPE_EVENT) {
            c->events++;
            if (c->ntids > 0 && isOwn(c, bt_message_event_borrow_event_const(m)))
                c->own++;
            if (c->byKind) {
                const char* name = bt_event_class_get_name(
                    bt_event_borrow_class_const(bt_message_event_borrow_event_const(m)));

                if (name != NULL && strncmp(name, "sched_", 6) == 0)
                    c->sched++;
                else if (name != NULL && strncmp(name, "syscall_", 8) == 0)
                    c->syscall++;
            }
        } else if (bt_message_get_type(m) == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
            uint64_t count = 0;

            c->discardedMessages++;
            if (bt_message_discarded_events_get_count(m, &count) ==
                BT_PROPERTY_AVAILABILITY_AVAILABLE)
                c->discarded += count;
            else
                c->discardedUnknown++;
        }
        bt_message_put_ref(m);
    }
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* Builds src.ctf.fs(dirs) -> one simple sink per output port, runs it.
 * Returns 0 on success. */
static int countTrace(char* const* dirs, int ndirs, struct counts* c) {
    const bt_plugin* plugin = NULL;
    const bt_component_class_source* fs;
    const bt_component_source* src = NULL;
    bt_graph* graph = NULL;
    bt_value *params = NULL, *inputs = NULL;
    bt_graph_run_status run;
    int ret = 1;

    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &plugin) !=
        BT_PLUGIN_FIND_STATUS_OK) {
        fprintf(stderr, "tracectl-bench-count: babeltrace2 plugin \"ctf\" not found\n");
        return 1;
    }
    fs = bt_plugin_borrow_source_component_class_by_name_const(plugin, "fs");
    graph = bt_graph_create(0);
    params = bt_value_map_create();
    inputs = bt_value_array_create();
    if (fs == NULL || graph == NULL || params == NULL || inputs == NULL)
        goto out;
    for (int i = 0; i < ndirs; i++)
        if (bt_value_array_append_string_element(inputs, dirs[i]) !=
            BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
            goto out;
    if (bt_value_map_insert_entry(params, "inputs", inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)
        goto out;
    if (bt_graph_add_source_component(graph, fs, "src", params, BT_LOGGING_LEVEL_WARNING, &src) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        fprintf(stderr, "tracectl-bench-count: cannot open %s as a CTF trace\n", dirs[0]);
        goto out;
    }
    if (bt_component_source_get_output_port_count(src) == 0) {
        /* A trace without any packet (a rotation's chunk with nothing
         * recorded): nothing to count, and a graph without sinks
         * cannot run. */
        ret = 0;
        goto out;
    }
    for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
        const bt_component_sink* sink = NULL;
        char name[32];

        snprintf(name, sizeof name, "count%" PRIu64, i);
        if (bt_graph_add_simple_sink_component(graph, name, NULL, consume, NULL, c, &sink) !=
                BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
            bt_graph_connect_ports(graph,
                                   bt_component_source_borrow_output_port_by_index_const(src, i),
                                   bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                                   NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
            goto out;
    }
    do
        run = bt_graph_run(graph);
    while (run == BT_GRAPH_RUN_STATUS_AGAIN);
    if (run != BT_GRAPH_RUN_STATUS_OK) {
        fprintf(stderr, "tracectl-bench-count: reading %s failed\n", dirs[0]);
        goto out;
    }
    ret = 0;
out:
    BT_VALUE_PUT_REF_AND_RESET(inputs);
    BT_VALUE_PUT_REF_AND_RESET(params);
    BT_GRAPH_PUT_REF_AND_RESET(graph);
    BT_PLUGIN_PUT_REF_AND_RESET(plugin);
    return ret;
}

/* Parses "TID,TID,..." into c->tids; -1 if it is not such a list. */
static int parseTids(const char* list, struct counts* c) {
    const char* p = list;

    while (*p != '\0') {
        char* end;
        long long tid = strtoll(p, &end, 10);

        if (end == p || tid <= 0 || c->ntids == MAX_TIDS || (*end != ',' && *end != '\0'))
            return -1;
        c->tids[c->ntids++] = tid;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int main(int argc, char** argv) {
    static struct counts c;
    int first = 1;

    for (;;) {
        if (argc > first && strcmp(argv[first], "--by-kind") == 0) {
            c.byKind = 1;
            first++;
        } else if (argc > first + 1 && strcmp(argv[first], "--tids") == 0) {
            if (parseTids(argv[first + 1], &c) != 0) {
                fprintf(stderr, "tracectl-bench-count: bad --tids %s\n", argv[first + 1]);
                return 2;
            }
            first += 2;
        } else {
            break;
        }
    }
    if (argc <= first) {
        fprintf(stderr, "usage: %s [--by-kind] [--tids TID,...] TRACE_DIR...\n", argv[0]);
        return 2;
    }
    if (countTrace(argv + first, argc - first, &c) != 0)
        return 1;
    printf("{\"events\": %" PRIu64 ", \"discarded\": %" PRIu64 ", \"discarded_messages\": %" PRIu64
           ", \"discarded_unknown\": %" PRIu64,
           c.events, c.discarded, c.discardedMessages, c.discardedUnknown);
    if (c.byKind)
        printf(", \"sched\": %" PRIu64 ", \"syscall\": %" PRIu64, c.sched, c.syscall);
    if (c.ntids > 0)
        printf(", \"own\": %" PRIu64, c.own);
    printf("}\n");
    return 0;
}
