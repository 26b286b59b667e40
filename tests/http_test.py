#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""HTTP integration tests for kweb: docs/behaviour.md, checked exactly.

    tests/http_test.py --host H --port P --docroot D [--only REGEX]
                       [--timeout S] [--identity UID:GID] [--list]

D is a docroot made by tests/make_docroot.py and served by the server under
test; this client runs on the same machine and reads the files (and
D/../manifest.json) to know what the answers must be. Output is TAP: `ok N -
name` or `not ok N - name` followed by `# ` diagnostics, then `# N passed,
N failed`; the exit status is 0 iff no test failed. Each test has its own
deadline (--timeout seconds, a multiple of it for the heavy ones), so a
server that hangs fails that test and the run goes on. Every response of
every test is also checked never to contain the marker of the file outside
the docroot nor a line of /etc/passwd.

--server-name (default kweb) is the expected Server field and error-page
signature; it only exists to check this client against another server.
"""

import calendar
import hashlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from email.utils import formatdate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import client_args, drop_not_light, slowest  # noqa: E402
from httplib_raw import (Connection, NoResponse, ProtocolError,  # noqa: E402
                         Timeout, format_host, show)

REASONS = {
    200: "OK", 206: "Partial Content", 301: "Moved Permanently",
    304: "Not Modified", 400: "Bad Request", 403: "Forbidden",
    404: "Not Found", 412: "Precondition Failed", 414: "URI Too Long",
    416: "Range Not Satisfiable",
    431: "Request Header Fields Too Large", 500: "Internal Server Error",
    501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}

MIME = {
    "html": "text/html", "htm": "text/html", "css": "text/css",
    "js": "text/javascript", "mjs": "text/javascript",
    "json": "application/json", "xml": "text/xml", "txt": "text/plain",
    "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg",
    "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
    "avif": "image/avif", "ico": "image/x-icon", "wasm": "application/wasm",
    "woff": "font/woff", "woff2": "font/woff2", "pdf": "application/pdf",
    "mp4": "video/mp4", "webm": "video/webm", "gz": "application/gzip",
}
DEFAULT_TYPE = "application/octet-stream"

DATE_SKEW = 120         # seconds allowed between Date and our clock
# Seconds to wait for EOF after a closing response; the debug guest
# (KASAN, lockdep, kmemleak under TCG) sets more in KWEB_CLOSE_WAIT.
CLOSE_WAIT = float(os.environ.get("KWEB_CLOSE_WAIT", "2"))
PASSWD_RE = re.compile(rb"(^|\n)root:[^\n]*:0:0:")

CFG = None              # argparse namespace, set by main()


# ---------------------------------------------------------------------------
# The docroot

def mime_of(rel):
    base = rel.rsplit("/", 1)[-1]
    ext = base.rsplit(".", 1)[1].lower() if "." in base else ""
    return MIME.get(ext, DEFAULT_TYPE)


def http_date(ts):
    return formatdate(ts, usegmt=True)


MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def parse_http_date(s):
    """IMF-fixdate to a timestamp, None unless exactly well formed."""
    m = re.fullmatch(r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (%s) ([0-9]{4}) "
                     r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT" % "|".join(MONTHS), s or "")
    if not m:
        return None
    d, mon, y, hh, mm, ss = m.groups()
    try:
        ts = calendar.timegm((int(y), MONTHS.index(mon) + 1, int(d),
                              int(hh), int(mm), int(ss), 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    return ts if http_date(ts) == s else None   # also checks weekday and ranges


class FileInfo:
    """What the server must send for a docroot file (symlinks followed)."""

    def __init__(self, rel):
        path = os.path.join(CFG.docroot, rel)
        st = os.stat(path)
        self.rel = rel
        self.size = st.st_size
        self.mtime = int(st.st_mtime)
        self.ctype = mime_of(rel)
        self.etag = '"%x-%x"' % (self.mtime, self.size)
        self.last_modified = http_date(self.mtime)
        self.path = path
        self._data = None

    @property
    def data(self):
        if self._data is None:
            with open(self.path, "rb") as f:
                self._data = f.read()
        return self._data


_files = {}


def F(rel):
    if rel not in _files:
        _files[rel] = FileInfo(rel)
    return _files[rel]


def quote(rel):
    return "/" + urllib.parse.quote(rel)


# ---------------------------------------------------------------------------
# Requests

def host_field():
    return "%s:%d" % (format_host(CFG.host), CFG.port)


def req(target="/small.txt", method="GET", version="HTTP/1.1", headers=(),
        host=True, body=b""):
    """A request head (plus body) as bytes; headers are 'Name: value' strs."""
    lines = ["%s %s %s" % (method, target, version)]
    if host:
        lines.append("Host: " + host_field())
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def error_body(code):
    cr = "%d %s" % (code, REASONS[code])
    return ("<html>\r\n<head><title>%s</title></head>\r\n<body>\r\n"
            "<center><h1>%s</h1></center>\r\n<hr><center>%s</center>\r\n"
            "</body>\r\n</html>\r\n" % (cr, cr, CFG.server)).encode()


# ---------------------------------------------------------------------------
# Test context and checks

class Ctx:
    def __init__(self, timeout):
        self.deadline = time.monotonic() + timeout
        self.errors = []
        self.conns = []
        self.last_raw = None            # the latest response
        self.fail_raw = None            # the latest response at the first error

    def connect(self, host=None):
        c = Connection(host or CFG.host, CFG.port, self.deadline, self.saw)
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
        """Field name present exactly once with value want (None: absent)."""
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


def check_common(ctx, resp, code):
    """What every response must have."""
    ctx.eq("status line", "HTTP/1.1 %d %s" % (code, REASONS[code]), resp.status_line)
    ctx.field(resp, "Server", CFG.server)
    dates = resp.all("Date")
    if ctx.eq("number of Date fields", 1, len(dates)):
        ts = parse_http_date(dates[0])
        if ctx.check(ts is not None, "Date is not an IMF-fixdate: %r" % dates[0]):
            ctx.check(abs(ts - (resp.head_time or time.time())) <= DATE_SKEW,
                      "Date %r is more than %d s from our clock (%s)" % (
                          dates[0], DATE_SKEW, http_date(time.time())))
    ctx.check(not resp.duplicates(), "duplicate fields: %s" % resp.duplicates())
    ctx.check(not resp.body_by_close, "no Content-Length: body delimited by close")


def check_file(ctx, resp, f, method="GET", rng=None, ctype=None, enc=None,
               vary=False):
    """A 200 (or with rng=(first, last), a 206) for FileInfo f: a
    precompressed file is sent in coding enc with the type ctype of what
    was asked for; vary when the path has precompressed files."""
    code = 206 if rng else 200
    first, last = rng or (0, f.size - 1)
    check_common(ctx, resp, code)
    ctx.field(resp, "Content-Type", ctype or f.ctype)
    ctx.field(resp, "Content-Encoding", enc)
    ctx.field(resp, "Vary", "Accept-Encoding" if vary else None)
    ctx.field(resp, "Content-Length", str(last - first + 1))
    ctx.field(resp, "Last-Modified", f.last_modified)
    ctx.field(resp, "ETag", f.etag)
    ctx.field(resp, "Accept-Ranges", None if rng else "bytes")
    ctx.field(resp, "Content-Range",
              "bytes %d-%d/%d" % (first, last, f.size) if rng else None)
    ctx.body(b"" if method == "HEAD" else f.data[first:last + 1], resp.body)


def check_error(ctx, resp, code, method="GET"):
    """An error response (or 301) with the contract's body."""
    check_common(ctx, resp, code)
    ctx.field(resp, "Content-Type", "text/html")
    ctx.field(resp, "Content-Length", str(len(error_body(code))))
    ctx.body(b"" if method == "HEAD" else error_body(code), resp.body)


def check_304(ctx, resp, f, enc=None, vary=False):
    check_common(ctx, resp, 304)
    for name in ("Content-Length", "Content-Type", "Content-Range"):
        ctx.field(resp, name, None)
    ctx.field(resp, "ETag", f.etag)
    ctx.field(resp, "Last-Modified", f.last_modified)
    ctx.field(resp, "Content-Encoding", enc)
    ctx.field(resp, "Vary", "Accept-Encoding" if vary else None)


def check_416(ctx, resp, f):
    """kweb's error page: none of the file's validators (as nginx)."""
    check_error(ctx, resp, 416)
    ctx.field(resp, "Content-Range", "bytes */%d" % f.size)
    ctx.field(resp, "ETag", None)
    ctx.field(resp, "Last-Modified", None)


def probe_open(ctx, conn, what="connection"):
    """The connection must answer another request."""
    try:
        resp = conn.request(req("/small.txt"))
    except (NoResponse, ProtocolError, Timeout, OSError) as e:
        return ctx.check(False, "%s should stay open, but a second request got: %s" % (what, e))
    return (ctx.eq("second request on the %s" % what, "HTTP/1.1 200 OK", resp.status_line)
            and ctx.body(F("small.txt").data, resp.body, "second response body"))


def probe_closed(ctx, conn, what="response"):
    state = conn.state(CLOSE_WAIT)
    return ctx.check(state in ("eof", "reset"), {
        "open": "connection still open %.0f s after a closing %s" % (CLOSE_WAIT, what),
        "data": "unexpected bytes after the %s: %s" % (what, show(conn.buf)),
    }.get(state, state))


def check_conn(ctx, conn, resp, mode):
    """mode: 'open' (HTTP/1.1 keep-alive: no Connection field), 'keep-alive'
    (HTTP/1.0 keep-alive: Connection: keep-alive) or 'close'."""
    ctx.field(resp, "Connection", None if mode == "open" else mode)
    if mode == "close":
        return probe_closed(ctx, conn, "%d response" % resp.code)
    return probe_open(ctx, conn)


# ---------------------------------------------------------------------------
# Registry and runner

TESTS = []      # (name, function, args, timeout factor)
NOT_LIGHT = {}  # name: why --light (the debug kernel) does without it


def add(name, fn, *args, factor=1, not_light=None):
    TESTS.append((name, fn, args, factor))
    if not_light:
        NOT_LIGHT[name] = not_light


def test(name, factor=1, not_light=None):
    def deco(fn):
        add(name, fn, factor=factor, not_light=not_light)
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
    ctx.close()


def main():
    global CFG
    ap = client_args(__doc__, port=8080, timeout_help="seconds per test "
                     "(heavy tests get a multiple)")
    ap.add_argument("--only", help="run only tests whose name matches this regex")
    ap.add_argument("--server-name", dest="server", default="kweb")
    ap.add_argument("--identity", default="65534:65534",
                    help="UID:GID the server opens files as (kweb's user= "
                         "and group=)")
    ap.add_argument("--list", action="store_true", help="list test names")
    ap.add_argument("--light", action="store_true",
                    help="leave out the repeats marked not_light (the debug "
                         "kernel, several times slower under TCG)")
    CFG = ap.parse_args()
    CFG.docroot = os.path.abspath(CFG.docroot)
    CFG.identity = tuple(int(x) for x in CFG.identity.split(":"))
    with open(os.path.join(os.path.dirname(CFG.docroot), "manifest.json")) as f:
        CFG.manifest = json.load(f)
    CFG.marker = CFG.manifest["secret_marker"]
    CFG.secret_path = os.path.join(os.path.dirname(CFG.docroot), "outside", "secret.txt")

    selected = [t for t in TESTS if not CFG.only or re.search(CFG.only, t[0])]
    if CFG.light:
        selected = drop_not_light(selected, NOT_LIGHT)
    if CFG.list:
        for name, *_ in selected:
            print(name)
        return 0
    print("1..%d" % len(selected))
    print("# kweb http_test: %s port %d, docroot %s" % (CFG.host, CFG.port, CFG.docroot))
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
# The tests. Each takes a Ctx (and its table row's arguments).

@test("docroot: files match manifest.json")
def t_manifest(ctx):
    for rel, m in sorted(CFG.manifest["files"].items()):
        if m["type"] != "file":
            continue
        f = F(rel)
        ctx.eq(rel + " size", m["size"], f.size)
        ctx.eq(rel + " mtime", m["mtime"], f.mtime)
        if os.access(f.path, os.R_OK):      # private files: only as root
            ctx.eq(rel + " sha256", m["sha256"], hashlib.sha256(f.data).hexdigest())
    with open(CFG.secret_path, "rb") as sf:
        ctx.check(CFG.marker.encode() in sf.read(), "secret file lacks its marker")


# -- files and MIME types ----------------------------------------------------

MIME_FILES = ["index.html", "a.html", "a.htm", "a.css", "a.js", "a.mjs",
              "a.json", "a.xml", "a.txt", "a.svg", "a.png", "a.jpg", "a.jpeg",
              "a.gif", "a.webp", "a.avif", "a.ico", "a.wasm", "a.woff",
              "a.woff2", "a.pdf", "a.mp4", "a.webm", "UPPER.PNG", "noext",
              "a.unknownext", ".dotfile", "small.txt", "empty.txt"]


def t_get_file(ctx, rel):
    conn = ctx.connect()
    check_file(ctx, conn.request(req(quote(rel))), F(rel))


for _rel in MIME_FILES:
    add("GET /%s: 200 %s" % (_rel, mime_of(_rel)), t_get_file, _rel)


def t_head(ctx, rel):
    """HEAD: GET's fields without Date, no body, then the connection works."""
    conn = ctx.connect()
    head = conn.request(req(quote(rel), "HEAD"), "HEAD")
    check_file(ctx, head, F(rel), "HEAD")
    get = conn.request(req(quote(rel)))     # also shows HEAD sent no body
    check_file(ctx, get, F(rel))

    def key(r):
        return sorted((n.lower(), v) for n, v in r.fields if n.lower() != "date")
    ctx.eq("HEAD fields vs GET fields", key(get), key(head))


for _rel in ["small.txt", "a.html", "a.png", "empty.txt", "noext", "big.bin"]:
    # The GET after the HEAD reads the whole file: 10 MiB for big.bin.
    add("HEAD /%s: GET's fields, no body, connection reusable" % _rel, t_head, _rel,
        factor=3 if _rel == "big.bin" else 1,
        not_light="HEAD of the other files; GET /big.bin" if _rel == "big.bin"
        else None)


# -- precompressed files ------------------------------------------------------

# Accept-Encoding, and the file (suffix) it must get for pre/app.js, which
# has both app.js.br and app.js.gz: br first, a q=0 refusal wins, "*" is
# every coding not named, none means identity (as nginx).
PRE_ACCEPT = [
    (None, ""), ("gzip", ".gz"), ("br", ".br"),
    ("gzip, deflate, br, zstd", ".br"), ("deflate, gzip", ".gz"),
    ("br;q=0, gzip", ".gz"), ("gzip;q=0.001", ".gz"), ("GZIP", ".gz"),
    ("x-gzip", ".gz"), ("*", ".br"), ("*;q=0", ""), ("br;q=0, *", ".gz"),
    ("gzip;q=0, br;q=0", ""), ("identity", ""), ("deflate", ""),
    ("gzip;q=1.5", ""), ("gzip;level=9", ""), ("", ""),
]
ENC_OF = {"": None, ".gz": "gzip", ".br": "br"}


def t_pre(ctx, rel, accept, suffix, times=2, method="GET", vary=True):
    """NAME or NAME.suffix, with NAME's type; twice: from the file, then
    from the cache."""
    fields = [] if accept is None else ["Accept-Encoding: " + accept]
    conn = ctx.connect()
    target = "/" + rel.rsplit("index.html", 1)[0] if rel.endswith(
        "index.html") else quote(rel)
    for _ in range(times):
        resp = conn.request(req(target, method, headers=fields), method)
        check_file(ctx, resp, F(rel + suffix), method, ctype=F(rel).ctype,
                   enc=ENC_OF[suffix], vary=vary)


for _ae, _sfx in PRE_ACCEPT:
    add("precompressed: Accept-Encoding %s: app.js%s" % (
        "absent" if _ae is None else repr(_ae), _sfx or " itself"),
        t_pre, "pre/app.js", _ae, _sfx)
add("precompressed: HEAD with br: app.js.br's fields, no body",
    t_pre, "pre/app.js", "br", ".br", 2, "HEAD")
add("precompressed: only a .gz: gzip gets it, br the file, with Vary",
    t_pre, "pre/only-gz.css", "gzip", ".gz")
add("precompressed: only a .gz, br asked for: the file, with Vary",
    t_pre, "pre/only-gz.css", "br", "")
add("precompressed: only a .br: br gets it",
    t_pre, "pre/only-br.svg", "gzip, br", ".br")
add("precompressed: dir/ with gzip: index.html.gz as text/html",
    t_pre, "pre/dir/index.html", "gzip", ".gz")
add("precompressed: variants the identity may not read: the file, no Vary",
    t_pre, "pre/priv.js", "gzip, br", "", 2, "GET", False)
add("precompressed: a directory named NAME.gz: the file, no Vary",
    t_pre, "pre/dirvar.js", "gzip", "", 2, "GET", False)
add("precompressed: a file without variants: no Vary, no coding",
    t_pre, "small.txt", "gzip, br", "", 2, "GET", False)
add("precompressed: NAME.gz asked for by name: its own type, no coding",
    t_pre, "pre/plain.txt.gz", "gzip", "", 2, "GET", False)


def t_pre_range(ctx):
    """Ranges and conditionals apply to the representation served."""
    f, gzf, base = F("pre/app.js.gz"), F("pre/app.js.gz"), F("pre/app.js")
    ae = "Accept-Encoding: gzip"
    conn = ctx.connect()
    resp = conn.request(req("/pre/app.js", headers=[ae, "Range: bytes=0-9"]))
    check_file(ctx, resp, gzf, rng=(0, 9), ctype=base.ctype, enc="gzip",
               vary=True)
    resp = conn.request(req("/pre/app.js", headers=[
        ae, "Range: bytes=%d-" % f.size]))
    check_416(ctx, resp, f)
    ctx.field(resp, "Content-Encoding", None)
    ctx.field(resp, "Vary", "Accept-Encoding")
    resp = conn.request(req("/pre/app.js", headers=[
        ae, "If-None-Match: " + gzf.etag]))
    check_304(ctx, resp, gzf, vary=True)
    # The uncompressed file's ETag is not the .gz's: 200.
    resp = conn.request(req("/pre/app.js", headers=[
        ae, "If-None-Match: " + base.etag]))
    check_file(ctx, resp, gzf, ctype=base.ctype, enc="gzip", vary=True)
    resp = conn.request(req("/pre/app.js", headers=[
        "If-None-Match: " + base.etag]))
    check_304(ctx, resp, base, vary=True)
    resp = conn.request(req("/pre/app.js", headers=[
        ae, "Range: bytes=0-4", "If-Range: " + base.etag]))
    check_file(ctx, resp, gzf, ctype=base.ctype, enc="gzip", vary=True)
    check_conn(ctx, conn, resp, "open")


add("precompressed: Range, If-Range, If-None-Match apply to the .gz",
    t_pre_range)


# -- big file ----------------------------------------------------------------

def t_big(ctx, ranges, times):
    """GET big.bin (or ranges of it) `times` times on one connection."""
    f = F("big.bin")
    conn = ctx.connect()
    for _ in range(times):
        for rng in ranges:
            hdr = ["Range: bytes=%d-%d" % rng] if rng else []
            resp = conn.request(req("/big.bin", headers=hdr))
            check_file(ctx, resp, f, rng=rng)


add("GET /big.bin: 10 MiB, exact bytes", t_big, [None], 1, factor=3)
add("GET /big.bin Range in the middle (2 MiB and 99 bytes)", t_big,
    [(4194304, 6291455), (5000001, 5000099)], 1, factor=3)
add("GET /big.bin twice on one keep-alive connection", t_big, [None], 2, factor=5,
    not_light="GET /big.bin once; keep-alive reuse after other files")


# -- what a cache miss reads (issue 33, defect 5) ---------------------------
# A miss reads and pins a file's pages only when the answer sends the
# whole file: HEAD, 304 and ranges are answered from the open file, and a
# file larger than the cache is sent from its pages, a batch at a time.
# /proc/net/kweb's pinned_bytes and cache_bytes tell; each test also shows
# a GET of the whole file moving them, so the counters can see a fill.

FILL_SIZE = 4 << 20     # cache_max_file's default: a GET caches it whole
PAGE = 4096


def kweb_counters():
    """/proc/net/kweb's counters, or None where there is none."""
    try:
        with open("/proc/net/kweb") as f:
            lines = [line.split() for line in f]
    except OSError:
        return None
    out = {p[0]: int(p[1]) for p in lines if len(p) == 2 and p[1].isdigit()}
    for p in lines:     # "listener ID port P ... cache_limit N ..."
        if p[:1] == ["listener"] and p[3:4] == [str(CFG.port)]:
            out["listener_cache_limit"] = int(p[p.index("cache_limit") + 1])
    return out


# kweb keeps no cache entry whose file or directories changed in the
# current timestamp tick (a chmod later in that tick would leave the same
# ctime): a test that wants a fresh file cached lets the tick pass.
SETTLE = 0.05


def fresh_file(name, size, seed, data=None):
    """A file no request has asked for yet, under the docroot's fill/,
    its timestamp tick past (SETTLE)."""
    d = os.path.join(CFG.docroot, "fill")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    rel = "fill/%d-%s" % (os.getpid(), name)
    path = os.path.join(CFG.docroot, rel)
    with open(path, "wb") as f:
        f.write(data if data is not None else
                random.Random(seed).randbytes(size))
    os.chmod(path, 0o644)
    time.sleep(SETTLE)
    return rel


def check_no_fill(ctx, before, what, size):
    """Neither pinned_bytes nor cache_bytes grew by a file of size."""
    if CFG.server != "kweb":
        return      # another server has no /proc/net/kweb
    after = kweb_counters()
    if not ctx.check(before is not None and after is not None,
                     "no /proc/net/kweb"):
        return
    for k in ("pinned_bytes", "cache_bytes"):
        ctx.check(after[k] - before[k] < size,
                  "%s: %s grew by %d: a %d-byte file was read whole" % (
                      what, k, after[k] - before[k], size))


def check_filled(ctx, before, what, low, high=None):
    """pinned_bytes grew by at least low (and less than high)."""
    if CFG.server != "kweb":
        return
    after = kweb_counters()
    if not ctx.check(before is not None and after is not None,
                     "no /proc/net/kweb"):
        return
    grew = after["pinned_bytes"] - before["pinned_bytes"]
    ctx.check(grew >= low and (high is None or grew < high),
              "%s: pinned_bytes grew by %d, want %d%s" % (
                  what, grew, low, "" if high is None else
                  " up to %d" % high))


@test("fill: HEAD of an uncached 4 MiB file: its fields, nothing read into "
      "the cache; then a GET fills it")
def t_fill_head(ctx):
    rel = fresh_file("head.bin", FILL_SIZE, 331)
    f = F(rel)
    conn = ctx.connect()
    before = kweb_counters()
    for _ in range(2):      # the second from what the first left
        check_file(ctx, conn.request(req(quote(rel), "HEAD"), "HEAD"), f,
                   "HEAD")
    check_no_fill(ctx, before, "2 HEADs", f.size)
    check_file(ctx, conn.request(req(quote(rel))), f)
    check_filled(ctx, before, "GET", f.size)
    check_conn(ctx, conn, conn.request(req(quote(rel), "HEAD"), "HEAD"),
               "open")


@test("fill: If-None-Match and If-Modified-Since on an uncached 4 MiB file: "
      "304, nothing read")
def t_fill_304(ctx):
    rel = fresh_file("304.bin", FILL_SIZE, 332)
    f = F(rel)
    conn = ctx.connect()
    before = kweb_counters()
    check_304(ctx, conn.request(req(quote(rel), headers=[
        "If-None-Match: " + f.etag])), f)
    check_304(ctx, conn.request(req(quote(rel), headers=[
        "If-Modified-Since: " + f.last_modified])), f)
    check_no_fill(ctx, before, "304", f.size)
    check_file(ctx, conn.request(req(quote(rel))), f)
    check_filled(ctx, before, "GET", f.size)


@test("fill: one-byte ranges of an uncached 4 MiB file: 206, those bytes, "
      "nothing read but their pages")
def t_fill_range(ctx):
    rel = fresh_file("range.bin", FILL_SIZE, 333)
    f = F(rel)
    conn = ctx.connect()
    before = kweb_counters()
    for rng, first in (("1000000-1000000", 1000000), ("-1", f.size - 1),
                       ("0-0", 0)):
        check_file(ctx, conn.request(req(quote(rel), headers=[
            "Range: bytes=" + rng])), f, rng=(first, first))
    check_no_fill(ctx, before, "ranges", f.size)
    check_file(ctx, conn.request(req(quote(rel))), f)
    check_filled(ctx, before, "GET", f.size)


@test("fill: an uncached file's .gz and .br: HEAD reads none of the three; "
      "GET with gzip reads the .gz, not the file")
def t_fill_pre(ctx):
    rel = fresh_file("pre.js", FILL_SIZE, 334)
    gz_rel = fresh_file("pre.js.gz", 2 << 20, 335)
    br_rel = fresh_file("pre.js.br", 2 << 20, 336)
    f, gzf, brf = F(rel), F(gz_rel), F(br_rel)
    conn = ctx.connect()
    before = kweb_counters()
    for ae, want, enc in (("gzip", gzf, "gzip"), ("br", brf, "br"),
                          ("identity", f, None)):
        resp = conn.request(req(quote(rel), "HEAD", headers=[
            "Accept-Encoding: " + ae]), "HEAD")
        check_file(ctx, resp, want, "HEAD", ctype=f.ctype, enc=enc,
                   vary=True)
    check_no_fill(ctx, before, "HEAD of each coding", gzf.size)
    before = kweb_counters()
    check_file(ctx, conn.request(req(quote(rel), headers=[
        "Accept-Encoding: gzip"])), gzf, ctype=f.ctype, enc="gzip",
        vary=True)
    check_filled(ctx, before, "GET with gzip", gzf.size, gzf.size + f.size)


@test("fill: a file larger than the cache: sent exactly (sha256), "
      "spliced, nothing pinned afterwards", factor=12,
      not_light="the 4 MiB fill tests take the same paths")
def t_fill_huge(ctx):
    c = kweb_counters()
    if not ctx.check(c and "listener_cache_limit" in c,
                     "no cache_limit for port %d in /proc/net/kweb" %
                     CFG.port):
        return
    size = c["listener_cache_limit"] + PAGE + 1
    data = random.Random(337).randbytes(size)
    rel = fresh_file("huge.bin", size, 0, data)
    try:
        conn = ctx.connect()
        for method in ("HEAD", "GET"):
            before = kweb_counters()
            resp = conn.request(req(quote(rel), method), method)
            check_common(ctx, resp, 200)
            ctx.field(resp, "Content-Length", str(size))
            if method == "GET":
                ctx.eq("body sha256", hashlib.sha256(data).hexdigest(),
                       hashlib.sha256(resp.body).hexdigest())
            check_no_fill(ctx, before, method, size)
        after = kweb_counters()
        ctx.check(after["body_bytes_spliced"] -
                  before["body_bytes_spliced"] >= size and
                  after["body_bytes_copied"] == before["body_bytes_copied"],
                  "spliced %d, copied %d of %d bytes" % (
                      after["body_bytes_spliced"] -
                      before["body_bytes_spliced"],
                      after["body_bytes_copied"] -
                      before["body_bytes_copied"], size))
    finally:
        os.unlink(os.path.join(CFG.docroot, rel))


# -- NAME.gz without NAME (issue 33, defect 10) --------------------------------
# nginx's gzip_static (and brotli_static) serve NAME.gz for NAME even when
# NAME does not exist; gzip_vary marks the 404 for a client that does not
# accept gzip.

@test("precompressed: no gzip to HTTP/1.0 or through a proxy (Via), as "
      "gzip_static's defaults; br all the same")
def t_gzip_proxied(ctx):
    f, gzf, brf = F("pre/app.js"), F("pre/app.js.gz"), F("pre/app.js.br")
    ctype = mime_of("pre/app.js")
    for version, more in (("HTTP/1.0", []), ("HTTP/1.1", ["Via: 1.1 cache"]),
                          ("HTTP/1.1", ["via: 1.0 a, 1.1 b"])):
        for method in ("GET", "HEAD"):
            conn = ctx.connect()
            check_file(ctx, conn.request(req(
                "/pre/app.js", method, version,
                ["Accept-Encoding: gzip"] + more), method), f, method,
                vary=True)
            conn = ctx.connect()
            check_file(ctx, conn.request(req(
                "/pre/app.js", method, version,
                ["Accept-Encoding: gzip, br"] + more), method), brf, method,
                ctype=ctype, enc="br", vary=True)
        # Without NAME, the .gz is all there is: 404, Vary (as nginx).
        conn = ctx.connect()
        resp = conn.request(req("/pre/gzonly.txt", "GET", version,
                                ["Accept-Encoding: gzip"] + more))
        check_error(ctx, resp, 404)
        ctx.field(resp, "Vary", "Accept-Encoding")
    conn = ctx.connect()
    check_file(ctx, conn.request(req("/pre/app.js", headers=[
        "Accept-Encoding: gzip"])), gzf, ctype=ctype, enc="gzip", vary=True)


@test("a file modified in the future: Last-Modified is Date (RFC 9110 "
      "8.8.2.1), the ETag its own; If-Modified-Since then gets 200")
def t_future_mtime(ctx):
    rel = fresh_file("future.txt", 100, 7)
    path = os.path.join(CFG.docroot, rel)
    ahead = int(time.time()) + 86400 * 365
    os.utime(path, (ahead, ahead))
    try:
        f = FileInfo(rel)
        for method in ("GET", "HEAD", "GET"):
            conn = ctx.connect()
            resp = conn.request(req(quote(rel), method), method)
            check_common(ctx, resp, 200)
            ctx.field(resp, "Last-Modified", resp.get("Date"))
            ctx.field(resp, "ETag", f.etag)
            ctx.body(b"" if method == "HEAD" else f.data, resp.body)
        conn = ctx.connect()
        resp = conn.request(req(quote(rel), headers=[
            "If-Modified-Since: " + resp.get("Date")]))
        check_common(ctx, resp, 200)
        ctx.body(f.data, resp.body)
        resp = conn.request(req(quote(rel), headers=[
            "If-None-Match: " + f.etag]))
        check_common(ctx, resp, 304)
        ctx.field(resp, "ETag", f.etag)
        ctx.field(resp, "Last-Modified", resp.get("Date"))
    finally:
        os.unlink(path)


@test("precompressed: NAME.gz without NAME: gzip gets it with NAME's type; "
      "HEAD, 304, Range and 416 on it")
def t_orphan_gz(ctx):
    gzf, ctype = F("pre/gzonly.txt.gz"), mime_of("pre/gzonly.txt")
    ae = "Accept-Encoding: gzip"
    conn = ctx.connect()
    for _ in range(2):
        check_file(ctx, conn.request(req("/pre/gzonly.txt", headers=[ae])),
                   gzf, ctype=ctype, enc="gzip", vary=True)
    check_file(ctx, conn.request(req("/pre/gzonly.txt", "HEAD",
                                     headers=[ae]), "HEAD"),
               gzf, "HEAD", ctype=ctype, enc="gzip", vary=True)
    check_304(ctx, conn.request(req("/pre/gzonly.txt", headers=[
        ae, "If-None-Match: " + gzf.etag])), gzf, vary=True)
    check_304(ctx, conn.request(req("/pre/gzonly.txt", headers=[
        ae, "If-Modified-Since: " + gzf.last_modified])), gzf, vary=True)
    check_file(ctx, conn.request(req("/pre/gzonly.txt", headers=[
        ae, "Range: bytes=0-9"])), gzf, rng=(0, 9), ctype=ctype,
        enc="gzip", vary=True)
    resp = conn.request(req("/pre/gzonly.txt", headers=[
        ae, "Range: bytes=%d-" % gzf.size]))
    check_416(ctx, resp, gzf)
    ctx.field(resp, "Vary", "Accept-Encoding")
    check_conn(ctx, conn, resp, "open")


@test("precompressed: NAME.gz without NAME, gzip not accepted: 404 with "
      "Vary; NAME.gz and NAME.br without NAME: each coding its own")
def t_orphan_404(ctx):
    conn = ctx.connect()
    for method in ("GET", "HEAD"):
        for fields in ([], ["Accept-Encoding: br"],
                       ["Accept-Encoding: gzip;q=0"]):
            resp = conn.request(req("/pre/gzonly.txt", method,
                                    headers=fields), method)
            check_error(ctx, resp, 404, method)
            ctx.field(resp, "Vary", "Accept-Encoding")
    # "dir/" is never NAME: as nginx, no NAME.gz is looked for.
    resp = conn.request(req("/pre/gzonly.txt/", headers=[
        "Accept-Encoding: gzip"]))
    check_error(ctx, resp, 404)
    ctx.field(resp, "Vary", None)
    ctype = mime_of("pre/nobase.js")
    for ae, sfx in (("gzip", ".gz"), ("br", ".br"), ("gzip, br", ".br"),
                    ("br;q=0, gzip", ".gz")):
        resp = conn.request(req("/pre/nobase.js", headers=[
            "Accept-Encoding: " + ae]))
        check_file(ctx, resp, F("pre/nobase.js" + sfx), ctype=ctype,
                   enc=ENC_OF[sfx], vary=True)
    resp = conn.request(req("/pre/nobase.js"))
    check_error(ctx, resp, 404)
    ctx.field(resp, "Vary", "Accept-Encoding")
    check_conn(ctx, conn, resp, "open")


# -- connection handling -----------------------------------------------------

KEEPALIVE = [
    # name, version, request fields, expected mode
    ("HTTP/1.1 default: no Connection field, stays open", "HTTP/1.1", [], "open"),
    ("HTTP/1.1 Connection: close: close + EOF", "HTTP/1.1", ["Connection: close"], "close"),
    ("HTTP/1.1 Connection: Close (case)", "HTTP/1.1", ["Connection: Close"], "close"),
    ("HTTP/1.1 Connection: close, foo", "HTTP/1.1", ["Connection: close, foo"], "close"),
    ("HTTP/1.1 Connection: foo,close", "HTTP/1.1", ["Connection: foo,close"], "close"),
    ("HTTP/1.1 two Connection fields, second close", "HTTP/1.1",
     ["Connection: foo", "Connection: close"], "close"),
    ("HTTP/1.1 Connection: keep-alive: stays open, no Connection field",
     "HTTP/1.1", ["Connection: keep-alive"], "open"),
    ("HTTP/1.0 default: Connection: close + EOF", "HTTP/1.0", [], "close"),
    ("HTTP/1.0 Connection: keep-alive: keep-alive, stays open", "HTTP/1.0",
     ["Connection: keep-alive"], "keep-alive"),
    ("HTTP/1.0 Connection: Keep-Alive (case)", "HTTP/1.0",
     ["Connection: Keep-Alive"], "keep-alive"),
    ("HTTP/1.0 Connection: foo, keep-alive", "HTTP/1.0",
     ["Connection: foo, keep-alive"], "keep-alive"),
    ("HTTP/1.0 Connection: close", "HTTP/1.0", ["Connection: close"], "close"),
]


def t_keepalive(ctx, version, headers, mode, target="/small.txt", code=200):
    conn = ctx.connect()
    resp = conn.request(req(target, version=version, headers=headers))
    if code == 200:
        check_file(ctx, resp, F(target[1:]))
    else:
        check_error(ctx, resp, code)
    check_conn(ctx, conn, resp, mode)


for _name, *_args in KEEPALIVE:
    add(_name, t_keepalive, *_args)
add("HTTP/1.0 404: Connection: close + EOF", t_keepalive, "HTTP/1.0", [], "close",
    "/missing.txt", 404)
add("HTTP/1.0 keep-alive 404: Connection: keep-alive, stays open", t_keepalive,
    "HTTP/1.0", ["Connection: keep-alive"], "keep-alive", "/missing.txt", 404)
add("HTTP/1.1 404 with Connection: close: close + EOF", t_keepalive, "HTTP/1.1",
    ["Connection: close"], "close", "/missing.txt", 404)


@test("HTTP/1.0 without Host: 200")
def t_10_nohost(ctx):
    conn = ctx.connect()
    check_file(ctx, conn.request(req(version="HTTP/1.0", host=False)), F("small.txt"))


@test("HTTP/1.0 keep-alive: 3 requests on one connection, the 4th closes")
def t_10_many(ctx):
    conn = ctx.connect()
    for rel in ("a.txt", "a.css", "small.txt"):
        resp = conn.request(req(quote(rel), version="HTTP/1.0",
                                headers=["Connection: keep-alive"]))
        check_file(ctx, resp, F(rel))
        ctx.field(resp, "Connection", "keep-alive")
    resp = conn.request(req("/a.js", version="HTTP/1.0"))
    check_file(ctx, resp, F("a.js"))
    check_conn(ctx, conn, resp, "close")


# -- pipelining and segmentation ---------------------------------------------

def t_pipeline(ctx, reqs, close_last=False):
    """reqs: (method, file, code); all sent in one send(), answered in order."""
    conn = ctx.connect()
    data = b""
    for i, (method, rel, _) in enumerate(reqs):
        last = close_last and i == len(reqs) - 1
        data += req(quote(rel), method, headers=["Connection: close"] if last else [])
    conn.send(data)
    resp = None
    for i, (method, rel, code) in enumerate(reqs):
        resp = conn.read_response(method)
        if code == 200:
            check_file(ctx, resp, F(rel), method)
        else:
            check_error(ctx, resp, code, method)
    check_conn(ctx, conn, resp, "close" if close_last else "open")


PIPELINES = [
    ("pipelined: 3 GETs in one send, answered in order",
     [("GET", "a.html", 200), ("GET", "a.css", 200), ("GET", "small.txt", 200)]),
    ("pipelined: GET + HEAD + GET",
     [("GET", "a.js", 200), ("HEAD", "a.png", 200), ("GET", "a.json", 200)]),
    ("pipelined: GET + 404 + HEAD 404 + GET",
     [("GET", "a.txt", 200), ("GET", "missing.txt", 404),
      ("HEAD", "missing.txt", 404), ("GET", "a.svg", 200)]),
    ("pipelined: 20 GETs of different files",
     [("GET", r, 200) for r in MIME_FILES[:20]]),
]
for _name, _reqs in PIPELINES:
    add(_name, t_pipeline, _reqs)
add("pipelined: 3 GETs, the last with Connection: close: 3 answers, then EOF",
    t_pipeline, [("GET", "a.xml", 200), ("GET", "a.gif", 200),
                 ("GET", "small.txt", 200)], True)


@test("pipelined: GET + malformed request: 200, 400 + close, EOF")
def t_pipeline_bad(ctx):
    conn = ctx.connect()
    conn.send(req("/a.txt") + b"GET  /small.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    check_file(ctx, conn.read_response(), F("a.txt"))
    resp = conn.read_response()
    check_error(ctx, resp, 400)
    check_conn(ctx, conn, resp, "close")


def t_body(ctx, split):
    """A GET with a 10-byte body, then a pipelined GET: both answered."""
    conn = ctx.connect()
    first = req("/a.txt", headers=["Content-Length: 10"])
    data = first + b"0123456789" + req("/small.txt")
    conn.send_parts([data[:len(first) + split], data[len(first) + split:]], 0.2)
    check_file(ctx, conn.read_response(), F("a.txt"))
    check_file(ctx, conn.read_response(), F("small.txt"))
    probe_open(ctx, conn)


add("GET with a 10-byte Content-Length body + pipelined GET: both answered",
    t_body, 10)
add("GET with a Content-Length body arriving 0.2 s after its head", t_body, 0)
add("GET with a Content-Length body split in two + pipelined GET", t_body, 4)


def t_expect(ctx, then, length=5):
    """Expect: 100-continue on a GET with content (issue 33): answered at
    once and closed, never a 100, so that no byte after the head is read
    as a request whatever comes next. then: what the client sends after
    the response: "body" (the content, then a request), "request" (no
    content: a proxy that never sends it), or "nothing"."""
    conn = ctx.connect()
    conn.send(req("/a.txt", headers=["Expect: 100-continue",
                                    "Content-Length: %d" % length]))
    resp = conn.read_response()
    check_file(ctx, resp, F("a.txt"))
    if not length:
        check_conn(ctx, conn, resp, "open")
        return
    ctx.field(resp, "Connection", "close")
    nxt = req("/small.txt")
    if then == "body":
        conn.send(b"x" * length + nxt)
    elif then == "request":
        conn.send(nxt)
    # Nothing more: not the next request, nor a 400 for its remains.
    probe_closed(ctx, conn)


add("Expect: 100-continue + 5-byte body sent after the response: 200, "
    "Connection: close, EOF", t_expect, "body")
add("Expect: 100-continue, body never sent, next request: 200, "
    "Connection: close, EOF, next request never read", t_expect, "request")
add("Expect: 100-continue, nothing more sent: 200, Connection: close, EOF",
    t_expect, "nothing")
add("Expect: 100-continue with Content-Length: 0: 200, stays open",
    t_expect, "request", 0)


def t_host_ok(ctx, host):
    """A valid Host (RFC 3986 3.2.2) is served, as nginx serves it."""
    conn = ctx.connect()
    resp = conn.request(("GET /small.txt HTTP/1.1\r\nHost: %s\r\n\r\n" %
                         host).encode("latin-1"))
    check_file(ctx, resp, F("small.txt"))
    check_conn(ctx, conn, resp, "open")


for _host in ("a~b.test", "a!b.test", "a%41.test", "a$&'()*+,;=b:80",
              "[v1.x]", "[::ffff:192.0.2.1]:8080", "example.com.:"):
    add("Host %s (valid): 200" % _host, t_host_ok, _host)


def t_split(ctx, parts, delay):
    """parts() gives the request in pieces, each sent in its own segment."""
    conn = ctx.connect()
    conn.send_parts([p.encode() for p in parts()], delay)
    resp = conn.read_response()
    check_file(ctx, resp, F("small.txt"))
    check_conn(ctx, conn, resp, "open")


def _head():
    return "GET /small.txt HTTP/1.1\r\nHost: %s\r\nAccept: */*\r\n\r\n" % host_field()


def _cut(*marks):
    """_head() cut after each of the given substrings (with its offset)."""
    def parts():
        s, out, at = _head(), [], 0
        for mark, off in marks:
            end = s.index(mark, at) + off
            out.append(s[at:end])
            at = end
        return out + [s[at:]]
    return parts


SPLITS = [
    ("request sent one byte at a time (5 ms apart)", lambda: list(_head()), 0.005),
    ("request split between CR and LF", _cut(("\r\n", 1)), 0.05),
    ("request split inside a field name", _cut(("Host", 2), ("Accept", 3)), 0.05),
    ("request split inside the method and the version", _cut(("GET", 2), ("HTTP", 3)), 0.05),
    ("request split inside the final CRLF CRLF", _cut(("\r\n\r\n", 3)), 0.05),
    ("request split between the final CRLF and CRLF", _cut(("\r\n\r\n", 2)), 0.05),
]
for _name, _parts, _delay in SPLITS:
    add(_name, t_split, _parts, _delay)


# Issue 33: the blank line in a segment of its own right after the
# request line was never parsed. Each head is sent a byte at a time, a
# line per segment, and cut in two at each line boundary.
SPLIT_HEADS = [
    # name, head ("{H}", "{HLF}": a Host field line, CRLF or LF), expected
    # code, connection
    ("HTTP/1.0 without fields", "GET /small.txt HTTP/1.0\r\n\r\n", 200, "close"),
    ("HTTP/1.1 without Host (400)", "GET /small.txt HTTP/1.1\r\n\r\n", 400,
     "close"),
    ("HTTP/1.1", "GET /small.txt HTTP/1.1\r\n{H}\r\n", 200, "open"),
    ("HTTP/1.1, bare LF", "GET /small.txt HTTP/1.1\n{HLF}\n", 200, "open"),
]


def _lines(head):
    """head cut after each LF: its lines, each ending in its LF."""
    out, at = [], 0
    while at < len(head):
        end = head.index(b"\n", at) + 1
        out.append(head[at:end])
        at = end
    return out


def t_split_head(ctx, head, code, mode, how):
    raw = head.replace("{H}", "Host: %s\r\n" % host_field()).replace(
        "{HLF}", "Host: %s\n" % host_field()).encode("latin-1")
    lines = _lines(raw)
    if how == "bytes":
        parts, delay = [raw[i:i + 1] for i in range(len(raw))], 0.005
    elif how == "lines":
        parts, delay = lines, 0.2
    else:
        cut = len(b"".join(lines[:how]))
        parts, delay = [raw[:cut], raw[cut:]], 0.2
    conn = ctx.connect()
    conn.send_parts(parts, delay)
    resp = conn.read_response()
    if code == 200:
        check_file(ctx, resp, F("small.txt"))
    else:
        check_error(ctx, resp, code)
    check_conn(ctx, conn, resp, mode)


for _name, _shead, _code, _mode in SPLIT_HEADS:
    add("split head %s: one byte per segment -> %d" % (_name, _code),
        t_split_head, _shead, _code, _mode, "bytes")
    add("split head %s: one line per segment -> %d" % (_name, _code),
        t_split_head, _shead, _code, _mode, "lines")
    for _k in range(1, _shead.count("\n")):
        add("split head %s: cut after line %d -> %d" % (_name, _k, _code),
            t_split_head, _shead, _code, _mode, _k)


# -- conditionals ------------------------------------------------------------

COND_REL = "a.css"
CONDITIONALS = [
    # name, method, request fields (from FileInfo), expected code
    ("If-None-Match: exact ETag", "GET", lambda f: ["If-None-Match: " + f.etag], 304),
    ("If-None-Match: W/ weak form", "GET", lambda f: ["If-None-Match: W/" + f.etag], 304),
    ("If-None-Match: list, match 2nd", "GET",
     lambda f: ['If-None-Match: "nope", %s, "other"' % f.etag], 304),
    ("If-None-Match: *", "GET", lambda f: ["If-None-Match: *"], 304),
    ("If-None-Match: no match", "GET", lambda f: ['If-None-Match: "1-2"'], 200),
    ("If-Modified-Since = Last-Modified", "GET",
     lambda f: ["If-Modified-Since: " + f.last_modified], 304),
    ("If-Modified-Since later than mtime", "GET",
     lambda f: ["If-Modified-Since: " + http_date(f.mtime + 86400)], 304),
    ("If-Modified-Since earlier than mtime", "GET",
     lambda f: ["If-Modified-Since: " + http_date(f.mtime - 1)], 200),
    ("If-Modified-Since garbage", "GET",
     lambda f: ["If-Modified-Since: yesterday-ish"], 200),
    ("two If-Modified-Since (a list: ignored, RFC 9110 13.1.3)", "GET",
     lambda f: ["If-Modified-Since: " + f.last_modified,
                "If-Modified-Since: " + f.last_modified], 200),
    ("If-None-Match empty (matches nothing) + If-Modified-Since match", "GET",
     lambda f: ["If-None-Match:", "If-Modified-Since: " + f.last_modified], 200),
    ("If-None-Match no match + If-Modified-Since match", "GET",
     lambda f: ['If-None-Match: "1-2"', "If-Modified-Since: " + f.last_modified], 200),
    ("If-None-Match match + If-Modified-Since earlier", "GET",
     lambda f: ["If-None-Match: " + f.etag, "If-Modified-Since: " + http_date(f.mtime - 1)], 304),
    ("HEAD If-None-Match", "HEAD", lambda f: ["If-None-Match: " + f.etag], 304),
    ("HEAD If-Modified-Since = Last-Modified", "HEAD",
     lambda f: ["If-Modified-Since: " + f.last_modified], 304),
    # RFC 9110 13.1.1 and 13.1.4, in 13.2.2's order (issue 33)
    ("If-Match: another ETag", "GET", lambda f: ['If-Match: "foo"'], 412),
    ("If-Match: the ETag", "GET", lambda f: ["If-Match: " + f.etag], 200),
    ("If-Match: list, match 2nd", "GET",
     lambda f: ['If-Match: "x", %s' % f.etag], 200),
    ("If-Match: weak form (strong comparison)", "GET",
     lambda f: ["If-Match: W/" + f.etag], 412),
    ("If-Match: *", "GET", lambda f: ["If-Match: *"], 200),
    ("If-Match: empty", "GET", lambda f: ["If-Match:"], 412),
    ("HEAD If-Match: another ETag", "HEAD", lambda f: ['If-Match: "foo"'], 412),
    ("If-Unmodified-Since = Last-Modified", "GET",
     lambda f: ["If-Unmodified-Since: " + f.last_modified], 200),
    ("If-Unmodified-Since earlier than mtime", "GET",
     lambda f: ["If-Unmodified-Since: " + http_date(f.mtime - 1)], 412),
    ("If-Unmodified-Since garbage (ignored)", "GET",
     lambda f: ["If-Unmodified-Since: yesterday-ish"], 200),
    ("If-Match match + If-Unmodified-Since earlier (ignored)", "GET",
     lambda f: ["If-Match: " + f.etag,
                "If-Unmodified-Since: " + http_date(f.mtime - 1)], 200),
    ("If-Match no match + If-None-Match match", "GET",
     lambda f: ['If-Match: "foo"', "If-None-Match: " + f.etag], 412),
    ("If-Match match + If-None-Match match", "GET",
     lambda f: ["If-Match: " + f.etag, "If-None-Match: " + f.etag], 304),
    ("If-Unmodified-Since earlier + If-Modified-Since match", "GET",
     lambda f: ["If-Unmodified-Since: " + http_date(f.mtime - 1),
                "If-Modified-Since: " + f.last_modified], 412),
    ("If-Match no match + Range", "GET",
     lambda f: ['If-Match: "foo"', "Range: bytes=0-3"], 412),
    ("If-Match twice (412, never a false success)", "GET",
     lambda f: ['If-Match: "foo"', "If-Match: " + f.etag], 412),
]


def t_cond(ctx, method, fields, code):
    f = F(COND_REL)
    conn = ctx.connect()
    resp = conn.request(req(quote(f.rel), method, headers=fields(f)), method)
    if code == 304:
        check_304(ctx, resp, f)
    elif code == 412:
        # The error page, none of the file's fields (as nginx).
        check_error(ctx, resp, 412, method)
        for name in ("ETag", "Last-Modified", "Accept-Ranges",
                     "Content-Range"):
            ctx.field(resp, name, None)
    else:
        check_file(ctx, resp, f, method)
    check_conn(ctx, conn, resp, "open")     # also shows a 304 had no body


for _name, _method, _fields, _code in CONDITIONALS:
    add("%s -> %d" % (_name, _code), t_cond, _method, _fields, _code)


# -- ranges ------------------------------------------------------------------

RANGES = [
    # name, file, request fields (from FileInfo), expected: code or (first, last)
    ("bytes=0-9", "small.txt", lambda f: ["Range: bytes=0-9"], lambda n: (0, 9)),
    ("bytes=10-", "small.txt", lambda f: ["Range: bytes=10-"], lambda n: (10, n - 1)),
    ("bytes=-5", "small.txt", lambda f: ["Range: bytes=-5"], lambda n: (n - 5, n - 1)),
    ("bytes=0-0", "small.txt", lambda f: ["Range: bytes=0-0"], lambda n: (0, 0)),
    ("bytes=last byte-", "small.txt",
     lambda f: ["Range: bytes=%d-" % (f.size - 1)], lambda n: (n - 1, n - 1)),
    ("bytes=5-(past the end): clamped", "small.txt",
     lambda f: ["Range: bytes=5-%d" % (f.size + 1000)], lambda n: (5, n - 1)),
    ("bytes=-(larger than the file): whole file as 206", "small.txt",
     lambda f: ["Range: bytes=-%d" % (f.size + 1000)], lambda n: (0, n - 1)),
    ("bytes=size-: 416", "small.txt", lambda f: ["Range: bytes=%d-" % f.size], 416),
    ("bytes=size-(size+10) (a beyond the end, RFC 9110): 416", "small.txt",
     lambda f: ["Range: bytes=%d-%d" % (f.size, f.size + 10)], 416),
    ("bytes=-0: 416", "small.txt", lambda f: ["Range: bytes=-0"], 416),
    # An empty file: a range from its start gets it whole, as nginx (RFC
    # 9110 14.1.1 calls bytes=-5 satisfiable, and no Content-Range fits).
    ("empty file bytes=0-: 200", "empty.txt", lambda f: ["Range: bytes=0-"], 200),
    ("empty file bytes=0-0: 200", "empty.txt", lambda f: ["Range: bytes=0-0"], 200),
    ("empty file bytes=-5: 200", "empty.txt", lambda f: ["Range: bytes=-5"], 200),
    ("empty file bytes=1-: 416", "empty.txt", lambda f: ["Range: bytes=1-"], 416),
    ("several ranges: 200 whole", "small.txt",
     lambda f: ["Range: bytes=0-1,5-6"], 200),
    ("1500 overlapping ranges: 200 whole", "small.txt",
     lambda f: ["Range: bytes=" + ",".join(["0-"] * 1500)], 200),
    ("bytes=0-99999999999999999999 (overflows u64): 200 whole", "small.txt",
     lambda f: ["Range: bytes=0-99999999999999999999"], 200),
    ("bytes=abc: 200 whole", "small.txt", lambda f: ["Range: bytes=abc"], 200),
    ("bytes=5-2 (bad syntax): 200 whole", "small.txt", lambda f: ["Range: bytes=5-2"], 200),
    ("items=0-5 (other unit): 200 whole", "small.txt", lambda f: ["Range: items=0-5"], 200),
    ("If-Range: the ETag: 206", "small.txt",
     lambda f: ["Range: bytes=0-9", "If-Range: " + f.etag], lambda n: (0, 9)),
    ("If-Range: another ETag: 200 whole", "small.txt",
     lambda f: ["Range: bytes=0-9", 'If-Range: "1-2"'], 200),
    ("If-Range: empty: 200 whole", "small.txt",
     lambda f: ["Range: bytes=0-9", "If-Range:"], 200),
    ("If-Range: weak ETag: 200 whole", "small.txt",
     lambda f: ["Range: bytes=0-9", "If-Range: W/" + f.etag], 200),
    ("If-Range: Last-Modified: 206", "small.txt",
     lambda f: ["Range: bytes=0-9", "If-Range: " + f.last_modified], lambda n: (0, 9)),
    ("If-Range: another date: 200 whole", "small.txt",
     lambda f: ["Range: bytes=0-9", "If-Range: " + http_date(f.mtime + 1)], 200),
]


def t_range(ctx, rel, fields, expect, method="GET"):
    f = F(rel)
    conn = ctx.connect()
    resp = conn.request(req(quote(rel), method, headers=fields(f)), method)
    if expect == 416:
        check_416(ctx, resp, f)
    elif expect == 200:
        check_file(ctx, resp, f, method)
    else:
        check_file(ctx, resp, f, rng=expect(f.size))
    check_conn(ctx, conn, resp, "open")


for _name, _rel, _fields, _expect in RANGES:
    add("Range %s /%s" % (_name, _rel), t_range, _rel, _fields, _expect)
add("Range on HEAD: 200 header fields, no body", t_range, "small.txt",
    lambda f: ["Range: bytes=0-9"], 200, "HEAD")


# -- paths -------------------------------------------------------------------

PATHS = [
    # target, expected: file served, ("301", Location) or an error code
    ("/", "index.html"),
    ("/index.html", "index.html"),
    ("/dir/", "dir/index.html"),
    ("/dir/sub/", "dir/sub/index.html"),
    ("/dir", ("301", "/dir/")),
    ("/dir/sub", ("301", "/dir/sub/")),
    ("//dir", ("301", "/dir/")),          # never "//dir/": another host
    ("/dir/../dir", ("301", "/dir/")),
    ("/%64ir", ("301", "/dir/")),
    ("/noindex/", 403),
    ("/noindex/file.txt", "noindex/file.txt"),
    ("/privindex/", 403),
    ("/missing.txt", 404),
    ("/" + "a" * 300, 404),               # a name over NAME_MAX, as nginx
    ("/dir/missing/", 404),
    ("/small.txt/", 404),
    ("/hello%20world.txt", "hello world.txt"),
    ("/%73mall.txt", "small.txt"),
    ("/dir/../small.txt", "small.txt"),
    ("/dir/sub/../../small.txt", "small.txt"),
    ("/dir/%2e%2e/small.txt", "small.txt"),
    ("//small.txt", "small.txt"),
    ("/./small.txt", "small.txt"),
    ("/dir//./page.txt", "dir/page.txt"),
    ("/dir%2Fpage.txt", "dir/page.txt"),
    ("/%2e%2e/etc/passwd", 400),
    ("/../etc/passwd", 400),
    ("/..", 400),
    ("/..%2f..%2fetc%2fpasswd", 400),
    ("/dir/../../outside/secret.txt", 400),
    ("/%2e%2e%2foutside%2fsecret.txt", 400),
    ("/a%00b", 400),
    ("/%zz", 400),
    ("/%2", 400),
    ("/a%0ab", 400),
    ("/a%7fb", 400),
    ("/small.txt#frag", 400),
    ("/private.txt", 403),
    ("/fifo", 403),
    ("/link-in.txt", "small.txt"),
    ("/link-dir/", "dir/index.html"),
    ("/link-dir/page.txt", "dir/page.txt"),
    ("/link-dir", ("301", "/link-dir/")),
    ("/link-abs-out", 403),
    ("/link-rel-out", 403),
    ("/link-dangling", 404),
    ("http://{host}/small.txt", "small.txt"),   # absolute-form
    # absolute-form: its authority is checked as Host is (issue 33)
    ("http://a~b.test/small.txt", "small.txt"),
    ("http://a!b.test:80/small.txt", "small.txt"),
    ("http://a%41.test/small.txt", "small.txt"),
    ("HTTP://[::1]:80/small.txt", "small.txt"),
    ("http://[v1.x]/small.txt", "small.txt"),
    ("http://host:9000:80/small.txt", 400),
    ("http://[ab..cd::1]/small.txt", 400),
    ("http://[::1/small.txt", 400),
    ("http://::1]/small.txt", 400),
    ("http://a..b/small.txt", 400),
    ("http://a%zz/small.txt", 400),
    ("http://:80/small.txt", 400),
    ("http://[fe80::1%25eth0]/small.txt", 400),
    ("http://a\xe9b/small.txt", 400),
    ("http://a@b.test/small.txt", 400),
]


def t_path(ctx, target, expect, method="GET"):
    conn = ctx.connect()
    resp = conn.request(req(target.replace("{host}", host_field()), method), method)
    if isinstance(expect, str):
        check_file(ctx, resp, F(expect), method)
    elif isinstance(expect, tuple):
        check_error(ctx, resp, 301, method)
        ctx.field(resp, "Location", expect[1])
    else:
        check_error(ctx, resp, expect, method)
    check_conn(ctx, conn, resp, "close" if expect == 400 else "open")


for _target, _expect in PATHS:
    _desc = ("200 /" + _expect if isinstance(_expect, str) else
             "301 Location: " + _expect[1] if isinstance(_expect, tuple) else str(_expect))
    add("path %s -> %s" % (_target.replace("{host}", "HOST"), _desc), t_path, _target, _expect)


def t_utf8(ctx):
    rel = CFG.manifest["utf8_name"]
    t_path(ctx, quote(rel), rel)


add("path /<percent-encoded UTF-8 name> -> 200", t_utf8)
add("path HEAD /dir -> 301 fields, no body", t_path, "/dir", ("301", "/dir/"), "HEAD")


# -- the identity files are opened as ------------------------------------------
# kweb looks files up and opens them as user=/group= (--identity; default
# 65534:65534, nobody:nogroup) with no capabilities and no supplementary
# groups, as nginx's workers do as www-data: what that identity cannot
# reach is 403 (nginx's answer to EACCES), even a name that does not exist
# in a directory it cannot search. "identity" names these for --only.

def _own(uid=None, gid=None):
    """200 for the file if the identity's uid (or gid) is this, else 403."""
    return lambda u, g: "" if (uid is not None and u == uid or
                               gid is not None and g == gid) else 403


IDENTITY_PATHS = [
    # target, what: "" (the file), a status, ("301", Location), or a rule
    ("/private/open.txt", 403, "0644 file in a 0700 root dir"),
    ("/private/", 403, "0700 root dir's index.html"),
    ("/private/missing.txt", 403, "missing file in a 0700 root dir, not 404"),
    ("/private", 403, "the 0700 dir itself: nginx cannot open it, no 301"),
    ("/owned/root0640.txt", 403, "root:root 0640"),
    ("/owned/nobody0600.txt", _own(uid=65534), "nobody:nogroup 0600: 200 iff user 65534"),
    ("/owned/uid1000.txt", _own(uid=1000), "1000:1000 0600: 200 iff user 1000"),
    ("/owned/gid1000.txt", _own(gid=1000), "root:1000 0640: 200 iff group 1000"),
    ("/owned/gid4242.txt", 403, "root:4242 0640: no supplementary groups"),
]


def t_identity(ctx, target, what):
    if callable(what):
        what = what(*CFG.identity)
    if what == "":
        what = target.lstrip("/")
    t_path(ctx, target, what)
    if what == 403:     # HEAD too: the same status, no body
        t_path(ctx, target, what, "HEAD")


for _target, _what, _desc in IDENTITY_PATHS:
    add("identity %s -> %s" % (_target, _desc), t_identity, _target, _what)


# -- errors ------------------------------------------------------------------

def _raw(s):
    """A raw request; '{H}' stands for a valid Host field line."""
    return lambda: s.replace("{H}", "Host: %s\r\n" % host_field()).encode("latin-1")


def _fields(*lines, body=""):
    """GET /small.txt with a Host field, these field lines and body."""
    return _raw("GET /small.txt HTTP/1.1\r\n{H}" + "".join(l + "\r\n" for l in lines)
                + "\r\n" + body)


# Requests kweb hands to the backend (other methods, queries, other HTTP
# versions, transfer codings) are tests/handoff_test.py's.
BAD = [
    # name, raw request, expected code
    ("missing Host in HTTP/1.1", _raw("GET /small.txt HTTP/1.1\r\n\r\n"), 400),
    ("Host with two ports", _raw("GET /small.txt HTTP/1.1\r\nHost: a:9000:80\r\n\r\n"), 400),
    ("Host with userinfo", _raw("GET /small.txt HTTP/1.1\r\nHost: a@b.test\r\n\r\n"), 400),
    ("Host [ without ]", _raw("GET /small.txt HTTP/1.1\r\nHost: [::1\r\n\r\n"), 400),
    ("Host bad IPv6", _raw("GET /small.txt HTTP/1.1\r\nHost: [ab..cd::1]\r\n\r\n"), 400),
    ("Host bad escape", _raw("GET /small.txt HTTP/1.1\r\nHost: a%zz\r\n\r\n"), 400),
    ("valid Host, bad absolute-form authority",
     _raw("GET http://a:b/small.txt HTTP/1.1\r\n{H}\r\n"), 400),
    ("valid absolute-form, bad Host",
     _raw("GET http://a/small.txt HTTP/1.1\r\nHost: a/b\r\n\r\n"), 400),
    ("two Host fields", _fields("Host: x"), 400),
    ("double space in request line", _raw("GET  /small.txt HTTP/1.1\r\n{H}\r\n"), 400),
    ("double space before version", _raw("GET /small.txt  HTTP/1.1\r\n{H}\r\n"), 400),
    ("no version (HTTP/0.9 style)", _raw("GET /small.txt\r\n\r\n"), 400),
    ("garbage request line", _raw("hello\r\n{H}\r\n"), 400),
    ("bad version syntax HTTP/1.1x", _raw("GET /small.txt HTTP/1.1x\r\n{H}\r\n"), 400),
    ("target not starting with /", _raw("GET small.txt HTTP/1.1\r\n{H}\r\n"), 400),
    ("space before colon", _fields("X-Foo : bar"), 400),
    ("field line without colon", _fields("X-Foo bar"), 400),
    ("empty field name", _fields(": bar"), 400),
    ("obs-fold", _fields("X-Foo: a", "  b"), 400),
    ("bare CR in a field", _fields("X-Foo: a\rb"), 400),
    ("NUL in a field value", _fields("X-Foo: a\x00b"), 400),
    ("CTL 0x01 in a field value", _fields("X-Foo: a\x01b"), 400),
    ("Content-Length + Transfer-Encoding",
     _fields("Content-Length: 5", "Transfer-Encoding: chunked", body="0\r\n\r\n"), 400),
    ("two Content-Length fields",
     _fields("Content-Length: 5", "Content-Length: 5", body="abcde"), 400),
    ("non-numeric Content-Length", _fields("Content-Length: abc"), 400),
    ("negative Content-Length", _fields("Content-Length: -1"), 400),
]


def t_bad(ctx, make, code):
    conn = ctx.connect()
    resp = conn.request(make())
    check_error(ctx, resp, code)
    check_conn(ctx, conn, resp, "close")


for _name, _make, _code in BAD:
    add("%d for %s, Connection: close + EOF" % (_code, _name), t_bad, _make, _code)


@test("HEAD /missing.txt: 404 header fields, no body, stays open")
def t_head_404(ctx):
    conn = ctx.connect()
    resp = conn.request(req("/missing.txt", "HEAD"), "HEAD")
    check_error(ctx, resp, 404, "HEAD")
    check_conn(ctx, conn, resp, "open")


# -- concurrency and robustness ----------------------------------------------

@test("parallel keep-alive connections (50, --light 20) x 5 files each",
      factor=3)
def t_parallel(ctx):
    # The debug kernel's lockdep and KASAN see the same paths with fewer:
    # 50 there took past the test's deadline on a slow host.
    n, files = (20 if CFG.light else 50), MIME_FILES[:25]
    barrier = threading.Barrier(n, timeout=max(1, ctx.deadline - time.monotonic()))
    errs = []

    def worker(i):
        try:
            conn = ctx.connect()
            barrier.wait()
            for k in range(5):
                rel = files[(i + k) % len(files)]
                resp = conn.request(req(quote(rel)))
                if resp.code != 200 or resp.body != F(rel).data:
                    errs.append("conn %d /%s: %s, %d bytes" % (
                        i, rel, resp.status_line, len(resp.body)))
        except Exception as e:
            barrier.abort()
            errs.append("conn %d: %s: %s" % (i, type(e).__name__, e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.1, ctx.deadline - time.monotonic()))
    ctx.check(not errs, "%d failures, first: %s" % (len(errs), errs[:3]))


@test("200 sequential short connections (Connection: close / HTTP/1.0)", factor=3,
      not_light="every other test's connections open and close")
def t_sequential(ctx):
    f = F("small.txt")
    for i in range(200):
        conn = ctx.connect()
        version, hdr = ("HTTP/1.0", []) if i % 2 else ("HTTP/1.1", ["Connection: close"])
        resp = conn.request(req(version=version, headers=hdr))
        ok = (ctx.eq("connection %d" % i, "HTTP/1.1 200 OK", resp.status_line)
              and ctx.body(f.data, resp.body) and probe_closed(ctx, conn))
        conn.close()
        ctx.conns.remove(conn)
        if not ok:
            break


def fresh_request_works(ctx):
    conn = ctx.connect()
    check_file(ctx, conn.request(req("/small.txt")), F("small.txt"))


def t_abort(ctx, make, read, rst, times=3):
    """Send make() (bytes), read `read` bytes of the answer, close or RST;
    then the server must still answer a fresh connection."""
    for _ in range(times):
        conn = ctx.connect()
        conn.send(make())
        conn.read_at_least(read, "the start of the response")
        conn.reset() if rst else conn.close()
    time.sleep(0.2)
    fresh_request_works(ctx)


add("client closes after 1 byte of /big.bin; server still works", t_abort,
    lambda: req("/big.bin"), 1, False, factor=2)
add("client RSTs after 1 byte of /big.bin; server still works", t_abort,
    lambda: req("/big.bin"), 1, True, factor=2)
add("client RSTs in the middle of a request head; server still works", t_abort,
    lambda: b"GET /small.txt HTTP/1.1\r\nHo", 0, True)
add("client closes in the middle of a request body; server still works", t_abort,
    lambda: req("/small.txt", headers=["Content-Length: 100"], body=b"x" * 10), 0, False)
add("client closes right after a pipelined burst; server still works", t_abort,
    lambda: req("/a.png") * 10, 0, False)


@test("an idle and a half-sent connection do not block another client")
def t_idle(ctx):
    ctx.connect()
    ctx.connect().send(b"GET /small.txt HTTP/1.1\r\nHo")
    time.sleep(0.2)
    fresh_request_works(ctx)


@test("GET /fifo does not block the server")
def t_fifo_others(ctx):
    conn = ctx.connect()
    conn.send(req("/fifo"))
    fresh_request_works(ctx)
    check_error(ctx, conn.read_response(), 403)


@test("the same port answers IPv4 and IPv6 clients")
def t_families(ctx):
    if CFG.host not in ("127.0.0.1", "::1", "localhost"):
        return          # only checked on loopback
    for host in ("127.0.0.1", "::1"):
        try:
            conn = ctx.connect(host)
        except OSError as e:
            ctx.check(False, "connect to %s port %d: %s" % (host, CFG.port, e))
            continue
        check_file(ctx, conn.request(req("/small.txt")), F("small.txt"))



# -- permissions and mounts on the way to a cached file ----------------------
# A cached file follows the directories on its path (docs/behaviour.md,
# "Paths"): chmod, chown, setfacl or a mount on any of them takes effect
# at the next request, as for a file never served. Each test serves a
# file twice (the second from the cache: cache_hits moves), changes a
# directory, and expects what an uncached sibling gets.

PROC = "/proc/net/kweb"


def _cache_hits():
    with open(PROC) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[0] == "cache_hits":
                return int(p[1])
    return 0


def _get(ctx, target, port=None, host=None):
    """One request on a connection of its own: (status, body)."""
    c = Connection(CFG.host, port or CFG.port, ctx.deadline, ctx.saw)
    ctx.conns.append(c)
    h = ["Host: " + host] if host else []
    r = c.request(req(target, host=host is None, headers=h))
    return r.code, r.body


def _perm_tree(name):
    """docroot/NAME/sub/{a,b}.html, dirs 0755 and files 0644 of root's."""
    top = os.path.join(CFG.docroot, name)
    _perm_rm(top)
    os.makedirs(os.path.join(top, "sub"))
    for f in ("a.html", "b.html"):
        path = os.path.join(top, "sub", f)
        with open(path, "wb") as fh:
            fh.write(("%s/sub/%s\n" % (name, f)).encode())
        os.chmod(path, 0o644)
    os.chmod(top, 0o755)
    os.chmod(os.path.join(top, "sub"), 0o755)
    time.sleep(SETTLE)
    return top


def _perm_rm(top):
    subprocess.run(["umount", "-R", os.path.join(top, "sub")],
                   capture_output=True)
    if os.path.isdir(top):
        for d, _, _ in os.walk(top):
            os.chmod(d, 0o755)
    subprocess.run(["rm", "-rf", top], capture_output=True)


def _cached(ctx, name):
    """GET /NAME/sub/a.html twice: 200 both times, the second a hit."""
    time.sleep(SETTLE)      # past the tick of the setup's last change
    want = ("%s/sub/a.html\n" % name).encode()
    for i in (0, 1):
        hits = _cache_hits()
        code, body = _get(ctx, "/%s/sub/a.html" % name)
        if not ctx.check(code == 200 and body == want,
                         "before: %d %r" % (code, body[:60])):
            return False
    return ctx.check(_cache_hits() > hits, "second GET was no cache hit")


def _expect(ctx, name, code, what, rel="a.html", body=None):
    got, data = _get(ctx, "/%s/sub/%s" % (name, rel))
    ctx.check(got == code and (body is None or data == body),
              "%s: /%s/sub/%s gave %d %r, expected %d %r" % (
                  what, name, rel, got, data[:40], code, body))


def t_perm(ctx, change, undo):
    """change(top) makes NAME or NAME/sub unsearchable by the identity: the cached a.html and the uncached b.html give 403; undo
    (top) gives both back."""
    name = "perm-%s-%d" % (change.__name__.strip("_"), os.getpid())
    top = _perm_tree(name)
    try:
        if not _cached(ctx, name):
            return
        change(top)
        _expect(ctx, name, 403, "uncached sibling", "b.html")
        _expect(ctx, name, 403, "cached file")
        undo(top)
        _expect(ctx, name, 200, "after undo",
                body=("%s/sub/a.html\n" % name).encode())
    finally:
        _perm_rm(top)


def _chmod700(top):
    os.chmod(top, 0o700)


def _chmod755(top):
    os.chmod(top, 0o755)


def _chmod_sub700(top):
    os.chmod(os.path.join(top, "sub"), 0o700)


def _chmod_sub755(top):
    os.chmod(os.path.join(top, "sub"), 0o755)


def _chown_other(top):
    # 0750, group the identity's: searchable; then root's group: not.
    os.chown(top, 0, 0)


def _chown_ident(top):
    os.chown(top, 0, CFG.identity[1])


def _setfacl_deny(top):
    subprocess.run(["setfacl", "-m", "u:%d:-" % CFG.identity[0], top],
                   check=True, capture_output=True)


def _setfacl_undo(top):
    subprocess.run(["setfacl", "-b", top], check=True, capture_output=True)


def t_perm_chown(ctx):
    name = "perm-chown-%d" % os.getpid()
    top = _perm_tree(name)
    try:
        if CFG.identity[1] == 0:
            return
        _chown_ident(top)
        os.chmod(top, 0o750)
        if not _cached(ctx, name):
            return
        _chown_other(top)
        _expect(ctx, name, 403, "uncached sibling", "b.html")
        _expect(ctx, name, 403, "cached file")
        _chown_ident(top)
        _expect(ctx, name, 200, "after chown back")
    finally:
        _perm_rm(top)


def t_perm_acl(ctx):
    if not shutil.which("setfacl"):
        print("# setfacl not installed (package acl): ACL case skipped")
        return
    t_perm(ctx, _setfacl_deny, _setfacl_undo)


def t_perm_mount(ctx):
    """A tmpfs mounted over NAME/sub hides a.html: 404 as for any file the
    new view lacks; a file there is served; unmounted, a.html again."""
    name = "perm-mount-%d" % os.getpid()
    top = _perm_tree(name)
    sub = os.path.join(top, "sub")
    try:
        if not _cached(ctx, name):
            return
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755",
                            "kweb-perm", sub], capture_output=True, text=True)
        if not ctx.check(r.returncode == 0, "mount: %s" % r.stderr):
            return
        with open(os.path.join(sub, "b.html"), "wb") as fh:
            fh.write(b"mounted b\n")
        os.chmod(os.path.join(sub, "b.html"), 0o644)
        _expect(ctx, name, 404, "cached file under a mount")
        _expect(ctx, name, 200, "a file of the mount", "b.html",
                b"mounted b\n")
        subprocess.run(["umount", sub], check=True, capture_output=True)
        _expect(ctx, name, 200, "after umount",
                body=("%s/sub/a.html\n" % name).encode())
    finally:
        _perm_rm(top)


def t_perm_file_mount(ctx):
    """A file bind-mounted over the cached file is what is served."""
    name = "perm-fmount-%d" % os.getpid()
    top = _perm_tree(name)
    a = os.path.join(top, "sub", "a.html")
    b = os.path.join(top, "sub", "b.html")
    try:
        if not _cached(ctx, name):
            return
        r = subprocess.run(["mount", "--bind", b, a], capture_output=True,
                           text=True)
        if not ctx.check(r.returncode == 0, "mount --bind: %s" % r.stderr):
            return
        try:
            _expect(ctx, name, 200, "file mounted over", "a.html",
                    ("%s/sub/b.html\n" % name).encode())
        finally:
            subprocess.run(["umount", a], capture_output=True)
        _expect(ctx, name, 200, "after umount",
                body=("%s/sub/a.html\n" % name).encode())
    finally:
        _perm_rm(top)


def t_perm_file_chmod(ctx):
    name = "perm-fchmod-%d" % os.getpid()
    top = _perm_tree(name)
    a = os.path.join(top, "sub", "a.html")
    try:
        if not _cached(ctx, name):
            return
        os.chmod(a, 0)
        _expect(ctx, name, 403, "cached file chmod 000")
        os.chmod(a, 0o644)
        _expect(ctx, name, 200, "after chmod 644")
    finally:
        _perm_rm(top)


add("perm: cached file, chmod 700 on a directory two up -> 403, back -> 200",
    t_perm, _chmod700, _chmod755)
add("perm: cached file, chmod 700 on its own directory -> 403, back -> 200",
    t_perm, _chmod_sub700, _chmod_sub755)
add("perm: cached file, chown of a 0750 directory away from the identity's "
    "group -> 403, back -> 200", t_perm_chown)
add("perm: cached file, setfacl u:IDENTITY:- on a directory -> 403, "
    "setfacl -b -> 200", t_perm_acl)
add("perm: cached file, tmpfs mounted over its directory -> 404, the "
    "mount's file 200, umount -> 200", t_perm_mount)
add("perm: cached file, another file bind-mounted over it is served, "
    "umount -> 200", t_perm_file_mount)
add("perm: cached file, chmod 000 on the file -> 403, back -> 200",
    t_perm_file_chmod)



# -- virtual hosts: symlinks stay in their host's directory ------------------
# A listener with vhosts on, added with kwebctl (userctl/kwebctl, or
# $KWEB_KWEBCTL; without it these are skipped), on a docroot of its own:
# a symlink may lead anywhere inside its host's directory, never out of
# it (403, as nginx's disable_symlinks refusing a link). A listener
# without vhosts on the same docroot follows it as before. Taking a
# host's directory away (chmod 700) takes its cached files away too.

VH_PORT = 8062          # the vhosts listener's
VH_PLAIN_PORT = 8063    # the same docroot without vhosts


def _kwebctl():
    path = os.environ.get("KWEB_KWEBCTL") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "userctl", "kwebctl")
    return path if os.access(path, os.X_OK) else None


def _vh_tree(root):
    files = {
        "a.example/index.html": b"a\n",
        "a.example/own/x.txt": b"a own\n",
        "b.example/index.html": b"b\n",
        "b.example/secret.txt": b"b secret\n",
        "default/index.html": b"default\n",
        "top.txt": b"docroot top\n",
    }
    links = {
        "a.example/link-own": "own/x.txt",
        "a.example/link-dir": "own",
        "a.example/link-b": "../b.example/secret.txt",
        "a.example/dir-b": "../b.example",
        "a.example/link-top": "../top.txt",
        "default/link-a": "../a.example/index.html",
        "alias.example": "a.example",
    }
    shutil.rmtree(root, ignore_errors=True)
    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        os.chmod(path, 0o644)
    for rel, target in links.items():
        os.symlink(target, os.path.join(root, rel))
    for d, _, _ in os.walk(root):
        os.chmod(d, 0o755)
    time.sleep(SETTLE)


def _listener(kwebctl, port, root, *extra):
    r = subprocess.run([kwebctl, "-j", "listener", "add", "port", str(port),
                        "docroot", root] + list(extra),
                       capture_output=True, text=True, timeout=30)
    if r.returncode:
        raise ProtocolError("kwebctl listener add: %s" % r.stderr.strip())
    return str(json.loads(r.stdout)[0]["id"])


def _listener_del(kwebctl, lid):
    subprocess.run([kwebctl, "listener", "del", lid], capture_output=True,
                   timeout=30)


def _vh_run(ctx, body):
    kwebctl = _kwebctl()
    if not kwebctl:
        print("# no kwebctl (make kwebctl, or KWEB_KWEBCTL): skipped")
        return
    root = os.path.join(os.path.dirname(CFG.docroot),
                        "vh-perm-%d" % os.getpid())
    _vh_tree(root)
    lids = []
    try:
        lids.append(_listener(kwebctl, VH_PORT, root, "vhosts", "yes"))
        lids.append(_listener(kwebctl, VH_PLAIN_PORT, root))
        body(ctx, root)
    finally:
        for lid in lids:
            _listener_del(kwebctl, lid)
        for d, _, _ in os.walk(root):
            os.chmod(d, 0o755)
        shutil.rmtree(root, ignore_errors=True)


def _vh_expect(ctx, host, target, code, body=None, port=VH_PORT):
    got, data = _get(ctx, target, port, host)
    ctx.check(got == code and (body is None or data == body),
              "port %d Host %s %s: %d %r, expected %d %r" % (
                  port, host, target, got, data[:40], code, body))


def _vh_symlinks(ctx, root):
    for host, target, code, body in (
            ("a.example", "/link-own", 200, b"a own\n"),
            ("a.example", "/link-dir/x.txt", 200, b"a own\n"),
            ("a.example", "/link-b", 403, None),
            ("a.example", "/dir-b/secret.txt", 403, None),
            ("a.example", "/link-top", 403, None),
            ("other.example", "/link-a", 403, None),
            ("alias.example", "/own/x.txt", 200, b"a own\n"),
            ("alias.example", "/link-own", 200, b"a own\n"),
            ("alias.example", "/link-b", 403, None),
            ("b.example", "/secret.txt", 200, b"b secret\n")):
        for _ in (0, 1):        # the second may come from the cache
            _vh_expect(ctx, host, target, code, body)
    # No vhosts: symlinks anywhere inside the docroot, as before.
    for target, body in (("/a.example/link-b", b"b secret\n"),
                         ("/a.example/dir-b/secret.txt", b"b secret\n"),
                         ("/default/link-a", b"a\n")):
        _vh_expect(ctx, None, target, 200, body, VH_PLAIN_PORT)


def _vh_offline(ctx, root):
    # own/x.txt too: a directory below the host's, which its own
    # directory's ctime (checked before issue 33) would not tell.
    time.sleep(SETTLE)
    for target, body in (("/", b"a\n"), ("/own/x.txt", b"a own\n")):
        for _ in (0, 1):
            _vh_expect(ctx, "a.example", target, 200, body)
        hits = _cache_hits()
        _vh_expect(ctx, "a.example", target, 200, body)
        ctx.check(_cache_hits() > hits, "third GET %s was no cache hit"
                  % target)
    os.chmod(os.path.join(root, "a.example"), 0o700)
    _vh_expect(ctx, "a.example", "/", 403)
    _vh_expect(ctx, "a.example", "/own/x.txt", 403)
    _vh_expect(ctx, "b.example", "/", 200, b"b\n")
    os.chmod(os.path.join(root, "a.example"), 0o755)
    _vh_expect(ctx, "a.example", "/", 200, b"a\n")


add("vhosts: a symlink out of its host's directory -> 403, inside it -> "
    "200; without vhosts as before", _vh_run, _vh_symlinks)
add("vhosts: chmod 700 on a host's directory takes its cached files "
    "away (403), back -> 200", _vh_run, _vh_offline)


if __name__ == "__main__":
    sys.exit(main())
