/* tracectl-hostile-app: an LTTng-UST instrumented program that spoils the
 * ring buffers it shares with the consumer, for the tests that check that
 * one such app harms nobody else. Built against Debian's liblttng-ust and
 * nothing of tracectl.
 *
 * Usage: tracectl-hostile-app punch|truncate COUNT LINGER_MS
 *   Emits COUNT tracectl_demo:tick events (so that its channel is
 *   registered and its buffers hold packets), then, on every ring-buffer
 *   shm fd it was given (the memfds "tracectl-ust-stream" and the shm
 *   files of /dev/shm, as lttng-consumerd makes them), either punches a hole
 *   over the whole file (fallocate(FALLOC_FL_PUNCH_HOLE): the pages read
 *   back as zeros) or truncates it to 0 bytes (ftruncate: the pages are
 *   gone, reading them faults). Emits nothing more, lingers LINGER_MS
 *   milliseconds (the consumer's timers and flushes meet the spoiled
 *   buffers while it lives), then exits, which makes the consumer flush and
 *   drain them.
 *   Prints "ready <pid>" once registered, then "spoiled <n> of <m>" (files
 *   spoiled, files tried) on stdout.
 * Exit status: 0, 2 on bad arguments, 3 if it found no buffer to spoil. */
#define _GNU_SOURCE
#include "tracectl_demo_tp.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int isRingBuffer(int fd) {
    char link[64], target[256];
    ssize_t n;

    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, target, sizeof target - 1);
    if (n < 0)
        return 0;
    target[n] = '\0';
    return strncmp(target, "/memfd:tracectl-ust-stream", 26) == 0 ||
           strncmp(target, "/dev/shm/", 9) == 0;
}

/* Spoils every ring-buffer shm fd of the process; returns how many it
 * spoiled, `*tried` how many it found. */
static int spoil(int punch, int* tried) {
    DIR* dir = opendir("/proc/self/fd");
    struct dirent* e;
    int spoiled = 0;

    *tried = 0;
    if (dir == NULL)
        return 0;
    while ((e = readdir(dir)) != NULL) {
        int fd = atoi(e->d_name);
        struct stat st;

        if (e->d_name[0] == '.' || fd == dirfd(dir) || !isRingBuffer(fd) || fstat(fd, &st) != 0)
            continue;
        ++*tried;
        if (punch ? fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, st.st_size) == 0
                  : ftruncate(fd, 0) == 0)
            ++spoiled;
    }
    closedir(dir);
    return spoiled;
}

int main(int argc, char** argv) {
    char* end = NULL;
    unsigned long count, lingerMs;
    int punch, spoiled, tried;
    uint8_t bytes[5] = {1, 2, 3, 4, 5};
    struct timespec ts;

    if (argc != 4 || (strcmp(argv[1], "punch") != 0 && strcmp(argv[1], "truncate") != 0))
        goto usage;
    punch = strcmp(argv[1], "punch") == 0;
    count = strtoul(argv[2], &end, 10);
    if (*argv[2] == '\0' || *end != '\0')
        goto usage;
    lingerMs = strtoul(argv[3], &end, 10);
    if (*argv[3] == '\0' || *end != '\0')
        goto usage;

    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (unsigned long seq = 0; seq < count; seq++) {
        int32_t triple[3] = {(int32_t)seq, 0, 0};

        lttng_ust_tracepoint(tracectl_demo, tick, seq, "hostile", 0.0, triple, bytes, 5);
    }
    spoiled = spoil(punch, &tried);
    printf("spoiled %d of %d\n", spoiled, tried);
    fflush(stdout);
    ts.tv_sec = (time_t)(lingerMs / 1000);
    ts.tv_nsec = (long)(lingerMs % 1000) * 1000000;
    while (nanosleep(&ts, &ts) != 0)
        ;
    return tried > 0 ? 0 : 3;
usage:
    fprintf(stderr, "usage: %s punch|truncate COUNT LINGER_MS\n", argv[0]);
    return 2;
}
