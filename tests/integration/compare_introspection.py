#!/usr/bin/env python3
"""Compares one D-Bus interface in two introspection XML files.

Usage: compare_introspection.py CONTRACT_XML SERVED_XML INTERFACE

Compares, for INTERFACE: the methods (name, and each argument's direction and
type, in order), the properties (name, type, access) and the signals (name,
each argument's type, in order). Argument names, annotations, comments and
the other interfaces are ignored. A method argument without a direction is
"in" (D-Bus specification). Prints each difference on stdout.
Exit status: 0 if they match, 1 if they differ or INTERFACE is missing from
either file, 2 on bad usage or unreadable XML.
"""
import sys
import xml.etree.ElementTree as ET


def shape(path, name):
    """{"method X": [...], "property Y": (...), "signal Z": [...]} or None."""
    root = ET.parse(path).getroot()
    iface = next((i for i in root.iter("interface") if i.get("name") == name), None)
    if iface is None:
        return None
    members = {}
    for m in iface.findall("method"):
        members["method " + m.get("name")] = [
            (a.get("direction", "in"), a.get("type")) for a in m.findall("arg")
        ]
    for p in iface.findall("property"):
        members["property " + p.get("name")] = (p.get("type"), p.get("access"))
    for s in iface.findall("signal"):
        members["signal " + s.get("name")] = [a.get("type") for a in s.findall("arg")]
    return members


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    contract_path, served_path, name = argv[1:]
    try:
        contract = shape(contract_path, name)
        served = shape(served_path, name)
    except (OSError, ET.ParseError) as e:
        print(f"cannot read: {e}", file=sys.stderr)
        return 2
    if contract is None or served is None:
        missing = contract_path if contract is None else served_path
        print(f"{name}: no such interface in {missing}")
        return 1
    differences = []
    for member in sorted(set(contract) | set(served)):
        want = contract.get(member)
        got = served.get(member)
        if want != got:
            differences.append(f"{name} {member}: contract {want}, served {got}")
    for d in differences:
        print(d)
    if not differences:
        print(f"{name}: {len(contract)} members match")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
