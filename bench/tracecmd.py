# SPDX-License-Identifier: LGPL-2.1-or-later
"""trace-cmd as the reference recorder of bench/compare's kernel scenario
(issue 36): `trace-cmd record` with the events, filter, buffer size and
clock of tracectl's kernel session, in discard mode, uncompressed, beside
tracectl on the same load. Loaded by bench/compare as a module; see
bench/README.md, "The kernel scenario".

How trace-cmd is run here:
- in a tracefs instance of its own (`-B tcbench-tracecmd-<pid>-<n>`, made
  before it starts and removed after), so that it never touches the top
  instance nor anyone else's;
- in a private mount namespace where a file holding `1` is bind-mounted
  over /proc/sys/kernel/ftrace_enabled (trace-cmd writes it, and it is
  read-only on these VMs) and empty files over the instance's
  set_ftrace_filter and set_ftrace_notrace (trace-cmd empties them when it
  ends, which this kernel refuses: it then exits 1 without removing the
  instance); `--no-filter` keeps it from writing set_ftrace_pid. The
  namespace is made in the child between fork and exec (unshare(2) and
  mount(2) through ctypes: what `unshare -m sh -c 'mount --bind ...; exec
  trace-cmd ...'` does, without a shell and mount processes whose CPU time
  would be counted as trace-cmd's);
- `stdbuf -oL`, so that its "Hit Ctrl^C to stop recording" (printed once
  its recorders run and tracing is on) arrives at once through the pipe;
- stopped with SIGINT to its main process, which stops its per-CPU
  recorder children, reaps them and writes the .dat;
- its CPU time: os.wait4()'s rusage of the main process, which holds its
  own time and that of every child it reaped (the recorders), from exec
  to exit (start-up, recording, writing the .dat: its whole life, as
  tracectl's consumer's is its unit's cgroup over its whole life);
- its events: tracectl-bench-count-dat (libtracecmd) over the .dat; its
  discarded events: the "dropped events" and "overrun" of each CPU's
  stats, which trace-cmd stores in the file (`trace-cmd report --stat`).
"""

import ctypes
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

CLONE_NEWNS = 0x00020000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18


def tracefs_root():
    """Where tracefs is mounted (the one with instances/), or None."""
    for root in (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing")):
        if (root / "instances").is_dir():
            return root
    return None


def version():
    """trace-cmd's version ("3.1.6"), or None when it is not installed."""
    try:
        r = subprocess.run(["trace-cmd", "--version"], capture_output=True, text=True,
                           timeout=10)
    except OSError:
        return None
    m = re.search(r"version (\S+)", r.stdout + r.stderr)
    return m.group(1) if m else "(version unknown)"


def machine_busy():
    """(busy, total) jiffies of every CPU since boot (/proc/stat's first
    line; idle and iowait count as idle): two readings give how busy the
    machine was between them."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    total = sum(fields[:8])
    return total - idle, total


def busy_share(before, after):
    """Share of all CPUs' time that was busy between two machine_busy()."""
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else 0.0


def proc_cpu_seconds(pid):
    """utime + stime of pid (every thread, not its children), seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid):
    """Child pids of pid (/proc/<pid>/task/*/children)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def threads(pid):
    """Thread ids of pid (/proc/<pid>/task)."""
    try:
        return [int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return []


def cpu_stats(dat):
    """Per-CPU ring buffer stats trace-cmd stored in `dat` at the end of the
    recording (`trace-cmd report --stat`), summed over CPUs and buffers:
    {"dropped": ..., "overrun": ..., "commit_overrun": ..., "read": ...,
    "entries": ...}. "dropped" are the events discarded in discard mode,
    "overrun" those overwritten in overwrite mode."""
    r = subprocess.run(["trace-cmd", "report", "--stat", str(dat)], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"trace-cmd report --stat {dat}: exit {r.returncode}: {r.stderr}")
    sums = {"dropped": 0, "overrun": 0, "commit_overrun": 0, "read": 0, "entries": 0}
    keys = {"dropped events": "dropped", "overrun": "overrun",
            "commit overrun": "commit_overrun", "read events": "read", "entries": "entries"}
    for line in r.stdout.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in keys and value.strip().isdigit():
            sums[keys[key.strip()]] += int(value)
    return sums


def remove_instance(instance):
    """rmdir of a tracefs instance if it is there (trace-cmd removes its own
    when all goes well); a recorder still holding it open makes it busy for
    a moment after being killed."""
    for _ in range(50):
        try:
            instance.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    instance.rmdir()


class TraceCmd:
    """One trace-cmd recording at a time, in tracefs instances named after
    this process; `counter` is tracectl-bench-count-dat."""

    name = "trace-cmd"

    def __init__(self, workdir, counter):
        self.workdir = Path(workdir)
        self.counter = counter
        self.root = tracefs_root()
        if self.root is None:
            raise RuntimeError("trace-cmd: no tracefs with instances/")
        self.one = self.workdir / "ftrace_enabled"
        self.one.write_text("1\n")
        self.empty = self.workdir / "empty"
        self.empty.write_text("")
        self.recordings = 0
        self.libc = ctypes.CDLL(None, use_errno=True)

    def _namespace(self, instance):
        """Runs in the child before exec: a private mount namespace with the
        bind mounts trace-cmd needs on these VMs (see the module's doc)."""
        libc = self.libc
        binds = [(self.one, "/proc/sys/kernel/ftrace_enabled")]
        binds += [(self.empty, instance / f) for f in ("set_ftrace_filter", "set_ftrace_notrace")
                  if (instance / f).exists()]

        def setup():
            if libc.unshare(CLONE_NEWNS) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
            if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
                raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
            for source, target in binds:
                if libc.mount(str(source).encode(), str(target).encode(), None, MS_BIND,
                              None) != 0:
                    raise OSError(ctypes.get_errno(), f"mount --bind {source} {target}")
        return setup

    def record(self, event_args, during, buffer_kb=4096, attempts=3):
        """record_once(), again (up to `attempts` times in all) when
        trace-cmd fails writing its .dat because /proc/kallsyms changed size
        while it copied it ("error in size of file '/proc/kallsyms'"): BPF
        programs loaded or unloaded meanwhile (other tests, other tracers)
        add and remove symbols there. Other failures are raised at once."""
        for attempt in range(1, attempts + 1):
            try:
                return self.record_once(event_args, during, buffer_kb)
            except RuntimeError as e:
                if "kallsyms" not in str(e) or attempt == attempts:
                    raise
                print(f"trace-cmd: /proc/kallsyms changed while it was copied; again "
                      f"({attempt}/{attempts - 1})", file=sys.stderr)
        raise AssertionError("unreachable")

    def record_once(self, event_args, during, buffer_kb=4096):
        """`trace-cmd record` of `event_args` (-e/-f options) into a fresh
        instance of buffer_kb KiB per CPU, clock mono, discard mode,
        uncompressed; calls during(pids) once it records (pids: its main
        process's and its recorders' thread ids) and stops it with SIGINT
        when that returns. Returns the recording's figures: cpu (its whole
        life, s: os.wait4's rusage), cpu_recording (while it recorded, from
        "Hit Ctrl^C" to the SIGINT, s: /proc/<pid>/stat of it and its
        recorders, in clock ticks), window (s from recording to SIGINT),
        bytes (.dat), data_bytes (its pages only, without the headers),
        events, sched, syscall, own (records of pids), discarded (stats:
        dropped + overrun), unknown (pages marked as having lost events),
        pids, busy (share of the machine's CPU time that was busy while it
        recorded), and what during() returned (during)."""
        self.recordings += 1
        name = f"tcbench-tracecmd-{os.getpid()}-{self.recordings}"
        instance = self.root / "instances" / name
        dat = self.workdir / f"{name}.dat"
        instance.mkdir()
        proc = None
        try:
            argv = ["stdbuf", "-oL", "trace-cmd", "record", "--no-filter", "--compression",
                    "none", "-B", name, "-b", str(buffer_kb), "-C", "mono", "-O",
                    "nooverwrite"] + event_args + ["-o", str(dat)]
            # A session of its own: when something goes wrong (or on Ctrl-C
            # in bench/compare), its recorders are killed with it.
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    preexec_fn=self._namespace(instance), cwd=self.workdir,
                                    start_new_session=True)
            out = self._until_recording(proc)
            began = time.monotonic()
            busy_before = machine_busy()
            recorders = children(proc.pid)
            pids = threads(proc.pid) + [t for c in recorders for t in threads(c)]
            cpu_before = proc_cpu_seconds(proc.pid) + sum(proc_cpu_seconds(c)
                                                          for c in recorders)
            result = during(pids)
            window = time.monotonic() - began
            busy = busy_share(busy_before, machine_busy())
            cpu_recording = proc_cpu_seconds(proc.pid) + sum(
                proc_cpu_seconds(c) for c in children(proc.pid)) - cpu_before
            proc.send_signal(signal.SIGINT)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            out += proc.stdout.read().decode(errors="replace")
            err = proc.stderr.read().decode(errors="replace")
            if proc.returncode != 0:
                raise RuntimeError(f"trace-cmd record exit {proc.returncode}: {err.strip()}")
        finally:
            if proc is not None and proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # it and its recorders
                except ProcessLookupError:
                    pass
                proc.wait()
            if proc is not None:
                proc.stdout.close()
                proc.stderr.close()
            remove_instance(instance)
        try:
            cpu = usage.ru_utime + usage.ru_stime
            stats = cpu_stats(dat)
            r = subprocess.run([self.counter, "--pids", ",".join(map(str, pids)), str(dat)],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                raise RuntimeError(f"trace-cmd: counting {dat} failed: {r.stderr}")
            counts = json.loads(r.stdout)
            written = dat.stat().st_size
        finally:
            dat.unlink(missing_ok=True)
        # On stderr, per buffer and CPU: "CPU0 data recorded at
        # offset=0x541000" then "    65773568 bytes in size".
        data_bytes = sum(int(b) for b in re.findall(r"^\s+(\d+) bytes in size", err, re.M))
        return {"cpu": cpu, "cpu_recording": cpu_recording, "window": window,
                "bytes": written, "data_bytes": data_bytes, "events": counts["events"],
                "sched": counts["sched"], "syscall": counts["syscall"], "own": counts["own"],
                "discarded": stats["dropped"] + stats["overrun"],
                "unknown": counts["missed"] + counts["missed_unknown"], "pids": pids,
                "busy": busy, "during": result}

    @staticmethod
    def _until_recording(proc, timeout=60):
        """Reads trace-cmd's stdout until "Hit Ctrl^C to stop recording";
        returns what it read."""
        out = ""
        deadline = time.monotonic() + timeout
        while "Hit Ctrl^C" not in out:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError("trace-cmd record did not start recording within "
                                   f"{timeout} s")
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                err = proc.stderr.read().decode(errors="replace")
                proc.wait()
                raise RuntimeError(f"trace-cmd record exit {proc.returncode} before "
                                   f"recording: {err.strip()}")
            out += chunk.decode(errors="replace")
        return out
