#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`tracectl aggregate --trace` on a trace of the demo app recorded by LTTng's own
lttng-sessiond (Debian's lttng-tools, not tracectl): every aggregating function and
lquantize, checked against values computed here, independently, from the same trace's
event records as babeltrace2's Python bindings read them (trace_events.py); DTrace's
text layout for a keyed count; a folder holding the trace; and programs with errors
(exit status 2, the error's line:column on stderr).

lttng-sessiond runs as user nobody with its own LTTNG_HOME (a per-user session daemon:
it never touches /run/lttng, where a tracectld may be listening), and so does the app.

Usage: aggregate_test.py TRACECTL DEMO_APP TRACE_EVENTS_PY   (as root)
"""
import json
import math
import os
import pwd
import shutil
import select
import signal
import subprocess
import sys
import tempfile
import unittest

TRACECTL, DEMO_APP, TRACE_EVENTS = sys.argv[1:4]
EVENTS = 300  # ticks (and as many debug_notes), from two apps


def as_nobody(home, argv, **kwargs):
    env = {"PATH": "/usr/bin:/bin", "LTTNG_HOME": home, "HOME": home}
    return subprocess.run(["runuser", "-u", "nobody", "--", "env"] +
                          [f"{k}={v}" for k, v in env.items()] + argv,
                          capture_output=True, text=True, timeout=120, **kwargs)


def record_with_lttng(home):
    """Records the demo app's events with lttng-sessiond; returns the trace folder."""
    nobody = pwd.getpwnam("nobody")
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    output = os.path.join(home, "trace")

    def lttng(*args):
        r = as_nobody(home, ["lttng"] + list(args))
        if r.returncode != 0:
            raise RuntimeError(f"lttng {' '.join(args)}: {r.stdout}{r.stderr}")

    r = as_nobody(home, ["lttng-sessiond", "--daemonize"])
    if r.returncode != 0:
        raise RuntimeError(f"lttng-sessiond: {r.stderr}")
    try:
        lttng("create", "aggregate-test", "--output", output)
        lttng("enable-event", "-u", "tracectl_demo:*")
        lttng("add-context", "-u", "-t", "vpid", "-t", "procname")
        lttng("start")
        # Two apps, each pinned to a CPU of its own when there are two: a trace with
        # several streams, read by several graphs (src/aggregate/trace_reader.hpp).
        cpus = sorted(os.sched_getaffinity(0))
        apps = [subprocess.Popen(["taskset", "-c", str(cpus[i % len(cpus)]), "runuser", "-u",
                                  "nobody", "--", "env", f"LTTNG_HOME={home}", f"HOME={home}",
                                  DEMO_APP, str(EVENTS // 2), "0"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                for i in range(2)]
        for app in apps:
            _, err = app.communicate(timeout=120)
            if app.returncode != 0:
                raise RuntimeError(f"demo app: {err}")
        lttng("stop")
        lttng("destroy")
    finally:
        pid_file = os.path.join(home, ".lttng", "lttng-sessiond.pid")
        if os.path.exists(pid_file):
            with open(pid_file) as f:
                pid = int(f.read().strip())
            # Through a pidfd: the daemon is no child of ours, and once it is
            # gone its pid may be another suite's process.
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                pidfd = None
            if pidfd is not None:
                try:
                    signal.pidfd_send_signal(pidfd, signal.SIGTERM)
                    select.select([pidfd], [], [], 5)  # readable once it exited
                except ProcessLookupError:
                    pass
                finally:
                    os.close(pidfd)
    return output


def read_events(trace):
    r = subprocess.run(["/usr/bin/python3", TRACE_EVENTS, trace], capture_output=True,
                       text=True, check=True)
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    return [e for e in lines if "name" in e]


def aggregate(trace, program, *extra):
    return subprocess.run([TRACECTL, "aggregate", "--trace", trace, program] + list(extra),
                          capture_output=True, text=True, timeout=120)


# DTrace's semantics, written from its documentation (Dynamic Tracing Guide,
# "Aggregations") independently of src/aggregate.
def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def dtrace_stddev(values):
    n = len(values)
    avg_of_squares = sum(v * v for v in values) // n
    avg = abs(trunc_div(sum(values), n))
    return math.isqrt(avg_of_squares - avg * avg)


def quantize_label(i):
    return -(1 << (62 - i)) if i < 63 else (0 if i == 63 else 1 << (i - 64))


def quantize_buckets(values):
    counts = {}
    for v in values:
        # illumos dtrace_aggregate_quantize: a negative value goes to the first bucket
        # whose label is >= it, the others to the last whose label is <= them.
        bucket = 126
        if v < 0:
            bucket = next(i for i in range(63) if v <= quantize_label(i))
        else:
            for i in range(64, 127):
                if v < quantize_label(i):
                    bucket = i - 1
                    break
        counts[bucket] = counts.get(bucket, 0) + 1
    result = []
    for b in sorted(counts):
        if b < 63:  # the row labelled -2^k holds -2^(k+1)+1 .. -2^k
            lower = quantize_label(b - 1) + 1 if b > 0 else -(1 << 63)
            upper = quantize_label(b)
        else:
            lower = quantize_label(b)
            upper = quantize_label(b + 1) - 1 if b < 126 else (1 << 63) - 1
        result.append({"lower": lower, "upper": upper, "count": counts[b]})
    return result


def lquantize_buckets(values, low, high, step):
    levels = (high - low) // step
    counts = {}
    for v in values:
        b = 0 if v < low else min((v - low) // step + 1, levels + 1)
        counts[b] = counts.get(b, 0) + 1
    result = []
    for b in sorted(counts):
        lower = None if b == 0 else low + (b - 1) * step
        upper = None if b == levels + 1 else low + b * step - 1
        result.append({"lower": lower, "upper": upper, "count": counts[b]})
    return result


class AggregateOnLttngTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.home = tempfile.mkdtemp(prefix="tracectl-aggregate-")
        cls.trace = record_with_lttng(cls.home)
        cls.events = read_events(cls.trace)
        cls.ticks = [e for e in cls.events if e["name"] == "tracectl_demo:tick"]
        cls.notes = [e for e in cls.events if e["name"] == "tracectl_demo:debug_note"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.home, ignore_errors=True)

    def test_trace_was_recorded_by_lttng(self):
        self.assertEqual(len(self.ticks), EVENTS)
        if len(os.sched_getaffinity(0)) > 1:
            self.assertGreater(len({e["stream"] for e in self.ticks}), 1)
        self.assertEqual(len(self.notes), EVENTS)
        self.assertTrue(os.path.isdir(os.path.join(self.trace, "ust")))

    def run_json(self, program, trace=None):
        r = aggregate(trace or self.trace, program, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        return {a["name"]: a for a in json.loads(r.stdout)["aggregations"]}

    def test_every_function(self):
        program = """
            tracectl_demo:tick {
                @c[text] = count(); @s[text] = sum(s16); @a = avg(u32); @mn = min(s8);
                @mx = max(seq); @sd = stddev(u32 - 2 * seq * seq); @q = quantize(s16 + seq);
                @l = lquantize(s8, -50, 10, 7); @l1 = lquantize(seq, 0, 100);
            }
            tracectl_demo:debug_note /seq % 3 == 0 && seq != 9/ { @dn = count(); }
        """
        got = self.run_json(program)
        by_text = {}
        for e in self.ticks:
            by_text.setdefault(e["fields"]["text"], []).append(e["fields"])
        self.assertEqual({tuple(x["keys"]): x["value"] for x in got["c"]["entries"]},
                         {(t,): len(v) for t, v in by_text.items()})
        self.assertEqual({tuple(x["keys"]): x["value"] for x in got["s"]["entries"]},
                         {(t,): sum(f["s16"] for f in v) for t, v in by_text.items()})
        f = [e["fields"] for e in self.ticks]
        self.assertEqual(got["a"]["entries"][0]["value"],
                         trunc_div(sum(x["u32"] for x in f), len(f)))
        self.assertEqual(got["mn"]["entries"][0]["value"], min(x["s8"] for x in f))
        self.assertEqual(got["mx"]["entries"][0]["value"], max(x["seq"] for x in f))
        self.assertEqual(got["sd"]["entries"][0]["value"],
                         dtrace_stddev([x["u32"] - 2 * x["seq"] ** 2 for x in f]))
        self.assertEqual(got["q"]["entries"][0]["buckets"],
                         quantize_buckets([x["s16"] + x["seq"] for x in f]))
        self.assertEqual(got["l"]["entries"][0]["buckets"],
                         lquantize_buckets([x["s8"] for x in f], -50, 10, 7))
        self.assertEqual(got["l1"]["entries"][0]["buckets"],
                         lquantize_buckets([x["seq"] for x in f], 0, 100, 1))
        self.assertEqual(got["dn"]["entries"][0]["value"],
                         sum(1 for e in self.notes
                             if e["fields"]["seq"] % 3 == 0 and e["fields"]["seq"] != 9))

    def test_builtins_and_context(self):
        got = self.run_json('tracectl_demo:tick /text == "beta"/ '
                            '{ @t[pid, execname] = max(timestamp); @n[cpu] = count(); }')
        beta = [e for e in self.ticks if e["fields"]["text"] == "beta"]
        latest = {}
        for e in beta:
            key = (e["context"]["vpid"], e["context"]["procname"])
            latest[key] = max(latest.get(key, 0), e["ns"])
        self.assertEqual(len(latest), 2)  # two apps
        self.assertEqual({tuple(x["keys"]): x["value"] for x in got["t"]["entries"]}, latest)
        cpus = {}
        for e in beta:
            cpus[e["cpu"]] = cpus.get(e["cpu"], 0) + 1
        self.assertEqual({x["keys"][0]: x["value"] for x in got["n"]["entries"]}, cpus)

    def test_text_layout_of_a_keyed_count(self):
        r = aggregate(self.trace, "tracectl_demo:tick { @[text] = count(); }")
        self.assertEqual(r.returncode, 0, r.stderr)
        counts = {}
        for e in self.ticks:
            counts[e["fields"]["text"]] = counts.get(e["fields"]["text"], 0) + 1
        rows = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]))
        self.assertEqual(r.stdout, "\n" + "".join("  %-50s %16d\n" % kv for kv in rows))

    def test_dtrace_probe_forms_and_a_folder_of_traces(self):
        # The parent folder holds the trace somewhere below it.
        got = self.run_json("tracectl_demo:::done { @ = sum(count); } "
                            "tracectl_demo:t?ck, tracectl_demo:debug_* { @all = count(); }",
                            trace=self.home)
        self.assertEqual(got[""]["entries"][0]["value"], EVENTS)  # two done(150)
        self.assertEqual(got["all"]["entries"][0]["value"], 2 * EVENTS)

    def test_programs_with_errors(self):
        cases = {
            "tracectl_demo:tick { @ = count() ": "1:34",  # syntax: end of program
            "tracectl_demo:tick {\n @ = cnt(); }": "2:6",
            "tracectl_demo:tick { @[nosuchfield] = count(); }": "1:24",
            "tracectl_demo:tick {\n\n   @ = quantize(text); }": "3:17",
            "tracectl_demo:tick { @ = sum(text); }": "1:30",
        }
        for program, position in cases.items():
            with self.subTest(program=program):
                r = aggregate(self.trace, program)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"tracectl: aggregate: {position}: ", r.stderr)
                self.assertEqual(r.stdout, "")

    def test_program_given_with_n(self):
        r = subprocess.run([TRACECTL, "aggregate", "--trace", self.trace, "--json", "-n",
                            "tracectl_demo:::tick { @ = count(); }"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["aggregations"][0]["entries"][0]["value"],
                         len(self.ticks))
        r = subprocess.run([TRACECTL, "aggregate", "--trace", self.trace], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 2)
        self.assertIn("give the PROGRAM", r.stderr)

    def test_unreadable_trace(self):
        r = aggregate(os.path.join(self.home, "nothing-here"),
                      "tracectl_demo:tick { @ = count(); }")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no such file or directory", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
