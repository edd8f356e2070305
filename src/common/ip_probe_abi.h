/* The ABI between the `ip` provider's BPF program (src/bpf/ip_probes.bpf.c)
 * and userspace (the daemon's loader src/daemon/ip/, the consumer's reader
 * src/consumer/kernel/ip_ring_reader.*): the ring-buffer record, the filter
 * configuration and the counters. A C header: the BPF program includes it
 * after vmlinux.h (which defines the __u8.. types); userspace gets them
 * from <linux/types.h>, included here.
 *
 * Probes (DTrace's ip:::send / ip:::receive, at the device layer; see
 * /work/shared/KERNEL-NOTES.md): send = tracepoint net:net_dev_queue,
 * receive = tracepoint net:netif_receive_skb (include/trace/events/net.h). */
#ifndef TRACECTL_IP_PROBE_ABI_H
#define TRACECTL_IP_PROBE_ABI_H

#if !defined(__VMLINUX_H__) && !defined(__bpf__)
#include <linux/types.h>
#endif

#ifdef __cplusplus
#define TRACECTL_IP_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define TRACECTL_IP_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define TRACECTL_IP_SEND 0
#define TRACECTL_IP_RECEIVE 1

#define TRACECTL_IP_HEADER_MAX 40
#define TRACECTL_IP_IFNAMSIZ 16

/* NOLINTBEGIN(readability-identifier-naming): C names shared with the BPF
 * program (src/bpf/ip_probes.bpf.c, C), which spells them as here. */
/* One event, as the BPF program writes it into the `events` ring buffer
 * (one ring-buffer sample of exactly sizeof(struct tracectl_ip_record)).
 * All integers in host byte order, except `header`, which is the IP header
 * as on the wire (network byte order). */
struct tracectl_ip_record {
    __u64 timestamp;                     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
    __u64 skb;                           /* the struct sk_buff's address (DTrace pkt_addr) */
    __u64 sk;                            /* skb->sk, 0 when none (DTrace cs_addr) */
    __u64 netns_ino;                     /* the device's network namespace inode (if_ipstack) */
    __u32 tid;                           /* bpf_get_current_pid_tgid() & 0xffffffff */
    __u32 ifindex;                       /* dev->ifindex */
    __u8 probe;                          /* TRACECTL_IP_SEND or TRACECTL_IP_RECEIVE */
    __u8 ip_ver;                         /* 4 or 6 */
    __u8 if_local;                       /* 1 when dev->flags has IFF_LOOPBACK */
    __u8 header_len;                     /* bytes of `header` captured: 20 (IPv4), 40 (IPv6) */
    __u16 sport;                         /* UDP/TCP source port; 0 for other protocols, fragments */
    __u16 dport;                         /* UDP/TCP destination port; likewise */
    __u32 cpu;                           /* bpf_get_smp_processor_id() */
    char if_name[TRACECTL_IP_IFNAMSIZ];  /* dev->name, NUL-padded */
    __u8 header[TRACECTL_IP_HEADER_MAX]; /* IPv4's first 20 bytes / IPv6's 40 */
};
TRACECTL_IP_STATIC_ASSERT(sizeof(struct tracectl_ip_record) == 112, "tracectl_ip_record layout");

/* ---- The in-kernel filter (compiled by src/daemon/ip/ip_filter.cpp) ----
 *
 * Disjunctive normal form: the packet passes when ANY used conjunction
 * (`conj[0..n_conj)`) passes; a conjunction passes when its probe mask has
 * the packet's probe bit AND all its atoms (`atoms[0..n_atoms)`) hold.
 * n_conj == 0 means no packet passes. Negations are pushed into the atoms
 * by the compiler (== <-> !=, < <-> >=, ...). */
#define TRACECTL_IP_MAX_CONJ 16
#define TRACECTL_IP_MAX_ATOMS 8

/* The fields an atom reads. Integers are compared as u64; addresses as 16
 * bytes (IPv4: the 4 bytes of the address in network order, then 12 zero
 * bytes; the atom also requires the record's ip_ver); if_name as bytes with
 * a prefix length. */
enum tracectl_ip_field {
    TRACECTL_IP_F_IP_VER = 0,
    TRACECTL_IP_F_IP_PLENGTH = 1,
    TRACECTL_IP_F_IP_SADDR = 2, /* address */
    TRACECTL_IP_F_IP_DADDR = 3, /* address */
    TRACECTL_IP_F_IF_NAME = 4,  /* name */
    TRACECTL_IP_F_UDP_SPORT = 5,
    TRACECTL_IP_F_UDP_DPORT = 6,
    TRACECTL_IP_F_TCP_SPORT = 7,
    TRACECTL_IP_F_TCP_DPORT = 8,
    TRACECTL_IP_F_IPV4_PROTOCOL = 9, /* 0 for IPv6 packets */
    TRACECTL_IP_F_IPV6_NEXTHDR = 10, /* 0 for IPv4 packets */
    TRACECTL_IP_F_IF_LOCAL = 11,
    TRACECTL_IP_F_IF_IPSTACK = 12,
    TRACECTL_IP_F_IPV4_TTL = 13,  /* 0 for IPv6 packets */
    TRACECTL_IP_F_IPV6_HLIM = 14, /* 0 for IPv4 packets */
    TRACECTL_IP_F_COUNT = 15
};

enum tracectl_ip_op {
    TRACECTL_IP_OP_EQ = 0,
    TRACECTL_IP_OP_NE = 1,
    TRACECTL_IP_OP_LT = 2,
    TRACECTL_IP_OP_LE = 3,
    TRACECTL_IP_OP_GT = 4,
    TRACECTL_IP_OP_GE = 5
};

struct tracectl_ip_atom {
    __u8 field;    /* enum tracectl_ip_field */
    __u8 op;       /* enum tracectl_ip_op; EQ/NE only for addresses and names */
    __u8 addr_ver; /* addresses: 4 or 6 (a packet of the other version is != ) */
    __u8 name_len; /* if_name: bytes of `bytes` compared (with the NUL unless a glob) */
    __u32 pad;
    __u64 value;    /* integer fields */
    __u8 bytes[16]; /* addresses (network order) and names */
};
TRACECTL_IP_STATIC_ASSERT(sizeof(struct tracectl_ip_atom) == 32, "tracectl_ip_atom layout");

struct tracectl_ip_conj {
    __u32 probe_mask; /* 1 << TRACECTL_IP_SEND | 1 << TRACECTL_IP_RECEIVE */
    __u32 n_atoms;    /* 0..TRACECTL_IP_MAX_ATOMS; 0 = every packet of the probes */
    struct tracectl_ip_atom atoms[TRACECTL_IP_MAX_ATOMS];
};

struct tracectl_ip_filter {
    __u32 n_conj; /* 0..TRACECTL_IP_MAX_CONJ */
    __u32 pad;
    struct tracectl_ip_conj conj[TRACECTL_IP_MAX_CONJ];
};

/* The `config` map: an ARRAY of TRACECTL_IP_CONFIG_SLOTS entries of
 * struct tracectl_ip_config, double-buffered against torn updates (an ARRAY
 * map update is a plain memcpy, not atomic against a running program):
 * slots 0 and 1 hold filters; slot TRACECTL_IP_CONFIG_CONTROL holds the
 * control words `enabled` and `active` (the filter slot in use), which are
 * 4-byte aligned words, each written whole. The loader (one writer) writes a
 * new filter completely into the inactive slot, then updates the control
 * slot to point at it. A packet reads `active` once and evaluates that
 * slot's filter, which the writer does not touch until the switch after
 * next: a packet sees a torn filter only if its evaluation (a few hundred
 * ns) spans two setFilter calls (two map updates each, syscalls). */
#define TRACECTL_IP_CONFIG_SLOTS 3
#define TRACECTL_IP_CONFIG_CONTROL 2

struct tracectl_ip_config {
    __u32 enabled;   /* control slot only: 1 = record, 0 = do nothing */
    __u32 active;    /* control slot only: 0 or 1, the filter slot in use */
    __u32 aggregate; /* filter slots only: 1 = count, do not record (below) */
    __u32 pad;
    struct tracectl_ip_filter filter; /* filter slots only */
    /* filter slots with `aggregate`: the bytes of a record kept in its key
     * (0xff kept, 0x00 not), [0] for IPv4 records, [1] for IPv6 records */
    __u8 key_mask[2][sizeof(struct tracectl_ip_record)];
};

/* ---- In-kernel aggregation (tracectl dtrace's aggregation-only programs) ----
 *
 * When the active filter slot has `aggregate` 1, a packet that passes its
 * filter is not written to the ring. Its record (filled exactly as for the
 * ring), ANDed byte by byte with the slot's `key_mask` of its IP version
 * (key_mask[1] when ip_ver is 6, key_mask[0] otherwise), is a key of the
 * `aggregation` map: a BPF_MAP_TYPE_PERCPU_HASH from struct
 * tracectl_ip_record to __u64, the packets seen with that key on that CPU
 * (no atomics: each CPU counts its own). A new key the full map cannot take
 * is counted in counters.aggregation_dropped. Userspace sums the CPUs'
 * counts. The masks come from the payload fields a program reads
 * (ip_event_fields.hpp, ipFieldRecordMask), so that the masked record still
 * gives those fields their values. One mask per version because the two
 * headers differ: a mask for both would keep, in an IPv4 record, the bytes
 * of IPv6's fields (IPv6's source header[8..23] is IPv4's TTL, protocol,
 * checksum and addresses), and every IPv4 packet would be its own key. */

/* The `counters` map: an ARRAY (BPF_F_MMAPABLE) of one entry, so userspace
 * reads it through mmap without a syscall per read. */
struct tracectl_ip_counters {
    __u64 dropped;             /* records the program could not reserve (ring full),
                                  exact: __sync_fetch_and_add */
    __u64 aggregation_dropped; /* packets whose new key the full `aggregation`
                                  map refused, exact: __sync_fetch_and_add */
};

/* NOLINTEND(readability-identifier-naming) */

#endif /* TRACECTL_IP_PROBE_ABI_H */
