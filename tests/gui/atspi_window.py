# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reading and driving tracectl-gui's window through AT-SPI (python3-pyatspi), shared by
gui_test.py (root) and user_window.py (a user who is not root): finding the application,
its windows, buttons, entries, labels and the sessions view's rows, clicking, screenshots.

init(artifacts, display) first: pyatspi is imported then, once DISPLAY is set, and finds
the accessibility bus through the session bus this process runs in (org.a11y.Bus).
"""
import os
import subprocess
import time

pyatspi = None
config = {"artifacts": None, "display": None, "shots": 0, "prefix": ""}


def init(artifacts, display, prefix=""):
    """Screenshots and tree dumps go to `artifacts`, named PREFIX + NN-name.png."""
    global pyatspi
    config.update(artifacts=artifacts, display=display, prefix=prefix)
    os.environ["DISPLAY"] = display
    import pyatspi as module
    pyatspi = module


def run(argv, env=None, check=True, timeout=60):
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{argv} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def eventually(predicate, timeout, what, interval=0.05):
    """Polls predicate() until it returns a true value (returned) or `timeout` seconds
    passed (AssertionError naming `what` and the last value)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = predicate()
        except Exception as e:  # an object that vanished while being read: try again
            last = e
        if last and not isinstance(last, Exception):
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: "
                                 f"{last!r}; the window's tree: {dump_tree()}")
        time.sleep(interval)


def screenshot(name):
    """Saves the whole screen as ARTIFACTS/NN-name.png."""
    config["shots"] += 1
    path = os.path.join(config["artifacts"], f"{config['prefix']}{config['shots']:02d}-{name}.png")
    run(["import", "-window", "root", path], env=dict(os.environ, DISPLAY=config["display"]))
    return path


# --- reading the window through AT-SPI -------------------------------------

def app():
    """The tracectl-gui application in the accessibility tree (cache cleared, so that what
    is read is what the window shows now)."""
    for a in pyatspi.Registry.getDesktop(0):
        if a is not None and a.name == "tracectl-gui":
            a.clearCache()
            return a
    return None


def walk(node):
    yield node
    for child in node:
        if child is not None:
            yield from walk(child)


def find(predicate, root=None):
    root = root if root is not None else app()
    if root is None:
        return None
    for node in walk(root):
        if predicate(node):
            return node
    return None


def dump_tree():
    """Writes the application's accessibility tree (role, name, description, text) to a
    file of the artifact folder; returns its path."""
    path = os.path.join(config["artifacts"], f"tree-{time.monotonic():.3f}.txt")
    with open(path, "w", encoding="utf-8") as f:
        def dump(node, depth):
            try:
                text = text_of(node) if "Text" in pyatspi.listInterfaces(node) else ""
                f.write(f"{'  ' * depth}{node.getRoleName()} name={node.name!r} "
                        f"description={node.description!r} text={text!r}\n")
                for child in node:
                    if child is not None:
                        dump(child, depth + 1)
            except Exception as e:  # vanished meanwhile
                f.write(f"{'  ' * depth}({e})\n")
        a = app()
        if a is not None:
            dump(a, 0)
    return path


def text_of(node):
    t = node.queryText()
    return t.getText(0, t.characterCount)


def window(title):
    a = app()
    if a is None:
        return None
    for w in a:
        if w is not None and w.name == title:
            return w
    return None


def main_window():
    return window("Tracing Sessions")


def dialog():
    return window("New Tracing Session")


def button(name, root=None):
    """The push button named `name`, or showing the label `name` (GTK 4.8 names a button by
    its accessible label followed by its label's text)."""
    def matches(n):
        if n.getRoleName() != "push button":
            return False
        return n.name == name or any(
            c is not None and c.getRoleName() == "label" and text_of(c) == name for c in n)
    return find(matches, root)


def click(node):
    action = node.queryAction()
    for i in range(action.nActions):
        if action.getName(i) in ("click", "activate", "press", "toggle"):
            action.doAction(i)
            return
    action.doAction(0)


def sessions_list():
    return find(lambda n: n.getRoleName() == "list" and n.name == "Sessions", main_window())


def rows():
    """{session name: {column title: cell text}} of the sessions view."""
    out = {}
    lst = sessions_list()
    if lst is None:
        return out
    for item in lst:
        if item is None or item.getRoleName() != "list item":
            continue
        if not item.name.startswith("Session "):
            continue
        cells = {}
        for node in walk(item):
            if node.getRoleName() == "label" and node.description:
                cells[node.description] = text_of(node)
        out[item.name[len("Session "):]] = cells
    return out


def graph_of(name):
    """The accessible description of the rate graph in the row of session `name`: what it
    drew ("N points, peak X UNIT"), or "no rate yet"."""
    lst = sessions_list()
    for item in lst:
        if item is not None and item.name == "Session " + name:
            node = find(lambda n: n.name == "Rate graph", item)
            return node.description if node is not None else None
    return None


def check_box(name):
    """The switch of tracepoint `name` in the event tree (a check box's job), or None."""
    return find(lambda n: n.getRoleName() == "check box" and n.name == name, main_window())


def is_checked(node):
    states = node.getState()
    return states.contains(pyatspi.STATE_CHECKED) or states.contains(pyatspi.STATE_PRESSED)


def expander(name):
    """The expander named `name` in the event tree, or None."""
    return find(lambda n: n.name == name and n.getRoleName() != "label"
                and "Action" in pyatspi.listInterfaces(n), main_window())


def select(name):
    lst = sessions_list()
    for i, item in enumerate(lst):
        if item is not None and item.name == "Session " + name:
            lst.querySelection().selectChild(i)
            return
    raise AssertionError(f"no row for session {name}: {rows()}")


def labelled(description, root=None):
    """The text of the label whose accessible description is `description`, or None."""
    node = find(lambda n: n.getRoleName() == "label" and n.description == description, root)
    return text_of(node) if node is not None else None


def banner_shows(text):
    return find(lambda n: n.getRoleName() == "label" and text_of(n) == text,
                main_window()) is not None


def set_entry(root, name, text):
    entry = eventually(lambda: find(lambda n: n.getRoleName() == "text" and n.name == name,
                                    root), 5, f"the entry {name}")
    entry.queryEditableText().setTextContents(text)


def create_through_dialog(name, output=None):
    """Opens the dialog, fills it in and presses Create; returns the dialog."""
    click(eventually(lambda: button("New Session…", main_window()), 5, "the New Session… button"))
    d = eventually(dialog, 5, "the create dialog")
    set_entry(d, "Session name", name)
    if output is not None:
        set_entry(d, "Output folder", output)
    return d
