/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracectl-bench-ftrace-read: how fast a tracefs instance's per-CPU ring
 * buffers can be consumed, read(2) of trace_pipe_raw one page at a time
 * (what tracectl-consumerd does) against the memory-mapped interface of
 * Linux 6.10+ (mmap of trace_pipe_raw, the meta page, and
 * TRACE_MMAP_IOCTL_GET_READER; the kernel's
 * Documentation/trace/ring-buffer-map.rst).
 *
 * Usage: tracectl-bench-ftrace-read [BUFFER_KB [ROUNDS]]   (as root)
 *   BUFFER_KB  the instance's buffer_size_kb, per CPU (default 32768)
 *   ROUNDS     fill-and-drain rounds per way (default 5)
 *
 * It makes an instance tracefs/instances/tcbench-read-<pid> (not named
 * tracectl-*: every tracectld removes those at start, live or not) with
 * syscalls:sys_enter_getppid and sys_exit_getppid enabled (trace_clock
 * mono, overwrite off), and per round and way:
 *   1. fill: the buffer is cleared, tracing turned on, and one thread per
 *      CPU, pinned to it, calls getppid(2) until that CPU's buffer drops
 *      events (stats "dropped events" > 0: full); tracing off. So each way
 *      consumes the same produced load: every CPU's buffer, full;
 *   2. drain, timed: one thread reads every CPU's buffer to the end, either
 *      - read: open(trace_pipe_raw, O_NONBLOCK), read(2) of one page until
 *        it returns 0 / EAGAIN; or
 *      - mmap: mmap the meta page and the sub-buffers, then
 *        ioctl(TRACE_MMAP_IOCTL_GET_READER) for each next reader sub-buffer
 *        until the meta page's read count reaches its entries;
 *      either way the event data of each page (the commit size after the
 *      16-byte page header) is summed 8 bytes at a time, so that both
 *      touch every byte once (read(2) has copied it, mmap reads it in
 *      place).
 * It prints, per way, the event data consumed (MB, 10^6 bytes), the best
 * and median MB/s over the rounds, the drain's CPU time per MB, and one
 * JSON line at the end:
 *   {"read_mb_per_s": R, "mmap_mb_per_s": M | null, "mmap_error": "..."}
 * mmap_mb_per_s is null, with the error, where the kernel refuses the
 * mapping (before 6.10: EINVAL/ENODEV) or its ioctl.
 *
 * This machine's kernel headers may not have <linux/trace_mmap.h> (Debian
 * bookworm's linux-libc-dev is 6.1): the meta page's layout and the ioctl
 * are declared below from the kernel's include/uapi/linux/trace_mmap.h as
 * ring-buffer-map.rst describes it (6.10). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<linux/trace_mmap.h>)
#include <linux/trace_mmap.h>
#else
// NOLINTBEGIN(readability-identifier-naming): the kernel's struct, as its
// uapi header <linux/trace_mmap.h> spells it (used instead when installed).
struct trace_buffer_meta {
    uint32_t meta_page_size;
    uint32_t meta_struct_len;
    uint32_t subbuf_size;
    uint32_t nr_subbufs;
    struct {
        uint64_t lost_events;
        uint32_t id;
        uint32_t read;
    } reader;
    uint64_t flags;
    uint64_t entries;
    uint64_t overrun;
    uint64_t read;
    uint64_t Reserved1;
    uint64_t Reserved2;
};
// NOLINTEND(readability-identifier-naming)
#define TRACE_MMAP_IOCTL_GET_READER _IO('R', 0x20)
#endif

/* A sub-buffer: u64 time stamp, then local_t commit (the data size; its
 * top bits flag missed events), then the events. */
#define PAGE_HEADER 16
#define COMMIT_MASK ((1ull << 30) - 1)

static char root[256], inst[512];
static int ncpu;
static volatile uint64_t sink;

static double nowS(void) {
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double threadCpuS(void) {
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int writeFile(const char* rel, const char* value, int trunc) {
    char path[768];
    int fd, ok;

    snprintf(path, sizeof path, "%s/%s", inst, rel);
    fd = open(path, O_WRONLY | (trunc ? O_TRUNC : 0));
    if (fd < 0) {
        fprintf(stderr, "tracectl-bench-ftrace-read: %s: %s\n", path, strerror(errno));
        return -1;
    }
    ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
    if (!ok)
        fprintf(stderr, "tracectl-bench-ftrace-read: writing %s to %s: %s\n", value, path,
                strerror(errno));
    close(fd);
    return ok ? 0 : -1;
}

/* A number from per_cpu/cpuN/stats ("dropped events: N"). */
static uint64_t cpuStat(int cpu, const char* key) {
    char path[768], line[256];
    uint64_t v = 0;
    size_t klen = strlen(key);
    FILE* f;

    snprintf(path, sizeof path, "%s/per_cpu/cpu%d/stats", inst, cpu);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, klen) == 0 && line[klen] == ':')
            v = strtoull(line + klen + 1, NULL, 10);
    fclose(f);
    return v;
}

static void* filler(void* arg) {
    int cpu = (int)(intptr_t)arg;
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    const double began = nowS();

    /* Bounded: a buffer that does not fill in 10 s (the events do not
     * reach it) is drained as it is, and said so. */
    while (cpuStat(cpu, "dropped events") == 0) {
        if (access(inst, F_OK) != 0) {
            fprintf(stderr, "tracectl-bench-ftrace-read: %s was removed (by someone else)\n", inst);
            break;
        }
        if (nowS() - began > 10) {
            fprintf(stderr,
                    "tracectl-bench-ftrace-read: CPU %d: buffer not full after 10 s "
                    "(%llu bytes)\n",
                    cpu, (unsigned long long)cpuStat(cpu, "bytes"));
            break;
        }
        for (int i = 0; i < 20000; i++)
            (void)syscall(SYS_getppid);
    }
    return NULL;
}

/* Clears the buffers and fills every CPU's; returns the bytes the stats
 * say the buffers hold, or 0 on failure. */
static uint64_t fill(void) {
    pthread_t t[1024];
    uint64_t bytes = 0;

    if (writeFile("trace", "", 1) != 0 || writeFile("tracing_on", "1", 0) != 0)
        return 0;
    for (int c = 0; c < ncpu; c++)
        pthread_create(&t[c], NULL, filler, (void*)(intptr_t)c);
    for (int c = 0; c < ncpu; c++)
        pthread_join(t[c], NULL);
    if (writeFile("tracing_on", "0", 0) != 0)
        return 0;
    if (access(inst, F_OK) != 0)
        return 0;
    for (int c = 0; c < ncpu; c++)
        bytes += cpuStat(c, "bytes");
    return bytes;
}

static uint64_t sumWords(const unsigned char* p, size_t n) {
    uint64_t s = 0, w;

    for (size_t i = 0; i + 8 <= n; i += 8) {
        memcpy(&w, p + i, 8);
        s += w;
    }
    return s;
}

static uint64_t pageData(const unsigned char* page, size_t limit) {
    uint64_t commit;

    memcpy(&commit, page + 8, 8);
    commit &= COMMIT_MASK;
    return commit + PAGE_HEADER <= limit ? commit : limit - PAGE_HEADER;
}

static int openPipe(int cpu) {
    char path[768];
    int fd;

    snprintf(path, sizeof path, "%s/per_cpu/cpu%d/trace_pipe_raw", inst, cpu);
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        fprintf(stderr, "tracectl-bench-ftrace-read: %s: %s\n", path, strerror(errno));
    return fd;
}

/* read(2), one page at a time. Returns the event data bytes, or -1. */
static int64_t drainRead(void) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char* buf = malloc(page);
    int64_t total = 0;

    if (buf == NULL)
        return -1;
    for (int c = 0; c < ncpu; c++) {
        int fd = openPipe(c);
        ssize_t n;

        if (fd < 0) {
            free(buf);
            return -1;
        }
        while ((n = read(fd, buf, page)) > 0) {
            uint64_t d = pageData(buf, (size_t)n);

            sink += sumWords(buf + PAGE_HEADER, d);
            total += (int64_t)d;
        }
        if (n < 0 && errno != EAGAIN) {
            fprintf(stderr, "tracectl-bench-ftrace-read: read: %s\n", strerror(errno));
            close(fd);
            free(buf);
            return -1;
        }
        close(fd);
    }
    free(buf);
    return total;
}

static char mmapError[256];
static double mmapSetupS; /* of the last drain_mmap(): open, mmap, munmap, close */
static double mmapIoctlS; /* and its GET_READER ioctls */

/* The mapped interface. Returns the event data bytes, or -1 (mmap_error
 * says why). */
static int64_t drainMmap(void) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int64_t total = 0;

    mmapSetupS = mmapIoctlS = 0;
    for (int c = 0; c < ncpu; c++) {
        double tOpen = nowS(), tLoop, tDone;
        int fd = openPipe(c);
        struct trace_buffer_meta* meta;
        unsigned char* data;
        size_t dataLen;
        uint64_t stuck = 0;
        uint32_t prevId, prevRead;

        if (fd < 0)
            return -1;
        meta = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
        if (meta == MAP_FAILED) {
            snprintf(mmapError, sizeof mmapError, "mmap of trace_pipe_raw: %s", strerror(errno));
            close(fd);
            return -1;
        }
        dataLen = (size_t)meta->subbuf_size * meta->nr_subbufs;
        data = mmap(NULL, dataLen, PROT_READ, MAP_SHARED, fd, meta->meta_page_size);
        if (data == MAP_FAILED) {
            snprintf(mmapError, sizeof mmapError, "mmap of the sub-buffers: %s", strerror(errno));
            munmap(meta, page);
            close(fd);
            return -1;
        }
        /* After the ioctl, the reader sub-buffer counts as read up to
         * meta->reader.read (the whole of it, once the writer has left
         * it): its new data starts at 0 for a new sub-buffer, where the
         * previous call left it for the same one. */
        prevId = meta->reader.id;
        prevRead = meta->reader.read;
        tLoop = nowS();
        while (meta->read < meta->entries) {
            uint64_t before = meta->read;
            const unsigned char* sub;
            uint64_t d, from;
            double tIoctl = nowS();
            int rc = ioctl(fd, TRACE_MMAP_IOCTL_GET_READER);

            mmapIoctlS += nowS() - tIoctl;
            if (rc < 0) {
                if (errno == EAGAIN)
                    break;
                snprintf(mmapError, sizeof mmapError, "ioctl TRACE_MMAP_IOCTL_GET_READER: %s",
                         strerror(errno));
                munmap(data, dataLen);
                munmap(meta, page);
                close(fd);
                return -1;
            }
            sub = data + (size_t)meta->subbuf_size * meta->reader.id;
            d = pageData(sub, meta->subbuf_size);
            from = meta->reader.id == prevId ? prevRead : 0;
            from = from < d ? from : d;
            prevId = meta->reader.id;
            prevRead = meta->reader.read;
            sink += sumWords(sub + PAGE_HEADER + from, d - from);
            total += (int64_t)(d - from);
            if (meta->read == before && ++stuck > 2)
                break; /* nothing new: the rest was lost, not readable */
        }
        tDone = nowS();
        munmap(data, dataLen);
        munmap(meta, page);
        close(fd);
        mmapSetupS += (tLoop - tOpen) + (nowS() - tDone);
    }
    return total;
}

static int cmpDouble(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;

    return x < y ? -1 : x > y;
}

static void cleanup(void) {
    if (inst[0] != '\0') {
        writeFile("tracing_on", "0", 0);
        writeFile("events/syscalls/sys_enter_getppid/enable", "0", 0);
        writeFile("events/syscalls/sys_exit_getppid/enable", "0", 0);
        if (rmdir(inst) != 0)
            fprintf(stderr, "tracectl-bench-ftrace-read: rmdir %s: %s\n", inst, strerror(errno));
    }
}

int main(int argc, char** argv) {
    const char* roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    long kb = argc > 1 ? strtol(argv[1], NULL, 10) : 32768;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    double rate[2][64], cpuPerMb[2] = {0, 0}, mb[2] = {0, 0}, steady[64], setupMs = 0;
    int done[2] = {0, 0};
    const char* way[2] = {"read", "mmap"};
    char value[32];
    struct stat st;

    if (argc > 3 || kb <= 0 || rounds <= 0 || rounds > 64) {
        fprintf(stderr, "usage: %s [BUFFER_KB [ROUNDS (1-64)]]\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof roots / sizeof roots[0] && root[0] == '\0'; i++) {
        snprintf(inst, sizeof inst, "%s/instances", roots[i]);
        if (stat(inst, &st) == 0 && access(inst, W_OK) == 0)
            snprintf(root, sizeof root, "%s", roots[i]);
    }
    inst[0] = '\0';
    if (root[0] == '\0') {
        fprintf(stderr, "tracectl-bench-ftrace-read: no writable tracefs (run as root)\n");
        return 1;
    }
    ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1 || ncpu > 1024)
        ncpu = 1;
    snprintf(inst, sizeof inst, "%s/instances/tcbench-read-%d", root, (int)getpid());
    if (mkdir(inst, 0700) != 0) {
        fprintf(stderr, "tracectl-bench-ftrace-read: mkdir %s: %s\n", inst, strerror(errno));
        return 1;
    }
    atexit(cleanup);
    snprintf(value, sizeof value, "%ld", kb);
    if (writeFile("tracing_on", "0", 0) != 0 || writeFile("buffer_size_kb", value, 0) != 0 ||
        writeFile("trace_clock", "mono", 0) != 0 || writeFile("options/overwrite", "0", 0) != 0 ||
        writeFile("events/syscalls/sys_enter_getppid/enable", "1", 0) != 0 ||
        writeFile("events/syscalls/sys_exit_getppid/enable", "1", 0) != 0)
        return 1;
    printf("# %d CPUs, instance buffer %ld KiB per CPU, sub-buffers of %ld bytes; "
           "syscalls:sys_{enter,exit}_getppid; %d round(s) per way\n",
           ncpu, kb, sysconf(_SC_PAGESIZE), rounds);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            int w = (r + k) % 2; /* alternate which way goes first */
            uint64_t produced;
            int64_t got;
            double t0, c0, t1, c1;

            if (w == 1 && mmapError[0] != '\0')
                continue;
            produced = fill();
            if (produced == 0)
                return 1;
            t0 = nowS();
            c0 = threadCpuS();
            got = w == 0 ? drainRead() : drainMmap();
            t1 = nowS();
            c1 = threadCpuS();
            if (got < 0) {
                if (w == 1 && mmapError[0] != '\0') {
                    printf("mmap: unavailable: %s\n", mmapError);
                    continue;
                }
                return 1;
            }
            if (w == 1) {
                steady[done[1]] = (double)got / 1e6 / (t1 - t0 - mmapSetupS);
                setupMs += mmapSetupS * 1e3;
            }
            rate[w][done[w]++] = (double)got / 1e6 / (t1 - t0);
            mb[w] = (double)got / 1e6;
            cpuPerMb[w] += (c1 - c0) / ((double)got / 1e6);
            printf("%-4s round %d: %.1f MB of event data (stats: %.1f MB in the buffers) in "
                   "%.1f ms: %.0f MB/s, %.1f us CPU per MB\n",
                   way[w], r, (double)got / 1e6, (double)produced / 1e6, (t1 - t0) * 1e3,
                   rate[w][done[w] - 1], (c1 - c0) * 1e6 / ((double)got / 1e6));
            if (w == 1)
                printf("     of which mapping and unmapping %.1f ms (%.0f MB/s without), "
                       "the ioctls %.1f ms\n",
                       mmapSetupS * 1e3, steady[done[1] - 1], mmapIoctlS * 1e3);
            fflush(stdout);
        }
    double best[2] = {0, 0}, median[2] = {0, 0};

    for (int w = 0; w < 2; w++) {
        if (done[w] == 0)
            continue;
        qsort(rate[w], (size_t)done[w], sizeof rate[w][0], cmpDouble);
        best[w] = rate[w][done[w] - 1];
        median[w] = rate[w][done[w] / 2];
        printf("%s: %.1f MB per round; best %.0f MB/s, median %.0f MB/s; %.1f us CPU per MB\n",
               way[w], mb[w], best[w], median[w], cpuPerMb[w] / done[w] * 1e6);
    }
    double steadyMedian = 0;

    if (done[1] > 0) {
        qsort(steady, (size_t)done[1], sizeof steady[0], cmpDouble);
        steadyMedian = steady[done[1] / 2];
        printf("mmap without mapping and unmapping (%.1f ms a drain): median %.0f MB/s\n",
               setupMs / done[1], steadyMedian);
        printf("mmap / read (medians): %.2f; without the mapping: %.2f\n", median[1] / median[0],
               steadyMedian / median[0]);
    }
    printf("{\"read_mb_per_s\": %.1f, \"read_best_mb_per_s\": %.1f, ", median[0], best[0]);
    if (done[1] > 0)
        printf("\"mmap_mb_per_s\": %.1f, \"mmap_best_mb_per_s\": %.1f, "
               "\"mmap_steady_mb_per_s\": %.1f, \"mmap_error\": null}\n",
               median[1], best[1], steadyMedian);
    else
        printf("\"mmap_mb_per_s\": null, \"mmap_best_mb_per_s\": null, \"mmap_error\": \"%s\"}\n",
               mmapError);
    return 0;
}
