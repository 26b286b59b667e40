#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Network fuzzer for kweb: many mutated requests, then a normal one.

    tests/netfuzz.py --host H --port P --docroot D [--count N]
                     [--min-count M] [--seed S] [--threads T] [--per-conn K]
                     [--timeout S] [--time-limit S] [--allow-http09]
                     [--case I]

Builds valid requests for the files in D (GET and HEAD, ranges,
conditionals, pipelining, keep-alive, bodies, requests for the backend),
mutates them (bit flips, inserted, deleted and duplicated bytes, two
requests spliced, CR/LF/NUL/high bytes and huge numbers, truncation,
Content-Length and Transfer-Encoding combinations, hundreds of fields,
64 KiB targets) and sends them from T threads: in one write or in random
segments with small delays, then half-closing, waiting for the server, or
resetting. A connection carries up to --per-conn cases (default 4): after
a case that is one GET or HEAD head and nothing else, answered by kweb
with a complete response that keeps the connection open, the next case
goes on the same connection, so the fuzz also reaches the keep-alive
state (and costs a debug kernel far fewer connections). Everything is deterministic for a
given --seed except timing: case I always sends the same bytes the same
way (--case I prints them, the answer, and stops).

Whatever the server does with these is fine (answer, 400, close, reset,
nothing) except:
  - an answer must start with "HTTP/1." (only its status line is parsed,
    except on a kept-alive connection, where its length is read too); with --allow-http09, a request line without " HTTP/" may get
    a bare HTTP/0.9 answer, as nginx gives;
  - afterwards, a plain GET /small.txt on a new connection must get 200
    and exactly D/small.txt's bytes (retried for up to 10 s);
  - at least --min-count (default --count) cases must have been sent.
    --time-limit S stops sending after S seconds (the run still reports).

Output is TAP like tests/http_test.py: `ok N - name` or `not ok N - name`
with `# ` diagnostics (sent, answered, closed, reset, timeouts, a status
histogram), then `# N passed, N failed`; exit status 0 iff all passed.
Standard library only (Python 3.9+).
"""

import argparse
import collections
import faulthandler
import os
import random
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse
from email.utils import formatdate

READ_CAP = 256 * 1024      # bytes of an answer read before giving up on it
FIRST_WAIT = 0.5           # seconds a kept-open case waits for an answer
IDLE_WAIT = 0.2            # and then for more of it
CONNECT_TIMEOUT = 3.0
FINAL_TRIES_SECONDS = 10.0
STATUS_RE = re.compile(rb"HTTP/1\.[0-9] ([0-9]{3})")

CFG = None


# ---------------------------------------------------------------------------
# The docroot

class Docroot:
    """Names (and validators) of what D holds; only small.txt is read."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.files = []         # (url path, size, mtime)
        self.dirs = []          # url paths without the trailing slash
        self.others = []        # symlinks, FIFOs: url paths
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            rel = os.path.relpath(dirpath, self.root)
            base = "/" if rel == "." else "/" + rel.replace(os.sep, "/") + "/"
            if rel != ".":
                self.dirs.append(base[:-1])
            for name in sorted(filenames + [d for d in dirnames
                                            if os.path.islink(os.path.join(dirpath, d))]):
                path = os.path.join(dirpath, name)
                url = base + name
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if os.path.isfile(path) and not os.path.islink(path):
                    self.files.append((url, st.st_size, int(st.st_mtime)))
                else:
                    self.others.append(url)
        if not self.files:
            self.files.append(("/small.txt", 0, 0))
        small = os.path.join(self.root, "small.txt")
        try:
            with open(small, "rb") as f:
                self.small = f.read()
        except OSError:
            self.small = None


def quote(url):
    return urllib.parse.quote(url, safe="/")


def etag_of(size, mtime):
    return '"%x-%x"' % (mtime, size)


# ---------------------------------------------------------------------------
# Seeds: valid requests

AGENTS = [b"curl/7.88.1", b"Mozilla/5.0 (X11; Linux x86_64)", b"netfuzz"]


def host_field(rng):
    return rng.choice([b"localhost", b"127.0.0.1", b"[::1]", b"example.com:80",
                       b"kweb"])


def request(rng, method=b"GET", target=b"/", version=b"HTTP/1.1",
            fields=(), body=b""):
    lines = [method + b" " + target + b" " + version]
    if version != b"HTTP/1.0" or rng.random() < 0.5:
        lines.append(b"Host: " + host_field(rng))
    if rng.random() < 0.5:
        lines.append(b"User-Agent: " + rng.choice(AGENTS))
    if rng.random() < 0.3:
        lines.append(b"Accept: */*")
    lines.extend(fields)
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def pick_file(rng, doc):
    return rng.choice(doc.files)


def seed_plain(rng, doc):
    url, _, _ = pick_file(rng, doc)
    fields = []
    version = rng.choice([b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.0"])
    if rng.random() < 0.3:
        fields.append(b"Connection: " + rng.choice(
            [b"close", b"keep-alive", b"Keep-Alive, close", b"upgrade"]))
    return request(rng, rng.choice([b"GET", b"GET", b"HEAD"]),
                   quote(url).encode(), version, fields)


def range_value(rng, size):
    n = max(size, 1)
    forms = [
        lambda: b"bytes=%d-%d" % (rng.randrange(n), rng.randrange(n) + n // 2),
        lambda: b"bytes=%d-" % rng.randrange(n + 10),
        lambda: b"bytes=-%d" % rng.randrange(n * 2 + 1),
        lambda: b"bytes=0-0",
        lambda: b"bytes=0-1,3-4",
        lambda: b"bytes=%d-%d" % (n + 5, n + 10),
        lambda: b"items=0-1",
        lambda: b"bytes=18446744073709551615-",
        lambda: b"bytes=-18446744073709551616",
    ]
    return rng.choice(forms)()


def seed_range(rng, doc):
    url, size, mtime = pick_file(rng, doc)
    fields = [b"Range: " + range_value(rng, size)]
    if rng.random() < 0.3:
        fields.append(b"If-Range: " + rng.choice(
            [etag_of(size, mtime).encode(), formatdate(mtime, usegmt=True).encode(),
             b'W/"1-2"', b"Mon, 01 Jan 2001 00:00:00 GMT"]))
    return request(rng, rng.choice([b"GET", b"GET", b"HEAD"]),
                   quote(url).encode(), b"HTTP/1.1", fields)


def seed_conditional(rng, doc):
    url, size, mtime = pick_file(rng, doc)
    tag = etag_of(size, mtime).encode()
    date = formatdate(mtime + rng.choice([0, 0, -1, 1, 86400]),
                      usegmt=True).encode()
    choices = [
        b"If-None-Match: " + tag,
        b"If-None-Match: W/" + tag,
        b'If-None-Match: "x", ' + tag + b" ,",
        b"If-None-Match: *",
        b"If-Modified-Since: " + date,
        b"If-Modified-Since: Sunday, 06-Nov-94 08:49:37 GMT",
        b"If-Modified-Since: Sun Nov  6 08:49:37 1994",
    ]
    fields = rng.sample(choices, rng.randint(1, 2))
    return request(rng, rng.choice([b"GET", b"HEAD"]), quote(url).encode(),
                   b"HTTP/1.1", fields)


def seed_paths(rng, doc):
    url, _, _ = pick_file(rng, doc)
    forms = [
        lambda: (rng.choice(doc.dirs) if doc.dirs else "/dir"),     # 301
        lambda: (rng.choice(doc.dirs) + "/" if doc.dirs else "/"),
        lambda: rng.choice(doc.others) if doc.others else "/nope",
        lambda: "/no-such-file-%d.txt" % rng.randrange(1000),
        lambda: "http://localhost" + quote(url),
        lambda: "".join("%%%02X" % b for b in url.encode()),
        lambda: "/a/../" + quote(url)[1:],
        lambda: "/./" + quote(url)[1:] + rng.choice(["", "/", "/."]),
        lambda: "/../../etc/passwd",
        lambda: "/%2e%2e/%2e%2e/etc/passwd",
        lambda: quote(url) + "?x=1",
        lambda: "/api/items/%d" % rng.randrange(100),
        lambda: "/dyn/x.php",
        lambda: "/index.php",
    ]
    target = rng.choice(forms)()
    if isinstance(target, str):
        target = target.encode("utf-8", "surrogateescape")
    return request(rng, rng.choice([b"GET", b"HEAD"]), target)


def seed_body(rng, doc):
    url, _, _ = pick_file(rng, doc)
    body = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 5, 100, 3000])))
    forms = [
        (b"GET", [b"Content-Length: %d" % len(body)], body),
        (b"POST", [b"Content-Length: %d" % len(body)], body),
        (b"POST", [b"Transfer-Encoding: chunked"],
         b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n" if body else b"0\r\n\r\n"),
        (b"PUT", [b"Content-Length: %d" % len(body), b"Expect: 100-continue"], body),
        (b"OPTIONS", [], b""),
        (b"DELETE", [], b""),
    ]
    method, fields, b = rng.choice(forms)
    # /dyn/load: the test backend keeps no body file for it
    target = rng.choice([quote(url).encode(), b"/dyn/load", b"/dyn/load", b"/api/echo"])
    return request(rng, method, target, b"HTTP/1.1", fields, b)


def seed_upgrade(rng, doc):
    if rng.random() < 0.3:
        return b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(
            rng.randrange(256) for _ in range(rng.randrange(40)))
    return request(rng, b"GET", rng.choice([b"/ws", b"/", b"/api/ws"]),
                   b"HTTP/1.1", [b"Upgrade: websocket", b"Connection: Upgrade",
                                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                                 b"Sec-WebSocket-Version: 13"])


SINGLE = [seed_plain, seed_plain, seed_range, seed_conditional, seed_paths,
          seed_body, seed_upgrade]


def seed_pipeline(rng, doc):
    return b"".join(rng.choice(SINGLE)(rng, doc) for _ in range(rng.randint(2, 5)))


SEEDS = SINGLE + [seed_pipeline, seed_pipeline]


def make_seed(rng, doc):
    return rng.choice(SEEDS)(rng, doc)


# ---------------------------------------------------------------------------
# Mutations

TOKENS = [b"\r", b"\n", b"\r\n", b"\r\n\r\n", b"\x00", b"\x7f", b"\x80", b"\xff",
          b"\xc3\xa9", b" ", b"\t", b":", b",", b";", b"%", b"%00", b"%2e%2e/",
          b"/../", b"?", b"#", b"*", b"-", b"=", b"\"", b"W/",
          b"18446744073709551615", b"18446744073709551616",
          b"99999999999999999999999999", b"-1", b"0x10", b"+5", b"4294967296",
          b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.10", b"chunked"]

EXTRA_FIELDS = [
    lambda r: b"Content-Length: %d" % r.choice([0, 1, 5, 100, 65536, 2 ** 31, 2 ** 63]),
    lambda r: b"Content-Length: " + r.choice(
        [b"", b"-1", b"1, 1", b" 5", b"18446744073709551616", b"0x10", b"1e3"]),
    lambda r: b"Transfer-Encoding: " + r.choice(
        [b"chunked", b"gzip", b"chunked, chunked", b"gzip, chunked",
         b"chunked;x=1", b" chunked", b"", b"identity", b"CHUNKED"]),
    lambda r: b"Transfer-Encoding : chunked",
    lambda r: b"Host: " + r.choice([b"a", b"..", b"a b", b"", b"[::1]:80"]),
    lambda r: b"Connection: " + r.choice([b"close", b"keep-alive", b"Upgrade", b"te, close"]),
    lambda r: b"Expect: 100-continue",
    lambda r: b"Upgrade: " + r.choice([b"websocket", b"h2c", b""]),
    lambda r: b"Range: bytes=" + r.choice([b"0-", b"-1", b"1-0", b"0-0,0-0", b"x"]),
    lambda r: b"If-None-Match: " + r.choice([b"*", b'"a"', b"W/", b'"' * 3]),
    lambda r: b"If-Modified-Since: " + r.choice(
        [b"Thu, 01 Jan 1970 00:00:00 GMT", b"Fri, 31 Dec 9999 23:59:59 GMT", b"yesterday"]),
    lambda r: b"X-Folded: a\r\n b",
    lambda r: b"X-" + bytes(r.randrange(33, 127) for _ in range(r.randrange(1, 20))) +
    b": " + bytes(r.randrange(256) for _ in range(r.randrange(0, 40))),
]


def rand_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def head_end(data):
    i = data.find(b"\r\n\r\n")
    return i + 2 if i >= 0 else max(data.find(b"\n"), 0)


def m_flip(rng, d, other):
    if not d:
        return d
    i = rng.randrange(len(d))
    return d[:i] + bytes([d[i] ^ (1 << rng.randrange(8))]) + d[i + 1:]


def m_set(rng, d, other):
    if not d:
        return d
    i = rng.randrange(len(d))
    return d[:i] + bytes([rng.randrange(256)]) + d[i + 1:]


def m_insert(rng, d, other):
    i = rng.randrange(len(d) + 1)
    ins = rng.choice(TOKENS) if rng.random() < 0.7 else rand_bytes(rng, rng.randint(1, 8))
    return d[:i] + ins + d[i:]


def m_delete(rng, d, other):
    if not d:
        return d
    i = rng.randrange(len(d))
    return d[:i] + d[i + rng.randint(1, 16):]


def m_duplicate(rng, d, other):
    if not d:
        return d
    i = rng.randrange(len(d))
    j = min(len(d), i + rng.randint(1, 64))
    k = rng.randrange(len(d) + 1)
    return d[:k] + d[i:j] + d[k:]


def m_splice(rng, d, other):
    return d[:rng.randrange(len(d) + 1)] + other[rng.randrange(len(other) + 1):]


def m_truncate(rng, d, other):
    return d[:rng.randrange(len(d) + 1)]


def m_field(rng, d, other):
    """A field line from EXTRA_FIELDS, once or twice, inside the first head."""
    e = head_end(d)
    lines = b"".join(rng.choice(EXTRA_FIELDS)(rng) + b"\r\n"
                     for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.3:
        lines += lines
    return d[:e] + lines + d[e:]


def m_many_fields(rng, d, other):
    e = head_end(d)
    n = rng.choice([50, 99, 100, 101, 150, 400])
    return d[:e] + b"".join(b"X-F%d: %d\r\n" % (i, i) for i in range(n)) + d[e:]


def m_long(rng, d, other):
    """A 64 KiB target, or a huge field value, or a long method."""
    n = rng.choice([4096, 8190, 8192, 9000, 65536])
    sp = d.find(b" ")
    if rng.random() < 0.5 and sp >= 0:
        return d[:sp + 1] + b"/" + b"a" * n + d[sp + 1:]
    if rng.random() < 0.5:
        e = head_end(d)
        return d[:e] + b"X-Long: " + b"b" * n + b"\r\n" + d[e:]
    return b"G" * n + d


def m_line_ends(rng, d, other):
    choice = rng.randrange(3)
    if choice == 0:
        return d.replace(b"\r\n", b"\n")
    if choice == 1:
        return d.replace(b"\r\n", b"\r", 1)
    return d.replace(b"\r\n", b"\n\r", 1)


def m_case(rng, d, other):
    if not d:
        return d
    i = rng.randrange(len(d))
    j = min(len(d), i + rng.randint(1, 16))
    return d[:i] + d[i:j].swapcase() + d[j:]


def m_number(rng, d, other):
    """Replace a run of digits by a huge or odd number."""
    spans = [m.span() for m in re.finditer(rb"[0-9]+", d)]
    if not spans:
        return m_insert(rng, d, other)
    a, b = rng.choice(spans)
    return d[:a] + rng.choice(TOKENS[25:33]) + d[b:]


MUTATORS = [m_flip, m_set, m_insert, m_insert, m_delete, m_duplicate,
            m_splice, m_truncate, m_field, m_field, m_many_fields, m_long,
            m_line_ends, m_case, m_number]


def make_case(i, doc):
    """Case i: (bytes, segments plan, ending). Deterministic per seed and i."""
    rng = random.Random("%d:%d" % (CFG.seed, i))
    data = make_seed(rng, doc)
    if rng.random() > 0.12:
        other = make_seed(rng, doc)
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 5])):
            data = rng.choice(MUTATORS)(rng, data, other)
    data = data[:200000]

    # how to send it: one write, random segments, or byte by byte
    r = rng.random()
    if r < 0.70 or len(data) < 2:
        segments = [(data, 0.0)]
    elif r < 0.98 or len(data) > 200:
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 8))))
        bounds = [0] + cuts + [len(data)]
        segments = [(data[a:b], rng.choice([0.0, 0.0, 0.001, 0.003]))
                    for a, b in zip(bounds, bounds[1:])]
    else:
        segments = [(data[k:k + 1], 0.0) for k in range(len(data))]

    # then: half-close and read to EOF, wait for silence, reset, or close
    r = rng.random()
    ending = ("shut" if r < 0.75 else "wait" if r < 0.88 else
              "reset" if r < 0.95 else "close")
    return data, segments, ending


# ---------------------------------------------------------------------------
# Sending

def connect():
    s = socket.create_connection((CFG.host, CFG.port), timeout=CONNECT_TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def reset(s):
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    s.close()


def send_segments(s, segments):
    """None, or why the case could not be sent whole."""
    s.settimeout(CFG.timeout)
    for seg, delay in segments:
        try:
            s.sendall(seg)
        except (BrokenPipeError, ConnectionResetError):
            return "closed_early"    # the server gave up on us: fine
        except socket.timeout:
            return "send_timeout"
        if delay:
            time.sleep(delay)
    return None


def run_case(i, doc):
    """Returns (outcome, status code or None, first bytes of the answer)."""
    data, segments, ending = make_case(i, doc)
    try:
        s = connect()
    except OSError as e:
        return "connect_error", None, repr(e).encode()
    return finish_case(s, segments, ending)


def finish_case(s, segments, ending):
    """Send the case on s, end it its way and read to the end; closes s."""
    got = b""
    deadline = time.monotonic() + CFG.timeout
    try:
        outcome = send_segments(s, segments)
        if ending in ("reset", "close") and outcome is None:
            if ending == "reset":
                reset(s)
            else:
                s.close()
            return ending, None, b""
        if outcome is None and ending == "shut":
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        while len(got) < READ_CAP:
            left = deadline - time.monotonic()
            if left <= 0:
                outcome = outcome or "timeout"
                break
            if ending == "wait":
                left = min(left, IDLE_WAIT if got else FIRST_WAIT)
            s.settimeout(left)
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                outcome = outcome or ("idle" if ending == "wait" else "timeout")
                break
            except ConnectionResetError:
                outcome = "reset_by_server"
                break
            if not chunk:
                outcome = outcome or "eof"
                break
            got += chunk
        else:
            outcome = outcome or "read_cap"
    except OSError as e:
        outcome = "error:" + type(e).__name__
    finally:
        reset(s) if len(got) >= READ_CAP or outcome in ("timeout", "idle") else s.close()
    m = STATUS_RE.match(got)
    return outcome, int(m.group(1)) if m else None, got[:200]


# A case the next one may follow on its connection: exactly one GET or
# HEAD head, no body or anything else that would make the length of the
# answer (or the number of answers) depend on how the server read it.
SIMPLE_RE = re.compile(rb"(GET|HEAD) [\x21-\x7e]+ HTTP/1\.1\r\n"
                       rb"(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\x20-\x7e]*\r\n)*\r\n\Z")
FRAMING_RE = re.compile(rb"\r\n(content-length|transfer-encoding|expect|upgrade|"
                        rb"connection|http2-settings)[ \t]*:", re.I)
CL_RE = re.compile(rb"\r\ncontent-length:[ \t]*([0-9]+)[ \t]*(?=\r\n|$)", re.I)
CLOSE_RE = re.compile(rb"\r\nconnection:[ \t]*close[ \t]*(?=\r\n|$)", re.I)


def may_continue(data, ending):
    return (ending == "shut" and SIMPLE_RE.match(data) is not None and
            FRAMING_RE.search(data) is None)


def read_one(s, head_only):
    """One whole answer on a kept-alive connection: (status or None,
    its first bytes, whether the connection may carry another case)."""
    buf = b""
    deadline = time.monotonic() + CFG.timeout
    try:
        while b"\r\n\r\n" not in buf and len(buf) < READ_CAP:
            s.settimeout(max(deadline - time.monotonic(), 0.01))
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except (socket.timeout, OSError):
        pass
    head, sep, body = buf.partition(b"\r\n\r\n")
    m = STATUS_RE.match(head)
    if not sep or not m:
        return (int(m.group(1)) if m else None), buf[:200], False
    code = int(m.group(1))
    cl = CL_RE.search(head)
    if head_only or code < 200 or code in (204, 304):
        want = 0
    elif cl:
        want = int(cl.group(1))
    else:
        return code, buf[:200], False
    keep = (want <= READ_CAP and code >= 200 and b"\r\nServer: kweb\r\n" in head
            and not CLOSE_RE.search(head))
    try:
        while keep and len(body) < want:
            s.settimeout(max(deadline - time.monotonic(), 0.01))
            chunk = s.recv(65536)
            if not chunk:
                keep = False
            body += chunk
    except (socket.timeout, OSError):
        keep = False
    if keep and len(body) != want:
        keep = False    # more than one answer: the framing is not ours
    if keep:
        # Nothing else may be on its way (a second answer, a close).
        try:
            s.settimeout(0)     # or recv() polls for the whole timeout
            keep = not s.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            pass
        except OSError:
            keep = False
    return code, buf[:200], keep


def run_session(doc, take, record):
    """Cases from take() on one connection while each allows the next."""
    i = take()
    if i is None:
        return
    try:
        s = connect()
    except OSError as e:
        record(i, "connect_error", None, repr(e).encode())
        return
    while True:
        data, segments, ending = make_case(i, doc)
        if not may_continue(data, ending):
            record(i, *finish_case(s, segments, ending))
            return
        try:
            outcome = send_segments(s, segments)
        except OSError as e:
            outcome = "error:" + type(e).__name__
        if outcome:
            s.close()
            record(i, outcome, None, b"")
            return
        code, got, keep = read_one(s, data.startswith(b"HEAD "))
        nxt = take() if keep else None
        if nxt is None:
            # The last case of the connection ends the way cases do.
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            reset(s) if not keep else s.close()
            record(i, "keepalive_last" if keep else "keepalive_end", code, got)
            return
        record(i, "keepalive", code, got)
        i = nxt


def http09_request(data):
    """Could a server read this as an HTTP/0.9 simple request?"""
    line = data.lstrip(b"\r\n").split(b"\n", 1)[0]
    return b" HTTP/" not in line


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.next = 0
        self.sent = 0
        self.answered = 0
        self.outcomes = collections.Counter()
        self.codes = collections.Counter()
        self.bad = []           # (case, request, answer) not starting with HTTP/1.
        self.bad_count = 0
        self.http09 = 0
        self.stop = False


def worker(stats, doc, t_end):
    def take():
        with stats.lock:
            if stats.stop or stats.next >= CFG.count or (t_end and time.monotonic() > t_end):
                stats.stop = True
                return None
            stats.next += 1
            return stats.next - 1

    def record(i, outcome, code, got):
        with stats.lock:
            stats.outcomes[outcome] += 1
            if outcome != "connect_error":
                stats.sent += 1
            if got and outcome != "connect_error":
                stats.answered += 1
                stats.codes[code if code else "other"] += 1
                if not b"HTTP/1."[:len(got)] == got[:7]:
                    data = make_case(i, doc)[0]
                    if CFG.allow_http09 and http09_request(data):
                        stats.http09 += 1
                    else:
                        stats.bad_count += 1
                        if len(stats.bad) < 5:
                            stats.bad.append((i, data, got))

    while not stats.stop:
        if CFG.per_conn > 1:
            run_session(doc, take, record)
            continue
        i = take()
        if i is None:
            return
        record(i, *run_case(i, doc))


# ---------------------------------------------------------------------------
# The plain request afterwards

def read_response(s, deadline):
    buf = b""
    while b"\r\n\r\n" not in buf:
        s.settimeout(max(deadline - time.monotonic(), 0.01))
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    m = STATUS_RE.match(head)
    cl = re.search(rb"\r\ncontent-length:[ \t]*([0-9]+)", head, re.I)
    if m and cl:
        n = int(cl.group(1))
        while len(body) < n:
            s.settimeout(max(deadline - time.monotonic(), 0.01))
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    return (int(m.group(1)) if m else None), head, body


def final_get(doc):
    """GET /small.txt on a fresh connection: (ok, why)."""
    if doc.small is None:
        return False, "no small.txt in the docroot"
    req = (b"GET /small.txt HTTP/1.1\r\nHost: localhost\r\n"
           b"Connection: close\r\n\r\n")
    t_end = time.monotonic() + FINAL_TRIES_SECONDS
    why = "not tried"
    while True:
        try:
            with connect() as s:
                s.sendall(req)
                code, head, body = read_response(s, time.monotonic() + 5)
            if code == 200 and body == doc.small:
                return True, ""
            why = "status %s, %d body bytes (want %d): %r" % (
                code, len(body), len(doc.small), (head + b"\r\n\r\n" + body)[:200])
        except OSError as e:
            why = "%s: %s" % (type(e).__name__, e)
        if time.monotonic() > t_end:
            return False, why
        time.sleep(0.5)


# ---------------------------------------------------------------------------

def show_case(doc):
    data, segments, ending = make_case(CFG.case, doc)
    print("# case %d: %d bytes in %d segment(s), then %s" % (
        CFG.case, len(data), len(segments), ending))
    print("# request: %r" % data[:2000])
    outcome, code, got = run_case(CFG.case, doc)
    print("# outcome %s, status %s, answer: %r" % (outcome, code, got))
    return 0


def main():
    global CFG
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--docroot", required=True)
    ap.add_argument("--count", type=int, default=10000,
                    help="mutated cases to send (default 10000)")
    ap.add_argument("--min-count", type=int,
                    help="fail if fewer were sent (default and at most: --count)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--per-conn", type=int, default=4,
                    help="most cases on one connection (default 4)")
    ap.add_argument("--timeout", type=float, default=2.0,
                    help="seconds a case may take (default 2)")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="stop sending after this many seconds (0: none)")
    ap.add_argument("--allow-http09", action="store_true",
                    help="accept bare answers to requests without a version")
    ap.add_argument("--case", type=int, help="send only case I and show it")
    CFG = ap.parse_args()
    if CFG.min_count is None or CFG.min_count > CFG.count:
        CFG.min_count = CFG.count
    doc = Docroot(CFG.docroot)
    if CFG.case is not None:
        return show_case(doc)

    print("1..3")
    print("# kweb netfuzz: %s port %d, docroot %s, seed %d, %d cases, "
          "%d threads" % (CFG.host, CFG.port, doc.root, CFG.seed, CFG.count,
                          CFG.threads))
    sys.stdout.flush()
    stats = Stats()
    t0 = time.monotonic()
    t_end = t0 + CFG.time_limit if CFG.time_limit > 0 else 0
    threads = [threading.Thread(target=worker, args=(stats, doc, t_end), daemon=True)
               for _ in range(CFG.threads)]
    for t in threads:
        t.start()
    # A run that outlives its time limit shows where every thread is.
    if t_end:
        faulthandler.dump_traceback_later(CFG.time_limit + 30, file=sys.stdout)
    last = t0
    for t in threads:
        while t.is_alive():
            t.join(5)
            if time.monotonic() - last >= 60:
                last = time.monotonic()
                with stats.lock:
                    print("# progress: %d sent, %d answered after %.0f s" % (
                        stats.sent, stats.answered, last - t0))
                sys.stdout.flush()
    faulthandler.cancel_dump_traceback_later()
    elapsed = time.monotonic() - t0
    limited = bool(t_end) and stats.next < CFG.count

    results = []
    o = stats.outcomes
    summary = [
        "sent %d of %d in %.1f s (%.0f/s)%s" % (
            stats.sent, CFG.count, elapsed, stats.sent / max(elapsed, 1e-9),
            ", stopped by --time-limit" if limited else ""),
        "answered %d, eof %d, reset by server %d, closed early %d, "
        "timeouts %d, idle %d, read cap %d, we reset %d, we closed %d, "
        "connect errors %d, other %d" % (
            stats.answered, o["eof"], o["reset_by_server"], o["closed_early"],
            o["timeout"] + o["send_timeout"], o["idle"], o["read_cap"],
            o["reset"], o["close"], o["connect_error"],
            sum(v for k, v in o.items() if k.startswith("error:"))),
        "kept alive: %d cases answered on a connection that went on "
        "with another case, %d sent as the last of such a connection" % (
            o["keepalive"], o["keepalive_last"] + o["keepalive_end"]),
        "status: " + " ".join("%s:%d" % (k, v) for k, v in
                              sorted(stats.codes.items(), key=lambda kv: str(kv[0]))),
    ]
    if stats.http09:
        summary.append("HTTP/0.9 answers to version-less requests: %d" % stats.http09)
    results.append(("sent at least %d mutated requests" % CFG.min_count,
                    stats.sent >= CFG.min_count, summary))

    diag = ["%d answers do not start with HTTP/1." % stats.bad_count]
    for i, data, got in stats.bad:
        diag.append("case %d (--seed %d --case %d): request %r" % (
            i, CFG.seed, i, data[:160]))
        diag.append("  answer %r" % got[:160])
    results.append(("every answer starts with HTTP/1.", stats.bad_count == 0,
                    diag if stats.bad_count else []))

    ok, why = final_get(doc)
    results.append(("GET /small.txt afterwards: 200 and the file's bytes", ok,
                    [why] if not ok else []))

    passed = failed = 0
    for n, (name, good, lines) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if good else "not ok", n, name))
        for line in lines:
            print("#   " + line)
        passed += good
        failed += not good
    print("# %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
