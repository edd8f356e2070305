#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`meson install --destdir` into a temporary folder puts every file where
the distribution expects it (paths derived from the build's own --prefix,
as systemd.pc, dbus-1.pc and polkit-gobject-1.pc give them re-rooted there),
nothing else is installed, the installed units and activation files point at
the installed daemon, and `systemd-analyze verify` accepts every installed
unit, system and user variants, without a single warning. When the window
(tracectl-gui, option gui) is built, its desktop entry passes
desktop-file-validate and its AppStream metainfo `appstreamcli validate`.

Usage: install_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BUILD, SOURCE = sys.argv[1], sys.argv[2]


def build_options():
    out = subprocess.run(["meson", "introspect", "--buildoptions", BUILD],
                         check=True, capture_output=True, text=True).stdout
    return {o["name"]: o["value"] for o in json.loads(out)}


def gui_built():
    """Whether this build has the tracectl-gui target (gtkmm-4.0 found, option gui)."""
    out = subprocess.run(["meson", "introspect", "--targets", BUILD],
                         check=True, capture_output=True, text=True).stdout
    return any(t["name"] == "tracectl-gui" for t in json.loads(out))


def under(prefix, d):
    return d if os.path.isabs(d) else os.path.join(prefix, d)


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tracectl-install-")
        cls.destdir = cls.tmp.name
        r = subprocess.run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet",
                            "--destdir", cls.destdir], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("meson install failed:\n" + r.stdout + r.stderr)
        o = build_options()
        p = o["prefix"]
        cls.prefix = p
        cls.sbindir = under(p, o["sbindir"])
        datadir = under(p, o["datadir"])
        mandir = under(p, o["mandir"])
        libexec = under(p, o["libexecdir"])
        cls.system_units = os.path.join(p, "lib/systemd/system")
        cls.user_units = os.path.join(p, "lib/systemd/user")
        expected = [
            os.path.join(under(p, o["bindir"]), "tracectl"),
            os.path.join(cls.sbindir, "tracectld"),
            os.path.join(libexec, "tracectl-consumerd"),
            os.path.join(libexec, "tracectl/tracectl-demo-app"),
            os.path.join(cls.system_units, "tracectld.service"),
            os.path.join(cls.system_units, "tracectld.socket"),
            os.path.join(cls.user_units, "tracectld.service"),
            os.path.join(cls.user_units, "tracectld.socket"),
            os.path.join(p, "lib/sysusers.d/tracectl.conf"),
            os.path.join(p, "lib/tmpfiles.d/tracectl.conf"),
            os.path.join(datadir, "dbus-1/system.d/org.tracectl.Tracing1.conf"),
            os.path.join(datadir, "dbus-1/system-services/org.tracectl.Tracing1.service"),
            os.path.join(datadir, "dbus-1/services/org.tracectl.Tracing1.service"),
            os.path.join(mandir, "man1/tracectl.1"),
            os.path.join(mandir, "man1/tracectl-dtrace.1"),
            os.path.join(datadir, "tracectl/examples/ipio.d"),
            os.path.join(datadir, "tracectl/examples/ipproto.d"),
            os.path.join(mandir, "man7/tracectl-ip.7"),
            os.path.join(mandir, "man7/tracectl-kernel.7"),
            os.path.join(mandir, "man8/tracectld.8"),
            os.path.join(mandir, "man8/tracectl-consumerd.8"),
            os.path.join(mandir, "man5/org.tracectl.Tracing1.5"),
        ]
        cls.gui = gui_built()
        cls.desktop_file = os.path.join(datadir, "applications/org.tracectl.Gui.desktop")
        cls.metainfo = os.path.join(datadir, "metainfo/org.tracectl.Gui.metainfo.xml")
        if cls.gui:
            expected += [
                os.path.join(under(p, o["bindir"]), "tracectl-gui"),
                cls.desktop_file,
                cls.metainfo,
                os.path.join(datadir, "icons/hicolor/scalable/apps/org.tracectl.Gui.svg"),
                os.path.join(mandir, "man1/tracectl-gui.1"),
            ]
        for iface in ("Manager", "Session", "Application"):
            expected.append(os.path.join(datadir, "dbus-1/interfaces",
                                         f"org.tracectl.Tracing1.{iface}.xml"))
        # The polkit files come with the polkit work; installed when present.
        polkit = {"org.tracectl.Tracing1.policy": "polkit-1/actions",
                  "50-org.tracectl.Tracing1-tracing-group.rules": "polkit-1/rules.d"}
        for name, folder in polkit.items():
            if os.path.exists(os.path.join(SOURCE, "polkit", name)):
                expected.append(os.path.join(datadir, folder, name))
        cls.expected = sorted(expected)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, installed):
        return self.destdir + installed

    def read(self, installed):
        with open(self.path(installed), encoding="utf-8") as f:
            return f.read()

    def test_every_file_in_its_place_and_nothing_else(self):
        found = []
        for root, _, files in os.walk(self.destdir):
            for f in files:
                found.append(os.path.join(root, f)[len(self.destdir):])
        self.assertEqual(sorted(found), self.expected)

    def test_programs_are_executable(self):
        for f in self.expected:
            if "/bin/" in f or "/sbin/" in f or "/libexec/" in f:
                self.assertTrue(os.access(self.path(f), os.X_OK), f)

    def test_units_and_activation_files_name_the_installed_daemon(self):
        daemon = os.path.join(self.sbindir, "tracectld")
        system = self.read(os.path.join(self.system_units, "tracectld.service"))
        self.assertIn(f"ExecStart={daemon}\n", system)
        user = self.read(os.path.join(self.user_units, "tracectld.service"))
        self.assertIn(f"ExecStart={daemon} --user\n", user)
        for f in self.expected:
            if f.endswith("dbus-1/system-services/org.tracectl.Tracing1.service"):
                text = self.read(f)
                self.assertIn(f"Exec={daemon}\n", text)
                self.assertIn("SystemdService=tracectld.service\n", text)
                self.assertIn("User=root\n", text)
            if f.endswith("dbus-1/services/org.tracectl.Tracing1.service"):
                text = self.read(f)
                self.assertIn(f"Exec={daemon} --user\n", text)
                self.assertIn("SystemdService=tracectld.service\n", text)
        sock = self.read(os.path.join(self.system_units, "tracectld.socket"))
        self.assertIn("ListenStream=/run/lttng/lttng-ust-sock-8\n", sock)
        self.assertIn("FileDescriptorName=ust\n", sock)
        usock = self.read(os.path.join(self.user_units, "tracectld.socket"))
        self.assertIn("ListenStream=%h/.lttng/lttng-ust-sock-8\n", usock)

    def verify(self, folder, user):
        """systemd-analyze verify on the installed units of `folder`, with
        ExecStart= pointing into DESTDIR (verify checks the binary exists)."""
        daemon = os.path.join(self.sbindir, "tracectld")
        with tempfile.TemporaryDirectory() as units, tempfile.TemporaryDirectory() as runtime:
            names = []
            for name in ("tracectld.service", "tracectld.socket"):
                text = self.read(os.path.join(folder, name))
                text = text.replace(f"ExecStart={daemon}", f"ExecStart={self.path(daemon)}")
                with open(os.path.join(units, name), "w", encoding="utf-8") as f:
                    f.write(text)
                names.append(os.path.join(units, name))
            cmd = ["systemd-analyze"] + (["--user"] if user else []) + \
                ["verify", "--man=no"] + names
            env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
            r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        return r

    def test_systemd_analyze_verify_system_units(self):
        r = self.verify(self.system_units, user=False)
        self.assertEqual((r.returncode, r.stderr, r.stdout), (0, "", ""))

    def test_systemd_analyze_verify_user_units(self):
        r = self.verify(self.user_units, user=True)
        self.assertEqual((r.returncode, r.stderr, r.stdout), (0, "", ""))

    def test_desktop_entry_and_metainfo_validate(self):
        if not self.gui:
            self.skipTest("tracectl-gui is not built")
        r = subprocess.run(["desktop-file-validate", self.path(self.desktop_file)],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))
        self.assertIn("Exec=tracectl-gui\n", self.read(self.desktop_file))
        r = subprocess.run(["appstreamcli", "validate", "--no-net", "--pedantic",
                            self.path(self.metainfo)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_sysusers_and_tmpfiles_snippets_parse(self):
        sysusers = self.path(os.path.join(self.prefix, "lib/sysusers.d/tracectl.conf"))
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "etc"))
            r = subprocess.run(["systemd-sysusers", "--root", root, sysusers],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(root, "etc/group"), encoding="utf-8") as f:
                self.assertRegex(f.read(), r"(?m)^tracing:x:\d+:")
        tmpfiles = self.path(os.path.join(self.prefix, "lib/tmpfiles.d/tracectl.conf"))
        with tempfile.TemporaryDirectory() as root:
            r = subprocess.run(["systemd-tmpfiles", "--create", "--root", root, tmpfiles],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            st = os.stat(os.path.join(root, "run/lttng"))
            self.assertEqual(st.st_mode & 0o7777, 0o755)


class DemoScriptTest(unittest.TestCase):
    """scripts/demo, the README's first command, reads its arguments before
    it does anything: --help must not install, build and run the demo (a
    fresh user's finding), and an unknown argument is refused. Each step
    before the demo proper is one line naming its log (a fresh user got
    some 800 lines of apt), and a step that fails shows that log in full."""

    def run_demo(self, *args):
        return subprocess.run(["bash", os.path.join(SOURCE, "scripts", "demo"), *args],
                              capture_output=True, text=True, timeout=30, check=False)

    def test_help_prints_the_usage_and_does_nothing_else(self):
        r = self.run_demo("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Usage: scripts/demo [--no-install]", r.stdout)
        self.assertNotIn("install", r.stderr)

    def test_an_unknown_argument_is_refused_before_anything_runs(self):
        r = self.run_demo("--bogus")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown argument '--bogus'", r.stderr)
        self.assertEqual(r.stdout, "")

    def run_stubbed(self, apt_status):
        """scripts/demo on a machine lacking every package, in a mount
        namespace of its own: apt-get, dpkg-query and meson are stubs on
        PATH (apt-get prints 820 lines, as a first install does, and exits
        with apt_status; meson fails), /usr/sbin a tmpfs (install-deps
        writes its policy-rc.d there). Returns the run and its TMPDIR."""
        tmp = tempfile.mkdtemp(prefix="tracectl-demo-test-")
        self.addCleanup(subprocess.run, ["rm", "-rf", tmp], check=False)
        stubs = os.path.join(tmp, "stubs")
        os.mkdir(stubs)
        scripts = {
            "dpkg-query": "exit 1\n",
            "apt-get": ('[ "$1" = update ] && { seq 20 | sed "s/^/Hit:/"; exit 0; }\n'
                        'seq 800 | sed "s|^|Get:|; s|$| http://deb.debian.org/debian bookworm|"\n'
                        "exit %d\n" % apt_status),
            "meson": "seq 30 | sed 's/^/meson says: line /'\nexit 1\n",
        }
        for name, body in scripts.items():
            path = os.path.join(stubs, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(path, 0o755)
        env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"], TMPDIR=tmp,
                   BUILD_DIR=os.path.join(tmp, "build"))
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            'mount -t tmpfs none /usr/sbin && exec "$@"', "sh",
                            "bash", os.path.join(SOURCE, "scripts", "demo")],
                           capture_output=True, text=True, timeout=60, check=False, env=env)
        return r, tmp

    def log_named(self, line):
        self.assertRegex(line, r"\(log: /[^)]+\)")
        return line[line.index("(log: ") + 6:line.index(")", line.index("(log: "))]

    @unittest.skipUnless(os.geteuid() == 0, "needs root (a mount namespace)")
    def test_each_step_before_the_demo_is_one_line_naming_its_log(self):
        r, tmp = self.run_stubbed(apt_status=0)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        # Not one of apt's 820 lines: one line for the packages, its log
        # holding them; then meson's failure, shown in full.
        self.assertNotIn("Get:", r.stderr)
        self.assertNotIn("Hit:", r.stderr)
        self.assertTrue(lines[0].startswith("== installing the Debian packages"), lines[0])
        self.assertTrue(lines[0].endswith(" done"), lines[0])
        with open(self.log_named(lines[0])) as f:
            apt = f.read()
        self.assertIn("Get:800 http://deb.debian.org/debian bookworm", apt)
        self.assertEqual(apt.count("Get:"), 800)
        self.assertTrue(lines[1].startswith("== configuring the build in " + tmp), lines[1])
        self.assertTrue(lines[1].endswith(" failed"), lines[1])
        self.assertIn("configuring the build in %s failed; its log, %s:" %
                      (os.path.join(tmp, "build"), self.log_named(lines[1])), lines[2])
        self.assertEqual(lines[3:], ["meson says: line %d" % n for n in range(1, 31)])

    @unittest.skipUnless(os.geteuid() == 0, "needs root (a mount namespace)")
    def test_a_step_that_fails_shows_its_whole_log(self):
        r, tmp = self.run_stubbed(apt_status=100)
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stderr.splitlines()
        self.assertTrue(lines[0].endswith(" failed"), lines[0])
        log = self.log_named(lines[0])
        self.assertTrue(log.startswith(tmp), log)
        with open(log) as f:
            self.assertEqual(f.read().splitlines(), lines[2:])
        self.assertEqual(sum(line.startswith("Get:") for line in lines), 800)
        self.assertNotIn("configuring the build", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
