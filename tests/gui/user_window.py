#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tracectl-gui as a user who is not root uses it: run by gui_test.py as that user, in a
session bus of the user's own (dbus-run-session, which starts the user's at-spi2 bus: the
accessibility bus of root's session admits root only), on the test's Xvfb display and the
sandbox's system bus. It starts the window, reads and drives it through AT-SPI, saves
screenshots (named user-NN-step.png) and prints what it saw as one JSON line:
  {"sessions": [names shown at start],
   "kernel_refusal": the text shown when the kernel's tracepoints were refused,
   "created": {column: text} of the session then created through the dialog}
Every wait polls with a deadline; it exits non-zero if a step failed.

Usage: dbus-run-session -- /usr/bin/python3 user_window.py GUI ARTIFACTS OUTPUT_FOLDER
Environment: DISPLAY, DBUS_SYSTEM_BUS_ADDRESS.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import atspi_window as w  # noqa: E402

GUI, ARTIFACTS, OUTPUT = sys.argv[1:4]


def main():
    w.init(ARTIFACTS, os.environ["DISPLAY"], prefix="user-")
    env = dict(os.environ, GDK_BACKEND="x11", GSK_RENDERER="cairo", GSETTINGS_BACKEND="memory")
    for hide in ("NO_AT_BRIDGE", "GTK_A11Y"):
        env.pop(hide, None)
    with open(os.path.join(ARTIFACTS, "user-tracectl-gui.log"), "w") as log:
        gui = subprocess.Popen([GUI], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            w.eventually(lambda: w.sessions_list() is not None, 30, "the window's sessions list")
            result = {"sessions": sorted(w.rows())}
            # The kernel's tracepoints need org.tracectl.Tracing1.trace-kernel.
            w.click(w.eventually(lambda: w.expander("Kernel tracepoints"), 5,
                                 "the kernel expander"))
            result["kernel_refusal"] = w.eventually(
                lambda: w.labelled("Kernel tracepoints error"), 15, "the kernel refusal")
            w.screenshot("kernel-refused")
            # The window stays usable: a session of one's own is created as ever.
            d = w.create_through_dialog("user-made", OUTPUT)
            w.click(w.button("Create", d))
            w.eventually(lambda: w.dialog() is None, 10, "the dialog to close")
            # Bounded as the other waits: a loaded machine (suites side by side)
            # has taken more than 5 s to show it.
            result["created"] = w.eventually(lambda: w.rows().get("user-made"), 20,
                                             "the row of user-made")
            w.screenshot("user-session")
            print(json.dumps(result), flush=True)
        finally:
            gui.terminate()
            gui.wait(10)


if __name__ == "__main__":
    main()
