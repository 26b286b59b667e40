#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tracepoint tests for kweb: the kweb:* events (kmod/trace.h).

    trace_test.py --host H --port P --docroot D [--kwebctl PATH]
                  [--keepalive-timeout S] [--port2 P2] [--timeout S]

Run as root in a guest, with kweb loaded (docroot=D port=P, the routes
/api/,/dyn/ and .php, keepalive_timeout=S if given) and nginx
(tests/guest/nginx.sh) as its backend on 8080. Mounts tracefs at
/sys/kernel/tracing if it is not, enables events/kweb, makes known
requests and reads the trace back, checking each event's fields exactly:
one kweb_request_done per request (status, body bytes, who answered,
method, target, both addresses as the client's socket has them, netns,
listener, a duration); kweb_cache_fill on a file's first GET and not on
its next, kweb_cache_invalidate when it is rewritten (stale) and on
kwebctl cache flush (flush), kweb_cache_evict when two files do not fit
(with insmod cache_size=1); kweb_handoff for a query (moved to nginx);
kweb_conn_close for a client's FIN (eof), Connection: close (linger), a
client's reset (reset), an idle keep-alive connection (timeout, with
--keepalive-timeout) and a listener's deletion (abort, with kwebctl).
Then perf stat -e 'kweb:*' counts one kweb_request_done for a request
(linux-perf's perf, or a perf_VERSION where /usr/bin/perf is Debian's
wrapper). Everything is switched off and cleared
again. TAP output, "# N passed, N failed", exit status 0 iff none failed.
"""

import glob
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Fail, Suite, check, client_args, note  # noqa: E402

CFG = None
TESTS = Suite()
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACEFS = "/sys/kernel/tracing"
EVENTS = ("kweb_request_done", "kweb_handoff", "kweb_cache_fill",
          "kweb_cache_evict", "kweb_cache_invalidate", "kweb_conn_close")
# Each event's fields (besides the common_* ones), as docs/tracing.md
# lists them.
FIELDS = {
    "kweb_request_done": {"netns_ino", "listener", "saddr", "daddr",
                          "status", "answered", "bytes", "duration_ns",
                          "method", "target"},
    "kweb_handoff": {"netns_ino", "listener", "saddr", "daddr", "reason",
                     "result", "status"},
    "kweb_cache_fill": {"netns_ino", "listener", "enc", "size", "pinned",
                        "path"},
    "kweb_cache_evict": {"netns_ino", "listener", "enc", "size", "pinned",
                         "path"},
    "kweb_cache_invalidate": {"netns_ino", "listener", "enc", "reason",
                              "size", "pinned", "path"},
    "kweb_conn_close": {"netns_ino", "listener", "saddr", "daddr", "reason",
                        "requests"},
}
PAGE = os.sysconf("SC_PAGE_SIZE")
# The test's own file, below the docroot: new to kweb's cache each run.
TDIR = "trace"
FILE = "/trace/%d.txt" % os.getpid()
BODY1 = b"kweb trace test, first version\n" * 8
BODY2 = b"kweb trace test: the file rewritten, a different size\n" * 5


# ---- tracefs ----------------------------------------------------------------

def tracefs(rel):
    return os.path.join(TRACEFS, rel)


def tracefs_write(rel, value):
    with open(tracefs(rel), "w") as f:
        f.write(value)


def ensure_tracefs():
    if not os.path.isdir(tracefs("events")):
        p = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                           capture_output=True, text=True)
        check(p.returncode == 0 and os.path.isdir(tracefs("events")),
              "mount -t tracefs nodev %s: exit %d %s" %
              (TRACEFS, p.returncode, p.stderr.strip()))


def trace_clear():
    # Opening "trace" for writing with O_TRUNC empties the buffers.
    tracefs_write("trace", "")


# Reading "trace" stops tracing meanwhile, unless this option is off: an
# event of kweb's at that moment would be lost. Put back at the end.
PAUSE = "options/pause-on-trace"
# With record-cmd (or record-tgid) on, enabling any event also hooks
# sched_switch and sched_wakeup, so the kernel live-patches their static
# branches in the scheduler's hottest paths on every CPU. Under QEMU TCG
# that once ended in "Oops: int3" in ttwu_do_activate (stock 6.12, CI of
# 2026-11-28). The tests read no command names: leave the scheduler alone.
RECORD = ("options/record-cmd", "options/record-tgid")
SAVED = {}


def trace_setup():
    for rel, value in ((PAUSE, "0"), ("tracing_on", "1")) + \
            tuple((r, "0") for r in RECORD):
        if os.path.exists(tracefs(rel)):
            with open(tracefs(rel)) as f:
                SAVED[rel] = f.read().strip()
            tracefs_write(rel, value)
    tracefs_write("events/kweb/enable", "1")
    trace_clear()


EVENT_RE = re.compile(r"\s(kweb_\w+): (.*)$")


def parse_event(line):
    """(name, {field: value}) of one trace line, or None. Values hold no
    spaces (targets cannot); a value may hold "=" (a query)."""
    m = EVENT_RE.search(line)
    if not m:
        return None
    fields = {}
    for tok in m.group(2).split():
        k, _, v = tok.partition("=")
        fields[k] = v
    return m.group(1), fields


def trace_events():
    with open(tracefs("trace")) as f:
        return [e for e in map(parse_event, f) if e]


def wait_events(pred, what, timeout=None):
    """Read the trace until pred(events) holds; returns the events.
    Close events come from the work item, after the client is done."""
    deadline = time.monotonic() + (timeout or CFG.timeout)
    while True:
        ev = trace_events()
        if pred(ev):
            return ev
        if time.monotonic() > deadline:
            raise Fail("no %s within %.0f s; the trace has:\n%s" %
                       (what, timeout or CFG.timeout,
                        "\n".join("%s %s" % e for e in ev[-20:]) or
                        "(nothing)"))
        time.sleep(0.1)


def named(ev, name, **match):
    """The events called name whose fields equal match's."""
    return [f for n, f in ev if n == name and
            all(f.get(k) == str(v) for k, v in match.items())]


# ---- the server and its clients --------------------------------------------

def sockaddr(addr):
    """An address as %pISpc prints it: 1.2.3.4:80 or [::1]:80."""
    host, port = addr[0], addr[1]
    return "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)


def netns_ino():
    return os.stat("/proc/self/ns/net").st_ino


def listener_id(port):
    """The id /proc/net/kweb gives the listener on port."""
    with open("/proc/net/kweb") as f:
        for line in f:
            m = re.match(r"listener (\d+) port (\d+) ", line)
            if m and int(m.group(2)) == port:
                return int(m.group(1))
    raise Fail("no listener on port %d in /proc/net/kweb" % port)


class Client:
    """One connection; requests and exact responses."""

    def __init__(self, host=None, port=None):
        host = host or CFG.host
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(fam, socket.SOCK_STREAM)
        self.sock.settimeout(CFG.timeout)
        self.sock.connect((host, port or CFG.port))
        self.buf = b""
        # How kweb's events name both ends.
        self.src = sockaddr(self.sock.getpeername())
        self.dest = sockaddr(self.sock.getsockname())

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Fail("the server closed the connection")
        self.buf += data

    def request(self, target, method="GET", close=False):
        """(status, body) of one request; HEAD has no body."""
        self.sock.sendall(("%s %s HTTP/1.1\r\nHost: x\r\n%s\r\n" %
                           (method, target, "Connection: close\r\n"
                            if close else "")).encode())
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        m = re.match(rb"HTTP/1\.1 (\d{3}) ", head)
        check(m, "%s %s: no status line: %r" % (method, target, head[:80]))
        n = 0
        if method != "HEAD":
            m2 = re.search(rb"\r\nContent-Length: (\d+)", head)
            check(m2, "%s %s: no Content-Length: %r" % (method, target, head))
            n = int(m2.group(1))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(m.group(1)), body

    def wait_eof(self):
        """The server's FIN (after Connection: close), nothing before it."""
        while True:
            data = self.sock.recv(65536)
            if not data:
                return
            check(False, "bytes after the response: %r" % data[:80])

    def close(self):
        self.sock.close()

    def reset(self):
        """Close with a RST: SO_LINGER on, zero seconds."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                             struct.pack("ii", 1, 0))
        self.sock.close()


def write_file(body):
    path = os.path.join(CFG.docroot, FILE.lstrip("/"))
    # Replaced in place, the inode kept: the cache must see the change.
    with open(path, "wb") as f:
        f.write(body)
    settle()


def settle():
    """Let the timestamp tick of the last change pass: kweb keeps no
    cache entry whose file or directories changed in the current one."""
    time.sleep(0.05)


def check_done(f, c, status, nbytes, answered=None, method="GET",
               target=FILE, listener=None):
    """A kweb_request_done event's fields, for a request of client c;
    answered None: by kweb, in softirq or the worker."""
    if answered is None:
        answered = f.get("answered")
        check(answered in ("softirq", "worker"), "answered %r" % answered)
    want = {"netns_ino": str(netns_ino()),
            "listener": str(listener or CFG.listener),
            "src": c.src, "dest": c.dest, "method": method, "target": target,
            "status": str(status), "bytes": str(nbytes),
            "answered": answered}
    got = {k: f.get(k) for k in want}
    check(got == want, "kweb_request_done: %r, want %r" % (got, want))
    d = int(f.get("duration_ns", "-1"))
    check(0 < d < 30 * 10**9, "duration_ns %d" % d)


def check_close(ev, c, reason, requests, listener=None):
    """The one kweb_conn_close event of client c, and its fields."""
    cl = close_of(ev, c)
    want = {"netns_ino": str(netns_ino()),
            "listener": str(listener or CFG.listener),
            "src": c.src, "dest": c.dest, "reason": reason,
            "requests": str(requests)}
    check(len(cl) == 1 and {k: cl[0].get(k) for k in want} == want,
          "kweb_conn_close: %r, want %r" % (cl, want))


def done_of(ev, c):
    return named(ev, "kweb_request_done", dest=c.dest)


def close_of(ev, c):
    return named(ev, "kweb_conn_close", dest=c.dest)


# ---- tests ------------------------------------------------------------------

@TESTS.test("tracefs has events/kweb: six events with the documented fields")
def t_formats():
    ensure_tracefs()
    check(os.path.isdir(tracefs("events/kweb")),
          "no %s (is kweb loaded?)" % tracefs("events/kweb"))
    for name in EVENTS:
        with open(tracefs("events/kweb/%s/format" % name)) as f:
            fmt = f.read()
        fields = set(re.findall(r"field:[^;]*?[\s*](\w+)(?:\[[^\]]*\])?;",
                                fmt))
        fields = {x for x in fields if not x.startswith("common_")}
        check(fields == FIELDS[name], "%s: fields %s, want %s" %
              (name, sorted(fields), sorted(FIELDS[name])))
    CFG.listener = listener_id(CFG.port)
    os.makedirs(os.path.join(CFG.docroot, TDIR), exist_ok=True)
    write_file(BODY1)
    # From here on every test reads what its own requests left.
    trace_setup()


@TESTS.test("a new file: its first GET fills the cache (worker), the next two "
            "are answered in softirq without a fill; the client's FIN: eof")
def t_fill_softirq():
    trace_clear()
    c = Client()
    for i in range(3):
        status, body = c.request(FILE)
        check(status == 200 and body == BODY1, "GET %d: %d, %d bytes" %
              (i + 1, status, len(body)))
        if not i:
            # The worker lets go of the socket before the next arrives,
            # which softirq then answers from the cache.
            time.sleep(0.3)
    c.close()
    ev = wait_events(lambda ev: len(done_of(ev, c)) == 3 and close_of(ev, c),
                     "3 kweb_request_done and a kweb_conn_close")
    done = done_of(ev, c)
    for f, who in zip(done, ("worker", "softirq", "softirq")):
        check_done(f, c, 200, len(BODY1), who)
    fills = named(ev, "kweb_cache_fill", path=FILE)
    check(len(fills) == 1, "%d kweb_cache_fill for %s: %r" %
          (len(fills), FILE, fills))
    want = {"netns_ino": str(netns_ino()), "listener": str(CFG.listener),
            "path": FILE, "enc": "identity", "size": str(len(BODY1)),
            "pinned": str(-(-len(BODY1) // PAGE) * PAGE)}
    got = {k: fills[0].get(k) for k in want}
    check(got == want, "kweb_cache_fill: %r, want %r" % (got, want))
    check(not named(ev, "kweb_cache_invalidate"), "invalidated: %r" %
          named(ev, "kweb_cache_invalidate"))
    check_close(ev, c, "eof", 3)


@TESTS.test("GET of a missing file: 404 from the worker, bytes its body's")
def t_missing():
    trace_clear()
    c = Client()
    status, body = c.request("/trace/no-such-file", close=True)
    check(status == 404, "status %d" % status)
    c.wait_eof()
    c.close()
    ev = wait_events(lambda ev: done_of(ev, c), "kweb_request_done")
    done = done_of(ev, c)
    check(len(done) == 1, "%d events: %r" % (len(done), done))
    check_done(done[0], c, 404, len(body), "worker",
               target="/trace/no-such-file")


@TESTS.test("HEAD: status 200, method HEAD, no body bytes")
def t_head():
    trace_clear()
    c = Client()
    status, _ = c.request(FILE, "HEAD")
    check(status == 200, "status %d" % status)
    c.close()
    ev = wait_events(lambda ev: done_of(ev, c), "kweb_request_done")
    done = done_of(ev, c)
    check(len(done) == 1, "%d events: %r" % (len(done), done))
    check_done(done[0], c, 200, 0, method="HEAD")


@TESTS.test("GET with a query: kweb_handoff reason=query result=moved, "
            "request done by the backend (status 0), no kweb_conn_close")
def t_handoff():
    trace_clear()
    c = Client()
    target = FILE + "?x=1"
    status, body = c.request(target, close=True)
    check(status == 200 and body == BODY1, "nginx: %d, %d bytes" %
          (status, len(body)))
    c.close()
    ev = wait_events(lambda ev: done_of(ev, c), "kweb_request_done")
    done = done_of(ev, c)
    check(len(done) == 1, "%d events: %r" % (len(done), done))
    check_done(done[0], c, 0, 0, "backend", target=target)
    h = named(ev, "kweb_handoff", dest=c.dest)
    want = {"netns_ino": str(netns_ino()), "listener": str(CFG.listener),
            "src": c.src, "dest": c.dest, "reason": "query",
            "result": "moved", "status": "0"}
    check(len(h) == 1 and {k: h[0].get(k) for k in want} == want,
          "kweb_handoff: %r, want %r" % (h, want))
    # The socket is nginx's now: kweb closes nothing.
    time.sleep(0.5)
    check(not close_of(trace_events(), c), "kweb_conn_close: %r" %
          close_of(trace_events(), c))


@TESTS.test("Connection: close: the response, then closed after both FINs "
            "(linger)")
def t_linger():
    trace_clear()
    c = Client()
    status, body = c.request(FILE, close=True)
    check(status == 200 and body == BODY1, "%d, %d bytes" %
          (status, len(body)))
    c.wait_eof()
    c.close()
    ev = wait_events(lambda ev: done_of(ev, c) and close_of(ev, c),
                     "kweb_request_done and kweb_conn_close")
    done = done_of(ev, c)
    check(len(done) == 1, "%d events: %r" % (len(done), done))
    check_done(done[0], c, 200, len(BODY1))
    check_close(ev, c, "linger", 1)


@TESTS.test("a client's reset of a keep-alive connection: closed (reset)")
def t_reset():
    trace_clear()
    c = Client()
    status, _ = c.request(FILE)
    check(status == 200, "status %d" % status)
    c.reset()
    ev = wait_events(lambda ev: close_of(ev, c), "kweb_conn_close")
    check_close(ev, c, "reset", 1)


@TESTS.test("an idle keep-alive connection past keepalive_timeout: closed "
            "(timeout)")
def t_timeout():
    if not CFG.keepalive_timeout:
        note("no --keepalive-timeout: not waited for")
        return
    trace_clear()
    c = Client()
    status, _ = c.request(FILE)
    check(status == 200, "status %d" % status)
    try:
        ev = wait_events(lambda ev: close_of(ev, c), "kweb_conn_close",
                         CFG.keepalive_timeout + CFG.timeout)
    finally:
        c.close()
    check_close(ev, c, "timeout", 1)


@TESTS.test("the file rewritten: kweb_cache_invalidate reason=stale, then a "
            "fill with its new size")
def t_stale():
    trace_clear()
    write_file(BODY2)
    c = Client()
    status, body = c.request(FILE, close=True)
    check(status == 200 and body == BODY2, "%d, %d bytes" %
          (status, len(body)))
    c.close()
    ev = wait_events(lambda ev: named(ev, "kweb_cache_fill", path=FILE) and
                     done_of(ev, c), "kweb_cache_fill and kweb_request_done")
    inv = named(ev, "kweb_cache_invalidate", path=FILE)
    check(len(inv) == 1 and inv[0].get("reason") == "stale" and
          inv[0].get("size") == str(len(BODY1)) and
          inv[0].get("listener") == str(CFG.listener),
          "kweb_cache_invalidate: %r, want reason=stale size=%d" %
          (inv, len(BODY1)))
    fills = named(ev, "kweb_cache_fill", path=FILE)
    check(len(fills) == 1 and fills[0].get("size") == str(len(BODY2)),
          "kweb_cache_fill: %r, want size=%d" % (fills, len(BODY2)))
    done = done_of(ev, c)
    check(len(done) == 1, "%d events: %r" % (len(done), done))
    check_done(done[0], c, 200, len(BODY2), "worker")


def cache_limits():
    """The listener's cache limit and the largest file cached, in bytes."""
    limit = None
    with open("/proc/net/kweb") as f:
        for line in f:
            m = re.match(r"listener (\d+) .* cache_limit (\d+) ", line)
            if m and int(m.group(1)) == CFG.listener:
                limit = int(m.group(2))
    check(limit, "no cache_limit for listener %d" % CFG.listener)
    with open("/sys/module/kweb/parameters/cache_max_file") as f:
        return limit, int(f.read()) << 10


@TESTS.test("two files of 60% of the cache each: the second's fill evicts "
            "the first (kweb_cache_evict)")
def t_evict():
    limit, max_file = cache_limits()
    size = limit * 6 // 10 // PAGE * PAGE
    if size > max_file:
        note("cache limit %d: a file of %d bytes is not cached (insmod "
             "cache_size=1 to test evictions)" % (limit, size))
        return
    paths = ["/trace/%d-big%d.bin" % (os.getpid(), i) for i in (1, 2)]
    for i, path in enumerate(paths):
        with open(os.path.join(CFG.docroot, path.lstrip("/")), "wb") as f:
            f.write(bytes([0x41 + i]) * size)
    settle()
    trace_clear()
    for path in paths:
        c = Client()
        status, body = c.request(path, close=True)
        check(status == 200 and len(body) == size, "GET %s: %d, %d bytes" %
              (path, status, len(body)))
        c.close()
    ev = wait_events(lambda ev: named(ev, "kweb_cache_fill", path=paths[1]),
                     "kweb_cache_fill of %s" % paths[1])
    want = {"netns_ino": str(netns_ino()), "listener": str(CFG.listener),
            "path": paths[0], "enc": "identity", "size": str(size),
            "pinned": str(size)}
    evicted = named(ev, "kweb_cache_evict", path=paths[0])
    check(len(evicted) == 1 and
          {k: evicted[0].get(k) for k in want} == want,
          "kweb_cache_evict: %r, want %r" % (evicted, want))
    check(len(named(ev, "kweb_cache_fill", path=paths[0])) == 1,
          "%s filled %d times" % (paths[0], len(named(ev, "kweb_cache_fill",
                                                       path=paths[0]))))
    # Its eviction came first: then the second went in.
    order = [(n, f.get("path")) for n, f in ev
             if n in ("kweb_cache_evict", "kweb_cache_fill") and
             f.get("path") in paths]
    check(order.index(("kweb_cache_evict", paths[0])) <
          order.index(("kweb_cache_fill", paths[1])), "order: %r" % order)


def kwebctl(*args):
    p = subprocess.run([CFG.kwebctl] + list(args), capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0, "kwebctl %s: exit %d: %s" %
          (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def have_kwebctl():
    if os.access(CFG.kwebctl, os.X_OK):
        return True
    note("no kwebctl at %s: not run" % CFG.kwebctl)
    return False


@TESTS.test("kwebctl cache flush PATH, then all: kweb_cache_invalidate "
            "reason=flush, one per entry")
def t_flush():
    if not have_kwebctl():
        return
    c = Client()
    c.request(FILE)
    c.request("/small.txt")
    c.close()
    trace_clear()
    out = kwebctl("cache", "flush", FILE)
    check(out.strip() == "flushed 1 entry", "flush %s: %r" % (FILE, out))
    ev = trace_events()
    inv = named(ev, "kweb_cache_invalidate")
    check(len(inv) == 1 and inv[0].get("path") == FILE and
          inv[0].get("reason") == "flush" and
          inv[0].get("size") == str(len(BODY2)),
          "kweb_cache_invalidate: %r, want path=%s reason=flush" %
          (inv, FILE))
    trace_clear()
    n = json.loads(kwebctl("-j", "cache", "flush"))["entries"]
    ev = trace_events()
    inv = named(ev, "kweb_cache_invalidate", reason="flush")
    check(n >= 1 and len(inv) == n and
          named(ev, "kweb_cache_invalidate", path="/small.txt"),
          "%d entries flushed, %d events: %r" % (n, len(inv), inv))
    check(len(named(ev, "kweb_cache_invalidate")) == n, "other reasons: %r" %
          named(ev, "kweb_cache_invalidate"))


@TESTS.test("IPv6: both addresses as [::1]:port")
def t_ipv6():
    trace_clear()
    c = Client("::1")
    status, body = c.request(FILE, close=True)
    check(status == 200 and body == BODY2, "%d, %d bytes" %
          (status, len(body)))
    c.close()
    check(c.src == "[::1]:%d" % CFG.port, "peer %s" % c.src)
    ev = wait_events(lambda ev: done_of(ev, c) and close_of(ev, c),
                     "kweb_request_done and kweb_conn_close")
    done = done_of(ev, c)
    check(len(done) == 1, "%d events: %r" % (len(done), done))
    check_done(done[0], c, 200, len(BODY2))
    check_close(ev, c, "linger", 1)


@TESTS.test("a listener deleted: its connection closed (abort), its cache "
            "flushed, the events its listener id's")
def t_abort():
    if not have_kwebctl():
        return
    added = None
    try:
        lst = json.loads(kwebctl("-j", "listener", "add", "port",
                                 str(CFG.port2), "docroot", CFG.docroot))
        added = lst[0]["id"]
        trace_clear()
        c = Client(port=CFG.port2)
        status, body = c.request(FILE)
        check(status == 200 and body == BODY2, "%d, %d bytes" %
              (status, len(body)))
        # Half a head: the header timeout (not a short keep-alive one)
        # runs while kwebctl starts.
        c.sock.sendall(b"GET / HTTP/1.1\r\n")
        kwebctl("listener", "del", str(added))
        added_id, added = added, None
        c.close()
        ev = wait_events(lambda ev: close_of(ev, c), "kweb_conn_close")
        check_close(ev, c, "abort", 1, added_id)
        done = done_of(ev, c)
        check(len(done) == 1, "%d events: %r" % (len(done), done))
        check_done(done[0], c, 200, len(BODY2), "worker",
                   listener=added_id)
        fill = named(ev, "kweb_cache_fill", listener=added_id, path=FILE)
        inv = named(ev, "kweb_cache_invalidate", listener=added_id,
                    path=FILE, reason="flush")
        check(len(fill) == 1 and len(inv) == 1,
              "listener %d's fill %r and flush %r" % (added_id, fill, inv))
    finally:
        if added:
            subprocess.run([CFG.kwebctl, "listener", "del", str(added)],
                           capture_output=True, timeout=30)


def perf_binary():
    """A perf that runs: Debian's perf_VERSION ones, then perf itself (a
    wrapper that wants the running kernel's)."""
    for cand in sorted(glob.glob("/usr/bin/perf_*"), reverse=True) + \
            [shutil.which("perf") or ""]:
        if not cand or not os.access(cand, os.X_OK):
            continue
        try:
            p = subprocess.run([cand, "version"], capture_output=True,
                               timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if p.returncode == 0:
            return cand
    return None


FETCH = """
import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.sendall(b"GET %s HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
while s.recv(65536):
    pass
s.close()
time.sleep(1)
""" % FILE


@TESTS.test("perf stat -e 'kweb:*' -a: one kweb_request_done for a request")
def t_perf():
    perf = perf_binary()
    # scripts/deps.sh installs linux-perf.
    check(perf, "no working perf binary (perf, /usr/bin/perf_*)")
    # perf stat counts in the kernel: perf record and perf script took
    # two minutes in a guest, reading every binary over its 9p root.
    p = subprocess.run([perf, "stat", "-x", ",", "-e", "kweb:*", "-a", "--",
                        sys.executable, "-c", FETCH, CFG.host, str(CFG.port)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "%s stat: exit %d: %s" %
          (perf, p.returncode, p.stderr.strip()[-500:]))
    counts = {}
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2].startswith("kweb:"):
            counts[f[2]] = f[0]
    check(len(counts) == 6 and counts.get("kweb:kweb_request_done") == "1",
          "%s stat: %r" % (perf, p.stderr.strip()[-1000:]))
    note("%s stat: %s" % (perf, ", ".join("%s %s" % kv
                                          for kv in sorted(counts.items()))))


@TESTS.test("events/kweb/enable 0: no event")
def t_off():
    tracefs_write("events/kweb/enable", "0")
    trace_clear()
    c = Client()
    status, _ = c.request(FILE, close=True)
    check(status == 200, "status %d" % status)
    c.wait_eof()
    c.close()
    time.sleep(0.5)
    ev = trace_events()
    check(not ev, "events while disabled: %r" % ev[:5])


def cleanup():
    try:
        if os.path.isdir(tracefs("events/kweb")):
            tracefs_write("events/kweb/enable", "0")
            trace_clear()
        for rel, value in SAVED.items():
            tracefs_write(rel, value)
    except OSError:
        pass
    shutil.rmtree(os.path.join(CFG.docroot, TDIR), ignore_errors=True)


def main():
    global CFG
    ap = client_args(
        __doc__, timeout_help="seconds to wait for a response or an event")
    ap.add_argument("--kwebctl", default=os.path.join(REPO, "userctl",
                                                      "kwebctl"))
    ap.add_argument("--keepalive-timeout", type=int, default=0,
                    help="kweb's keepalive_timeout, if short enough to wait "
                         "for (0: not tested)")
    ap.add_argument("--port2", type=int, default=8099,
                    help="a free port for a second listener")
    ap.add_argument("--light", action="store_true",
                    help="leave out perf")
    CFG = ap.parse_args()
    CFG.docroot = os.path.realpath(CFG.docroot)
    CFG.listener = 0
    try:
        return TESTS.run(light=CFG.light)
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
