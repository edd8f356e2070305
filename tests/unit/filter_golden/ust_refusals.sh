#!/bin/bash
# Checks, against the real LTTng 2.13 stack (lttng-sessiond, lttng-consumerd,
# liblttng-ust of the Debian packages), which filters lttng-tools accepts but
# lttng-ust's bytecode validator then refuses in the app (the event records
# nothing). Run as an unprivileged user (per-user session daemon), e.g.
#   mkdir -p /tmp/realsd && chown nobody /tmp/realsd
#   setpriv --reuid=65534 --regid=65534 --clear-groups bash ust_refusals.sh
# then grep app.err for "Error:" and count the trace's channels
# (tests/integration/count_events.py TRACE --per-channel). Result with
# lttng-tools 2.13.9 and lttng-ust 2.13.5 (see README.md): c1, c2 and c3 are
# refused by the app ("Merge points differ", "Cast expects double", "Unary
# bitwise op can only be applied to numeric registers"), c4 records the 10
# even ticks. Stop the session daemon it started afterwards (by its pid).
set -x
export HOME=/tmp/realsd LTTNG_HOME=/tmp/realsd
lttng-sessiond --daemonize 2>&1 | tail -2
sleep 1
lttng create t --output /tmp/realsd/trace
lttng enable-channel -u c1; lttng enable-channel -u c2; lttng enable-channel -u c3; lttng enable-channel -u c4
lttng enable-event -u -c c1 tracectl_demo:tick --filter '(seq & 1) || seq == 3'
lttng enable-event -u -c c2 tracectl_demo:tick --filter '-1.5 || seq'
lttng enable-event -u -c c3 tracectl_demo:tick --filter '~1.5 == seq'
lttng enable-event -u -c c4 tracectl_demo:tick --filter 'seq & 1 == 0'
lttng start
LTTNG_UST_DEBUG=1 "${DEMO_APP:-build/tests/apps/tracectl-demo-app}" 20 0 2>/tmp/realsd/app.err
lttng stop
lttng destroy
