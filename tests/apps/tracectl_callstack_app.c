// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A program of ours for the callstack-user context (tests/integration/
// callstack_test.cpp, bench/callstack): main() calls
// tracectl_callstack_caller() N times, which makes the getppid system call
// itself (an inline `syscall` instruction, so that the user stack's first
// frame, the user instruction pointer, lies in that function, and no libc
// wrapper without a frame pointer hides it). Built with frame pointers:
// ftrace walks user stacks by them.
//
//   tracectl-callstack-app [--thread] N [WAIT_FD]
//
// Prints its pid, then the sum of the system call's results. With WAIT_FD,
// it then reads one byte from that fd before it exits (the test says when:
// the consumer reads a process's mappings while it lives). With --thread,
// the calls are a second thread's: main starts tracectl_callstack_thread(),
// which prints its tid (after the pid) and calls tracectl_callstack_caller()
// N times, and joins it.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// A call after the system call, so that the caller is no leaf function
// and sets up its frame (GCC omits a leaf's despite
// -mno-omit-leaf-frame-pointer when it uses no stack).
__attribute__((noinline)) long tracectlCallstackChecked(long value) {
    __asm__ volatile("" ::: "memory");
    return value;
}

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
__attribute__((noinline)) long tracectl_callstack_caller(void) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
    return tracectlCallstackChecked(ret);
}

static long threadCalls, threadSum;

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
__attribute__((noinline)) void* tracectl_callstack_thread(void* unused) {
    (void)unused;
    printf("%ld\n", (long)syscall(SYS_gettid));
    long sum = 0;
    for (long i = 0; i < threadCalls; ++i)
        sum += tracectl_callstack_caller();
    threadSum = sum;
    __asm__ volatile("" ::: "memory"); // no sibling call: the frame stays
    return NULL;
}

int main(int argc, char** argv) {
    const int threaded = argc > 1 && strcmp(argv[1], "--thread") == 0;
    if (threaded) {
        --argc;
        ++argv;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: tracectl-callstack-app [--thread] N [WAIT_FD]\n");
        return 2;
    }
    const long n = strtol(argv[1], NULL, 10);
    printf("%ld\n", (long)getpid());
    long sum = 0;
    if (threaded) {
        pthread_t thread;
        threadCalls = n;
        if (pthread_create(&thread, NULL, tracectl_callstack_thread, NULL) != 0 ||
            pthread_join(thread, NULL) != 0)
            return 3;
        sum = threadSum;
    } else {
        for (long i = 0; i < n; ++i)
            sum += tracectl_callstack_caller();
    }
    printf("%ld\n", sum);
    fflush(stdout);
    if (argc > 2) {
        char byte;
        if (read(atoi(argv[2]), &byte, 1) != 1)
            return 3;
    }
    return 0;
}
