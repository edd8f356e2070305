// SPDX-License-Identifier: LGPL-2.1-or-later
/* The `ip` provider's probes (DTrace's ip:::send and ip:::receive) as
 * tp_btf programs at the device-layer tracepoints (no kprobes, no fentry on
 * this kernel; /work/shared/KERNEL-NOTES.md):
 *   send    = net:net_dev_queue     (net/core/dev.c __dev_queue_xmit)
 *   receive = net:netif_receive_skb (net/core/dev.c __netif_receive_skb_core)
 * One record (src/common/ip_probe_abi.h) per IPv4/IPv6 packet that passes
 * the filter, into the `events` ring buffer. The filter runs BEFORE the
 * reservation, so unwanted packets cost no ring space and are not counted
 * in `dropped`. When the active filter slot has `aggregate`, the packet is
 * counted in the `aggregation` map under its record ANDed with the slot's
 * key mask for its IP version instead (ip_probe_abi.h, "In-kernel
 * aggregation"). */
/* vmlinux.h has a `typedef struct config_s config;` (and `struct key`):
 * rename it away so the map can keep its name `config`. */
#define config tracectl_vmlinux_config
#include "vmlinux.h"
#undef config

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ip_probe_abi.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IFF_LOOPBACK 0x8
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
/* Negated by the map helpers (vmlinux.h has no errno values). */
#define EEXIST_ 17

char LICENSE[] SEC("license") = "GPL";

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4096); /* set by the loader before load */
} events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct tracectl_ip_counters);
} counters SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, TRACECTL_IP_CONFIG_SLOTS);
    __type(key, __u32);
    __type(value, struct tracectl_ip_config);
} config SEC(".maps");

/* The aggregation (ip_probe_abi.h): a masked record -> this CPU's packets.
 * Not preallocated (BPF_F_NO_PREALLOC): a program usually keeps a few keys
 * of its max_entries, and preallocating 65,536 per-CPU elements cost more CPU
 * at load (0.03 s) than the rest of the load; a new key allocates in the
 * probe (the kernel's BPF memory allocator), and a full map, or a failed
 * allocation, refuses it (counted in aggregation_dropped). */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __uint(max_entries, 1); /* set by the loader before load */
    __type(key, struct tracectl_ip_record);
    __type(value, __u64);
} aggregation SEC(".maps");

/* Where aggregate() builds its key: struct packet already takes most of the
 * 512-byte stack (the handlers use about 370 bytes without a key, 488 with the
 * 112-byte key beside it, too close to the limit to stay there as the
 * program grows). One entry per CPU; see aggregate() for why no other run
 * uses this CPU's entry meanwhile. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct tracectl_ip_record);
} aggregation_key SEC(".maps");

/* What the filter reads of one packet, gathered before the reservation. */
struct packet {
    __u64 ints[TRACECTL_IP_F_COUNT];
    __u64 saddr[2];
    __u64 daddr[2];
    __u64 name[2];
    __u8 header[TRACECTL_IP_HEADER_MAX];
    __u64 skb;
    __u64 sk;
    __u32 ifindex;
    __u8 ip_ver;
    __u8 if_local;
    __u8 header_len;
    __u16 sport;
    __u16 dport;
};

static __always_inline __u64 name_mask(__u32 len) {
    if (len >= 8)
        return ~0ULL;
    return (1ULL << (len * 8)) - 1; /* little-endian: the first `len` bytes */
}

static __always_inline int int_atom(__u64 v, __u8 op, __u64 c) {
    switch (op) {
    case TRACECTL_IP_OP_EQ: return v == c;
    case TRACECTL_IP_OP_NE: return v != c;
    case TRACECTL_IP_OP_LT: return v < c;
    case TRACECTL_IP_OP_LE: return v <= c;
    case TRACECTL_IP_OP_GT: return v > c;
    case TRACECTL_IP_OP_GE: return v >= c;
    }
    return 0;
}

/* A global (not static, not inlined) function: the verifier checks its body
 * once per program, with its arguments as any valid pointers, instead of at
 * each of the filter's up to TRACECTL_IP_MAX_CONJ * TRACECTL_IP_MAX_ATOMS
 * places: that took a load from 0.31 s of CPU to a fraction of it. Its
 * pointers may be NULL as far as the verifier knows. */
__noinline int atom_holds(const struct packet *p, const struct tracectl_ip_atom *a) {
    if (!p || !a)
        return 0;
    __u64 w0, w1;
    const __u64 *x;
    int eq;
    __u8 field = a->field;
    __builtin_memcpy(&w0, &a->bytes[0], 8);
    __builtin_memcpy(&w1, &a->bytes[8], 8);
    if (field == TRACECTL_IP_F_IP_SADDR || field == TRACECTL_IP_F_IP_DADDR) {
        x = field == TRACECTL_IP_F_IP_SADDR ? p->saddr : p->daddr;
        eq = p->ip_ver == a->addr_ver && x[0] == w0 && x[1] == w1;
        return a->op == TRACECTL_IP_OP_EQ ? eq : !eq;
    }
    if (field == TRACECTL_IP_F_IF_NAME) {
        __u32 len = a->name_len;
        if (len > 16)
            len = 16;
        __u64 m0 = name_mask(len);
        __u64 m1 = len > 8 ? name_mask(len - 8) : 0;
        eq = (p->name[0] & m0) == (w0 & m0) && (p->name[1] & m1) == (w1 & m1);
        return a->op == TRACECTL_IP_OP_EQ ? eq : !eq;
    }
    if (field >= TRACECTL_IP_F_COUNT)
        return 0;
    return int_atom(p->ints[field], a->op, a->value);
}

static __always_inline int filter_passes(const struct packet *p, const struct tracectl_ip_filter *f,
                                         __u32 probe) {
    __u32 n_conj = f->n_conj;
    for (__u32 c = 0; c < TRACECTL_IP_MAX_CONJ; c++) {
        if (c >= n_conj)
            break;
        const struct tracectl_ip_conj *cj = &f->conj[c];
        if (!(cj->probe_mask & (1U << probe)))
            continue;
        __u32 n = cj->n_atoms;
        int all = 1;
        for (__u32 i = 0; i < TRACECTL_IP_MAX_ATOMS; i++) {
            if (i >= n)
                break;
            if (!atom_holds(p, &cj->atoms[i])) {
                all = 0;
                break;
            }
        }
        if (all)
            return 1;
    }
    return 0;
}

static __always_inline __u16 be16(const __u8 *b) {
    return (__u16)((__u16)b[0] << 8 | b[1]);
}

/* The one filling of a record, for the ring and for an aggregation key
 * alike, so that a key is exactly a ring record ANDed with the key mask.
 * Every byte is written (the 4 bytes of tail padding zeroed): a key must
 * have no uninitialized byte. */
static __always_inline void fill_record(struct tracectl_ip_record *r, const struct packet *p,
                                        __u32 probe) {
    __builtin_memset(r, 0, sizeof(*r));
    r->timestamp = bpf_ktime_get_ns();
    r->skb = p->skb;
    r->sk = p->sk;
    r->netns_ino = p->ints[TRACECTL_IP_F_IF_IPSTACK];
    r->tid = (__u32)bpf_get_current_pid_tgid();
    r->ifindex = p->ifindex;
    r->probe = (__u8)probe;
    r->ip_ver = p->ip_ver;
    r->if_local = p->if_local;
    r->header_len = p->header_len;
    r->sport = p->sport;
    r->dport = p->dport;
    r->cpu = bpf_get_smp_processor_id();
    __builtin_memcpy(r->if_name, p->name, sizeof(r->if_name));
    __builtin_memcpy(r->header, p->header, sizeof(r->header));
}

#define KEY_WORDS (sizeof(struct tracectl_ip_record) / 8)
TRACECTL_IP_STATIC_ASSERT(sizeof(struct tracectl_ip_record) % 8 == 0, "whole words");

static __always_inline void count_aggregation_drop(void) {
    __u32 zero = 0;
    struct tracectl_ip_counters *c = bpf_map_lookup_elem(&counters, &zero);
    if (c)
        __sync_fetch_and_add(&c->aggregation_dropped, 1);
}

/* Counts the packet under its masked record, built in this CPU's
 * `aggregation_key` entry. Neither that entry nor this CPU's count needs
 * an atomic: a tracing program runs with migration disabled, and both
 * tracepoints fire with BHs off (__dev_queue_xmit's rcu_read_lock_bh,
 * netif_receive_skb's softirq context), never in a hard IRQ, so no other
 * run of either program on this CPU starts before this one ends. */
static __always_inline void aggregate(const struct packet *p, __u32 probe, const __u8 *key_mask) {
    __u32 zero = 0;
    struct tracectl_ip_record *key = bpf_map_lookup_elem(&aggregation_key, &zero);
    if (!key)
        return; /* cannot happen: an ARRAY's index 0 exists */
    fill_record(key, p, probe);
    __u64 *k = (__u64 *)key;
    const __u64 *m = (const __u64 *)key_mask;
#pragma unroll
    for (__u32 i = 0; i < KEY_WORDS; i++)
        k[i] &= m[i];

    __u64 *count = bpf_map_lookup_elem(&aggregation, key);
    if (count) {
        *count += 1;
        return;
    }
    __u64 one = 1;
    long err = bpf_map_update_elem(&aggregation, key, &one, BPF_NOEXIST);
    if (err == 0)
        return;
    if (err == -EEXIST_) {
        /* Another CPU inserted the key between the lookup and the update
         * (a per-CPU hash's key is shared; its other CPUs' counts start at
         * 0): count on this CPU's slot of that element. */
        count = bpf_map_lookup_elem(&aggregation, key);
        if (count) {
            *count += 1;
            return;
        }
    }
    /* -E2BIG: the map is full (or the element vanished again): the packet
     * is counted nowhere else, so count it here. */
    count_aggregation_drop();
}

static __always_inline int handle(struct sk_buff *skb, __u32 probe) {
    __u32 control = TRACECTL_IP_CONFIG_CONTROL;
    struct tracectl_ip_config *ctl = bpf_map_lookup_elem(&config, &control);
    if (!ctl || !ctl->enabled)
        return 0;
    __u32 slot = ctl->active & 1;
    struct tracectl_ip_config *cfg = bpf_map_lookup_elem(&config, &slot);
    if (!cfg)
        return 0;

    __u16 proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
    if (proto != ETH_P_IP && proto != ETH_P_IPV6)
        return 0;

    struct packet p;
    __builtin_memset(&p, 0, sizeof(p));
    unsigned char *head = BPF_CORE_READ(skb, head);
    unsigned char *nh;
    /* Observed on lo (kernel 6.18): at net_dev_queue, skb->data is at the
     * link header (mac_header == data - head, network_header 14 bytes
     * further), sk is the sending socket, and a UDP datagram up to lo's
     * 64 KiB MTU is one skb (3000 bytes: len 3042, no fragments, gso_size
     * 0). At netif_receive_skb, skb->data is at the IP header (== network
     * header on lo), sk is 0 (loopback_xmit orphans the skb). */
    if (probe == TRACECTL_IP_SEND) {
        /* The IP layer set the network header (ip_finish_output2 and
         * ip6_finish_output2 run before __dev_queue_xmit). */
        nh = head + BPF_CORE_READ(skb, network_header);
    } else {
        /* trace_netif_receive_skb fires in __netif_receive_skb_core BEFORE
         * its skb_reset_network_header (net/core/dev.c): a driver's skb may
         * not have one yet, but eth_type_trans left skb->data at the IP
         * header. */
        nh = BPF_CORE_READ(skb, data);
    }
    __u8 *h = p.header;
    __u32 plength = 0;
    __u8 l4 = 0;
    int ports = 0;
    __u32 l4off = 0;
    if (proto == ETH_P_IP) {
        if (bpf_probe_read_kernel(h, 20, nh))
            return 0;
        if ((h[0] >> 4) != 4)
            return 0;
        p.ip_ver = 4;
        p.header_len = 20;
        __u32 ihl = (h[0] & 0xf) * 4;
        __u32 total = be16(&h[2]);
        plength = total > ihl ? total - ihl : 0;
        l4 = h[9];
        __u16 frag = be16(&h[6]) & 0x1fff;
        ports = frag == 0 && ihl >= 20;
        l4off = ihl;
        __builtin_memcpy(&p.saddr[0], &h[12], 4);
        __builtin_memcpy(&p.daddr[0], &h[16], 4);
        p.ints[TRACECTL_IP_F_IPV4_PROTOCOL] = l4;
        p.ints[TRACECTL_IP_F_IPV4_TTL] = h[8];
    } else {
        if (bpf_probe_read_kernel(h, 40, nh))
            return 0;
        if ((h[0] >> 4) != 6)
            return 0;
        p.ip_ver = 6;
        p.header_len = 40;
        plength = be16(&h[4]);
        l4 = h[6];
        ports = 1;
        l4off = 40;
        __builtin_memcpy(p.saddr, &h[8], 16);
        __builtin_memcpy(p.daddr, &h[24], 16);
        p.ints[TRACECTL_IP_F_IPV6_NEXTHDR] = l4;
        p.ints[TRACECTL_IP_F_IPV6_HLIM] = h[7];
    }
    if (ports && (l4 == IPPROTO_TCP_ || l4 == IPPROTO_UDP_)) {
        __u8 pp[4];
        if (bpf_probe_read_kernel(pp, 4, nh + l4off) == 0) {
            p.sport = be16(&pp[0]);
            p.dport = be16(&pp[2]);
        }
        if (l4 == IPPROTO_UDP_) {
            p.ints[TRACECTL_IP_F_UDP_SPORT] = p.sport;
            p.ints[TRACECTL_IP_F_UDP_DPORT] = p.dport;
        } else {
            p.ints[TRACECTL_IP_F_TCP_SPORT] = p.sport;
            p.ints[TRACECTL_IP_F_TCP_DPORT] = p.dport;
        }
    }
    p.ints[TRACECTL_IP_F_IP_VER] = p.ip_ver;
    p.ints[TRACECTL_IP_F_IP_PLENGTH] = plength;

    struct net_device *dev = BPF_CORE_READ(skb, dev);
    if (dev) {
        bpf_probe_read_kernel(p.name, sizeof(p.name), &dev->name);
        p.ifindex = BPF_CORE_READ(dev, ifindex);
        p.if_local = (BPF_CORE_READ(dev, flags) & IFF_LOOPBACK) ? 1 : 0;
        p.ints[TRACECTL_IP_F_IF_IPSTACK] = BPF_CORE_READ(dev, nd_net.net, ns.inum);
    }
    p.ints[TRACECTL_IP_F_IF_LOCAL] = p.if_local;
    p.skb = (__u64)skb;
    p.sk = (__u64)BPF_CORE_READ(skb, sk);

    if (!filter_passes(&p, &cfg->filter, probe))
        return 0;

    if (cfg->aggregate) {
        /* The record's version's mask: an index of 0 or 1, within bounds. */
        aggregate(&p, probe, cfg->key_mask[p.ip_ver == 6 ? 1 : 0]);
        return 0;
    }

    struct tracectl_ip_record *r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
    if (!r) {
        __u32 zero = 0;
        struct tracectl_ip_counters *c = bpf_map_lookup_elem(&counters, &zero);
        if (c)
            __sync_fetch_and_add(&c->dropped, 1);
        return 0;
    }
    fill_record(r, &p, probe);

    __u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
    __u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
    bpf_ringbuf_submit(r, avail > size / 2 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
    return 0;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(tracectl_ip_snd, struct sk_buff *skb) {
    return handle(skb, TRACECTL_IP_SEND);
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(tracectl_ip_rcv, struct sk_buff *skb) {
    return handle(skb, TRACECTL_IP_RECEIVE);
}
