#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""HTTPS clients that outlive their server's network namespace.

Opens --idle keep-alive connections, each of which gets one response and
then waits, and --slow connections that ask for --big and read only its
first bytes, so that kweb is left sending into full windows. Prints
"ready N" once all are set; on SIGUSR1, waits (up to --wait seconds) for
each connection to end, reading what arrives, and prints what ended them:

    ended N of M: reset R, eof E, other X; open O

Used by tests/guest/tls_netns.sh across `ip netns del`: a namespace that
only kweb's adopted connections hold must go, and take them with it.
"""
import argparse
import select
import signal
import socket
import ssl
import sys
import time


def tls_connect(host, port):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    raw = socket.create_connection((host, port), timeout=30)
    return ctx.wrap_socket(raw, server_hostname="kweb.test")


def read_response(s, path):
    """One response of a keep-alive connection, by Content-Length."""
    s.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: kweb.test\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            raise ConnectionError("EOF in the head")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = s.recv(length - len(body))
        if not chunk:
            raise ConnectionError("EOF in the body")
        body += chunk
    return head.split(b"\r\n")[0], body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--idle", type=int, default=4)
    ap.add_argument("--slow", type=int, default=2)
    ap.add_argument("--path", default="/index.html")
    ap.add_argument("--big", default="/big.bin")
    ap.add_argument("--wait", type=float, default=60)
    a = ap.parse_args()

    conns = []
    for _ in range(a.idle):
        s = tls_connect(a.host, a.port)
        status, body = read_response(s, a.path)
        if not status.endswith(b" 200 OK") or not body:
            print("bad response", status, len(body), flush=True)
            return 1
        conns.append(s)
    for _ in range(a.slow):
        s = tls_connect(a.host, a.port)
        s.sendall(b"GET " + a.big.encode() +
                  b" HTTP/1.1\r\nHost: kweb.test\r\n\r\n")
        if not s.recv(1024):
            print("no response to", a.big, flush=True)
            return 1
        conns.append(s)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready", len(conns), flush=True)
    signal.sigwait({signal.SIGUSR1})
    for s in conns:
        s.setblocking(False)

    # Wait for each to end; the slow ones' data is read and dropped, a
    # record at a time, so that their end can be seen.
    outcome = {}
    end = time.monotonic() + a.wait
    while len(outcome) < len(conns) and time.monotonic() < end:
        live = [s for s in conns if s not in outcome]
        readable, _, _ = select.select(live, [], [], 0.2)
        for s in readable:
            try:
                if not s.recv(65536):
                    outcome[s] = "eof"
            except (ConnectionResetError, ssl.SSLEOFError,
                    ssl.SSLZeroReturnError) as e:
                outcome[s] = ("eof" if isinstance(e, ssl.SSLZeroReturnError)
                              else "reset")
            except (ssl.SSLWantReadError, BlockingIOError):
                pass
            except OSError as e:
                outcome[s] = type(e).__name__
    counts = {}
    for v in outcome.values():
        counts[v] = counts.get(v, 0) + 1
    print("ended %d of %d: reset %d, eof %d, other %d; open %d"
          % (len(outcome), len(conns), counts.get("reset", 0),
             counts.get("eof", 0),
             len(outcome) - counts.get("reset", 0) - counts.get("eof", 0),
             len(conns) - len(outcome)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
