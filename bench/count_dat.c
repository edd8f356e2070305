/* tracectl-bench-count-dat: counts the event records of a trace-cmd
 * `.dat` file with libtracecmd (trace-cmd's own reader), at C speed:
 * bench/compare's kernel scenario puts trace-cmd beside tracectl, and
 * `trace-cmd report | wc -l` reads ~0.7 M events/s on these machines,
 * too slow for traces of millions of events. The counterpart of
 * tracectl-bench-count (bench/count_trace.c) for tracectl's CTF traces.
 *
 * Usage: tracectl-bench-count-dat [--pids PID,...] FILE.dat
 *   --pids  also count the records whose common_pid (the thread that was
 *           running when the event was recorded) is one of these thread ids
 *
 * Prints one JSON line:
 *   {"events": <event records>, "sched": <records of system "sched">,
 *    "syscall": <records of system "syscalls">, "missed": <events the
 *    pages say were lost before them>, "missed_unknown": <pages that say
 *    events were lost without saying how many>, "own": <records of --pids>}
 * Every buffer of the file is counted: the top instance and each `-B`
 * instance. "missed" comes from the ring buffer pages' RB_MISSED_EVENTS
 * flag and count (libtraceevent's kbuffer, `missed_events` of each
 * record): ftrace sets it when a writer overwrote pages the reader had not
 * read (overwrite mode). Events discarded because the buffer was full in
 * discard mode (`options/overwrite` 0) are not marked in the pages: they
 * are the "dropped events" of each CPU's `stats`, which trace-cmd stores
 * in the file (`trace-cmd report --stat`); bench/compare reads those.
 * Exit status: 0, or 1 if the file cannot be read. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-cmd.h>

#define MAX_PIDS 4096

struct counts {
    uint64_t events;
    uint64_t sched;
    uint64_t syscall;
    uint64_t missed;
    uint64_t missedUnknown;
    uint64_t own;
    int pids[MAX_PIDS];
    int npids;
};

static int isOwn(const struct counts* c, int pid) {
    for (int i = 0; i < c->npids; i++)
        if (c->pids[i] == pid)
            return 1;
    return 0;
}

static int countRecord(struct tracecmd_input* handle, struct tep_record* record, int cpu,
                       void* data) {
    struct counts* c = data;
    struct tep_handle* tep = tracecmd_get_tep(handle);
    struct tep_event* event = tep_find_event(tep, tep_data_type(tep, record));

    (void)cpu;
    c->events++;
    if (record->missed_events > 0)
        c->missed += (uint64_t)record->missed_events;
    else if (record->missed_events < 0)
        c->missedUnknown++;
    if (event != NULL && event->system != NULL) {
        if (strcmp(event->system, "sched") == 0)
            c->sched++;
        else if (strcmp(event->system, "syscalls") == 0)
            c->syscall++;
    }
    if (c->npids > 0 && isOwn(c, tep_data_pid(tep, record)))
        c->own++;
    return 0;
}

/* Parses "PID,PID,..." into c->pids; -1 if it is not such a list. */
static int parsePids(const char* list, struct counts* c) {
    const char* p = list;

    while (*p != '\0') {
        char* end;
        long pid = strtol(p, &end, 10);

        if (end == p || pid <= 0 || c->npids == MAX_PIDS || (*end != ',' && *end != '\0'))
            return -1;
        c->pids[c->npids++] = (int)pid;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int main(int argc, char** argv) {
    static struct counts c;
    struct tracecmd_input* handle;
    const char* file;
    int first = 1;

    if (argc > 2 && strcmp(argv[1], "--pids") == 0) {
        if (parsePids(argv[2], &c) != 0) {
            fprintf(stderr, "tracectl-bench-count-dat: bad --pids %s\n", argv[2]);
            return 2;
        }
        first = 3;
    }
    if (argc != first + 1) {
        fprintf(stderr, "usage: %s [--pids PID,...] FILE.dat\n", argv[0]);
        return 2;
    }
    file = argv[first];
    tracecmd_set_loglevel(TEP_LOG_WARNING);
    handle = tracecmd_open(file, TRACECMD_FL_LOAD_NO_PLUGINS);
    if (handle == NULL) {
        fprintf(stderr, "tracectl-bench-count-dat: cannot open %s\n", file);
        return 1;
    }
    if (tracecmd_iterate_events(handle, NULL, 0, countRecord, &c) < 0) {
        fprintf(stderr, "tracectl-bench-count-dat: reading %s failed\n", file);
        tracecmd_close(handle);
        return 1;
    }
    for (int i = 0; i < tracecmd_buffer_instances(handle); i++) {
        struct tracecmd_input* instance = tracecmd_buffer_instance_handle(handle, i);

        if (instance == NULL) {
            fprintf(stderr, "tracectl-bench-count-dat: %s: buffer %s unreadable\n", file,
                    tracecmd_buffer_instance_name(handle, i));
            tracecmd_close(handle);
            return 1;
        }
        if (tracecmd_iterate_events(instance, NULL, 0, countRecord, &c) < 0) {
            fprintf(stderr, "tracectl-bench-count-dat: reading %s's buffer %s failed\n", file,
                    tracecmd_buffer_instance_name(handle, i));
            tracecmd_close(instance);
            tracecmd_close(handle);
            return 1;
        }
        tracecmd_close(instance);
    }
    tracecmd_close(handle);
    printf("{\"events\": %" PRIu64 ", \"sched\": %" PRIu64 ", \"syscall\": %" PRIu64
           ", \"missed\": %" PRIu64 ", \"missed_unknown\": %" PRIu64 ", \"own\": %" PRIu64 "}\n",
           c.events, c.sched, c.syscall, c.missed, c.missedUnknown, c.own);
    return 0;
}
