// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A program of ours for userspace probes (tests/integration/uprobe_test.cpp,
// bench/uprobe): no LTTng-UST, only a known function and a USDT probe.
//
//   tracectl-uprobe-app N M [WAIT_FD]
//
// calls tracectl_uprobe_work(i) for i = 0..N-1 (it returns 3i+1), then fires
// USDT probe tracectl_test:tick (arguments: int i, long 1000i+7) for
// i = 0..M-1, each from its own function so that the probe has one site.
// Prints the sum of the work's results. With WAIT_FD, it first reads one
// byte from that fd (the test says when its probes are in place).
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

// NOLINTNEXTLINE(readability-identifier-naming): the tests probe it by this name
__attribute__((noinline)) int tracectl_uprobe_work(int i) {
    __asm__ volatile("" ::: "memory"); // not folded into the caller
    return 3 * i + 1;
}

// NOLINTNEXTLINE(readability-identifier-naming): the tests probe it by this name
__attribute__((noinline)) void tracectl_uprobe_tick(int i, long value) {
    DTRACE_PROBE2(tracectl_test, tick, i, value);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s N M [WAIT_FD]\n", argv[0]);
        return 2;
    }
    const long n = strtol(argv[1], NULL, 10);
    const long m = strtol(argv[2], NULL, 10);
    if (argc > 3) {
        char byte;
        if (read(atoi(argv[3]), &byte, 1) != 1)
            return 3;
    }
    long sum = 0;
    for (long i = 0; i < n; ++i)
        sum += tracectl_uprobe_work((int)i);
    for (long i = 0; i < m; ++i)
        tracectl_uprobe_tick((int)i, 1000 * i + 7);
    printf("%ld\n", sum);
    return 0;
}
