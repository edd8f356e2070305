#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The man pages render with `man -l` and `groff -man -ww` without a
single warning, and they cover the interfaces they document: every method,
property and signal of the introspection XML appears in
org.tracectl.Tracing1(5), with the XML's signature (each argument's type and
name, in order and direction; each property's type, and "constant" exactly
when the XML says so), and the page documents no member the XML lacks;
every command of `tracectl --help` and every option of each
`tracectl COMMAND --help` in tracectl(1); every option of `tracectld --help`
in tracectld(8), of `tracectl-consumerd --help` in tracectl-consumerd(8), and,
when the window is built, of `tracectl-gui --help` in tracectl-gui(1).

Usage: man_pages_test.py SOURCE_DIR TRACECTL TRACECTLD TRACECTL_CONSUMERD [TRACECTL_GUI]
"""
import os
import re
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

SOURCE, TRACECTL, TRACECTLD, CONSUMERD = sys.argv[1:5]
GUI = sys.argv[5] if len(sys.argv) > 5 else None  # tracectl-gui, when built
MAN = os.path.join(SOURCE, "man")
PAGES = ["tracectl.1", "tracectl-dtrace.1", "tracectl-gui.1", "tracectl-ip.7", "tracectl-kernel.7",
         "tracectld.8",
         "tracectl-consumerd.8",
         "org.tracectl.Tracing1.5"]


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


def xml_members():
    """{interface: {(kind, name): signature}} from dbus/*.xml, kind being
    "method", "signal" or "property". A method's signature is
    (in args, out args), a signal's (args,), each arg a (type, name) pair; a
    property's is (type, constant)."""
    interfaces = {}
    for iface in ("Manager", "Session", "Application"):
        root = ET.parse(os.path.join(SOURCE, "dbus", f"org.tracectl.Tracing1.{iface}.xml"))
        for i in root.iter("interface"):
            members = interfaces.setdefault(i.get("name"), {})
            for m in i:
                args = [a for a in m if a.tag == "arg"]
                if m.tag == "method":
                    members[("method", m.get("name"))] = (
                        tuple((a.get("type"), a.get("name")) for a in args
                              if a.get("direction", "in") == "in"),
                        tuple((a.get("type"), a.get("name")) for a in args
                              if a.get("direction") == "out"))
                elif m.tag == "signal":
                    members[("signal", m.get("name"))] = (
                        tuple((a.get("type"), a.get("name")) for a in args),)
                elif m.tag == "property":
                    emits = [a.get("value") for a in m if a.tag == "annotation" and a.get("name")
                             == "org.freedesktop.DBus.Property.EmitsChangedSignal"]
                    members[("property", m.get("name"))] = (m.get("type"), emits == ["const"])
    return interfaces


def closing_paren(text, start):
    """The index of the ')' matching the '(' at text[start], or -1."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def man_arguments(text):
    """"s domain, a{sv} options" -> (("s", "domain"), ("a{sv}", "options"));
    None if an argument is not "TYPE NAME" (D-Bus types have no comma)."""
    if text.strip() == "":
        return ()
    args = []
    for part in text.split(","):
        fields = part.split()
        if len(fields) != 2:
            return None
        args.append((fields[0], fields[1]))
    return tuple(args)


# The subsections of an INTERFACE section and the kind of member each lists.
SUBSECTIONS = {"Methods": "method", "Signals": "signal", "Properties": "property"}


def man_members(section):
    """{(kind, name): signature or an error string} for the members an
    INTERFACE section of the rendered page documents: the tags (7 columns
    in) of its Methods, Signals and Properties subsections, parsed as
    "Name(T arg, ...)", "Name(T arg, ...) → (T out, ...)" and
    "Name (T[, constant])"; signatures in xml_members()' form."""
    members = {}
    kind = None
    lines = section.split("\n")
    for n, line in enumerate(lines):
        heading = re.fullmatch(r"   (\S.*?)\s*", line)
        if heading:
            kind = SUBSECTIONS.get(heading.group(1))
            continue
        tag = re.match(r" {7}([A-Z]\w*)( ?)\(", line)
        if kind is None or not tag:
            continue
        text = line.strip()
        # A tag too long for one line goes on: join until the parentheses close.
        while text.count("(") > text.count(")") and n + 1 < len(lines):
            n += 1
            text += " " + lines[n].strip()
        name, spaced = tag.group(1), tag.group(2) == " "
        key = (kind, name)
        opening = len(name) + len(tag.group(2))
        close = closing_paren(text, opening)
        inside = text[opening + 1:close] if close > 0 else None
        rest = text[close + 1:].strip() if close > 0 else ""
        if key in members:
            members[key] = "documented twice"
        elif inside is None:
            members[key] = f"unbalanced parentheses in {text!r}"
        elif kind == "property":
            fields = [f.strip() for f in inside.split(",")]
            if not spaced or rest or not fields[0] or any(f != "constant" for f in fields[1:]):
                members[key] = f"not 'Name (TYPE[, constant])': {text!r}"
            else:
                members[key] = (fields[0], "constant" in fields[1:])
        else:
            args = man_arguments(inside)
            out = ()
            if kind == "method" and rest.startswith("\u2192"):
                rest = rest[1:].strip()
                out_close = closing_paren(rest, 0) if rest.startswith("(") else -1
                out = man_arguments(rest[1:out_close]) if out_close > 0 else None
                rest = rest[out_close + 1:].strip() if out_close > 0 else rest
            if spaced or args is None or out is None or rest:
                form = "Name(TYPE arg, ...) → (TYPE out, ...)" if kind == "method" else \
                    "Name(TYPE arg, ...)"
                members[key] = f"not '{form}': {text!r}"
            else:
                members[key] = (args, out) if kind == "method" else (args,)
    return members


def interface_section(page, iface):
    """The rendered INTERFACE section of `iface`, up to the next heading."""
    start = page.index(f"INTERFACE {iface}")
    nxt = re.compile(r"\n\S").search(page, start)
    return page[start:nxt.start() if nxt else len(page)]


def describe_signature(kind, signature):
    if kind == "property":
        return f"({signature[0]}{', constant' if signature[1] else ''})"
    text = "(" + ", ".join(f"{t} {n}" for t, n in signature[0]) + ")"
    if kind == "method" and signature[1]:
        text += " → (" + ", ".join(f"{t} {n}" for t, n in signature[1]) + ")"
    return text


def signature_drift(page, interfaces):
    """Every difference between the XML's members and what the page's
    INTERFACE sections document, one line each."""
    drift = []
    for iface, expected in interfaces.items():
        documented = man_members(interface_section(page, iface))
        for key in sorted(set(expected) | set(documented)):
            kind, name = key
            where = f"{iface} {kind} {name}"
            if key not in documented:
                drift.append(f"{where}: not documented, the XML has "
                             f"{describe_signature(kind, expected[key])}")
            elif key not in expected:
                drift.append(f"{where}: documented, but not in the XML")
            elif isinstance(documented[key], str):
                drift.append(f"{where}: {documented[key]}")
            elif documented[key] != expected[key]:
                drift.append(f"{where}: the page says "
                             f"{describe_signature(kind, documented[key])}, the XML "
                             f"{describe_signature(kind, expected[key])}")
    return drift


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

    def test_dbus_page_gives_every_member_the_signature_of_the_xml(self):
        self.maxDiff = None  # show every drift
        _, page = rendered("org.tracectl.Tracing1.5")
        interfaces = xml_members()
        self.assertGreater(sum(len(m) for m in interfaces.values()), 20)
        self.assertEqual(signature_drift(page, interfaces), [])

    def test_signature_drift_is_seen(self):
        """The comparison itself: each kind of drift, on a page made for it."""
        page = "\n".join([
            "INTERFACE org.example.I",
            "   Methods",
            "       Add(s domain, s type)",
            "              Prose that mentions Add(s domain) is not a tag.",
            "       Get(s name) → (o thing)",
            "       Gone()",
            "   Signals",
            "       Done(s path)",
            "   Properties",
            "       Size (t)",
            "       Mode (s)",
            "SEE ALSO",
            "       Late (u)",
        ])
        xml = {"org.example.I": {
            ("method", "Add"): ((("s", "domain"), ("s", "type"), ("a{sv}", "options")), ()),
            ("method", "Get"): ((("s", "name"),), (("o", "session"),)),
            ("signal", "Done"): ((("s", "path"), ("s", "reason")),),
            ("property", "Size"): ("t", False),
            ("property", "Mode"): ("s", True),
            ("property", "Late"): ("u", True),
        }}
        self.assertEqual(signature_drift(page, xml), [
            "org.example.I method Add: the page says (s domain, s type), "
            "the XML (s domain, s type, a{sv} options)",
            "org.example.I method Get: the page says (s name) → (o thing), "
            "the XML (s name) → (o session)",
            "org.example.I method Gone: documented, but not in the XML",
            "org.example.I property Late: not documented, the XML has (u, constant)",
            "org.example.I property Mode: the page says (s), the XML (s, constant)",
            "org.example.I signal Done: the page says (s path), the XML (s path, s reason)",
        ])
        fixed = (page.replace("Add(s domain, s type)", "Add(s domain, s type, a{sv} options)")
                 .replace("(o thing)", "(o session)").replace("       Gone()\n", "")
                 .replace("Done(s path)", "Done(s path, s reason)")
                 .replace("Mode (s)", "Mode (s, constant)")
                 .replace("       Mode", "       Late (u, constant)\n       Mode"))
        self.assertEqual(signature_drift(fixed, xml), [])

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

    def test_daemon_and_gui_pages_name_every_option(self):
        pages = [(TRACECTLD, "tracectld.8"), (CONSUMERD, "tracectl-consumerd.8")]
        if GUI is not None:
            pages.append((GUI, "tracectl-gui.1"))
        for binary, page_name in pages:
            _, page = rendered(page_name)
            opts = long_options(help_text(binary))
            self.assertGreater(len(opts), 1)
            for opt in opts:
                with self.subTest(page=page_name, option=opt):
                    self.assertIn(opt, page)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
