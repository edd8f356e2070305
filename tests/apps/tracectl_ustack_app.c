// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A program of ours for D's ustack() (tests/integration/dtrace_pid_test.cpp):
// main() calls tracectl_ustack_caller_a(), _b() and _c() once each, which
// call tracectl_ustack_work(id) 2, 3 and 5 times (id 1, 2, 3); work fires
// USDT probe tracectl_ustack:hit(id) each time. So the stacks at work's entry
// and at the probe are three, known, with known counts. Built with frame
// pointers (ftrace walks user stacks by them) and without sibling calls (each
// caller's frame stays on the stack).
//
//   tracectl-ustack-app [MARK_FILE]
//
// Prints the sum of the work's results. With MARK_FILE, it first creates that
// file: the mark of having run (a refusal before the run leaves none).
#include <fcntl.h>
#include <stdio.h>
#include <sys/sdt.h>
#include <unistd.h>

// The callers' call counts, read at run time so that no loop is unrolled into
// several call sites.
static volatile int callsA = 2, callsB = 3, callsC = 5;

// A call after the probe, so that work is no leaf function and sets up its
// frame before the probe (GCC omits a leaf's despite
// -mno-omit-leaf-frame-pointer when it uses no stack): the probe's stack then
// has work's caller.
__attribute__((noinline)) int tracectlUstackChecked(int value) {
    __asm__ volatile("" ::: "memory");
    return value;
}

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
__attribute__((noinline)) int tracectl_ustack_work(int id) {
    DTRACE_PROBE1(tracectl_ustack, hit, id);
    return tracectlUstackChecked(id);
}

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
__attribute__((noinline)) int tracectl_ustack_caller_a(void) {
    int sum = 0;
    for (int i = 0; i < callsA; ++i)
        sum += tracectl_ustack_work(1);
    return sum;
}

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
__attribute__((noinline)) int tracectl_ustack_caller_b(void) {
    int sum = 0;
    for (int i = 0; i < callsB; ++i)
        sum += tracectl_ustack_work(2);
    return sum;
}

// NOLINTNEXTLINE(readability-identifier-naming): the tests find it by this name
__attribute__((noinline)) int tracectl_ustack_caller_c(void) {
    int sum = 0;
    for (int i = 0; i < callsC; ++i)
        sum += tracectl_ustack_work(3);
    return sum;
}

int main(int argc, char** argv) {
    if (argc > 1) {
        const int fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return 3;
        close(fd);
    }
    const int sum =
        tracectl_ustack_caller_a() + tracectl_ustack_caller_b() + tracectl_ustack_caller_c();
    printf("%d\n", sum);
    return 0;
}
