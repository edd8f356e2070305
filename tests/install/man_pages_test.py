#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The four man pages render with `man -l` and `groff -man -ww` without a
single warning, and they cover the interfaces they document: every method,
property and signal of the introspection XML appears in
org.tracectl.Tracing1(5); every command of `tracectl --help` and every option
of each `tracectl COMMAND --help` in tracectl(1); every option of
`tracectld --help` in tracectld(8), of `tracectl-consumerd --help` in
tracectl-consumerd(8).

Usage: man_pages_test.py SOURCE_DIR TRACECTL TRACECTLD TRACECTL_CONSUMERD
"""
import os
import re
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

SOURCE, TRACECTL, TRACECTLD, CONSUMERD = sys.argv[1:5]
MAN = os.path.join(SOURCE, "man")
PAGES = ["tracectl.1", "tracectld.8", "tracectl-consumerd.8", "org.tracectl.Tracing1.5"]


def rendered(page):
    """The page as man shows it, plain text (no overstrike)."""
    r = subprocess.run(["man", "-l", "-Tutf8", os.path.join(MAN, page)],
                       capture_output=True, text=True,
                       env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
    text = re.sub(r".\x08", "", r.stdout)
    # Undo hyphenation at line ends ("manage-all-ses‐\n   sions").
    text = re.sub(r"[\u2010-]\n\s+", "", text)
    return r, text


def help_text(*argv):
    return subprocess.run(list(argv) + ["--help"], capture_output=True, text=True,
                          check=True).stdout


def long_options(text):
    return sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text)) - {"--help"})


class ManPagesTest(unittest.TestCase):
    def test_every_page_renders_without_warnings(self):
        for page in PAGES:
            with self.subTest(page=page):
                r, text = rendered(page)
                self.assertEqual((r.returncode, r.stderr), (0, ""))
                self.assertIn("NAME", text)
                lint = subprocess.run(["groff", "-man", "-ww", "-z", "-t",
                                       os.path.join(MAN, page)], capture_output=True, text=True)
                self.assertEqual((lint.returncode, lint.stderr), (0, ""))

    def test_dbus_page_names_every_member_of_the_xml(self):
        _, page = rendered("org.tracectl.Tracing1.5")
        members = []
        for iface in ("Manager", "Session", "Application"):
            root = ET.parse(os.path.join(SOURCE, "dbus", f"org.tracectl.Tracing1.{iface}.xml"))
            for i in root.iter("interface"):
                self.assertIn(f"INTERFACE {i.get('name')}", page)
                for m in i:
                    if m.tag in ("method", "signal"):
                        members.append((i.get("name"), m.get("name") + "("))
                    elif m.tag == "property":
                        members.append((i.get("name"), m.get("name") + " ("))
        self.assertGreater(len(members), 20)
        missing = []
        for iface, member in members:
            # Each interface's section runs up to the next INTERFACE heading.
            start = page.index(f"INTERFACE {iface}")
            nxt = page.find("\nINTERFACE ", start + 1)
            section = page[start:nxt if nxt > 0 else len(page)]
            if member not in section:
                missing.append(f"{iface}.{member}")
        self.assertEqual(missing, [])

    def test_dbus_page_names_every_error_and_action(self):
        _, page = rendered("org.tracectl.Tracing1.5")
        with open(os.path.join(SOURCE, "src/common/error_table.cpp"), encoding="utf-8") as f:
            errors = re.findall(r'"(org\.tracectl\.Tracing1\.Error\.\w+)"', f.read())
        self.assertGreater(len(errors), 5)
        for name in errors + ["org.freedesktop.DBus.Error.AccessDenied",
                              "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"]:
            self.assertIn(name, page)
        for action in ("trace-own", "trace-all-users", "trace-kernel", "manage-all-sessions"):
            self.assertIn(f"org.tracectl.Tracing1.{action}", page)

    def test_tracectl_page_names_every_command_and_option(self):
        _, page = rendered("tracectl.1")
        top = help_text(TRACECTL)
        commands = re.findall(r"(?m)^  ([a-z][a-z-]+)\s{2,}\S", top.split("Subcommands:")[1])
        self.assertGreater(len(commands), 8)
        missing = [c for c in commands if not re.search(rf"(?m)^   {re.escape(c)}\b", page)]
        self.assertEqual(missing, [], "commands without a subsection in tracectl(1)")
        for opt in long_options(top):
            self.assertIn(opt, page)
        for c in commands:
            for opt in long_options(help_text(TRACECTL, c)):
                with self.subTest(command=c, option=opt):
                    self.assertIn(opt, page)
        self.assertIn("EXIT STATUS", page)
        self.assertIn("EXAMPLES", page)

    def test_daemon_pages_name_every_option(self):
        for binary, page_name in ((TRACECTLD, "tracectld.8"), (CONSUMERD, "tracectl-consumerd.8")):
            _, page = rendered(page_name)
            opts = long_options(help_text(binary))
            self.assertGreater(len(opts), 1)
            for opt in opts:
                with self.subTest(page=page_name, option=opt):
                    self.assertIn(opt, page)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
