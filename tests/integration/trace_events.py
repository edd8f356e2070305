#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prints the event records of a CTF trace, as babeltrace2 reads it
(python3-bt2), one JSON object per line, in babeltrace2's merged order.

Usage: trace_events.py TRACE_DIR [--event NAME]... [--prefix PREFIX]...

Each line:

    {"name": "sched_switch", "ns": <ns from the clock's origin>,
     "cycles": <the clock snapshot's value>, "cpu": <packet context cpu_id
     or null>, "stream": "<stream file name>", "domain": "<env domain>",
     "fields": {...}, "context": {...}}

Integers are numbers, strings and text arrays strings, other arrays and
sequences lists, structures objects, variants their selected option. With
--event or --prefix only the records whose name is one of NAME or starts
with one of PREFIX are printed. After the records one last line
{"discarded": <sum of discarded-events counts>, "discarded_messages": N,
"events": <records printed>}. Exit status: 0, or 1 if the trace cannot be
read.

Use Debian's /usr/bin/python3: python3-bt2 installs there.
"""

import argparse
import json
import os
import sys

import bt2


def value(field):
    """A bt2 field as a JSON value."""
    if isinstance(field, bt2._StringFieldConst):
        return str(field)
    if isinstance(field, bt2._BoolFieldConst):
        return bool(field)
    if isinstance(field, bt2._IntegerFieldConst):
        return int(field)
    if isinstance(field, bt2._RealFieldConst):
        return float(field)
    if isinstance(field, bt2._StructureFieldConst):
        return {name: value(member) for name, member in field.items()}
    if isinstance(field, bt2._VariantFieldConst):
        return value(field.selected_option)
    if isinstance(field, bt2._OptionFieldConst):
        return None if field.field is None else value(field.field)
    if isinstance(field, bt2._ArrayFieldConst):
        # Text arrays and sequences (char[16] comm) are string fields already:
        # babeltrace2's ctf source reads them so.
        return [value(member) for member in field]
    return str(field)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("trace", help="trace folder (searched recursively)")
    parser.add_argument("--event", action="append", default=[])
    parser.add_argument("--prefix", action="append", default=[])
    args = parser.parse_args()
    names = set(args.event)
    prefixes = tuple(args.prefix)
    discarded = discarded_messages = printed = 0
    out = sys.stdout
    try:
        for msg in bt2.TraceCollectionMessageIterator(args.trace):
            kind = type(msg)
            if kind is bt2._EventMessageConst:
                event = msg.event
                name = event.name
                if (names or prefixes) and name not in names and not (
                        prefixes and name.startswith(prefixes)):
                    continue
                packet_context = event.packet.context_field if event.packet else None
                cpu = None
                if packet_context is not None and "cpu_id" in packet_context:
                    cpu = int(packet_context["cpu_id"])
                environment = event.stream.trace.environment
                record = {
                    "name": name,
                    "ns": msg.default_clock_snapshot.ns_from_origin,
                    "cycles": msg.default_clock_snapshot.value,
                    "cpu": cpu,
                    "stream": os.path.basename(str(event.stream.name)),
                    "domain": str(environment["domain"]) if "domain" in environment else None,
                    "fields": value(event.payload_field) if event.payload_field is not None else {},
                    "context": value(event.common_context_field)
                    if event.common_context_field is not None else {},
                }
                out.write(json.dumps(record) + "\n")
                printed += 1
            elif kind is bt2._DiscardedEventsMessageConst:
                discarded_messages += 1
                if msg.count is not None:
                    discarded += msg.count
    except Exception as error:  # bt2 raises its own error types
        print(f"trace_events.py: cannot read {args.trace}: {error}", file=sys.stderr)
        return 1
    out.write(json.dumps({"discarded": discarded, "discarded_messages": discarded_messages,
                          "events": printed}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
