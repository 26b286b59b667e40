#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Limit tests for kweb, run in a guest with kweb loaded with small limits.

    limits_test.py --host H --port P --docroot D --max-connections N
                   --max-requests M [--params DIR] [--proc FILE]

kweb must be loaded with max_connections=N and max_requests=M, and nginx
(tests/guest/nginx.sh) must be its backend. Checks: the M-th request on a
keep-alive connection is answered with Connection: close and the connection
ends; with N connections held, the next one goes to the backend unread
(Server: nginx), or is closed without a response when the backend is down,
while the N held connections are still answered by kweb; once they close,
kweb takes new connections again. TAP output, "# N passed, N failed", exit
status 0 iff none failed.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from httplib_raw import ClosedWhileSending, Connection, NoResponse, show  # noqa: E402
from taplib import Fail, Suite, check, client_args  # noqa: E402

CFG = None
TESTS = Suite()


def counters():
    with open(CFG.proc) as f:
        return {p[0]: int(p[1]) for p in (line.split() for line in f)
                if len(p) == 2 and re.fullmatch(r"[0-9]+", p[1])}


def small():
    with open(os.path.join(CFG.docroot, "small.txt"), "rb") as f:
        return f.read()


def req(target="/small.txt", extra=""):
    host = "[%s]" % CFG.host if ":" in CFG.host else CFG.host
    return ("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" %
            (target, host, extra)).encode()


def connect():
    return Connection(CFG.host, CFG.port, time.monotonic() + CFG.timeout)


def get_ok(conn, who, close=False):
    """GET /small.txt on conn: 200, the file, Server who."""
    resp = conn.request(req())
    check(resp.code == 200, "status %d, want 200: %s" %
          (resp.code, show(resp.head)))
    check(resp.body == small(), "body differs from small.txt")
    server = resp.get("Server") or ""
    check(server.startswith(who), "Server %r, want %s" % (server, who))
    conn_field = (resp.get("Connection") or "").lower()
    if close:
        check(conn_field == "close", "Connection %r, want close" % conn_field)
    return resp


def wait_open_conns(want, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        n = counters().get("connections_open", -1)
        if n == want:
            return
        time.sleep(0.1)
    raise Fail("connections_open stayed %d, want %d" %
               (counters().get("connections_open", -1), want))


KWEBCTL = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "userctl", "kwebctl")


class BackendPort:
    """The namespace's backend port: read from the (read-only) module
    parameter, changed with kwebctl config set."""

    def __init__(self):
        self.path = os.path.join(CFG.params, "backend_port")
        with open(self.path) as f:
            self.orig = f.read().strip()

    def set(self, v):
        p = subprocess.run([KWEBCTL, "config", "set", "backend-port",
                            str(v)], capture_output=True, text=True,
                           timeout=60)
        if p.returncode:
            raise Fail("kwebctl config set backend-port %s: %s" %
                       (v, p.stderr.strip()))

    def restore(self):
        self.set(self.orig)


@TESTS.test("max_requests: the last request of a connection gets Connection: "
      "close, then EOF")
def t_max_requests():
    conn = connect()
    try:
        for _ in range(CFG.max_requests - 1):
            resp = get_ok(conn, "kweb")
            check(resp.get("Connection") is None,
                  "Connection %r before the last request" %
                  resp.get("Connection"))
        get_ok(conn, "kweb", close=True)
        check(conn.state(3.0) == "eof", "connection not closed after the "
              "last request")
    finally:
        conn.close()


def hold(n):
    """n connections kweb holds, each having made one request."""
    held = []
    for _ in range(n):
        c = connect()
        held.append(c)
        get_ok(c, "kweb")
    return held


@TESTS.test("max_connections: one connection more goes to the backend unread; "
      "the held ones still get kweb's answers")
def t_max_conns_backend():
    wait_open_conns(0)
    held = hold(CFG.max_connections)
    try:
        wait_open_conns(CFG.max_connections)
        before = counters().get("handoff_connection_limit", 0)
        extra = connect()
        try:
            get_ok(extra, "nginx")
            get_ok(extra, "nginx")
        finally:
            extra.close()
        after = counters().get("handoff_connection_limit", 0)
        check(after == before + 1, "handoff_connection_limit %d -> %d, "
              "want +1" % (before, after))
        for c in held:
            get_ok(c, "kweb")
    finally:
        for c in held:
            c.close()
    wait_open_conns(0)
    c = connect()
    try:
        get_ok(c, "kweb")
    finally:
        c.close()


@TESTS.test("max_connections with the backend down: one connection more is "
      "closed without a response; the held ones are unaffected")
def t_max_conns_closed():
    wait_open_conns(0)
    bp = BackendPort()
    held = hold(CFG.max_connections)
    try:
        wait_open_conns(CFG.max_connections)
        bp.set(CFG.unused_port)
        # The reset may come before connect() returns: the accept work
        # can beat the client's own thread back from the handshake.
        try:
            extra = connect()
        except ConnectionError:
            extra = None
        try:
            try:
                if extra:
                    extra.send(req())
                    resp = extra.read_response()
                    raise Fail("got a response: %s" % show(resp.head))
            except (NoResponse, ConnectionError):
                pass
            except ClosedWhileSending as e:
                # The reset can also land between connect() and send().
                if e.unread:
                    raise Fail("bytes before the reset: %s" % show(e.unread))
        finally:
            if extra:
                extra.close()
        for c in held:
            get_ok(c, "kweb")
    finally:
        bp.restore()
        for c in held:
            c.close()
    wait_open_conns(0)


def main():
    global CFG
    ap = client_args(__doc__, timeout=30.0)
    ap.add_argument("--max-connections", type=int, required=True)
    ap.add_argument("--max-requests", type=int, required=True)
    ap.add_argument("--params", default="/sys/module/kweb/parameters")
    ap.add_argument("--proc", default="/proc/net/kweb")
    ap.add_argument("--unused-port", type=int, default=8099)
    CFG = ap.parse_args()

    return TESTS.run()


if __name__ == "__main__":
    sys.exit(main())
