#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Handoff tests for kweb: what kweb does not serve reaches the nginx backend.

    tests/handoff_test.py --host H --port P --docroot D [--only REGEX]
        [--timeout S] [--list] [--client-addr A] [--backend-port 8080]
        [--params /sys/module/kweb/parameters] [--proc /proc/net/kweb]
        [--no-counters] [--kweb-server kweb] [--backend-server nginx]
        [--wrk SECONDS] [--rmmod-cmd CMD]

kweb listens on P (loaded with dynamic_prefixes=/api/,/dyn/ and
dynamic_extensions=.php); nginx from tests/nginx/backend.conf.in (started
by tests/guest/nginx.sh on D) listens on 127.0.0.1 and [::1] port
--backend-port. A request kweb does not serve itself (another method, a
query, a dynamic prefix or extension, Upgrade, the HTTP/2 preface,
Transfer-Encoding, HTTP/2.0 or 3.0, a missing file with backend_missing=Y)
must be answered by nginx, intact, on the same connection; static requests
before it are kweb's. nginx's echo location answers with the method, the
target, the body length and the client address it saw, and keeps the body
in a file that this client (root, same machine) compares and deletes.

Every test asserts the status, the Server field (--kweb-server for kweb,
--backend-server as a prefix before "/" for nginx), the fields that matter
and the body bytes, and how /proc/net/kweb's handoff counters grew (read
before and after; --no-counters skips that, to check this client against
nginx alone: --port 8080 --kweb-server nginx). --client-addr binds every
connection to that source address (nginx must see it as $remote_addr).
Tests that change a module parameter under --params restore it.

--wrk SECONDS adds a wrk load (tests/wrk/mixed.lua, 32 connections):
static GETs kept alive by kweb mixed with POSTs handed to nginx.
--rmmod-cmd CMD runs only the unload test: connections handed to nginx
must keep working after CMD (e.g. "rmmod kweb") exits 0, and P must then
refuse connections.

Output is TAP: `ok N - name` or `not ok N - name` followed by `# `
diagnostics, then `# N passed, N failed`; the exit status is 0 iff no test
failed. Each test has its own deadline (--timeout seconds, a multiple for
the heavy ones), so a hang fails that test and the run goes on.
"""

import base64
import calendar
import hashlib
import json
import os
import random
import re
import select
import shlex
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from email.utils import formatdate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import client_args, slowest  # noqa: E402
from httplib_raw import (Connection, NoResponse, ProtocolError,  # noqa: E402
                         Timeout, format_host, show)

HERE = os.path.dirname(os.path.abspath(__file__))

REASONS = {
    200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Not Allowed",
    414: "URI Too Long", 431: "Request Header Fields Too Large",
    501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}

# Why kweb handed a connection over: each handoff counts in exactly one.
REASON_COUNTERS = ["handoff_method", "handoff_query", "handoff_prefix",
                   "handoff_extension", "handoff_upgrade", "handoff_h2",
                   "handoff_unparsed", "handoff_missing"]
FAILURE_COUNTERS = ["handoff_failed_no_backend", "handoff_failed_queue_full",
                    "handoff_failed"]

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
H2_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"     # empty SETTINGS frame

DATE_SKEW = 120
# Seconds to wait for EOF after a closing response; the debug guest
# (KASAN, lockdep, kmemleak under TCG) sets more in KWEB_CLOSE_WAIT.
CLOSE_WAIT = float(os.environ.get("KWEB_CLOSE_WAIT", "2"))
PASSWD_RE = re.compile(rb"(^|\n)root:[^\n]*:0:0:")
ECHO_KEYS = ["method", "uri", "length", "addr", "body_file"]
BODY_FILE_RE = re.compile(r"/[^\n]*/[0-9]{10}")

CFG = None


def http_date(ts):
    return formatdate(ts, usegmt=True)


def parse_http_date(s):
    try:
        ts = calendar.timegm(time.strptime(s or "", "%a, %d %b %Y %H:%M:%S GMT"))
    except ValueError:
        return None
    return ts if http_date(ts) == s else None


def payload(n, seed):
    """n deterministic bytes, all 256 values among them."""
    return random.Random("kweb-handoff:%s" % seed).randbytes(n)


# ---------------------------------------------------------------------------
# The docroot

class FileInfo:
    def __init__(self, rel):
        self.rel = rel
        self.path = os.path.join(CFG.docroot, rel)
        st = os.stat(self.path)
        self.size = st.st_size
        self.mtime = int(st.st_mtime)
        self.etag = '"%x-%x"' % (self.mtime, self.size)
        self.last_modified = http_date(self.mtime)
        with open(self.path, "rb") as f:
            self.data = f.read()


_files = {}


def F(rel):
    if rel not in _files:
        _files[rel] = FileInfo(rel)
    return _files[rel]


def largest_file():
    """The largest world-readable regular file of the manifest."""
    files = [(m["size"], rel) for rel, m in CFG.manifest["files"].items()
             if m["type"] == "file" and int(m["mode"], 8) & 0o004]
    return max(files)[1]


# ---------------------------------------------------------------------------
# Requests

def host_field():
    return "%s:%d" % (format_host(CFG.host), CFG.port)


def req(target="/small.txt", method="GET", version="HTTP/1.1", headers=(),
        host=True, body=b"", length=True):
    """A request head plus body; a Content-Length for a non-empty body
    unless length=False."""
    lines = ["%s %s %s" % (method, target, version)]
    if host:
        lines.append("Host: " + host_field())
    if body and length:
        lines.append("Content-Length: %d" % len(body))
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chunked(body, sizes, extensions=None):
    """body in chunks of these sizes (the rest in one more chunk), with
    chunk extensions {chunk index: ';ext'}; last-chunk and no trailer."""
    extensions = extensions or {}
    out, pos, i = [], 0, 0
    for n in list(sizes) + [len(body)]:
        if pos >= len(body):
            break
        part = body[pos:pos + n]
        size = "%x" % len(part) if i % 2 else "%X" % len(part)
        out.append(("%s%s\r\n" % (size, extensions.get(i, ""))).encode() + part + b"\r\n")
        pos += len(part)
        i += 1
    return b"".join(out) + b"0\r\n\r\n"


def error_body(code, server="kweb"):
    cr = "%d %s" % (code, REASONS[code])
    return ("<html>\r\n<head><title>%s</title></head>\r\n<body>\r\n"
            "<center><h1>%s</h1></center>\r\n<hr><center>%s</center>\r\n"
            "</body>\r\n</html>\r\n" % (cr, cr, server)).encode()


# ---------------------------------------------------------------------------
# Connections bound to --client-addr

class Conn(Connection):
    """httplib_raw.Connection, bound to a source address first."""

    def __init__(self, host, port, deadline, on_data=None, source=None):
        self.deadline = deadline
        self.on_data = on_data
        self.buf = bytearray()
        self.eof = False
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if source:
                self.sock.bind((source, 0))
            self._settimeout()
            self.sock.connect((host, port))
        except socket.timeout:
            self.sock.close()
            raise Timeout("timeout connecting to %s port %d" % (host, port))
        except BaseException:
            self.sock.close()
            raise

    @property
    def local_addr(self):
        return self.sock.getsockname()[0]


# ---------------------------------------------------------------------------
# Counters and module parameters

def read_counters():
    with open(CFG.proc) as f:
        out = {}
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and re.fullmatch(r"-?[0-9]+", parts[1]):
                out[parts[0]] = int(parts[1])
        return out


class Snapshot:
    """Counters before a test; check() compares with after."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.before = None
        if CFG.counters:
            try:
                self.before = read_counters()
            except OSError as e:
                ctx.check(False, "cannot read %s: %s" % (CFG.proc, e))

    def check(self, expect, reasons="auto", failures_zero=True):
        """expect: {counter or tuple of counters (their sum): growth}.
        reasons: total growth of the reason counters (each handoff counts
        in one); "auto": the sum of the reason counters in expect; None:
        not checked. failures_zero: the failure counters must not grow
        (unless in expect)."""
        ctx = self.ctx
        if not CFG.counters or self.before is None:
            return
        try:
            after = read_counters()
        except OSError as e:
            ctx.check(False, "cannot read %s: %s" % (CFG.proc, e))
            return

        def grew(names):
            names = (names,) if isinstance(names, str) else names
            missing = [n for n in names if n not in after or n not in self.before]
            if missing:
                ctx.check(False, "%s has no counter %s" % (CFG.proc, ", ".join(missing)))
                return None
            return sum(after[n] - self.before[n] for n in names)

        expect = dict(expect)
        if reasons == "auto":
            reasons = sum(v for k, v in expect.items()
                          if (k if isinstance(k, tuple) else (k,))[0] in REASON_COUNTERS)
        if reasons is not None:
            expect[tuple(REASON_COUNTERS)] = reasons
        if failures_zero:
            for name in FAILURE_COUNTERS:
                if name not in expect:
                    expect[name] = 0
        for names, want in expect.items():
            d = grew(names)
            label = names if isinstance(names, str) else (
                "sum of the reason counters" if names == tuple(REASON_COUNTERS)
                else " + ".join(names))
            if d is not None and d != want:
                ctx.check(False, "%s grew by %d, expected %d (all handoff counters: %s)" % (
                    label, d, want, self.growth(after)))

    def growth(self, after):
        return ", ".join("%s +%d" % (n, after[n] - self.before[n])
                         for n in REASON_COUNTERS + FAILURE_COUNTERS
                         if n in after and n in self.before and after[n] != self.before[n]) or "none"


KWEBCTL = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "userctl", "kwebctl")


class Param:
    """A setting of this namespace, read from its module parameter under
    --params (the parameters show the initial namespace's), changed with
    kwebctl config set (they are read-only), restored by restore()."""

    def __init__(self, name):
        self.name = name
        self.path = os.path.join(CFG.params, name)
        with open(self.path) as f:
            self.orig = f.read().strip()

    def set(self, value):
        value = {"Y": "yes", "N": "no"}.get(str(value), str(value))
        p = subprocess.run([KWEBCTL, "config", "set",
                            self.name.replace("_", "-"), value],
                           capture_output=True, text=True, timeout=60)
        if p.returncode:
            raise RuntimeError("kwebctl config set %s %s: %s" %
                       (self.name, value, p.stderr.strip()))

    def restore(self):
        self.set(self.orig)


# ---------------------------------------------------------------------------
# Test context and checks

class Ctx:
    def __init__(self, timeout):
        self.deadline = time.monotonic() + timeout
        self.errors = []
        self.conns = []
        self.last_raw = None
        self.fail_raw = None
        self.cleanups = []              # run after the test, whatever happened

    def connect(self, host=None):
        c = Conn(host or CFG.host, CFG.port, self.deadline, self.saw, CFG.client_addr)
        self.conns.append(c)
        return c

    def saw(self, raw):
        self.last_raw = raw
        self.check(CFG.marker.encode() not in raw,
                   "LEAK: response contains the marker of ../outside/secret.txt")
        self.check(not PASSWD_RE.search(raw), "LEAK: response contains /etc/passwd")

    def check(self, cond, msg):
        if not cond:
            if not self.errors:
                self.fail_raw = self.last_raw
            self.errors.append(msg)
        return cond

    def eq(self, what, want, got):
        return self.check(want == got, "%s: expected %r, got %r" % (what, want, got))

    def field(self, resp, name, want):
        return self.eq(name, [] if want is None else [want], resp.all(name))

    def body(self, want, got, what="body"):
        if want == got:
            return True
        i = next((k for k in range(min(len(want), len(got)))
                  if want[k] != got[k]), min(len(want), len(got)))
        return self.check(False, "%s: expected %d bytes (sha256 %.12s), got %d "
                          "(sha256 %.12s), first difference at offset %d: %s" % (
                              what, len(want), hashlib.sha256(want).hexdigest(),
                              len(got), hashlib.sha256(got).hexdigest(), i,
                              show(got[i:i + 40], 40)))

    def close(self):
        for c in self.conns:
            c.close()


def server_is(value, who):
    want = CFG.kweb_server if who == "kweb" else CFG.backend_server
    return value is not None and (value == want or value.startswith(want + "/"))


def check_common(ctx, resp, code, who, reason=None):
    """Status line, Server of `who` ('kweb' or 'backend'), one valid Date."""
    ctx.eq("status line", "HTTP/1.1 %d %s" % (code, reason or REASONS[code]),
           resp.status_line)
    servers = resp.all("Server")
    ctx.check(len(servers) == 1 and server_is(servers[0], who),
              "Server: expected %s's (%r), got %r" % (
                  who, CFG.kweb_server if who == "kweb" else CFG.backend_server, servers))
    dates = resp.all("Date")
    if ctx.eq("number of Date fields", 1, len(dates)):
        ts = parse_http_date(dates[0])
        if ctx.check(ts is not None, "Date is not an IMF-fixdate: %r" % dates[0]):
            ctx.check(abs(ts - (resp.head_time or time.time())) <= DATE_SKEW,
                      "Date %r is more than %d s from our clock" % (dates[0], DATE_SKEW))
    ctx.check(not resp.duplicates(), "duplicate fields: %s" % resp.duplicates())
    ctx.check(not resp.body_by_close, "no Content-Length: body delimited by close")


def check_file(ctx, resp, f, who):
    """A 200 with file f, from kweb or the backend (same validators)."""
    check_common(ctx, resp, 200, who)
    ctx.field(resp, "Content-Length", str(f.size))
    ctx.field(resp, "Last-Modified", f.last_modified)
    ctx.field(resp, "ETag", f.etag)
    if f.rel.endswith(".txt"):
        ctx.field(resp, "Content-Type", "text/plain")
    ctx.body(f.data, resp.body, "body of /%s" % f.rel)


def check_kweb_error(ctx, resp, code, mode="close"):
    """kweb's own error response (docs/behaviour.md), Connection per mode."""
    check_common(ctx, resp, code, "kweb")
    ctx.field(resp, "Content-Type", "text/html")
    ctx.field(resp, "Content-Length", str(len(error_body(code, CFG.kweb_server))))
    ctx.body(error_body(code, CFG.kweb_server), resp.body, "%d error page" % code)
    ctx.field(resp, "Connection", None if mode == "open" else mode)


def check_backend_status(ctx, resp, code, close):
    """One of nginx's own answers: status, Server, and whether it closes."""
    check_common(ctx, resp, code, "backend")
    ctx.field(resp, "Connection", "close" if close else "keep-alive")


def check_echo(ctx, conn, resp, method, uri, body=b"", close=False):
    """The backend's echo: what nginx saw of the request. A body must have
    reached nginx whole (its file compared, then deleted)."""
    check_common(ctx, resp, 200, "backend")
    ctx.field(resp, "Content-Type", "text/plain")
    ctx.field(resp, "Connection", "close" if close else "keep-alive")
    lines = resp.body.decode("latin-1").split("\n")
    if not ctx.check(lines[-1:] == [""] and all("=" in l for l in lines[:-1]),
                     "not an echo body: %s" % show(resp.body)):
        return None
    echo = dict(l.split("=", 1) for l in lines[:-1])
    if not ctx.eq("echo keys", ECHO_KEYS, [l.split("=", 1)[0] for l in lines[:-1]]):
        return None
    ctx.eq("method nginx saw", method, echo["method"])
    ctx.eq("target nginx saw", uri, echo["uri"])
    ctx.eq("body length nginx saw", str(len(body)) if body else "", echo["length"])
    ctx.eq("client address nginx saw", conn.local_addr, echo["addr"])
    path = echo["body_file"]
    if not body:
        ctx.eq("body file", "", path)
    elif ctx.check(BODY_FILE_RE.fullmatch(path), "no body file in the echo: %r" % path):
        try:
            with open(path, "rb") as f:
                got = f.read()
            os.unlink(path)
        except OSError as e:
            ctx.check(False, "body file %s: %s" % (path, e))
        else:
            ctx.body(body, got, "request body as nginx stored it")
    return echo


def probe_closed(ctx, conn, what="response"):
    state = conn.state(CLOSE_WAIT)
    return ctx.check(state in ("eof", "reset"), {
        "open": "connection still open %.0f s after a closing %s" % (CLOSE_WAIT, what),
        "data": "unexpected bytes after the %s: %s" % (what, show(conn.buf)),
    }.get(state, state))


def probe_backend(ctx, conn, what="handed-over connection"):
    """The connection is nginx's now: GET /small.txt is answered by it."""
    try:
        resp = conn.request(req("/small.txt"))
    except (NoResponse, ProtocolError, Timeout, OSError) as e:
        return ctx.check(False, "%s: GET /small.txt got %s: %s" % (what, type(e).__name__, e))
    check_file(ctx, resp, F("small.txt"), "backend")
    return True


# ---------------------------------------------------------------------------
# WebSocket (RFC 6455), client side

def ws_frame(opcode, data, fin=True):
    """A masked client frame."""
    mask = os.urandom(4)
    n = len(data)
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", b0, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", b0, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", b0, 0x80 | 127, n)
    keys = (mask * (n // 4 + 1))[:n]
    masked = (int.from_bytes(data, "big") ^ int.from_bytes(keys, "big")).to_bytes(n, "big")
    return head + mask + masked


def ws_read(conn):
    """One server frame: (fin, opcode, payload); servers never mask."""
    b0, b1 = conn._read_exact(2, "a WebSocket frame header")
    if b1 & 0x80:
        raise ProtocolError("server frame is masked")
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", conn._read_exact(2, "a 16-bit frame length"))[0]
    elif n == 127:
        n = struct.unpack("!Q", conn._read_exact(8, "a 64-bit frame length"))[0]
    return bool(b0 & 0x80), b0 & 0x0F, conn._read_exact(n, "a %d-byte frame payload" % n)


# ---------------------------------------------------------------------------
# Registry and runner

TESTS = []      # (name, function, args, timeout factor)


def add(name, fn, *args, factor=1):
    TESTS.append((name, fn, args, factor))


def test(name, factor=1):
    def deco(fn):
        add(name, fn, factor=factor)
        return fn
    return deco


def run_one(fn, args, ctx):
    def body():
        try:
            fn(ctx, *args)
        except (NoResponse, ProtocolError, Timeout) as e:
            ctx.errors.append("%s: %s" % (type(e).__name__, e))
        except Exception as e:  # a crashing test is a failed test
            tb = traceback.extract_tb(e.__traceback__)[-1]
            ctx.errors.append("exception %s: %s (at %s:%d)" % (
                type(e).__name__, e, os.path.basename(tb.filename), tb.lineno))
        finally:
            for undo in reversed(ctx.cleanups):
                try:
                    undo()
                except Exception as e:
                    ctx.errors.append("cleanup failed: %s: %s" % (type(e).__name__, e))
            ctx.cleanups.clear()
    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(max(0.0, ctx.deadline - time.monotonic()) + 5)
    if t.is_alive():
        ctx.errors.append("test did not finish within its deadline")
        for c in ctx.conns:
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        t.join(5)       # let its finally restore what it changed
    for undo in reversed(ctx.cleanups):     # still there: the thread hangs
        try:
            undo()
        except Exception:
            pass
    ctx.close()


def main():
    global CFG
    ap = client_args(__doc__, timeout_help="seconds per test "
                     "(heavy tests get a multiple)")
    ap.add_argument("--only", help="run only tests whose name matches this regex")
    ap.add_argument("--list", action="store_true", help="list test names")
    ap.add_argument("--client-addr", help="source address of every connection")
    ap.add_argument("--backend-port", type=int, default=8080)
    ap.add_argument("--params", default="/sys/module/kweb/parameters")
    ap.add_argument("--proc", default="/proc/net/kweb")
    ap.add_argument("--no-counters", dest="counters", action="store_false",
                    help="do not check the counters in --proc")
    ap.add_argument("--kweb-server", default="kweb")
    ap.add_argument("--backend-server", default="nginx")
    ap.add_argument("--wrk", type=int, default=0, metavar="SECONDS",
                    help="add a 32-connection wrk load of SECONDS")
    ap.add_argument("--wrk-bin", default="wrk")
    ap.add_argument("--rmmod-cmd", metavar="CMD",
                    help="run only the unload test, unloading with CMD")
    CFG = ap.parse_args()
    CFG.docroot = os.path.abspath(CFG.docroot)
    with open(os.path.join(os.path.dirname(CFG.docroot), "manifest.json")) as f:
        CFG.manifest = json.load(f)
    CFG.marker = CFG.manifest["secret_marker"]

    if CFG.rmmod_cmd:
        selected = [t for t in TESTS if t[1] is t_rmmod]
    else:
        tests = [t for t in TESTS if t[1] is not t_rmmod]
        if CFG.wrk:
            tests.append(("wrk -c32 %ds: static GETs (kweb) mixed with POSTs "
                          "handed to nginx" % CFG.wrk, t_wrk, (),
                          (CFG.wrk + 90) / CFG.timeout + 1))
        selected = [t for t in tests if not CFG.only or re.search(CFG.only, t[0])]
    if CFG.list:
        for name, *_ in selected:
            print(name)
        return 0
    print("1..%d" % len(selected))
    print("# kweb handoff_test: %s port %d (client %s), backend port %d, docroot %s%s" % (
        CFG.host, CFG.port, CFG.client_addr or "any", CFG.backend_port, CFG.docroot,
        "" if CFG.counters else ", counters not checked"))
    passed = failed = 0
    times = []
    for n, (name, fn, args, factor) in enumerate(selected, 1):
        ctx = Ctx(CFG.timeout * factor)
        t0 = time.monotonic()
        run_one(fn, args, ctx)
        times.append((name, time.monotonic() - t0))
        if ctx.errors:
            failed += 1
            print("not ok %d - %s" % (n, name))
            for e in ctx.errors:
                print("#   " + e)
            if ctx.fail_raw is not None:
                print("#   response: " + show(ctx.fail_raw, 200))
        else:
            passed += 1
            print("ok %d - %s" % (n, name))
        sys.stdout.flush()
    print(slowest(times))
    print("# %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


# ---------------------------------------------------------------------------
# The tests. Each takes a Ctx (and its arguments).

@test("the backend answers on its own port (--backend-port)")
def t_backend_direct(ctx):
    addr, _ = backend_loopback()
    conn = Conn(addr, CFG.backend_port, ctx.deadline, ctx.saw)
    ctx.conns.append(conn)
    check_file(ctx, conn.request(req("/small.txt")), F("small.txt"), "backend")
    if os.path.exists(os.path.join(CFG.params, "backend_port")):
        ctx.eq("module parameter backend_port", str(CFG.backend_port),
               Param("backend_port").orig)


@test("static GETs stay with kweb: no handoff")
def t_static(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    for _ in range(2):
        check_file(ctx, conn.request(req("/small.txt")), F("small.txt"), "kweb")
    snap.check({})


# -- methods -------------------------------------------------------------------

@test("POST 1 MiB with Content-Length to /dyn/echo: nginx gets it whole", factor=3)
def t_post_1m(ctx):
    body = payload(1 << 20, "post-1m")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/echo", "POST", body=body,
                            headers=["Content-Type: application/octet-stream"]))
    check_echo(ctx, conn, resp, "POST", "/dyn/echo", body)
    probe_backend(ctx, conn)
    snap.check({"handoff_method": 1})


@test("POST with Expect: 100-continue: one 100 Continue, then nginx's echo")
def t_post_expect(ctx):
    body = payload(65536, "expect")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    conn.send(req("/dyn/echo", "POST", headers=["Content-Length: %d" % len(body),
                                                "Expect: 100-continue"]))
    resp = conn.read_response("POST")
    ctx.eq("interim response", "HTTP/1.1 100 Continue", resp.status_line)
    ctx.check(not server_is(resp.get("Server"), "kweb"),
              "the 100 Continue is kweb's: it must leave the request to nginx")
    conn.send(body)
    resp = conn.read_response("POST")
    check_echo(ctx, conn, resp, "POST", "/dyn/echo", body)
    probe_backend(ctx, conn)
    snap.check({"handoff_method": 1})


CHUNK_SIZES = [1, 7, 4093, 65537, 3, 100003, 13, 65535, 997, 2]


@test("POST chunked (odd chunk sizes, chunk extensions) to /dyn/echo: intact", factor=3)
def t_post_chunked(ctx):
    body = payload(sum(CHUNK_SIZES) + 59999, "post-chunked")       # ~300 KB
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/echo", "POST", headers=["Transfer-Encoding: chunked"])
                        + chunked(body, CHUNK_SIZES, {0: ";name=value", 3: ";x"}))
    check_echo(ctx, conn, resp, "POST", "/dyn/echo", body)
    probe_backend(ctx, conn)
    # POST and Transfer-Encoding: either may be the reason counted.
    snap.check({("handoff_method", "handoff_unparsed"): 1}, reasons=1)


@test("PUT /dyn/put with a body: nginx's echo, method PUT")
def t_put(ctx):
    body = payload(4321, "put")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/put", "PUT", body=body))
    check_echo(ctx, conn, resp, "PUT", "/dyn/put", body)
    snap.check({"handoff_method": 1})


@test("BREW /dyn/pot (unknown method): nginx's echo, method BREW")
def t_brew(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/pot", "BREW"))
    check_echo(ctx, conn, resp, "BREW", "/dyn/pot")
    snap.check({"handoff_method": 1})


@test("BREW /small.txt: nginx's 405, stays open")
def t_brew_static(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/small.txt", "BREW"))
    check_backend_status(ctx, resp, 405, close=False)
    probe_backend(ctx, conn)
    snap.check({"handoff_method": 1})


@test("lower-case get: nginx's 400, Connection: close + EOF")
def t_lower_get(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/small.txt", "get"))
    check_backend_status(ctx, resp, 400, close=True)
    probe_closed(ctx, conn, "400")
    snap.check({"handoff_method": 1})


# -- query, prefixes, extensions, missing files ----------------------------------

@test("GET /small.txt?x=1: nginx serves the file")
def t_query(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    check_file(ctx, conn.request(req("/small.txt?x=1")), F("small.txt"), "backend")
    probe_backend(ctx, conn)
    # A first request routed by its head alone moves in softirq.
    snap.check({"handoff_query": 1, "handoffs_softirq": 1})


def t_echo_get(ctx, target, counter):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    check_echo(ctx, conn, conn.request(req(target)), "GET", target)
    probe_backend(ctx, conn)
    # Handed off after routing on the path: kweb answered nothing itself,
    # and moved the connection from softirq, without a work item.
    snap.check({counter: 1, ("requests_softirq", "requests_worker"): 0,
                "handoffs_softirq": 1})


add("GET /api/thing (dynamic prefix): nginx's echo", t_echo_get, "/api/thing",
    "handoff_prefix")
add("GET /dyn/ (dynamic prefix): nginx's echo", t_echo_get, "/dyn/", "handoff_prefix")
add("GET /x.php (dynamic extension): nginx's echo", t_echo_get, "/x.php",
    "handoff_extension")
add("GET /dir/page.php (dynamic extension, in a directory): nginx's echo",
    t_echo_get, "/dir/page.php", "handoff_extension")


# Paths kweb cannot take: longer than its 4 KiB buffer once decoded (nginx
# takes 8 KiB; its try_files finds no such file and asks @app), or with a
# query whatever the path (nginx judges it: 400 for a bad escape).
LONG_PATH = "/api/" + "a" * 4100
add("GET /api/<4100 bytes>?id=1 (query, a path too long for kweb): nginx's "
    "echo", t_echo_get, LONG_PATH + "?id=1", "handoff_query")
add("GET /<4100 bytes> (a path too long for kweb): nginx's echo",
    t_echo_get, "/" + "b" * 4100, "handoff_unparsed")


@test("GET /api/%zz?x=1 (a bad escape, with a query): nginx's 400, close")
def t_bad_path_query(ctx):
    t_backend_status(ctx, lambda: req("/api/%zz?x=1"), 400, True,
                     "handoff_query")


@test("GET /<300 bytes> (a name over NAME_MAX): with backend_missing=Y "
      "nginx's echo; =N: kweb's 404, open")
def t_long_name(ctx):
    target = "/" + "n" * 300
    param = Param("backend_missing")
    ctx.cleanups.append(param.restore)
    param.set("Y")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    check_echo(ctx, conn, conn.request(req(target)), "GET", target)
    snap.check({"handoff_missing": 1})
    param.set("N")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    check_kweb_error(ctx, conn.request(req(target)), 404, "open")
    check_file(ctx, conn.request(req("/small.txt")), F("small.txt"), "kweb")
    snap.check({})


@test("backend_missing=Y: GET /no-such-file reaches nginx; =N: kweb's 404")
def t_missing(ctx):
    param = Param("backend_missing")
    ctx.cleanups.append(param.restore)
    param.set("Y")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    check_echo(ctx, conn, conn.request(req("/no-such-file")), "GET", "/no-such-file")
    snap.check({"handoff_missing": 1})
    param.set("N")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/no-such-file"))
    check_kweb_error(ctx, resp, 404, "open")
    check_file(ctx, conn.request(req("/small.txt")), F("small.txt"), "kweb")
    snap.check({})


# -- protocols -------------------------------------------------------------------

@test("WebSocket upgrade to /ws/chat: 101 from nginx, frames echoed")
def t_websocket(ctx):
    key = base64.b64encode(os.urandom(16)).decode()
    accept = base64.b64encode(hashlib.sha1(key.encode() + WS_GUID).digest()).decode()
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/ws/chat", headers=[
        "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: " + key,
        "Sec-WebSocket-Version: 13", "Origin: http://kweb.test"]))
    check_common(ctx, resp, 101, "backend", "Switching Protocols")
    ctx.eq("Upgrade", ["websocket"], [v.lower() for v in resp.all("Upgrade")])
    ctx.eq("Connection", ["upgrade"], [v.lower() for v in resp.all("Connection")])
    ctx.field(resp, "Sec-WebSocket-Accept", accept)
    if resp.code != 101:
        return
    text = "hello through kweb \u2713".encode()
    binary = payload(70000, "ws-binary")        # a 64-bit payload length
    for opcode, data in ((1, text), (2, binary), (2, b"\x00\r\n\xff")):
        conn.send(ws_frame(opcode, data))
        fin, op, got = ws_read(conn)
        ctx.eq("echoed frame FIN and opcode", (True, opcode), (fin, op))
        ctx.body(data, got, "echoed %s frame" % ("text" if opcode == 1 else "binary"))
    conn.send(ws_frame(8, struct.pack("!H", 1000)))
    fin, op, got = ws_read(conn)
    ctx.eq("close frame answered", (True, 8, struct.pack("!H", 1000)), (fin, op, got))
    snap.check({"handoff_upgrade": 1})


@test("HTTP/2 prior-knowledge preface: nginx's answer (or nginx closing)")
def t_h2(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    conn.send(H2_PREFACE + H2_SETTINGS)
    try:
        resp = conn.read_response()
    except NoResponse:
        resp = None
    if resp is not None:
        ctx.check(server_is(resp.get("Server"), "backend"),
                  "answer to the preface is not the backend's: %s" % resp.status_line
                  + " Server: %r" % resp.get("Server"))
    snap.check({"handoff_h2": 1})


def t_backend_status(ctx, make, code, close, counter):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(make())
    check_backend_status(ctx, resp, code, close)
    if close:
        probe_closed(ctx, conn, "%d" % code)
    else:
        probe_backend(ctx, conn)
    snap.check({counter: 1})


add("GET HTTP/2.0 request line: nginx's 505, close", t_backend_status,
    lambda: req(version="HTTP/2.0"), 505, True, "handoff_unparsed")
add("GET HTTP/3.0 request line: nginx's 505, close", t_backend_status,
    lambda: req(version="HTTP/3.0"), 505, True, "handoff_unparsed")
add("GET with Transfer-Encoding: gzip: nginx's 501, close", t_backend_status,
    lambda: req(headers=["Transfer-Encoding: gzip"]), 501, True, "handoff_unparsed")


# Heads longer than kweb reads (max_header_size, 8192 here), or with more
# fields than it keeps (100), go to nginx unread: its limits are its own
# (large_client_header_buffers 4 8k: 8 KiB a line, 32 KiB in all).
LONG_URI = "/" + "a" * 9999
BIG_FIELD = "X-Big: " + "b" * 9000
MANY_FIELDS = ["X-F%d: v" % i for i in range(150)]
# A browser's cookies over several lines: 21 KB in all, under 8 KiB each.
COOKIES = ["Cookie: c%d=%s" % (i, "k" * 7000) for i in range(3)]


def t_big_head_nginx(ctx, make, code, reason, close):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(make())
    if code == 200:
        check_file(ctx, resp, F("small.txt"), "backend")
    else:
        check_common(ctx, resp, code, "backend", reason)
    ctx.field(resp, "Connection", "close" if close else "keep-alive")
    if close:
        probe_closed(ctx, conn, "%d" % code)
    else:
        probe_backend(ctx, conn)
    snap.check({"handoff_unparsed": 1})


add("a 10000-byte URI: unread to nginx, its 414, close", t_big_head_nginx,
    lambda: req(LONG_URI), 414, "Request-URI Too Large", True)
add("a 9000-byte field: unread to nginx, its 400, close", t_big_head_nginx,
    lambda: req(headers=[BIG_FIELD]), 400,
    "Bad Request", True)
add("150 small fields: unread to nginx, which serves the file", t_big_head_nginx,
    lambda: req(headers=MANY_FIELDS), 200, None, False)
add("21 KB of cookies in 3 lines: unread to nginx, which serves the file",
    t_big_head_nginx, lambda: req(headers=COOKIES), 200, None, False)


@test("a head too long to read, no backend: kweb's own 414 and 431, "
      "Connection: close + EOF")
def t_big_head_no_backend(ctx):
    param = Param("backend_port")
    ctx.cleanups.append(param.restore)
    param.set(free_port())
    snap = Snapshot(ctx)
    for make, code in ((lambda: req(LONG_URI), 414),
                       (lambda: req(headers=[BIG_FIELD]), 431),
                       (lambda: req(headers=MANY_FIELDS), 431)):
        conn = ctx.connect()
        resp = conn.request(make())
        check_kweb_error(ctx, resp, code)
        probe_closed(ctx, conn, "%d" % code)
    snap.check({"handoff_failed_no_backend": 3, "handoff_failed_queue_full": 0},
               reasons=None, failures_zero=False)


@test("malformed request (bare CR in a field): still kweb's 400, no handoff")
def t_malformed(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req(headers=["X-Foo: a\rb"]))
    check_kweb_error(ctx, resp, 400)
    probe_closed(ctx, conn, "400")
    snap.check({})


# -- keep-alive: kweb first, then nginx on the same connection ---------------------

@test("keep-alive: GET (kweb), POST (nginx), GET (now nginx) on one connection")
def t_switch(ctx):
    body = payload(9999, "switch")
    small = F("small.txt")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    check_file(ctx, conn.request(req("/small.txt")), small, "kweb")
    resp = conn.request(req("/dyn/x", "POST", body=body))
    check_echo(ctx, conn, resp, "POST", "/dyn/x", body)
    check_file(ctx, conn.request(req("/small.txt")), small, "backend")
    snap.check({"handoff_method": 1})


@test("GET with a Content-Length body, then POST, in one send: kweb drops "
      "exactly that body; nginx sees the POST as the first request")
def t_boundary_body(ctx):
    body = payload(3333, "boundary")
    junk = b"POST /dyn/smuggled HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
    small = F("small.txt")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    conn.send(req("/small.txt", body=junk) + req("/dyn/x", "POST", body=body))
    check_file(ctx, conn.read_response(), small, "kweb")
    check_echo(ctx, conn, conn.read_response(), "POST", "/dyn/x", body)
    probe_backend(ctx, conn)
    snap.check({"handoff_method": 1})


@test("POST with bad chunk syntax: handed over unread; nginx's 400 + close")
def t_bad_chunk(ctx):
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/x", "POST",
                            headers=["Transfer-Encoding: chunked"],
                            body=b"zz\r\nhello\r\n0\r\n\r\n", length=False))
    check_backend_status(ctx, resp, 400, True)
    probe_closed(ctx, conn)
    snap.check({"handoff_method": 1})


@test("pipelined in one send: GET (kweb), POST (nginx), GET (nginx), in order")
def t_switch_pipelined(ctx):
    body = payload(7777, "pipelined")
    small = F("small.txt")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    conn.send(req("/small.txt") + req("/dyn/x", "POST", body=body) + req("/small.txt"))
    check_file(ctx, conn.read_response(), small, "kweb")
    check_echo(ctx, conn, conn.read_response(), "POST", "/dyn/x", body)
    check_file(ctx, conn.read_response(), small, "backend")
    snap.check({"handoff_method": 1})


@test("keep-alive: POST arrives while kweb still sends the largest file", factor=4)
def t_switch_large(ctx):
    big = F(largest_file())
    body = payload(5555, "large")
    snap = Snapshot(ctx)
    conn = ctx.connect()
    conn.send(req("/" + big.rel))
    conn.read_at_least(1, "the start of /%s" % big.rel)
    conn.send(req("/dyn/x", "POST", body=body) + req("/small.txt"))
    check_file(ctx, conn.read_response(), big, "kweb")
    check_echo(ctx, conn, conn.read_response(), "POST", "/dyn/x", body)
    check_file(ctx, conn.read_response(), F("small.txt"), "backend")
    snap.check({"handoff_method": 1})


# -- failures: no backend, full accept queue ----------------------------------------

def free_port():
    """A port nothing listens on, over IPv4 and IPv6 loopback."""
    for _ in range(20):
        s4 = socket.socket(socket.AF_INET)
        s4.bind(("127.0.0.1", 0))
        port = s4.getsockname()[1]
        s6 = socket.socket(socket.AF_INET6)
        try:
            s6.bind(("::1", port))
            return port
        except OSError:
            continue
        finally:
            s4.close()
            s6.close()
    raise RuntimeError("no port free on both 127.0.0.1 and ::1")


def backend_loopback():
    """Where kweb hands this client's connections: its family's loopback."""
    return ("::1", socket.AF_INET6) if ":" in CFG.host else ("127.0.0.1", socket.AF_INET)


@test("backend not listening: kweb's 502, Connection: close + EOF")
def t_no_backend(ctx):
    param = Param("backend_port")
    ctx.cleanups.append(param.restore)
    port = free_port()
    param.set(port)
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/echo", "POST", body=b"nobody listens"))
    check_kweb_error(ctx, resp, 502)
    probe_closed(ctx, conn, "502")
    snap.check({"handoff_failed_no_backend": 1, "handoff_failed_queue_full": 0},
               reasons=None, failures_zero=False)


def fill_accept_queue(ctx, addr, family, port):
    """Connect until a connect does not complete within 1 s: the queue of
    the listener (backlog 0, so it holds 1) is then full. Returns the
    connected sockets (they must stay open)."""
    done = []
    for _ in range(64):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.setblocking(False)
        err = s.connect_ex((addr, port))
        if err not in (0, 115):             # EINPROGRESS
            s.close()
            raise RuntimeError("connect to the full-queue listener: errno %d" % err)
        _, w, _ = select.select([], [s], [], 1.0)
        if not w:
            s.close()
            return done
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if err:
            s.close()
            raise RuntimeError("connect to the full-queue listener: errno %d" % err)
        done.append(s)
        ctx.cleanups.append(s.close)
    raise RuntimeError("64 connections completed: the accept queue never filled")


@test("backend accept queue full: kweb's 503, Connection: close + EOF", factor=2)
def t_queue_full(ctx):
    addr, family = backend_loopback()
    lst = socket.socket(family, socket.SOCK_STREAM)
    ctx.cleanups.append(lst.close)
    lst.bind((addr, 0))
    lst.listen(0)                   # never accepted
    port = lst.getsockname()[1]
    filled = fill_accept_queue(ctx, addr, family, port)
    ctx.check(filled, "no connection completed to the full-queue listener")
    param = Param("backend_port")
    ctx.cleanups.append(param.restore)
    param.set(port)
    snap = Snapshot(ctx)
    conn = ctx.connect()
    resp = conn.request(req("/dyn/echo", "POST", body=b"the queue is full"))
    check_kweb_error(ctx, resp, 503)
    probe_closed(ctx, conn, "503")
    snap.check({"handoff_failed_queue_full": 1, "handoff_failed_no_backend": 0},
               reasons=None, failures_zero=False)


# -- unload: handed-over connections outlive kweb (only with --rmmod-cmd) ----------

@test("after unloading kweb, connections it handed to nginx still work", factor=6)
def t_rmmod(ctx):
    small = F("small.txt")
    conns = []
    for i in range(4):
        conn = ctx.connect()
        check_file(ctx, conn.request(req("/small.txt")), small, "kweb")
        body = payload(1000 + i, "rmmod-%d" % i)
        resp = conn.request(req("/dyn/rm%d" % i, "POST", body=body))
        check_echo(ctx, conn, resp, "POST", "/dyn/rm%d" % i, body)
        conns.append(conn)
    left = max(1.0, ctx.deadline - time.monotonic() - 5)
    p = subprocess.Popen(CFG.rmmod_cmd, shell=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=left)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)     # an rmmod stuck in the kernel stays stuck
        try:
            p.wait(2)
        except subprocess.TimeoutExpired:
            pass
        ctx.check(False, "%s did not finish within %.0f s" % (CFG.rmmod_cmd, left))
        return
    if not ctx.eq("exit status of %s" % CFG.rmmod_cmd, 0, p.returncode):
        for line in out.splitlines()[:10]:
            ctx.errors.append("  " + line)
    for i, conn in enumerate(conns):
        probe_backend(ctx, conn, "connection %d after unloading" % i)
        body = payload(2000 + i, "rmmod-after-%d" % i)
        resp = conn.request(req("/dyn/after%d" % i, "POST", body=body))
        check_echo(ctx, conn, resp, "POST", "/dyn/after%d" % i, body)
    try:
        extra = ctx.connect()
    except ConnectionRefusedError:
        pass
    except OSError as e:
        ctx.check(False, "new connection to port %d: %s (expected: refused)" % (CFG.port, e))
    else:
        extra.close()
        ctx.check(False, "port %d still accepts connections after %s" % (
            CFG.port, CFG.rmmod_cmd))


# -- load (only with --wrk) -----------------------------------------------------------

WRK_LINE_RE = re.compile(r"^handoff-wrk: (.*)$", re.M)
WRK_POST_PATH = "/dyn/load"
WRK_POST_SIZE = 100


def t_wrk(ctx):
    script = os.path.join(HERE, "wrk", "mixed.lua")
    url = "http://%s:%d/" % (format_host(CFG.host), CFG.port)
    cmd = [CFG.wrk_bin, "-t2", "-c32", "-d%ds" % CFG.wrk, "--timeout", "30s",
           "-s", script, url, "--", "/small.txt", str(F("small.txt").size),
           WRK_POST_PATH, str(WRK_POST_SIZE), "4"]
    snap = Snapshot(ctx)
    left = max(1.0, ctx.deadline - time.monotonic() - 5)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=left)
    except subprocess.TimeoutExpired:
        ctx.check(False, "wrk did not finish within %.0f s" % left)
        return
    m = WRK_LINE_RE.search(p.stdout)
    if not ctx.check(p.returncode == 0 and m, "%s: status %d, no handoff-wrk line:\n%s%s" % (
            " ".join(shlex.quote(c) for c in cmd), p.returncode, p.stdout, p.stderr)):
        return
    line, _, first_bad = m.group(1).partition(" first_bad=")
    got = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
    print("# wrk: " + line)
    n = {k: int(v) for k, v in got.items() if re.fullmatch(r"[0-9]+", v)}
    ctx.eq("static responses that were wrong", 0, n.get("static_bad"))
    ctx.eq("POST responses that were wrong", 0, n.get("post_bad"))
    ctx.check(n.get("static_good", 0) > 0, "no static response")
    ctx.check(n.get("post_good", 0) > 0, "no POST response")
    errors = {k: v for k, v in n.items() if k.startswith("errors_") and v}
    ctx.check(not errors, "wrk errors: %s" % errors)
    if ctx.errors and first_bad:
        ctx.errors.append("first wrong response: %s" % first_bad)
    if CFG.counters and snap.before is not None:
        posts = n.get("post_good", 0) + n.get("post_bad", 0)
        try:
            after = read_counters()
            grew = after["handoff_method"] - snap.before["handoff_method"]
        except (OSError, KeyError) as e:
            ctx.check(False, "counters: %s: %s" % (type(e).__name__, e))
        else:
            ctx.check(grew >= posts, "handoff_method grew by %d, fewer than the %d "
                      "POST responses wrk saw" % (grew, posts))
            for name in FAILURE_COUNTERS:
                ctx.eq("growth of %s" % name, 0, after.get(name, 0) - snap.before.get(name, 0))


if __name__ == "__main__":
    sys.exit(main())
