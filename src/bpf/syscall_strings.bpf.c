// SPDX-License-Identifier: LGPL-2.1-or-later
/* System-call string arguments copied from user memory, as lttng-modules'
 * typed system calls record them (`filename = "/etc/passwd"`), where
 * ftrace's syscalls:sys_enter_<name> records only the pointer. Attached to
 * each sys_enter_<name> tracepoint whose arguments hold strings (perf-event
 * tracepoint programs: the kernel calls them only for the system calls they
 * are attached to, so others cost nothing); the attachment's cookie says
 * which arguments (bit i: argument i). Each string becomes one record
 * (src/common/syscall_string_abi.h) in the `strings` ring buffer, which the
 * consumer matches with ftrace's record of the same call. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#include "syscall_string_abi.h"

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4096); /* set by the loader before load */
} strings SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct tracectl_syscall_string_counters);
} counters SEC(".maps");

/* One record being built: the header, then the text (a string of
 * TRACECTL_SYSCALL_STRING_MAX bytes is too large for the BPF stack). */
struct scratch {
    struct tracectl_syscall_string head;
    char text[TRACECTL_SYSCALL_STRING_MAX];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct scratch);
} scratch SEC(".maps");

/* Written by the daemon (the skeleton's mmap'ed .bss): 0 records nothing. */
__u32 enabled = 0;

static __always_inline void copy_arg(void *ctx, struct scratch *s, __u32 tid, __s32 nr,
                                     __u32 arg) {
    __u64 pointer = 0;
    bpf_probe_read_kernel(&pointer, sizeof pointer,
                          (char *)ctx + TRACECTL_SYSCALL_ARGS_OFFSET + 8 * arg);
    long n = bpf_probe_read_user_str(s->text, sizeof s->text, (const void *)pointer);
    __u32 length = 0;
    __u8 flags = 0;
    if (n <= 0) {
        flags = TRACECTL_SYSCALL_STRING_FAULT;
    } else {
        length = (__u32)n - 1; /* n counts the NUL */
        if (n >= TRACECTL_SYSCALL_STRING_MAX)
            flags = TRACECTL_SYSCALL_STRING_TRUNCATED;
    }
    length &= TRACECTL_SYSCALL_STRING_MAX - 1;
    s->head.timestamp = bpf_ktime_get_ns();
    s->head.pointer = pointer;
    s->head.tid = tid;
    s->head.nr = nr;
    s->head.length = (__u16)length;
    s->head.arg = (__u8)arg;
    s->head.flags = flags;
    s->head.reserved = 0;
    __u64 avail = bpf_ringbuf_query(&strings, BPF_RB_AVAIL_DATA);
    __u64 size = bpf_ringbuf_query(&strings, BPF_RB_RING_SIZE);
    if (bpf_ringbuf_output(&strings, s, sizeof(s->head) + length,
                           avail > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP) != 0) {
        __u32 zero = 0;
        struct tracectl_syscall_string_counters *c = bpf_map_lookup_elem(&counters, &zero);
        if (c)
            __sync_fetch_and_add(&c->dropped, 1);
    }
}

SEC("tracepoint")
int tracectl_syscall_strings(void *ctx) {
    if (!enabled)
        return 0;
    const __u64 mask = bpf_get_attach_cookie(ctx);
    __u32 zero = 0;
    struct scratch *s = bpf_map_lookup_elem(&scratch, &zero);
    if (!s)
        return 0;
    __s32 nr = 0;
    bpf_probe_read_kernel(&nr, sizeof nr, (char *)ctx + TRACECTL_SYSCALL_NR_OFFSET);
    const __u32 tid = (__u32)bpf_get_current_pid_tgid();
#pragma unroll
    for (__u32 arg = 0; arg < TRACECTL_SYSCALL_MAX_ARGS; ++arg)
        if (mask & (1ull << arg))
            copy_arg(ctx, s, tid, nr, arg);
    return 0;
}
