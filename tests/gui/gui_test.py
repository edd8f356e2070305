#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tracectl-gui as a person uses it, in a real window: Xvfb, the session bus
this runs in (dbus-run-session) with at-spi2 for the accessibility tree, and
the sandbox's tracectld (scripts/sandbox) on its private system bus, which the
window talks to. The test reads and drives the window through AT-SPI only
(python3-pyatspi: accessible names, texts, actions, selections) and checks
what the daemon holds with the tracectl command. It saves a PNG screenshot of
the screen at each step in the artifact folder it prints first
(BUILD/meson-logs/gui-screenshots).

Every wait polls with a deadline; no sleep stands in for an assertion.

Usage (root): dbus-run-session -- /usr/bin/python3 gui_test.py BUILD_DIR
Environment: TRACECTL_GUI, TRACECTL, TRACECTLD, TRACECTL_DEMO_APP,
TRACECTL_SANDBOX_SCRIPT (meson sets them).
"""
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import atspi_window  # noqa: E402
from atspi_window import (  # noqa: E402
    banner_shows, button, check_box, click, create_through_dialog, dialog, eventually,
    expander, graph_of, is_checked, labelled, main_window, rows, run, screenshot, select,
    sessions_list, set_entry)

BUILD = sys.argv[1]
GUI = os.environ["TRACECTL_GUI"]
TRACECTL = os.environ["TRACECTL"]
TRACECTLD = os.environ["TRACECTLD"]
DEMO_APP = os.environ["TRACECTL_DEMO_APP"]
SANDBOX = os.environ["TRACECTL_SANDBOX_SCRIPT"]
ARTIFACTS = os.path.join(BUILD, "meson-logs", "gui-screenshots")
USER_WINDOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "user_window.py")
USER = "alice"  # a user who is not root, made if missing (as the integration suites do)
# The lock the suites making users take (tests/integration/multi_user.cpp).
USERS_LOCK = "/run/tracectl-test-users.lock"

state = {}  # what setUpModule brought up


def tracectl(*args, check=True):
    return run([TRACECTL, *args], env=state["env"], check=check)


def setUpModule():
    # unittest runs no tearDownModule when setUpModule fails: clean up here then.
    try:
        bring_up()
    except BaseException:
        tearDownModule()
        raise


def bring_up():
    """The sandbox, Xvfb, AT-SPI and the window (state holds what was started)."""
    if os.geteuid() != 0:
        raise RuntimeError("the gui suite runs the sandbox: it needs root")
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    os.makedirs(ARTIFACTS)
    print(f"screenshots: {ARTIFACTS}", flush=True)
    state["procs"] = []
    state["dir"] = tempfile.mkdtemp(prefix="tracectl-gui-")
    up = run([SANDBOX, "up", state["dir"], "--daemon", TRACECTLD, "--owner-pid", str(os.getpid())],
             timeout=120)
    env = dict(os.environ)
    for line in up.stdout.splitlines():
        m = re.match(r"export (\w+)=(.*)$", line)
        if m:
            env[m.group(1)] = m.group(2).strip("'\"")
    state["env"] = env

    # Xvfb picks a free display and writes its number to the pipe.
    read_end, write_end = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x800x24",
                             "-nolisten", "tcp"], pass_fds=(write_end,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state["procs"].append(xvfb)
    os.close(write_end)
    with os.fdopen(read_end) as r:
        number = r.readline().strip()
    assert number, "Xvfb gave no display number"
    state["display"] = ":" + number
    atspi_window.init(ARTIFACTS, state["display"])

    gui_env = dict(env, DISPLAY=state["display"], GDK_BACKEND="x11", GSK_RENDERER="cairo",
                   GSETTINGS_BACKEND="memory")
    for hide in ("NO_AT_BRIDGE", "GTK_A11Y"):
        gui_env.pop(hide, None)
    # The desktop's handler of folders, for "Open folder": a desktop file that records the
    # URI it is started with, made the default for inode/directory. GIO finds it as it finds
    # a file manager (XDG_DATA_HOME/applications, XDG_CONFIG_HOME/mimeapps.list).
    state["opened"] = os.path.join(state["dir"], "opened-uri")
    data_home = os.path.join(state["dir"], "gui-data")
    config_home = os.path.join(state["dir"], "gui-config")
    os.makedirs(os.path.join(data_home, "applications"))
    os.makedirs(config_home)
    with open(os.path.join(data_home, "applications", "test-file-manager.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Test file manager\n"
                "MimeType=inode/directory;\n"
                f"Exec=/bin/sh -c 'printf %s \"$1\" > {state['opened']}' sh %u\n")
    with open(os.path.join(config_home, "mimeapps.list"), "w") as f:
        f.write("[Default Applications]\ninode/directory=test-file-manager.desktop\n")
    gui_env.update(XDG_DATA_HOME=data_home, XDG_CONFIG_HOME=config_home)
    log = open(os.path.join(ARTIFACTS, "tracectl-gui.log"), "w")
    state["gui"] = subprocess.Popen([GUI], env=gui_env, stdout=log, stderr=subprocess.STDOUT)
    state["procs"].append(state["gui"])
    eventually(lambda: sessions_list() is not None, 30, "the window's sessions list")


def tearDownModule():
    for p in reversed(state.get("procs", [])):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    if "dir" in state:
        run([SANDBOX, "down", state["dir"]], check=False, timeout=120)
        shutil.rmtree(state["dir"], ignore_errors=True)


class Gui(unittest.TestCase):
    def setUp(self):
        self.assertIsNone(state["gui"].poll(), "tracectl-gui exited")
        self.started = time.monotonic()

    def tearDown(self):
        # The suite's budget is kept per test: say where the time goes.
        print(f"({time.monotonic() - self.started:.1f} s) ", end="", file=sys.stderr, flush=True)
        self.assertIsNone(state["gui"].poll(), "tracectl-gui exited")

    def output(self, name):
        return os.path.join(state["dir"], "traces", name)

    def test_1_create_through_the_dialog(self):
        screenshot("empty-window")
        d = create_through_dialog("gui-made")
        # The daemon's default folder for that name (Manager.DefaultOutputPath), while the
        # output folder is left empty.
        default = eventually(lambda: labelled("Default output folder", dialog()), 5,
                             "the default output folder")
        self.assertRegex(default, r"^If left empty: /root/lttng-traces/gui-made-\d{8}-\d{6}$")
        self.assertEqual(labelled("Error", d), None)  # no error shown yet
        screenshot("create-dialog")
        set_entry(d, "Output folder", self.output("gui-made"))
        click(button("Create", d))
        eventually(lambda: dialog() is None, 10, "the dialog to close")
        row = eventually(lambda: rows().get("gui-made"), 5, "the row of gui-made")
        self.assertEqual(row["State"], "created")
        self.assertEqual(row["Mode"], "normal")
        self.assertEqual(row["Owner"], "root")
        self.assertEqual(row["Output"], self.output("gui-made"))
        screenshot("created")
        listed = tracectl("list").stdout
        self.assertRegex(listed, r"(?m)^gui-made\s+created\s+normal\s+root\b")

    def test_2_terminal_sessions_come_and_go_within_a_second(self):
        tracectl("create", "term-made", "--output", self.output("term-made"))
        eventually(lambda: "term-made" in rows(), 1.0, "term-made in the window")
        screenshot("terminal-session")
        tracectl("destroy", "term-made")
        eventually(lambda: "term-made" not in rows(), 1.0, "term-made gone from the window")
        screenshot("terminal-session-destroyed")

    def test_3_tracepoints_chosen_in_the_tree_are_traced(self):
        tracectl("create", "rate", "--count-events", "--output", self.output("rate"))
        # Small sub-buffers: packets are written, and counted, every second. The tree's rules
        # go to the session's first channel.
        tracectl("enable-channel", "-u", "small", "--subbuf-size", "4096", "--num-subbuf", "16",
                 "-s", "rate")
        eventually(lambda: "rate" in rows(), 2, "the row of rate")
        select("rate")
        eventually(lambda: labelled("Event tree session") == "Events of “rate”", 2,
                   "the event tree of rate")
        # The demo app registers: its tracepoints show in the tree. About 2000 events a second
        # until it is stopped (COUNT INTERVAL_US).
        app_log = open(os.path.join(ARTIFACTS, "demo-app.log"), "w")
        demo = subprocess.Popen([DEMO_APP, "100000000", "1000"], env=state["env"],
                                stdout=app_log, stderr=subprocess.STDOUT)
        try:
            for tracepoint in ("tracectl_demo:tick", "tracectl_demo:debug_note"):
                box = eventually(lambda: check_box(tracepoint), 10, f"{tracepoint} in the tree")
                self.assertFalse(is_checked(box))
                click(box)
                eventually(lambda: is_checked(check_box(tracepoint)), 5, f"{tracepoint} checked")
            self.assertFalse(is_checked(check_box("tracectl_demo:done")))
            listed = tracectl("list", "rate").stdout
            self.assertIn("tracectl_demo:tick", listed)
            self.assertIn("tracectl_demo:debug_note", listed)
            self.assertNotIn("tracectl_demo:done", listed)
            # The kernel's tracepoints, as the daemon lists them.
            click(eventually(lambda: expander("Kernel tracepoints"), 2, "the kernel expander"))
            kernel = eventually(lambda: labelled("Kernel tracepoints status"), 15,
                                "the kernel's tracepoints")
            self.assertRegex(kernel, r"^[1-9]\d* tracepoints in [1-9]\d* systems$")
            click(eventually(lambda: expander("Kernel system sched"), 2, "the sched system"))
            eventually(lambda: check_box("sched:sched_switch"), 5, "sched:sched_switch")
            screenshot("event-tree")
            # Folded again: every AT-SPI search walks the window, and 102 systems slow it down.
            click(expander("Kernel tracepoints"))

            click(eventually(lambda: button("Start", main_window()), 2, "Start"))
            eventually(lambda: rows()["rate"]["State"] == "active", 15, "rate active")

            def rising():
                r = rows()["rate"]
                try:
                    return float(r["Events/s"]) > 0 and float(r["MB/s"]) >= 0 and r
                except ValueError:
                    return False  # "—": fewer than two samples yet
            row = eventually(rising, 20, "an event rate above 0 for rate")
            # The rate graph of the row has drawn the samples it was given.
            drawn = eventually(lambda: graph_of("rate") if re.match(
                r"\d+ points, peak [0-9.]+ events/s$", graph_of("rate") or "") else None,
                5, "the rate graph drawn")
            self.assertGreater(float(row["Events/s"]), 0)
            self.assertNotRegex(drawn, r"peak 0.00 ")
            eventually(lambda: int(graph_of("rate").split()[0]) >= 3, 10, "three rate points")
            screenshot("tracing")
        finally:
            demo.terminate()
            demo.wait(10)
        select("rate")
        click(button("Stop", main_window()))
        eventually(lambda: rows()["rate"]["State"] == "stopped", 15, "rate stopped")
        screenshot("stopped")
        view = tracectl("view", "rate").stdout
        self.assertIn("tracectl_demo:tick:", view)
        self.assertIn("tracectl_demo:debug_note:", view)
        self.assertNotIn("tracectl_demo:done", view)

    def test_3a_rotate_through_the_window_and_open_the_archive(self):
        eventually(lambda: rows().get("rate", {}).get("State") == "stopped", 2, "rate stopped")
        select("rate")
        click(button("Rotate", main_window()))
        result = eventually(lambda: (labelled("Result") or "").startswith("Archive of “rate”: ")
                            and labelled("Result"), 15, "the archive folder")
        archive = result.split(": ", 1)[1]
        self.assertTrue(archive.startswith(os.path.join(self.output("rate"), "archives") + "/"),
                        archive)
        self.assertTrue(os.path.isdir(archive), archive)
        self.assertEqual(labelled("Status"), "Rotated “rate”")
        screenshot("rotated")
        # "Open folder" launches the desktop's handler of folders: here the test's recorder
        # (setUpModule), through GIO's real lookup of the default handler.
        click(button("Open folder", main_window()))
        uri = "file://" + archive
        eventually(lambda: labelled("Status") == "Opened " + uri, 5, "the folder opened")
        eventually(lambda: os.path.exists(state["opened"]), 5, "the file manager started")
        with open(state["opened"]) as f:
            # GIO hands a local folder to a handler's %u as its path.
            self.assertEqual(f.read(), archive)

    def test_3b_snapshot_through_the_window(self):
        tracectl("create", "snap", "--snapshot", "--output", self.output("snap"))
        tracectl("enable-event", "-u", "tracectl_demo:*", "-s", "snap")
        tracectl("start", "snap")
        eventually(lambda: rows().get("snap", {}).get("State") == "active", 5, "snap active")
        select("snap")
        click(button("Snapshot", main_window()))
        result = eventually(lambda: (labelled("Result") or "").startswith("Snapshot of “snap”: ")
                            and labelled("Result"), 15, "the snapshot folder")
        folder = result.split(": ", 1)[1]
        self.assertTrue(folder.startswith(self.output("snap") + "/snapshot-1-"), folder)
        self.assertTrue(os.path.isdir(folder), folder)
        screenshot("snapshot")
        tracectl("destroy", "snap")
        eventually(lambda: "snap" not in rows(), 2, "snap gone")

    def test_3c_a_rule_with_log_level_and_filter_from_the_entry(self):
        tracectl("create", "rules", "--output", self.output("rules"))
        eventually(lambda: "rules" in rows(), 2, "the row of rules")
        select("rules")
        eventually(lambda: labelled("Event tree session") == "Events of “rules”", 2,
                   "the event tree of rules")
        tree = main_window()
        set_entry(tree, "Pattern", "tracectl_demo:*")
        set_entry(tree, "Log level", "TRACE_INFO")
        # A filter the daemon refuses: its words are shown.
        set_entry(tree, "Filter", "seq >")
        cli = tracectl("enable-event", "-u", "tracectl_demo:*", "--loglevel", "TRACE_INFO",
                       "--filter", "seq >", "-s", "rules", check=False)
        m = re.search(r"Error\.InvalidArgument: (.*)$", cli.stderr.strip())
        self.assertIsNotNone(m, cli.stderr)
        click(button("Enable rule", main_window()))
        message = eventually(lambda: labelled("Message", main_window()), 10,
                             "the refusal of the filter")
        self.assertIn("Could not enable tracectl_demo:* in session “rules”", message)
        self.assertIn(m.group(1), message)
        screenshot("rule-refused")
        set_entry(main_window(), "Filter", "seq > 3")
        click(button("Enable rule", main_window()))
        eventually(lambda: labelled("Status") == "Enabled tracectl_demo:* in “rules”", 10,
                   "the rule enabled")
        listed = tracectl("list", "rules").stdout
        # TRACE_INFO is level 6, and the rule records it and the more severe ones.
        self.assertIn('"tracectl_demo:*","at-least",6,[],true,"seq > 3"', listed)
        tracectl("destroy", "rules")
        eventually(lambda: "rules" not in rows(), 2, "rules gone")

    def test_4_a_refusal_is_shown_as_the_daemon_words_it_and_the_window_stays_usable(self):
        tracectl("create", "dup", "--output", self.output("dup"))
        cli = tracectl("create", "dup", check=False)
        m = re.search(r"Error\.SessionExists: (.*)$", cli.stderr.strip())
        self.assertIsNotNone(m, cli.stderr)
        daemon_words = m.group(1)
        eventually(lambda: "dup" in rows(), 2, "the row of dup")

        d = create_through_dialog("dup")
        click(button("Create", d))
        error = eventually(lambda: labelled("Error", dialog()), 10, "the error in the dialog")
        self.assertIn(daemon_words, error)
        screenshot("refused")
        # The same dialog, corrected, creates the session.
        set_entry(dialog(), "Session name", "dup-2")
        click(button("Create", dialog()))
        eventually(lambda: dialog() is None, 10, "the dialog to close")
        eventually(lambda: "dup-2" in rows(), 5, "the row of dup-2")

        # An action the daemon refuses: Start without a channel.
        select("dup")
        click(button("Start", main_window()))
        message = eventually(lambda: labelled("Message", main_window()), 10,
                             "the refusal of Start")
        self.assertIn("Could not start session “dup”", message)
        self.assertIn(tracectl("start", "dup", check=False).stderr.strip().split(": ", 2)[-1],
                      message)
        screenshot("start-refused")
        # Still usable: destroy both through the window.
        for name in ("dup", "dup-2"):
            select(name)
            click(button("Destroy", main_window()))
            eventually(lambda: name not in rows(), 10, f"{name} destroyed")
        self.assertNotIn("dup", tracectl("list").stdout.split())

    def test_5_the_daemon_restarted_under_the_window(self):
        eventually(lambda: "gui-made" in rows(), 2, "the row of gui-made")
        run([SANDBOX, "daemon-stop", state["dir"]], timeout=60)
        eventually(lambda: banner_shows("tracectld is not running"), 5, "the banner")
        eventually(lambda: rows() == {}, 2, "the sessions cleared")
        screenshot("daemon-gone")
        run([SANDBOX, "daemon-start", state["dir"], "--daemon", TRACECTLD], timeout=60)
        eventually(lambda: not banner_shows("tracectld is not running"), 10, "the banner gone")
        row = eventually(lambda: rows().get("gui-made"), 10, "gui-made back in the window")
        self.assertEqual(row["State"], "created")
        screenshot("daemon-back")
        # And it works as before.
        tracectl("create", "after-restart", "--output", self.output("after-restart"))
        eventually(lambda: "after-restart" in rows(), 1.0, "after-restart in the window")

    def test_6_a_user_who_is_not_root_sees_a_refusal_naming_the_right(self):
        try:
            user = pwd.getpwnam(USER)
        except KeyError:
            # Under the lock the integration suites take (multi_user.cpp):
            # they may be making the same users beside this suite.
            run(["flock", USERS_LOCK, "sh", "-c",
                 'getent passwd "$1" >/dev/null || useradd -m -s /usr/sbin/nologin "$1"',
                 "sh", USER])
            user = pwd.getpwnam(USER)
        # Where the user's window writes its screenshots, and the user's session's output.
        shots = os.path.join(ARTIFACTS, "user")
        output = os.path.join(state["dir"], "user-traces")
        for folder in (shots, output):
            os.makedirs(folder, exist_ok=True)
            os.chown(folder, user.pw_uid, user.pw_gid)
        r = run(["setpriv", f"--reuid={USER}", f"--regid={USER}", "--init-groups",
                 "env", "-i", f"HOME={user.pw_dir}", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                 f"DISPLAY={state['display']}",
                 f"DBUS_SYSTEM_BUS_ADDRESS={state['env']['DBUS_SYSTEM_BUS_ADDRESS']}",
                 "dbus-run-session", "--", "/usr/bin/python3", USER_WINDOW, GUI, shots,
                 os.path.join(output, "user-made")], timeout=120)
        seen = json.loads(r.stdout.strip().splitlines()[-1])
        # Root's sessions are not the user's to see.
        self.assertNotIn("gui-made", seen["sessions"])
        # The refusal names the right, as the daemon words it.
        self.assertIn("org.tracectl.Tracing1.trace-kernel", seen["kernel_refusal"])
        self.assertEqual(seen["created"]["Owner"], USER)
        self.assertRegex(tracectl("list").stdout, rf"(?m)^user-made\s+created\s+normal\s+{USER}\b")
        eventually(lambda: "user-made" in rows(), 2, "user-made in root's window")
        tracectl("destroy", "user-made")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
