// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A program of ours for D's pid provider in shared libraries (tests/integration/
// dtrace_pid_test.cpp): main() calls libc's getppid() wrapper N times, through a
// volatile function pointer (so that the compiler can neither elide nor inline the
// calls, and they go through libc.so.6's exported getppid), and nothing else of this
// program calls it. No LTTng-UST.
//
//   tracectl-libc-app N
//
// Prints the sum of the results (N times the parent's pid).
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tracectl-libc-app N\n");
        return 2;
    }
    const long n = strtol(argv[1], NULL, 10);
    pid_t (*volatile call)(void) = getppid;
    long sum = 0;
    for (long i = 0; i < n; ++i)
        sum += (long)call();
    printf("%ld\n", sum);
    return 0;
}
