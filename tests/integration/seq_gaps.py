#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where each process's numbered events are missing from a CTF trace, and when.

Usage: seq_gaps.py TRACE_DIR [--event NAME] [--field FIELD]

Reads every trace below TRACE_DIR (chunks and archives merged, as
babeltrace2 does) with python3-bt2 and, for each process, the unsigned
payload field FIELD (default "seq") of the event records named NAME
(default "tracectl_demo:tick"). The process is the record's "vpid" context
field (add-context -t vpid), else its trace's "vpid" environment entry
(per-PID buffers). Prints one JSON object on stdout:

    {"<vpid>": {"count": <records>, "first": <smallest>, "last": <largest>,
                "first_ns": <time of "first">, "last_ns": <time of "last">,
                "duplicates": <records whose value was already seen>,
                "gaps": [{"after": <last value before the gap>,
                          "before": <first value after it>,
                          "missing": <values in between>,
                          "from_ns": <time of the record "after">,
                          "to_ns": <time of the record "before">}, ...]}, ...}

Times are the records' default clock snapshots in ns from the Epoch (the
trace's clock offset applied, as babeltrace2 prints them). Exit status: 0,
or 1 if the trace cannot be read.

Use Debian's /usr/bin/python3: python3-bt2 installs there.
"""

import argparse
import json
import sys

import bt2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace", help="trace folder (searched recursively)")
    parser.add_argument("--event", default="tracectl_demo:tick")
    parser.add_argument("--field", default="seq")
    args = parser.parse_args()

    seen = {}  # vpid -> {value: ns}
    duplicates = {}
    try:
        for msg in bt2.TraceCollectionMessageIterator(args.trace):
            if type(msg) is not bt2._EventMessageConst:
                continue
            event = msg.event
            if event.name != args.event:
                continue
            vpid = None
            context = event.common_context_field
            if context is not None and "vpid" in context:
                vpid = int(context["vpid"])
            else:
                env = event.stream.trace.environment
                if "vpid" in env:
                    vpid = int(env["vpid"])
            value = int(event.payload_field[args.field])
            ns = msg.default_clock_snapshot.ns_from_origin
            values = seen.setdefault(vpid, {})
            if value in values:
                duplicates[vpid] = duplicates.get(vpid, 0) + 1
            else:
                values[value] = ns
    except Exception as e:  # bt2 raises several kinds
        print("cannot read {}: {}".format(args.trace, e), file=sys.stderr)
        return 1

    out = {}
    for vpid, values in seen.items():
        ordered = sorted(values)
        gaps = []
        for a, b in zip(ordered, ordered[1:]):
            if b != a + 1:
                gaps.append({"after": a, "before": b, "missing": b - a - 1,
                             "from_ns": values[a], "to_ns": values[b]})
        out[str(vpid)] = {"count": len(ordered), "first": ordered[0], "last": ordered[-1],
                          "first_ns": values[ordered[0]], "last_ns": values[ordered[-1]],
                          "duplicates": duplicates.get(vpid, 0), "gaps": gaps}
    json.dump(out, sys.stdout, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
