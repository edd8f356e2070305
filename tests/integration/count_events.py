#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Counts what a CTF trace holds, as babeltrace2 reads it (python3-bt2).

Usage: count_events.py TRACE_DIR [--seq-event NAME] [--seq-field FIELD] [--per-vpid]
                       [--per-channel] [--per-tid] [--per-stream]

Prints one JSON object on stdout:

    {"events": {"<event name>": <number of event records>, ...},
     "total": <number of event records>,
     "discarded": <sum of the counts of the discarded-events messages>,
     "discarded_messages": <number of discarded-events messages>,
     "discarded_unknown": <discarded-events messages without a count>,
     "seq": {"event": NAME, "field": FIELD, "count": <records of NAME>,
             "first": <smallest value>, "last": <largest value>,
             "distinct": <distinct values>,
             "missing": <values in [0, last] never seen>,
             "duplicates": <records whose value was already seen>},
     "per_vpid": {"<vpid>": <number of event records>, ...},
     "per_channel": {"<channel>": {"events": <records>, "discarded": <count>}, ...},
     "per_tid": {"<tid>": {"<event name>": <number of event records>, ...}, ...},
     "per_stream": {"<stream>": {"packets": <packets>,
                                 "discarded_packets": <sum of the discarded-packets counts>,
                                 "discarded_packets_unknown": <such messages without a count>},
                    ...}}

"per_vpid" is there with --per-vpid only: the records of each trace whose
environment names a vpid (a per-PID trace), by that vpid. "per_channel" is
there with --per-channel only: records and discarded counts by channel,
the channel being the stream file's name without its "_<cpu>" suffix
(babeltrace2's ctf.fs source names each stream after its file). "per_tid"
is there with --per-tid only: the records whose event context has a `tid`
field, by that tid and event name. "per_stream" is there with --per-stream
only: the packets of each stream (by its stream file's path, as the ctf.fs
source names it) and the packets babeltrace2 says are missing from it
(discarded-packets messages: gaps in its packet_seq_num values).

The discarded count is what the tracer wrote in the packet contexts
(events_discarded) and babeltrace2 turns into discarded-events messages:
events the application could not write because the ring buffer was full.
"seq" checks an unsigned integer payload field (default: the "seq" field of
tracectl_demo:tick) for a gap-free 0..last; "first"/"last" are null when the
trace holds no such event. Exit status: 0, or 1 if the trace cannot be read.

Use Debian's /usr/bin/python3: python3-bt2 installs there.
"""

import argparse
import json
import os
import sys

import bt2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("trace", help="trace folder (searched recursively)")
    parser.add_argument("--seq-event", default="tracectl_demo:tick")
    parser.add_argument("--seq-field", default="seq")
    parser.add_argument("--per-vpid", action="store_true")
    parser.add_argument("--per-channel", action="store_true")
    parser.add_argument("--per-tid", action="store_true")
    parser.add_argument("--per-stream", action="store_true")
    args = parser.parse_args()
    per_stream: dict[str, dict[str, int]] = {}

    def stream_of(stream) -> dict[str, int]:
        return per_stream.setdefault(
            str(stream.name),
            {"packets": 0, "discarded_packets": 0, "discarded_packets_unknown": 0},
        )

    per_channel: dict[str, dict[str, int]] = {}

    def channel_of(stream) -> dict[str, int]:
        name = os.path.basename(str(stream.name)).rsplit("_", 1)[0]
        return per_channel.setdefault(name, {"events": 0, "discarded": 0})

    events: dict[str, int] = {}
    per_vpid: dict[str, int] = {}
    per_tid: dict[str, dict[str, int]] = {}
    discarded = discarded_messages = discarded_unknown = 0
    seen = bytearray()  # seen[v]: how many times value v occurred, saturating at 255
    seq_count = duplicates = 0
    first = last = None
    try:
        for msg in bt2.TraceCollectionMessageIterator(args.trace):
            kind = type(msg)
            if kind is bt2._EventMessageConst:
                event = msg.event
                name = event.name
                events[name] = events.get(name, 0) + 1
                if args.per_channel:
                    channel_of(event.stream)["events"] += 1
                if args.per_vpid:
                    environment = event.stream.trace.environment
                    if "vpid" in environment:
                        vpid = str(int(environment["vpid"]))
                        per_vpid[vpid] = per_vpid.get(vpid, 0) + 1
                if args.per_tid:
                    context = event.common_context_field
                    if context is not None and "tid" in context:
                        names = per_tid.setdefault(str(int(context["tid"])), {})
                        names[name] = names.get(name, 0) + 1
                if name == args.seq_event:
                    value = int(event.payload_field[args.seq_field])
                    seq_count += 1
                    first = value if first is None else min(first, value)
                    last = value if last is None else max(last, value)
                    if value >= len(seen):
                        seen.extend(bytes(max(value + 1 - len(seen), len(seen))))
                    if seen[value]:
                        duplicates += 1
                    if seen[value] < 255:
                        seen[value] += 1
            elif kind is bt2._PacketBeginningMessageConst:
                if args.per_stream:
                    stream_of(msg.packet.stream)["packets"] += 1
            elif kind is bt2._DiscardedPacketsMessageConst:
                if args.per_stream:
                    if msg.count is None:
                        stream_of(msg.stream)["discarded_packets_unknown"] += 1
                    else:
                        stream_of(msg.stream)["discarded_packets"] += msg.count
            elif kind is bt2._DiscardedEventsMessageConst:
                discarded_messages += 1
                if msg.count is None:
                    discarded_unknown += 1
                else:
                    discarded += msg.count
                    if args.per_channel:
                        channel_of(msg.stream)["discarded"] += msg.count
    except Exception as error:  # bt2 raises its own error types
        print(f"count_events.py: cannot read {args.trace}: {error}", file=sys.stderr)
        return 1

    span = seen[: last + 1] if last is not None else b""
    result = {
        "events": events,
        "total": sum(events.values()),
        "discarded": discarded,
        "discarded_messages": discarded_messages,
        "discarded_unknown": discarded_unknown,
        "seq": {
            "event": args.seq_event,
            "field": args.seq_field,
            "count": seq_count,
            "first": first,
            "last": last,
            "distinct": len(span) - span.count(0),
            "missing": span.count(0),
            "duplicates": duplicates,
        },
    }
    if args.per_vpid:
        result["per_vpid"] = per_vpid
    if args.per_channel:
        result["per_channel"] = per_channel
    if args.per_tid:
        result["per_tid"] = per_tid
    if args.per_stream:
        result["per_stream"] = per_stream
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
