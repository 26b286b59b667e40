#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Memory cgroups: what a kweb listener's connections hold is charged to
the memory cgroup of whoever added the listener, as a user-space
server's accept() charges its own, and leaves it for the backend's at a
handoff. Run in a guest as root, with kweb loaded and cgroup v2's memory
controller at --cgroup (tests/guest/integration.sh, suite memcg).

The test adds a listener (--tenant-port, backend --backend-port) from a process
in the cgroup kweb-tenant, runs a backend in kweb-backend that accepts
and never reads, and reads each cgroup's memory.stat while clients hold
connections that kweb keeps (a head not yet whole) or hands over.
"""

import errno
import json
import os
import resource
import select
import socket
import subprocess
import sys
import time

import taplib

TESTS = taplib.Suite()
args = None
PAGE = os.sysconf("SC_PAGE_SIZE")
# A head that never ends: kweb keeps it in a buffer of its own, and the
# socket's receive queue keeps its bytes (kweb only peeks).
PARTIAL = b"GET /index.html HTTP/1.1\r\nHost: t\r\nX-Pad: " + b"p" * 1400
# One kweb hands over unread: a query string (docs/behaviour.md).
HANDED = (b"GET /index.html?q=1 HTTP/1.1\r\nHost: t\r\nX-Pad: " +
          b"p" * 1400 + b"\r\n\r\n")
# memory.stat is flushed every 2 s at most: this is ample for any change.
SETTLE = 20.0


def cg(name):
    return os.path.join(args.cgroup, name)


def stat(name):
    """memory.stat of cgroup name, as a dict of ints."""
    with open(os.path.join(cg(name), "memory.stat")) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def cg_read(name, key):
    with open(os.path.join(cg(name), key)) as f:
        return f.read().strip()


def cg_write(name, key, value):
    with open(os.path.join(cg(name), key), "w") as f:
        f.write(value)


def join(name):
    """preexec_fn: the child joins cgroup name before it execs."""
    def fn():
        cg_write(name, "cgroup.procs", str(os.getpid()))
    return fn


def settle(cond, what):
    """Wait until cond() (on fresh memory.stat readings) is true."""
    return taplib.wait_for(cond, what, SETTLE)


def connect_all(n, data):
    """n connections to kweb's tenant listener, each sending data."""
    socks = []
    for _ in range(n):
        s = socket.create_connection((args.host, args.tenant_port), timeout=10)
        s.sendall(data)
        socks.append(s)
    return socks


def close_all(socks):
    for s in socks:
        s.close()


class Backend:
    """A backend in kweb-backend: accepts and holds, never reads."""

    def __init__(self, port):
        r, w = os.pipe()
        self.pid = os.fork()
        if not self.pid:
            os.close(r)
            try:
                self.serve(port, w)
            finally:
                os._exit(0)
        os.close(w)
        self.r = r
        # Its first byte says it listens; one more per connection held.
        taplib.check(os.read(r, 1) == b"L", "the backend did not start")
        self.held = 0

    @staticmethod
    def serve(port, w):
        join("kweb-backend")()
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", port))
        ls.listen(1024)
        os.write(w, b"L")
        held = []
        while True:
            c, _ = ls.accept()
            held.append(c)
            os.write(w, b"A")

    def wait_held(self, n):
        deadline = time.monotonic() + SETTLE
        while self.held < n and time.monotonic() < deadline:
            if select.select([self.r], [], [], 0.5)[0]:
                self.held += len(os.read(self.r, 4096))
        return self.held

    def stop(self):
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.r)


def sock_is(name, want):
    def cond():
        got = stat(name)["sock"]
        return got == want, "%s's sock %d, want %d" % (name, got, want)
    return cond


@TESTS.test("connections kweb holds are charged to its listener's creator's "
            "memory cgroup: socket buffers and kweb's own")
def held_charged():
    n = 128
    base = stat("kweb-tenant")
    socks = connect_all(n, PARTIAL)
    try:
        # Each socket keeps a head's bytes (a page at least), and kweb a
        # buffer of 2 KiB for it beside its connection's structure.
        def cond():
            s = stat("kweb-tenant")
            slab = s["slab_unreclaimable"] - base["slab_unreclaimable"]
            return (s["sock"] >= n * PAGE and slab >= n * 2048,
                    "sock %d (want >= %d), slab_unreclaimable +%d "
                    "(want >= %d)" % (s["sock"], n * PAGE, slab, n * 2048))
        taplib.note(settle(cond, "not charged to kweb-tenant"))
    finally:
        close_all(socks)
    settle(sock_is("kweb-tenant", 0), "closed, sockets still charged")

    def freed():
        s = stat("kweb-tenant")
        slab = s["slab_unreclaimable"] - base["slab_unreclaimable"]
        return (slab < n * 512,
                "slab_unreclaimable +%d after the close (want < %d)" %
                (slab, n * 512))
    settle(freed, "closed, kweb's structures still charged")


@TESTS.test("handed-off connections leave the listener's cgroup for the "
            "backend's, which accept() charges")
def handoff_moves():
    n = 32
    be = Backend(args.backend_port)
    socks = []
    try:
        socks = connect_all(n, HANDED)
        held = be.wait_held(n)
        taplib.check(held == n, "the backend accepted %d of %d" % (held, n))
        # Each holds its unread request: a page at least, the backend's.
        def cond():
            t, b = stat("kweb-tenant")["sock"], stat("kweb-backend")["sock"]
            return (t == 0 and b >= n * PAGE,
                    "kweb-tenant's sock %d (want 0), kweb-backend's %d "
                    "(want >= %d)" % (t, b, n * PAGE))
        taplib.note(settle(cond, "handed-off sockets charged wrongly"))
    finally:
        close_all(socks)
        be.stop()
    settle(sock_is("kweb-backend", 0), "closed in the backend, still charged")
    settle(sock_is("kweb-tenant", 0), "closed in the backend, kweb-tenant "
           "charged")


def get_200():
    s = socket.create_connection((args.host, args.tenant_port), timeout=10)
    try:
        s.sendall(b"GET /index.html HTTP/1.1\r\nHost: t\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
        return data.split(b"\r\n", 1)[0]
    finally:
        s.close()


@TESTS.test("memory.max bounds a listener's connections: past it clients "
            "are refused, back under it once they close, kweb serves after")
def limit_bounds():
    room = 2 << 20
    cur = int(cg_read("kweb-tenant", "memory.current"))
    events0 = dict(l.split() for l in
                   cg_read("kweb-tenant", "memory.events").splitlines())
    limit = cur + room
    cg_write("kweb-tenant", "memory.max", str(limit))
    try:
        limited(limit, events0)
    finally:
        cg_write("kweb-tenant", "memory.max", "max")
    status = get_200()
    taplib.check(status == b"HTTP/1.1 200 OK", "then: %r" % status)


def limited(limit, events0):
    """1,500 clients against memory.max at limit, each with a head that
    never ends."""
    socks, refused, tries = [], 0, 1500
    try:
        # Each costs some 8 KiB: 2 MiB holds a few hundred at most.
        for _ in range(tries):
            s = socket.socket()
            s.settimeout(10)
            try:
                s.connect((args.host, args.tenant_port))
                s.sendall(PARTIAL)
                socks.append(s)
            except OSError as e:
                s.close()
                if e.errno not in (errno.ECONNRESET, errno.EPIPE):
                    raise
                refused += 1
        # A refused one may connect and take its RST a moment later.
        time.sleep(1)
        alive = []
        for s in socks:
            s.setblocking(False)
            try:
                d = s.recv(1)
            except BlockingIOError:
                alive.append(s)
                continue
            except ConnectionResetError:
                d = b""
            refused += not d
            s.close()
        socks = alive
        events = dict(l.split() for l in
                      cg_read("kweb-tenant", "memory.events").splitlines())
        peak = int(cg_read("kweb-tenant", "memory.peak"))
        taplib.note("%d connections held, %d refused; memory.peak %d of "
                    "max %d; events max %s -> %s" %
                    (len(socks), refused, peak, limit, events0["max"],
                     events["max"]))
        taplib.check(int(events["max"]) > int(events0["max"]),
                     "the cgroup never reached its memory.max")
        taplib.check(refused > 0, "no client refused: %d held" % len(socks))
    finally:
        close_all(socks)
    # Over the limit only by what was forced for sockets kweb admitted
    # (as accept() forces it): gone with them, under the limit again.
    settle(sock_is("kweb-tenant", 0), "closed, sockets still charged")

    def under():
        cur = int(cg_read("kweb-tenant", "memory.current"))
        return cur <= limit, "memory.current %d, max %d" % (cur, limit)
    settle(under, "closed, still over memory.max")


def main():
    global args
    ap = taplib.client_args(__doc__)
    ap.add_argument("--kwebctl", required=True)
    ap.add_argument("--tenant-port", type=int, default=9180)
    ap.add_argument("--cgroup", required=True,
                    help="cgroup v2 with +memory in its subtree_control")
    ap.add_argument("--backend-port", type=int, default=9181)
    args = ap.parse_args()
    # The limit's test opens connections until kweb refuses them.
    resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
    for name in ("kweb-tenant", "kweb-backend"):
        os.makedirs(cg(name), exist_ok=True)
    out = subprocess.run(
        [args.kwebctl, "-j", "listener", "add", "port", str(args.tenant_port),
         "docroot", args.docroot, "backend-port", str(args.backend_port)],
        preexec_fn=join("kweb-tenant"), capture_output=True, text=True,
        check=True).stdout
    lid = json.loads(out)[0]["id"]
    try:
        rc = TESTS.run()
    finally:
        subprocess.run([args.kwebctl, "listener", "del", str(lid)],
                       check=True)
    # Nothing of kweb's keeps the cgroups from going.
    for name in ("kweb-tenant", "kweb-backend"):
        os.rmdir(cg(name))
    return rc


if __name__ == "__main__":
    sys.exit(main())
