#!/usr/bin/env python3
"""Captures the filter bytecode that lttng-tools 2.13's own client library
builds for each expression, for filter_bytecode_test.cpp's expected bytes.

How: a stand-in session daemon listens on $LTTNG_HOME/.lttng/client-lttng-sessiond;
`lttng enable-event -u 'tp:*' -s S -c C --filter EXPR` (lttng-tools 2.13,
run as an unprivileged user so that it uses that socket) parses the
expression with liblttng-ctl and sends LTTNG_ENABLE_EVENT with the
expression and `struct lttng_bytecode` (u32 len, u32 reloc_table_offset,
u64 seqnum, 32 bytes padding, data) right after it. No daemon runs.

Usage (root, lttng-tools 2.13 installed): capture.py EXPRESSIONS_FILE
(one expression a line). Prints one line per expression:
  OK <reloc_offset> <hex of data> <expression>   or   REFUSED <expression> # lttng's messages
"""
import os, pwd, socket, struct, subprocess, sys, tempfile, threading

def serve(sock, results):
    # One connection: lttng makes one per command.
    if True:
        try:
            c, _ = sock.accept()
        except OSError:
            return
        c.settimeout(2.0)
        buf = b''
        try:
            while True:
                d = c.recv(1 << 20)
                if not d:
                    break
                buf += d
        except socket.timeout:
            pass
        results.append(buf)
        c.close()

def main():
    exprs = [l.rstrip('\n') for l in open(sys.argv[1]) if l.strip()]
    home = tempfile.mkdtemp()
    os.makedirs(home + '/.lttng')
    nobody = pwd.getpwnam('nobody')
    for d in (home, home + '/.lttng'):
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
    path = home + '/.lttng/client-lttng-sessiond'
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o777)
    sock.listen(8)
    sock.settimeout(3)
    for e in exprs:
        results = []
        t = threading.Thread(target=serve, args=(sock, results), daemon=True)
        t.start()
        proc = subprocess.run(['setpriv', '--reuid', str(nobody.pw_uid), '--regid', str(nobody.pw_gid),
                        '--clear-groups', 'env', 'HOME=' + home, 'LTTNG_HOME=' + home,
                        'lttng', '--no-sessiond', 'enable-event', '-u', 'tp:*', '-s', 'S',
                        '-c', 'C', '--filter', e],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
        t.join()  # ends with the connection, or 3 s without one
        msg = b''.join(results)
        key = b'tp:*\0' + e.encode() + b'\0'
        i = msg.find(key)
        if i < 0:
            why = [l for l in proc.stderr.decode(errors='replace').splitlines()
                   if l.startswith('[error]') or 'parse error' in l or 'error' in l.lower()]
            print('REFUSED', e, '#', ' | '.join(why[:2]))
        else:
            h = i + len(key)
            ln, reloc, seq = struct.unpack_from('<IIQ', msg, h)
            data = msg[h + 48:h + 48 + ln]
            assert seq == 0 and len(data) == ln and msg[h + 16:h + 48] == bytes(32)
            print('OK', reloc, data.hex(), e)
        sys.stdout.flush()
    sock.close()

main()
