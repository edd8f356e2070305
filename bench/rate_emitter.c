/* tracectl-bench-emitter: emits tracectl_demo:tick events at a fixed rate,
 * an ordinary LTTng-UST application (Debian's liblttng-ust, the tracectl_demo
 * provider of tests/apps, nothing of tracectl).
 *
 * Usage: tracectl-bench-emitter RATE DURATION_MS [START_FILE [PERIOD_US]]
 *   RATE         events per second (> 0)
 *   DURATION_MS  how long to emit, in milliseconds: RATE * DURATION_MS / 1000
 *                tick events, seq 0, 1, ..., then one tracectl_demo:done
 *   START_FILE   if given and not "-", wait (up to 60 s) until that file
 *                exists before emitting, so several emitters start together
 *                after they have all registered
 *   PERIOD_US    pacing period in microseconds (default 1000). Every period
 *                the emitter writes, back to back, the events that are due
 *                by then (event i is due at start + i / RATE), then sleeps
 *                until the next period: the CPU it uses grows with RATE, as
 *                an application that does real work between events would.
 *                0: no sleeping, busy-wait on clock_gettime(CLOCK_MONOTONIC)
 *                until each event is due (one core at 100 % whatever RATE).
 *
 * Prints "ready <pid>" once registered, and at the end one line
 *   emitted <ticks+1> seconds <emission time in s> rate <events/s achieved>
 * The achieved rate is below RATE when the emitter cannot keep up (the
 * tracepoint itself costs ~0.2 us); it never runs ahead of RATE.
 * Exit status: 0, or 2 on bad arguments. */
#include "tracectl_demo_tp.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int parseU64(const char* s, uint64_t* out) {
    char* end = NULL;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno != 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* CLOCK_MONOTONIC, in nanoseconds. */
static uint64_t nowNs(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`. */
static void sleepUntil(uint64_t deadlineNs) {
    struct timespec ts = {(time_t)(deadlineNs / 1000000000u), (long)(deadlineNs % 1000000000u)};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Number of events due `elapsed_ns` after the start at `rate` events/s. */
static uint64_t dueBy(uint64_t elapsedNs, uint64_t rate) {
    return (uint64_t)((unsigned __int128)elapsedNs * rate / 1000000000u);
}

static void emit(uint64_t seq) {
    static const char* const texts[] = {"alpha", "beta", "gamma", "delta"};
    const char* text = texts[seq % 4];
    int32_t triple[3] = {(int32_t)seq, -(int32_t)seq, (int32_t)(seq * 2)};
    uint8_t bytes[5] = {1, 2, 3, 4, 5};
    size_t nbytes = strlen(text) < 5 ? strlen(text) : 5;

    lttng_ust_tracepoint(tracectl_demo, tick, seq, text, (double)seq / 4.0, triple, bytes, nbytes);
}

int main(int argc, char** argv) {
    uint64_t rate = 0, durationMs = 0, periodUs = 1000, total, seq = 0, start, end;
    const char* startFile = argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL;

    if (argc < 3 || argc > 5 || parseU64(argv[1], &rate) != 0 || rate == 0 ||
        parseU64(argv[2], &durationMs) != 0 || (argc > 4 && parseU64(argv[4], &periodUs) != 0)) {
        fprintf(stderr, "usage: %s RATE DURATION_MS [START_FILE [PERIOD_US]]\n", argv[0]);
        return 2;
    }
    total = (uint64_t)((unsigned __int128)rate * durationMs / 1000u);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (startFile != NULL) {
        for (int i = 0; i < 60000 && access(startFile, F_OK) != 0; i++)
            usleep(1000);
    }

    start = nowNs();
    if (periodUs == 0) {
        while (seq < total) {
            if (dueBy(nowNs() - start, rate) > seq)
                emit(seq++);
        }
    } else {
        const uint64_t periodNs = periodUs * 1000u;

        for (uint64_t next = start + periodNs; seq < total; next += periodNs) {
            uint64_t due = dueBy(nowNs() - start, rate);

            if (due > total)
                due = total;
            while (seq < due)
                emit(seq++);
            /* Behind by more than a period: do not sleep, catch up. */
            if (nowNs() < next)
                sleepUntil(next);
        }
    }
    end = nowNs();
    lttng_ust_tracepoint(tracectl_demo, done, total);
    printf("emitted %llu seconds %.6f rate %.0f\n", (unsigned long long)(total + 1),
           (double)(end - start) / 1e9, (double)total * 1e9 / (double)(end - start));
    return 0;
}
