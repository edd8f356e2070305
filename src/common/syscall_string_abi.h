/* The ABI between the system-call string program (src/bpf/syscall_strings.bpf.c)
 * and userspace (the daemon's loader src/daemon/kernel/syscall_string_probes.*,
 * the consumer's reader src/consumer/kernel/syscall_string_ring.*): the
 * ring-buffer record and the counters. A C header: the BPF program includes
 * it after vmlinux.h; userspace gets the __u8.. types from <linux/types.h>.
 *
 * The program runs at `syscalls:sys_enter_<name>` (a perf-event tracepoint
 * program, one attachment per system call whose arguments hold user
 * strings; the attachment's BPF cookie is the mask of those arguments). Its
 * context is ftrace's record of that event (struct syscall_trace_enter,
 * kernel/trace/trace_syscalls.c): common fields (8 bytes), int nr at
 * offset 8, then the arguments, one unsigned long each, from offset 16. */
#ifndef TRACECTL_SYSCALL_STRING_ABI_H
#define TRACECTL_SYSCALL_STRING_ABI_H

#if !defined(__VMLINUX_H__) && !defined(__bpf__)
#include <linux/types.h>
#endif

/* Where the record of a sys_enter_<name> event keeps the system call's
 * number and its arguments (bytes from the record's start). */
#define TRACECTL_SYSCALL_NR_OFFSET 8
#define TRACECTL_SYSCALL_ARGS_OFFSET 16
#define TRACECTL_SYSCALL_MAX_ARGS 6

/* The longest string copied, NUL included (PATH_MAX): longer ones are cut
 * there and flagged TRACECTL_SYSCALL_STRING_TRUNCATED. */
#define TRACECTL_SYSCALL_STRING_MAX 4096

/* flags */
#define TRACECTL_SYSCALL_STRING_FAULT 1u     /* the pointer could not be read: no text */
#define TRACECTL_SYSCALL_STRING_TRUNCATED 2u /* TRACECTL_SYSCALL_STRING_MAX reached */

/* NOLINTBEGIN(readability-identifier-naming): C names shared with the BPF
 * program (src/bpf/syscall_strings.bpf.c, C), which spells them as here. */

/* One string argument of one system call, as one ring-buffer sample:
 * this header, then `length` bytes of text (no NUL). */
struct tracectl_syscall_string {
    __u64 timestamp; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
    __u64 pointer;   /* the argument's value (the user address) */
    __u32 tid;       /* bpf_get_current_pid_tgid() & 0xffffffff */
    __s32 nr;        /* the system call's number (the record's nr) */
    __u16 length;    /* bytes of text that follow */
    __u8 arg;        /* the argument's index, 0..5 */
    __u8 flags;      /* TRACECTL_SYSCALL_STRING_* */
    __u32 reserved;
};

/* The `counters` map's one value (BPF_F_MMAPABLE ARRAY, key 0). */
struct tracectl_syscall_string_counters {
    __u64 dropped; /* strings the ring buffer had no room for */
};

/* NOLINTEND(readability-identifier-naming) */

#endif
