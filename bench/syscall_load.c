/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracectl-bench-syscall-load: a paced load of cheap system calls and
 * context switches, for bench/compare's kernel scenario.
 *
 * Usage: tracectl-bench-syscall-load RATE DURATION_MS [START_FILE [PERIOD_US]]
 *   RATE         system calls per second, over all CPUs
 *   DURATION_MS  how long to make them
 *   START_FILE   when given: print "ready", then wait until the file exists
 *   PERIOD_US    pacing period (default 1000)
 *
 * One worker per CPU, pinned to it, makes RATE/CPUs system calls a second:
 * getppid(2) mostly, and one round of a pipe ping-pong out of every
 * PINGPONG_EVERY calls with a partner thread pinned to the same CPU (the
 * worker writes a byte, blocks reading the answer; the partner, woken,
 * reads it and writes it back): 4 calls (write, read, write, read) and 2
 * context switches with their wake-ups, so sched_switch and sched_wakeup
 * come with the system calls. Each worker paces itself on CLOCK_MONOTONIC
 * as tracectl-bench-emitter does: call i is due at start + i/rate; every
 * PERIOD_US it makes the calls due by then back to back and sleeps until
 * the next period.
 *
 * Prints, at the end, one line:
 *   syscalls N pingpongs P seconds S rate R
 * N counts every call of the workers and partners (getppid, read, write),
 * P the ping-pong rounds (2 context switches each), S the slowest worker's
 * time, R = N / S. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PINGPONG_EVERY 16 /* 4 of every 16 calls are a ping-pong round */

struct worker {
    pthread_t thread, partner;
    int cpu;
    uint64_t rate;  /* calls/s of this worker (partner's included) */
    uint64_t calls; /* made by the worker and its partner */
    uint64_t rounds;
    double seconds;
    int ping[2], pong[2];
};

static uint64_t durationNs, periodNs;
static const char* startFile;

static uint64_t nowNs(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleepUntil(uint64_t t) {
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void pin(int cpu) {
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* partnerMain(void* arg) {
    struct worker* w = arg;
    char byte;

    pin(w->cpu);
    while (read(w->ping[0], &byte, 1) == 1)
        if (write(w->pong[1], &byte, 1) != 1)
            break;
    return NULL;
}

static void* workerMain(void* arg) {
    struct worker* w = arg;
    uint64_t began, dueI = 0, made = 0, rounds = 0;
    char byte = 'x';

    pin(w->cpu);
    began = nowNs();
    for (;;) {
        uint64_t t = nowNs() - began;
        uint64_t target;

        if (t >= durationNs)
            target = w->rate * durationNs / 1000000000u;
        else
            target = (uint64_t)((double)w->rate * (double)t / 1e9);
        dueI = target;
        while (made < dueI) {
            if (made % PINGPONG_EVERY == 0 && made + 4 <= dueI) {
                if (write(w->ping[1], &byte, 1) != 1 || read(w->pong[0], &byte, 1) != 1) {
                    perror("ping-pong");
                    exit(1);
                }
                made += 4; /* the partner's read and write too */
                rounds++;
            } else {
                (void)syscall(SYS_getppid);
                made++;
            }
        }
        if (t >= durationNs)
            break;
        sleepUntil(began + (t / periodNs + 1) * periodNs);
    }
    w->seconds = (double)(nowNs() - began) / 1e9;
    w->calls = made;
    w->rounds = rounds;
    return NULL;
}

int main(int argc, char** argv) {
    uint64_t rate, calls = 0, rounds = 0;
    double seconds = 0;
    long ncpu;
    struct worker* workers;

    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s RATE DURATION_MS [START_FILE [PERIOD_US]]\n", argv[0]);
        return 2;
    }
    rate = strtoull(argv[1], NULL, 10);
    durationNs = strtoull(argv[2], NULL, 10) * 1000000u;
    startFile = argc > 3 ? argv[3] : NULL;
    periodNs = (argc > 4 ? strtoull(argv[4], NULL, 10) : 1000) * 1000u;
    if (periodNs == 0)
        periodNs = 1000;
    ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    workers = calloc((size_t)ncpu, sizeof *workers);
    if (workers == NULL)
        return 1;
    for (long i = 0; i < ncpu; i++) {
        struct worker* w = &workers[i];

        w->cpu = (int)i;
        w->rate = rate / (uint64_t)ncpu;
        if (pipe(w->ping) != 0 || pipe(w->pong) != 0) {
            perror("pipe");
            return 1;
        }
        if (pthread_create(&w->partner, NULL, partnerMain, w) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    if (startFile != NULL) {
        printf("ready\n");
        fflush(stdout);
        while (access(startFile, F_OK) != 0)
            usleep(1000);
    }
    for (long i = 0; i < ncpu; i++)
        if (pthread_create(&workers[i].thread, NULL, workerMain, &workers[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (long i = 0; i < ncpu; i++) {
        struct worker* w = &workers[i];

        pthread_join(w->thread, NULL);
        close(w->ping[1]); /* the partner's read returns 0: it ends */
        pthread_join(w->partner, NULL);
        calls += w->calls;
        rounds += w->rounds;
        if (w->seconds > seconds)
            seconds = w->seconds;
    }
    printf("syscalls %llu pingpongs %llu seconds %.6f rate %.0f\n", (unsigned long long)calls,
           (unsigned long long)rounds, seconds, seconds > 0 ? (double)calls / seconds : 0.0);
    free(workers);
    return 0;
}
