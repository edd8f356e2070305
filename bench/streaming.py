# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/compare's streaming scenario (issue 17): sessions that stream to an
unmodified lttng-relayd 2.13 on loopback, for tracectl and for LTTng.

1. The sustained rate: the bench emitters write --stream-events
   tracectl_demo:tick events (flat out, or at --stream-rate) into a
   network session (--set-url net://127.0.0.1:CTRL:DATA) and into a local
   one (--output), rounds alternating; what the relay, or the disk, holds
   afterwards is counted (tracectl-bench-count): events/s and MB/s written,
   events discarded.
2. Live latency: a live session (`create --live`, the default 1 s live
   timer), an emitter writing one tick every 100 ms, and `babeltrace2
   --clock-seconds --input-format=lttng-live` attached: per tick, the
   CLOCK_REALTIME time its line was read from the viewer's stdout minus the
   tick's own timestamp (the trace clock's offset makes it a real time).

A fresh relay (as --lttng-user, on free loopback ports) serves each tracer
while it is up and is killed with it. Loaded by bench/compare, which brings
the tracers up and down (one at a time) and prints the table; see
bench/README.md, "The streaming scenario"."""

import json
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PATTERN = "tracectl_demo:*"
# The emitters are asked for far more than they can do: flat out.
FLAT_OUT = 50_000_000


def log(*what):
    print(*what, file=sys.stderr, flush=True)


def trace_bytes(folder):
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def trace_dirs(folder):
    return sorted(str(p.parent) for p in Path(folder).rglob("metadata"))


def free_loopback_ports(n):
    """n TCP ports free on 127.0.0.1 now (bound to port 0, then closed; the
    relay may lose one to someone else before it binds: then it is started
    again on others)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def port_accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class Relay:
    """lttng-relayd (Debian's lttng-tools) as `user`, on three free loopback
    ports (control, data, live), writing below a folder of its own."""

    def __init__(self, user):
        pw = pwd.getpwnam(user)
        self.home = tempfile.mkdtemp(prefix="tracectl-compare-relayd.")
        self.output = os.path.join(self.home, "out")
        os.mkdir(self.output)
        for p in (self.home, self.output):
            os.chmod(p, 0o755)
            os.chown(p, pw.pw_uid, pw.pw_gid)
        self.log_path = os.path.join(self.home, "relayd.log")
        self.proc = None
        prefix = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
                  "env", f"LTTNG_HOME={self.home}", f"HOME={self.home}"]
        for attempt in range(3):
            self.ctrl, self.data, self.live = free_loopback_ports(3)
            with open(self.log_path, "ab") as logf:
                self.proc = subprocess.Popen(
                    prefix + ["lttng-relayd", "-o", self.output,
                              "-C", f"tcp://127.0.0.1:{self.ctrl}",
                              "-D", f"tcp://127.0.0.1:{self.data}",
                              "-L", f"tcp://127.0.0.1:{self.live}"],
                    stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                if all(port_accepts(p) for p in (self.ctrl, self.data, self.live)):
                    return
                time.sleep(0.05)
            self.kill()
        raise RuntimeError(f"lttng-relayd did not come up: {Path(self.log_path).read_text()}")

    @property
    def url(self):
        return f"net://127.0.0.1:{self.ctrl}:{self.data}"

    @property
    def live_list_url(self):
        return f"net://127.0.0.1:{self.live}"

    def session_dir(self, session):
        """<output>/<hostname>/<session>-<YYYYmmdd-HHMMSS>: the one folder the
        relay made for that session."""
        found = [p for p in Path(self.output).glob(f"*/{session}-*") if p.is_dir()]
        if len(found) != 1:
            raise RuntimeError(f"relay: {len(found)} folders for session {session} under "
                               f"{self.output}")
        return found[0]

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def close(self):
        self.kill()
        shutil.rmtree(self.home, ignore_errors=True)


def cli(tracer):
    return tracer.cli if tracer.name == "tracectl" else "lttng"


def create(tracer, session, where, live_us=None):
    """create (to the relay if `where` is a net:// URL, else a folder),
    enable-event -u PATTERN (the default channel), start."""
    c = cli(tracer)
    if where.startswith("net://"):
        argv = [c, "create", session, "--set-url", where]
        if live_us is not None:
            argv.append("--live" if live_us == 0 else f"--live={live_us}")
    else:
        argv = [c, "create", session, "--output", where]
    tracer.cmd(argv)
    tracer.cmd([c, "enable-event", "-u", PATTERN, "-s", session])
    tracer.cmd([c, "start", session])


def rate_point(tracer, relay, kind, a):
    """One session, `kind` "net" (to the relay) or "local" (to disk): the
    emitters write a.stream_events ticks, stop (which returns once the relay,
    or the disk, holds everything), the trace counted, destroy."""
    tracer.sessions += 1
    session = f"stream{tracer.sessions}"
    local = Path(tracer.workdir) / "traces" / session
    create(tracer, session, relay.url if kind == "net" else str(local))
    c = cli(tracer)
    try:
        # The same work for every session: a.stream_events ticks in all (the
        # emitter writes RATE x DURATION_MS / 1000), flat out or at a.stream_rate.
        per_app = max(1, (a.stream_rate or FLAT_OUT * a.stream_apps) // a.stream_apps)
        duration_ms = max(1, a.stream_events // a.stream_apps * 1000 // per_app)
        emitted, seconds = tracer.run_emitters(per_app, duration_ms,
                                               Path(tracer.workdir) / f"start-{session}",
                                               apps=a.stream_apps)
        began = time.monotonic()
        tracer.cmd([c, "stop", session])
        stop_s = time.monotonic() - began
        folder = relay.session_dir(session) if kind == "net" else local
        dirs = trace_dirs(folder)
        if not dirs:
            raise RuntimeError(f"{tracer.name}: no trace under {folder}")
        r = subprocess.run([a.counter] + dirs, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{tracer.name}: counting {folder} failed: {r.stderr}")
        counts = json.loads(r.stdout)
        written = trace_bytes(folder)
    finally:
        tracer.cmd([c, "destroy", session], check=False)
    shutil.rmtree(local, ignore_errors=True)
    if kind == "net":
        for p in Path(relay.output).glob(f"*/{session}-*"):
            shutil.rmtree(p, ignore_errors=True)
    point = {"kind": kind, "emitted": emitted, "seconds": seconds, "stop_s": stop_s,
             "recorded": counts["events"], "discarded": counts["discarded"],
             "unknown": counts["discarded_unknown"], "bytes": written}
    point["events_per_s"] = point["recorded"] / seconds if seconds > 0 else 0.0
    point["bytes_per_s"] = written / seconds if seconds > 0 else 0.0
    point["offered_per_s"] = emitted / seconds if seconds > 0 else 0.0
    lost = emitted - point["recorded"] - point["discarded"]
    point["check"] = "ok" if lost == 0 and point["unknown"] == 0 else \
        f"MISMATCH: {lost} neither recorded nor counted as discarded"
    log(f"{tracer.name}: streaming, {kind:5}: emitted {emitted:>11,} in {seconds:.2f} s "
        f"({point['offered_per_s']:>11,.0f}/s) recorded {point['recorded']:>11,} "
        f"({point['events_per_s']:>11,.0f}/s) discarded {point['discarded']:>11,} "
        f"{written / 2**20:8.1f} MiB ({point['bytes_per_s'] / 1e6:6.1f} MB/s), "
        f"stop {stop_s:.2f} s  {point['check']}")
    return point


class ViewerLines:
    """A babeltrace2 lttng-live viewer's stdout, read by a thread: each line
    with the CLOCK_REALTIME time (ns) its bytes were read."""

    def __init__(self, argv, err_path):
        self.lines = []
        self.lock = threading.Lock()
        with open(err_path, "ab") as errf:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=errf)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        pending = b""
        fd = self.proc.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            now = time.time_ns()
            pending += chunk
            *done, pending = pending.split(b"\n")
            with self.lock:
                self.lines.extend((line.decode(errors="replace"), now) for line in done)

    def snapshot(self):
        with self.lock:
            return list(self.lines)

    def close(self, timeout):
        """Waits for the viewer to end by itself; kills it after `timeout`
        s. Its exit status, or None if it had to be killed."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.thread.join(timeout=5)


TICK = re.compile(r"^\[(\d+)\.(\d{9})\] .*tracectl_demo:tick: .*\{ seq = (\d+),")


def live_latency(tracer, relay, a):
    """A live session with the default live timer; one emitter, one tick
    every 100 ms (a.live_events ticks), released once the viewer has
    attached; the latency of each tick from its timestamp to its line."""
    tracer.sessions += 1
    session = f"live{tracer.sessions}"
    c = cli(tracer)
    create(tracer, session, relay.url, live_us=0)
    start_file = Path(tracer.workdir) / f"start-{session}"
    err_path = Path(tracer.workdir) / f"viewer-{session}.log"
    app = viewer = None
    latencies = {}
    ended = None
    try:
        # 10 events/s, paced every 1 ms: tick i is written at start + i * 100 ms.
        app = subprocess.Popen(tracer.prefix + [a.emitter, "10", str(a.live_events * 100),
                                                str(start_file), "1000"],
                               env=tracer.env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        line = app.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"{tracer.name}: live emitter did not start: {line!r}")
        # The session's lttng-live URL as the relay lists it (its host name
        # is the session daemon's).
        url, listing = None, ""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            listing = subprocess.run(["babeltrace2", "--input-format=lttng-live",
                                      relay.live_list_url], capture_output=True, text=True,
                                     timeout=30).stdout
            m = re.search(rf"^(net://\S+/host/\S+/{re.escape(session)}) \(", listing, re.M)
            if m:
                url = m.group(1)
                break
            time.sleep(0.1)
        if url is None:
            raise RuntimeError(f"{tracer.name}: the relay does not list live session "
                               f"{session}: {listing!r}")
        viewer = ViewerLines(["babeltrace2", "--clock-seconds", "--input-format=lttng-live",
                              url, '--params=session-not-found-action="end"'], err_path)
        attached = False
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            listing = subprocess.run(["babeltrace2", "--input-format=lttng-live",
                                      relay.live_list_url], capture_output=True, text=True,
                                     timeout=30).stdout
            if re.search(rf"/{re.escape(session)} \(.*\b1 client\(s\) connected", listing):
                attached = True
                break
            time.sleep(0.1)
        if not attached:
            raise RuntimeError(f"{tracer.name}: the viewer did not attach: {listing!r}; "
                               f"{err_path.read_text(errors='replace')[-2000:]}")
        start_file.touch()
        deadline = time.monotonic() + a.live_events / 10 + 15
        while time.monotonic() < deadline:
            for text, read_ns in viewer.snapshot():
                m = TICK.search(text)
                if m:
                    at = int(m.group(1)) * 1_000_000_000 + int(m.group(2))
                    latencies.setdefault(int(m.group(3)), read_ns - at)
            if len(latencies) >= a.live_events:
                break
            time.sleep(0.05)
        app.communicate(timeout=30)
    finally:
        if app is not None and app.poll() is None:
            app.kill()
            app.wait()
        start_file.unlink(missing_ok=True)
        tracer.cmd([c, "destroy", session], check=False)
        if viewer is not None:
            ended = viewer.close(15)  # session-not-found-action=end: ends at destroy
        for p in Path(relay.output).glob(f"*/{session}-*"):
            shutil.rmtree(p, ignore_errors=True)
    if len(latencies) < a.live_events:
        raise RuntimeError(f"{tracer.name}: the live viewer printed {len(latencies)} of "
                           f"{a.live_events} ticks; its stderr: "
                           f"{err_path.read_text(errors='replace')[-2000:]}")
    values = [latencies[k] / 1e9 for k in sorted(latencies)]
    result = {"median": statistics.median(values), "max": max(values), "min": min(values),
              "n": len(values), "viewer_exit": ended}
    log(f"{tracer.name}: live: {len(values)} ticks, emission to print: median "
        f"{result['median'] * 1000:.0f} ms, min {result['min'] * 1000:.0f}, max "
        f"{result['max'] * 1000:.0f}; viewer "
        + (f"ended with status {ended}" if ended is not None else "killed (did not end at destroy)")
        + "; by tick (ms): " + " ".join(f"{v * 1000:.0f}" for v in values))
    err_path.unlink(missing_ok=True)
    return result


def run_scenario(tracer, a, results):
    """Under one tracer (up): a relay of its own; a.stream_rounds rounds of
    (local, network) rate points; then the live latency. Results into
    `results` under ("stream", kind, tracer name) and ("live", tracer name)."""
    relay = Relay(a.lttng_user)
    try:
        points = {"local": [], "net": []}
        for _ in range(a.stream_rounds):
            for kind in ("local", "net"):
                points[kind].append(rate_point(tracer, relay, kind, a))
        for kind, ps in points.items():
            # The median round by events/s (its own MB/s and discards with it).
            ps = sorted(ps, key=lambda p: p["events_per_s"])
            best = ps[(len(ps) - 1) // 2]
            best = dict(best, rounds=len(ps),
                        checks=[p["check"] for p in ps if p["check"] != "ok"])
            results[("stream", kind, tracer.name)] = best
        results[("live", tracer.name)] = live_latency(tracer, relay, a)
    finally:
        relay.close()


def add_rows(res, row, rows_note):
    """The scenario's rows of bench/compare's table: row(scenario, lttng,
    tracectl, fmt, target=None, held=None, r="auto"); notes go to rows_note."""
    def get(*key):
        return res.get(key)

    def pick(kind, field):
        return [(p[field] if (p := get("stream", kind, n)) else None)
                for n in ("lttng", "tracectl")]

    if any(get("stream", k, n) for k in ("net", "local") for n in ("lttng", "tracectl")):
        l, t = pick("net", "events_per_s")
        row("streaming: network session (relayd), events/s written", l, t,
            lambda v: f"{v:,.0f}/s", "report")
        l, t = pick("net", "bytes_per_s")
        row("  MB/s written by the relay", l, t, lambda v: f"{v / 1e6:.1f} MB/s", "report")
        fmt_d = (lambda d, em: f"{d:,} of {em:,}" if d is not None else None)
        ld, td = pick("net", "discarded")
        le, te = pick("net", "emitted")
        row("  discarded (of emitted)", fmt_d(ld, le), fmt_d(td, te), str, "report", r=None)
        l, t = pick("local", "events_per_s")
        row("streaming: local session (disk), events/s written", l, t,
            lambda v: f"{v:,.0f}/s", "report")
        l, t = pick("local", "bytes_per_s")
        row("  MB/s written to disk", l, t, lambda v: f"{v / 1e6:.1f} MB/s", "report")
        ld, td = pick("local", "discarded")
        le, te = pick("local", "emitted")
        row("  discarded (of emitted)", fmt_d(ld, le), fmt_d(td, te), str, "report", r=None)
        nl, nt = pick("net", "events_per_s")
        ll, lt = pick("local", "events_per_s")
        row("  network / local, events/s",
            nl / ll if nl is not None and ll else None,
            nt / lt if nt is not None and lt else None,
            lambda v: f"{v:.3f}", "report", r=None)
        for n in ("lttng", "tracectl"):
            for kind in ("net", "local"):
                p = get("stream", kind, n)
                if p:
                    rows_note.append(
                        f"# streaming, {n} {kind}: median of {p['rounds']} round(s): "
                        f"{p['emitted']:,} emitted in {p['seconds']:.2f} s "
                        f"({p['offered_per_s']:,.0f}/s offered), {p['recorded']:,} recorded, "
                        f"{p['discarded']:,} discarded, {p['bytes'] / 2**20:.1f} MiB; "
                        f"stop took {p['stop_s']:.2f} s"
                        + (f"; {', '.join(p['checks'])}" if p["checks"] else ""))
    ll, lt = get("live", "lttng"), get("live", "tracectl")
    if ll or lt:
        for field, label in (("median", "live: emission to print, median"),
                             ("max", "  max")):
            row(f"{label}" + (f" of {(lt or ll)['n']} ticks" if field == "median" else ""),
                ll[field] if ll else None, lt[field] if lt else None,
                lambda v: f"{v * 1000:.0f} ms", "report")
        for n, v in (("lttng", ll), ("tracectl", lt)):
            if v and v["viewer_exit"] != 0:
                rows_note.append(f"# live, {n}: the viewer "
                                 + ("was killed: it did not end at destroy"
                                    if v["viewer_exit"] is None
                                    else f"ended with status {v['viewer_exit']}"))
