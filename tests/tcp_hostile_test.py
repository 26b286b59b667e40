#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile TCP clients for kweb, run as root inside a guest.

    tcp_hostile_test.py --host H --port P --docroot D [--timeout S]
                        [--light] [--only REGEX] [--list]
    tcp_hostile_test.py --host H --port P --docroot D --hold N
                        [--hold-target T] [--hold-seconds S]
    tcp_hostile_test.py --host H --port P --docroot D --exit-load S
                        --netns NS [--exit-orphans N] [--keepalive S]
                        [--settle S]

kweb listens on P with the routes of tests/guest/integration.sh, nginx
(tests/guest/nginx.sh) behind it on 8080, and the listener was made with
net.ipv4.tcp_fastopen=0x603 (client, server on every listener, no
cookie needed). Each test uses TCP the way a hostile or odd client
does: urgent data (MSG_OOB) before, inside and after a request head; a
reset (SO_LINGER {1, 0}) mid-head, mid-body, while a handoff waits for
our ACKs, and while kweb lingers; a half-close right after the request; a
Fast Open request; a tiny MSS; sends that fail for want of memory (where
the kernel has failslab). Each then requires what a correct server
gives: at most one response per request sent, exact status and bytes.
After every test all its sockets are closed, kweb must drop its
connections (connections_open back to where it was), a normal GET on a
fresh connection must be answered exactly, and dmesg must have no new
kernel report.

--hold N (for the shell-level cases of integration.sh): open N
connections that ask for a large file with a tiny receive buffer and never
read (the server's window to them closes), print "ready N" once each has
its response head, then sleep --hold-seconds and exit. Nothing else runs.

--exit-load S --netns NS (integration.sh's netns_exit; the listener is in
namespace NS, kweb's keep-alive timeout --keepalive): --exit-orphans
clients ask for a 32 KiB file with a tiny receive buffer and their FIN
behind the request, and never read: kweb closes at once, and each is an
orphan with its response queued to a shut window, holding the
namespace. Once kweb holds none of them, "ready N" and S seconds of
load: keep-alive clients idle past the timeout now and then,
connection-per-request, the client's FIN first, resets mid-body, and
clients that read kweb's FIN and never close. SIGUSR1 says the namespace
was deleted. Then every other client closes, and --settle seconds later
the zero-window clients read: the orphans must finish every response,
and no close of kweb's in the namespace comes after theirs. Exit status 0 iff every response was exact and some came
after the deletion.

TAP output, "# N passed, N failed"; exit status 0 iff none failed.
"""

import hashlib
import os
import random
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from httplib_raw import ProtocolError, format_host, parse_head, show  # noqa: E402
from taplib import Fail, Suite, check, client_args, note  # noqa: E402

CFG = None
TESTS = Suite()

# As tests/guest/lib.sh's DMESG_BAD: any of these is a kernel report.
DMESG_BAD = re.compile(
    r"BUG:|WARNING:|KASAN|possible circular locking|inconsistent lock state|"
    r"sleeping function called from invalid context|kmemleak|Oops|"
    r"refcount_t:|UBSAN|general protection|Kernel panic|hung_task|"
    r"soft lockup|hard LOCKUP|detected stall|list_add corruption|"
    r"list_del corruption|ODEBUG")
TCP_FASTOPEN_NO_COOKIE = 34     # linux/tcp.h, not in Python's socket module
FASTOPEN_SYSCTL = "/proc/sys/net/ipv4/tcp_fastopen"
HOSTILE_DIR = "hostile"         # files this client writes into the docroot


# ---------------------------------------------------------------------------
# Files, requests, sockets

def docfile(rel):
    with open(os.path.join(CFG.docroot, rel), "rb") as f:
        return f.read()


def make_file(name, size):
    """A deterministic file of this size under HOSTILE_DIR; its target."""
    d = os.path.join(CFG.docroot, HOSTILE_DIR)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    path = os.path.join(d, name)
    if not os.path.exists(path) or os.path.getsize(path) != size:
        with open(path, "wb") as f:
            f.write(random.Random("kweb-hostile:" + name).randbytes(size))
        os.chmod(path, 0o644)
    return "/%s/%s" % (HOSTILE_DIR, name)


def req(target, version="HTTP/1.1", close=False):
    lines = ["GET %s %s" % (target, version),
             "Host: %s:%d" % (format_host(CFG.host), CFG.port)]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def family():
    return socket.AF_INET6 if ":" in CFG.host else socket.AF_INET


def new_sock(rcvbuf=None, maxseg=None):
    s = socket.socket(family(), socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if maxseg:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, maxseg)
    s.settimeout(CFG.timeout)
    OPEN.append(s)
    return s


def connect(rcvbuf=None, maxseg=None):
    s = new_sock(rcvbuf, maxseg)
    s.connect((CFG.host, CFG.port))
    return s


def rst(s):
    """Close with a reset: SO_LINGER {1, 0}."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


OPEN = []       # every socket a test made, closed after it


def close_all():
    while OPEN:
        try:
            OPEN.pop().close()
        except OSError:
            pass


def read_n(s, n):
    """Read at least n bytes (fewer at EOF)."""
    data = b""
    while len(data) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def read_all(s, idle=3.0, limit=None, stop_after=None):
    """Everything until EOF, a reset, or idle seconds without a byte (at most
    limit seconds in all); stop_after: return early once the bytes hold
    more than this many responses. Returns (data, how it ended)."""
    data = bytearray()
    end = time.monotonic() + (limit or CFG.timeout)
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return bytes(data), "limit"
        s.settimeout(min(idle, left))
        try:
            chunk = s.recv(256 * 1024)
        except socket.timeout:
            return bytes(data), "idle"
        except ConnectionResetError:
            return bytes(data), "reset"
        if not chunk:
            return bytes(data), "eof"
        data += chunk
        if stop_after is not None and \
                data.count(b"HTTP/1.1 ") > stop_after + 1:
            return bytes(data), "stopped"


def split_responses(data):
    """The responses (code, fields dict lowercased, body) in data, in order,
    framed by Content-Length; the rest (an incomplete one) as bytes."""
    out = []
    pos = 0
    while True:
        end = data.find(b"\r\n\r\n", pos)
        if end < 0:
            return out, data[pos:]
        try:
            _, code, _, fields = parse_head(data[pos:end])
        except ProtocolError as e:
            raise Fail("response %d: %s" % (len(out) + 1, e))
        f = {n.lower(): v for n, v in fields}
        n = int(f.get("content-length", "0"))
        if end + 4 + n > len(data):
            return out, data[pos:]
        out.append((code, f, data[end + 4:end + 4 + n]))
        pos = end + 4 + n


def status_lines(data):
    """Status lines in data (no body this client asks for holds one)."""
    return data.count(b"HTTP/1.1 ")


# ---------------------------------------------------------------------------
# Counters, dmesg and the checks after every test

def counters(path="/proc/net/kweb"):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[1].isdigit():
                out[p[0]] = int(p[1])
    return out


def netstat():
    """TcpExt counters of /proc/net/netstat."""
    with open("/proc/net/netstat") as f:
        lines = f.read().splitlines()
    out = {}
    for names, vals in zip(lines[::2], lines[1::2]):
        n, v = names.split(), vals.split()
        if n[0] == "TcpExt:":
            out.update(zip(n[1:], map(int, v[1:])))
    return out


class Seen:
    """What the kernel and kweb counted since it was made, and the port's
    sockets at the moments snapped: the story of a failure."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.tcp, self.kweb = netstat(), counters()
        self.snaps = []

    def snap(self, what):
        r = subprocess.run(["ss", "-tinoH", "state", "all",
                            "( sport = :%d )" % CFG.port],
                           capture_output=True, text=True, timeout=60)
        self.snaps.append("%.1f s, %s: %s" % (
            time.monotonic() - self.t0, what,
            " ".join(r.stdout.split()) or "no socket"))

    def show(self):
        def delta(old, new):
            return ", ".join("%s +%d" % (k, v - old.get(k, 0))
                             for k, v in sorted(new.items())
                             if v != old.get(k, 0) and k != "port")
        return "after %.1f s: TcpExt %s; kweb %s; sockets %s" % (
            time.monotonic() - self.t0, delta(self.tcp, netstat()),
            delta(self.kweb, counters()), "; ".join(self.snaps))


class Kmsg:
    """The kernel log from now on, read from /dev/kmsg: a dmesg process
    three times a test cost the debug kernel minutes of fork and exec."""

    def __init__(self):
        self.fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self.fd, 0, os.SEEK_END)

    def new(self):
        """Every message since the last call (or the start), a line each."""
        lines = []
        while True:
            try:
                rec = os.read(self.fd, 8192)
            except BlockingIOError:
                return lines
            except BrokenPipeError:
                # Overwritten before we read it: the ring wrapped.
                lines.append("(kmsg: records lost, ring overrun)")
                continue
            if not rec:
                return lines
            # "prefix;text\n", then continuation lines (" KEY=value").
            text = rec.decode("utf-8", "replace").partition(";")[2]
            lines.append(text.split("\n", 1)[0])

    def close(self):
        os.close(self.fd)


class After:
    """What each test is followed by: kweb lets its connections go, a
    normal GET works, no kernel report."""

    def __init__(self):
        self.kmsg = Kmsg()
        self.seen = []
        self.conns = counters().get("connections_open", 0)

    def wait_conns(self):
        end = time.monotonic() + CFG.close_wait
        n = -1
        while time.monotonic() < end:
            n = counters().get("connections_open", -1)
            if n <= self.conns:
                return
            time.sleep(0.2)
        raise Fail("kweb still holds %d connections %.0f s after the "
                   "client's sockets were closed (%d before the test)" %
                   (n, CFG.close_wait, self.conns))

    def normal_get(self):
        s = connect()
        try:
            s.sendall(req("/small.txt", close=True))
            data, how = read_all(s, idle=CFG.timeout)
        finally:
            s.close()
        resps, rest = split_responses(data)
        check(len(resps) == 1 and not rest and how == "eof",
              "normal GET afterwards: %d responses, ended by %s: %s" %
              (len(resps), how, show(data)))
        code, f, body = resps[0]
        check(code == 200 and body == docfile("small.txt") and
              f.get("server") == "kweb",
              "normal GET afterwards: %d, Server %s, %s" %
              (code, f.get("server"), show(body)))

    def dmesg_clean(self):
        self.seen += self.kmsg.new()
        bad = [line for line in self.seen if DMESG_BAD.search(line)]
        check(not bad, "kernel report:\n" + "\n".join(self.seen[:40]))


def describe(e):
    return str(e) if isinstance(e, Fail) else traceback.format_exc().rstrip()


def hostile(name, not_light=None):
    """Register a test followed by the After checks; every failure of
    the test and of the checks is reported. not_light: see taplib."""
    def deco(fn):
        def run():
            after = After()
            errors = []
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(describe(e))
            close_all()
            for step in (after.dmesg_clean, after.wait_conns,
                         after.normal_get, after.dmesg_clean):
                try:
                    step()
                except Exception as e:  # noqa: BLE001 - reported below
                    errors.append(describe(e))
                    break
            after.kmsg.close()
            if errors:
                raise Fail("\n".join(errors))
        TESTS.test(name, not_light)(run)
        return fn
    return deco


# ---------------------------------------------------------------------------
# Urgent data

def urgent_case(parts, nreq, target="/small.txt"):
    """Send parts ((bytes, urgent?) each its own send), then read until EOF
    or idle: at most nreq responses, each 200 with the file's bytes."""
    want = docfile(target.lstrip("/"))
    s = connect()
    for data, urgent in parts:
        s.send(data, socket.MSG_OOB if urgent else 0)
        time.sleep(0.05)
    data, how = read_all(s, limit=max(CFG.timeout, 30), stop_after=nreq)
    resps, rest = split_responses(data)
    n = status_lines(data)
    note("%d status lines, %d bytes, ended by %s" % (n, len(data), how))
    check(n <= nreq, "%d responses to %d request(s): %s" %
          (n, nreq, show(data, 200)))
    for code, f, body in resps:
        check(code == 200 and body == want,
              "status %d (Server %s), %d body bytes, want 200 and %s's "
              "%d bytes: %s" % (code, f.get("server"), len(body), target,
                                len(want), show(data, 200)))
    check(not rest or how in ("eof", "reset"),
          "an incomplete response, then %s: %s" % (how, show(rest)))


# Each urgent byte is one more byte in the stream: without it (as recv()
# gives it to nginx, without SO_OOBINLINE) the requests are GETs of
# /small.txt. kweb peeks at the receive queue with the urgent byte in it,
# but cannot consume past it (tcp_read_sock() stops there).

# The debug kernel runs one case of each kind (before, inside and after
# the head, between requests, before a handoff): the others take the same
# socket paths with the byte elsewhere, which the stock kernels run.
URG_SAME_PATHS = ("the urgent-data paths of its neighbours, the byte at "
                  "another offset: the stock kernels run every offset")


@hostile("urgent byte before the head: at most one answer, the file's")
def t_urgent_before():
    urgent_case([(b"U", True), (req("/small.txt"), False)], 1)


@hostile("urgent LF before the head (an empty line): at most one answer",
         not_light=URG_SAME_PATHS)
def t_urgent_before_lf():
    urgent_case([(b"\n", True), (req("/small.txt"), False)], 1)


@hostile("urgent CRLF before the head (an empty line): at most one answer")
def t_urgent_before_crlf():
    # MSG_OOB makes only the last byte urgent: the CR is ordinary.
    urgent_case([(b"\r\n", True), (req("/small.txt"), False)], 1)


@hostile("urgent byte inside the target: at most one answer, the file's",
         not_light=URG_SAME_PATHS)
def t_urgent_inside():
    r = req("/small.txt")
    urgent_case([(r[:7], False), (b"U", True), (r[7:], False)], 1)


@hostile("urgent byte inside a field line: at most one answer, the file's")
def t_urgent_inside_field():
    r = req("/small.txt")
    i = r.index(b"Host:") + 2
    urgent_case([(r[:i], False), (b"U", True), (r[i:], False)], 1)


@hostile("urgent byte after the head: one answer, the file's")
def t_urgent_after():
    urgent_case([(req("/small.txt"), False), (b"U", True)], 1)


@hostile("urgent byte right after the head, in the same write: one answer",
         not_light=URG_SAME_PATHS)
def t_urgent_one_write():
    # MSG_OOB makes the last byte of the write urgent.
    urgent_case([(req("/small.txt") + b"U", True)], 1)


@hostile("urgent byte between two pipelined requests: at most two answers")
def t_urgent_between():
    r = req("/small.txt")
    urgent_case([(r, False), (b"U", True), (r, False)], 2)


@hostile("urgent LF between two pipelined requests: at most two answers",
         not_light=URG_SAME_PATHS)
def t_urgent_between_lf():
    r = req("/small.txt")
    urgent_case([(r, False), (b"\n", True), (r, False)], 2)


@hostile("urgent LF before a request for the backend: at most one answer")
def t_urgent_before_handoff():
    urgent_case([(b"\n", True), (req("/small.txt?urg=1"), False)], 1)


# ---------------------------------------------------------------------------
# Resets

@hostile("reset mid-head")
def t_rst_head():
    s = connect()
    s.sendall(req("/small.txt")[:20])
    time.sleep(0.3)
    rst(s)


@hostile("reset mid-body (a large file, a little read)")
def t_rst_body():
    s = connect(rcvbuf=16384)
    s.sendall(req("/big.bin"))
    got = read_n(s, 65536)
    check(got.startswith(b"HTTP/1.1 200 "), "no 200: %s" % show(got))
    rst(s)


@hostile("reset while a handoff waits for the ACK of a response")
def t_rst_handoff_wait():
    # The client's window closes inside the first response: the rest of
    # it stays unacknowledged in kweb's send queue, and the next request
    # (the backend's) waits for it.
    target = make_file("64k.bin", 65536)
    s = connect(rcvbuf=2048)
    s.sendall(req(target) + req("/small.txt?hostile=1"))
    got = read_n(s, 1024)
    check(got.startswith(b"HTTP/1.1 200 "), "no 200: %s" % show(got))
    time.sleep(0.5)
    rst(s)


@hostile("reset in linger, the response read")
def t_rst_linger_read():
    s = connect()
    s.sendall(req("/small.txt", close=True))
    data, how = read_all(s)
    resps, _ = split_responses(data)
    check(len(resps) == 1 and resps[0][0] == 200 and how == "eof",
          "%s: %s" % (how, show(data)))
    rst(s)


@hostile("reset in linger, the response unread and the client still sending")
def t_rst_linger_unread():
    s = connect()
    s.sendall(req("/small.txt", close=True))
    time.sleep(0.3)
    for _ in range(8):
        s.sendall(b"X" * 1000)
        time.sleep(0.02)
    s.recv(10)
    rst(s)


@hostile("reset right after a request to the backend")
def t_rst_handoff():
    s = connect()
    s.sendall(req("/small.txt?hostile=2"))
    rst(s)


# ---------------------------------------------------------------------------
# Half-close

def half_close(target, want, server, version="HTTP/1.0"):
    s = connect()
    s.sendall(req(target, version=version))
    s.shutdown(socket.SHUT_WR)
    data, how = read_all(s, idle=CFG.timeout, limit=CFG.timeout * 3)
    resps, rest = split_responses(data)
    check(len(resps) == 1 and not rest,
          "%d responses, %d bytes more, ended by %s: %s" %
          (len(resps), len(rest), how, show(data)))
    code, f, body = resps[0]
    check(code == 200 and f.get("server", "").split("/")[0] == server,
          "status %d, Server %s, want 200 from %s" %
          (code, f.get("server"), server))
    check(body == want, "%d body bytes, sha256 %s; want %d, %s" %
          (len(body), hashlib.sha256(body).hexdigest()[:16], len(want),
           hashlib.sha256(want).hexdigest()[:16]))
    check(how == "eof", "ended by %s, want EOF" % how)


@hostile("half-close inside the head: closed without a response")
def t_half_mid_head():
    s = connect()
    s.sendall(req("/small.txt")[:20])
    s.shutdown(socket.SHUT_WR)
    data, how = read_all(s, idle=CFG.timeout)
    check(not data and how in ("eof", "reset"),
          "ended by %s after %s" % (how, show(data)))


@hostile("half-close after the request: a small file, whole")
def t_half_small():
    half_close("/small.txt", docfile("small.txt"), "kweb")


@hostile("half-close after the request: a multi-MB file, whole")
def t_half_big():
    half_close("/big.bin", docfile("big.bin"), "kweb")


@hostile("half-close after the request: handed off, nginx answers whole")
def t_half_handoff():
    half_close("/small.txt?half=1", docfile("small.txt"), "nginx",
               version="HTTP/1.1")


# ---------------------------------------------------------------------------
# TCP Fast Open

def fastopen_ready():
    with open(FASTOPEN_SYSCTL) as f:
        v = int(f.read())
    check(v & 0x603 == 0x603,
          "%s is %#x: want the client (0x1), the server (0x2), no cookie "
          "(0x200) and every listener without a socket option (0x400) "
          "on, before kweb's listener was made" % (FASTOPEN_SYSCTL, v))


def fastopen(data):
    """A connection whose SYN carries data; (socket, TcpExt before)."""
    fastopen_ready()
    before = netstat()
    s = new_sock()
    # Data on the SYN without a cookie exchange first.
    s.setsockopt(socket.IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, 1)
    s.sendto(data, socket.MSG_FASTOPEN, (CFG.host, CFG.port))
    return s, before


def fastopen_used(before):
    after = netstat()
    d = after.get("TCPFastOpenPassive", 0) - before.get("TCPFastOpenPassive", 0)
    check(d >= 1, "TcpExtTCPFastOpenPassive did not grow: the SYN's data "
          "was not taken (TCPFastOpenPassiveFail +%d)" %
          (after.get("TCPFastOpenPassiveFail", 0) -
           before.get("TCPFastOpenPassiveFail", 0)))


@hostile("Fast Open: a static file requested in the SYN, exact")
def t_tfo_static():
    s, before = fastopen(req("/small.txt", close=True))
    data, how = read_all(s, idle=CFG.timeout)
    resps, rest = split_responses(data)
    check(len(resps) == 1 and not rest and how == "eof",
          "%d responses, ended by %s: %s" % (len(resps), how, show(data)))
    code, f, body = resps[0]
    check(code == 200 and f.get("server") == "kweb" and
          body == docfile("small.txt"), "status %d, Server %s: %s" %
          (code, f.get("server"), show(data)))
    fastopen_used(before)


def tfo_handoff_answer(data, how, nstatic):
    """After nstatic static answers: nginx's whole answer, or kweb's 503
    (a Fast Open child's request sock stays with kweb's listener) and
    EOF. Returns which."""
    resps, rest = split_responses(data)
    check(len(resps) == nstatic + 1 and not rest,
          "%d responses, want %d; ended by %s: %s" %
          (len(resps), nstatic + 1, how, show(data)))
    for code, f, body in resps[:nstatic]:
        check(code == 200 and f.get("server") == "kweb" and
              body == docfile("small.txt"), "static: %d %s" %
              (code, f.get("server")))
    code, f, body = resps[-1]
    server = f.get("server", "").split("/")[0]
    if server == "nginx":
        check(code == 200 and body == docfile("small.txt"),
              "nginx: %d, %s" % (code, show(body)))
    else:
        check(code == 503 and server == "kweb" and
              f.get("connection") == "close" and how == "eof",
              "want nginx's 200 or kweb's 503 + close; got %d from %s, "
              "Connection %s, ended by %s" % (code, server,
                                              f.get("connection"), how))
    note("the handed-off request of a Fast Open connection: %d from %s" %
         (code, server))


@hostile("Fast Open: a request for the backend in the SYN: nginx's answer or "
         "a clean 503")
def t_tfo_handoff():
    s, before = fastopen(req("/small.txt?tfo=1"))
    data, how = read_all(s, idle=3.0)
    tfo_handoff_answer(data, how, 0)
    fastopen_used(before)


@hostile("Fast Open: a static request in the SYN, then one for the backend")
def t_tfo_static_then_handoff():
    s, before = fastopen(req("/small.txt"))
    time.sleep(0.2)
    s.sendall(req("/small.txt?tfo=2"))
    data, how = read_all(s, idle=3.0)
    tfo_handoff_answer(data, how, 1)
    fastopen_used(before)


# A CPU hog per CPU at SCHED_FIFO: kweb's work items run in kworkers
# (SCHED_OTHER) and wait, while softirq and timers go on. RT throttling
# and 6.12's fair server, which would give them a slice each second, are
# off meanwhile.
SCHED_RT_RUNTIME = "/proc/sys/kernel/sched_rt_runtime_us"
FAIR_SERVER = "/sys/kernel/debug/sched/fair_server"


class Starved:
    def __init__(self, seconds):
        self.seconds = seconds
        self.saved = {}
        self.pids = []

    def _set(self, path, value):
        with open(path) as f:
            self.saved.setdefault(path, f.read().strip())
        with open(path, "w") as f:
            f.write(str(value))

    def __enter__(self):
        if not os.path.isdir("/sys/kernel/debug/sched"):
            subprocess.run(["mount", "-t", "debugfs", "none",
                            "/sys/kernel/debug"], capture_output=True)
        self._set(SCHED_RT_RUNTIME, -1)
        if os.path.isdir(FAIR_SERVER):
            for cpu in sorted(os.listdir(FAIR_SERVER)):
                self._set(os.path.join(FAIR_SERVER, cpu, "runtime"), 0)
        # Above the hogs, so this process still runs when it has to.
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(60))
        end = time.monotonic() + self.seconds
        for cpu in sorted(os.sched_getaffinity(0)):
            pid = os.fork()
            if pid == 0:
                try:
                    os.sched_setaffinity(0, {cpu})
                    os.sched_setscheduler(0, os.SCHED_FIFO,
                                          os.sched_param(50))
                    while time.monotonic() < end:
                        pass
                finally:
                    os._exit(0)
            self.pids.append(pid)
        return self

    def __exit__(self, *exc):
        for pid in self.pids:
            os.waitpid(pid, 0)
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        for path, value in reversed(list(self.saved.items())):
            with open(path, "w") as f:
                f.write(value)
        return False


def kwebctl_config(key, value):
    """Set a kweb setting; returns its old value."""
    out = subprocess.run([CFG.kwebctl, "config", "get"], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"^%s (\S+)$" % re.escape(key), out, re.M)
    check(m, "kwebctl config get has no %s: %s" % (key, out))
    subprocess.run([CFG.kwebctl, "config", "set", key, str(value)],
                   check=True, capture_output=True)
    return m.group(1)


# kmod/conn.c's KWEB_ATOMIC_BUDGET: requests answered in one softirq run.
ATOMIC_BUDGET = 16


@hostile("pipelined requests, the last left to a starved worker past "
         "keepalive_timeout: every one answered (it arrived in time)")
def t_starved_worker():
    if not CFG.kwebctl:
        raise Fail("needs --kwebctl")
    n = ATOMIC_BUDGET + 1
    # Cached, so that softirq answers what it can.
    s = connect()
    s.sendall(req("/small.txt", close=True))
    read_all(s, idle=CFG.timeout)
    old = kwebctl_config("keepalive-timeout", 1)
    try:
        s = connect()
        with Starved(2.5):
            # softirq answers ATOMIC_BUDGET, the worker the last one.
            s.sendall(b"".join(req("/small.txt", close=i == n - 1)
                               for i in range(n)))
            time.sleep(0.1)
        data, how = read_all(s, idle=CFG.timeout)
    finally:
        kwebctl_config("keepalive-timeout", old)
    resps, rest = split_responses(data)
    check(len(resps) == n and not rest and how == "eof",
          "%d responses of %d, ended by %s: %s" %
          (len(resps), n, how, show(data[-300:])))
    for code, f, body in resps:
        check(code == 200 and body == docfile("small.txt"),
              "status %d: %s" % (code, show(body)))


# ---------------------------------------------------------------------------
# Tiny MSS

TINY_MSS = "tiny MSS (TCP_MAXSEG 88): a large file, exact by sha256"

@hostile(TINY_MSS)
def t_tiny_mss():
    # Under TCG with KASAN loopback segments reorder by tens of ms and
    # PAWS rejects some, so kweb often closes (linger timeout) with
    # segments to retransmit: its orphan must keep its timers.
    # The debug kernel: 1,500 segments, minutes there; 4 MiB elsewhere.
    size = (128 << 10) if CFG.light else (4 << 20)
    target = make_file("mss.bin", size)
    want = hashlib.sha256(docfile(target.lstrip("/"))).hexdigest()
    s = connect(maxseg=88)
    s.sendall(req(target, close=True))
    data, how = read_all(s, idle=CFG.timeout, limit=CFG.timeout * 20)
    resps, rest = split_responses(data)
    check(len(resps) == 1 and not rest and how == "eof",
          "%d responses, %d bytes more, ended by %s: %s" %
          (len(resps), len(rest), how, show(data[:200])))
    code, f, body = resps[0]
    got = hashlib.sha256(body).hexdigest()
    check(code == 200 and len(body) == size and got == want,
          "status %d, %d bytes, sha256 %s; want 200, %d, %s" %
          (code, len(body), got[:16], size, want[:16]))


# ---------------------------------------------------------------------------
# Out of memory as a response starts

DEBUGFS = "/sys/kernel/debug"
FAILSLAB = DEBUGFS + "/failslab"
FCLONE_FAILSLAB = "/sys/kernel/slab/skbuff_fclone_cache/failslab"
TRACEFS = "/sys/kernel/tracing"
OOM_TEST = ("TCP out of memory as a response starts (its skbs fail to "
            "allocate): kweb retries a few times a second, not at once "
            "in a loop, and answers once memory is back")


def failslab_ready():
    """Whether this kernel can fail a slab cache's allocations on demand
    (CONFIG_FAILSLAB: the debug kernel)."""
    if not os.path.isdir(FAILSLAB) and os.path.isdir(DEBUGFS):
        subprocess.run(["mount", "-t", "debugfs", "none", DEBUGFS],
                       capture_output=True)
    return os.path.isdir(FAILSLAB) and os.path.exists(FCLONE_FAILSLAB)


def write_file(path, value):
    with open(path, "w") as f:
        f.write(value)


class FailSkbs:
    """While on, every allocation of a TCP send skb (skbuff_fclone_cache)
    that cannot sleep fails: kweb's sockets allocate GFP_ATOMIC, the
    client's (process context) GFP_KERNEL. So kweb's sends fail with
    nothing queued, TCP's out-of-memory case, while the client's work."""

    KNOBS = {"cache-filter": "Y", "ignore-gfp-wait": "Y",
             "probability": "100", "interval": "1", "times": "-1",
             "space": "0", "verbose": "0"}

    def __init__(self):
        self.saved = {}
        for k, v in self.KNOBS.items():
            path = os.path.join(FAILSLAB, k)
            with open(path) as f:
                self.saved[path] = f.read().strip()
            write_file(path, v)
        self.on = False

    def set(self, on):
        try:
            write_file(FCLONE_FAILSLAB, "1" if on else "0")
        except OSError as e:
            # A cache merged with others refuses (boot with slab_nomerge).
            raise Fail("%s: %s" % (FCLONE_FAILSLAB, e))
        self.on = on

    def close(self):
        if self.on:
            self.set(False)
        for path, v in self.saved.items():
            write_file(path, v)


class WorkRuns:
    """Counts the runs of kweb's connection work item from now on, with
    the workqueue tracepoint in a tracefs instance of its own."""

    def __init__(self):
        if not os.path.isdir(os.path.join(TRACEFS, "instances")):
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                           capture_output=True)
        addr = None
        with open("/proc/kallsyms") as f:
            for line in f:
                p = line.split()
                if len(p) >= 3 and p[2] == "kweb_conn_work":
                    addr = int(p[0], 16)
        check(addr, "kweb_conn_work is not in /proc/kallsyms (as 0)")
        self.inst = os.path.join(TRACEFS, "instances", "kweb-hostile")
        if os.path.isdir(self.inst):
            os.rmdir(self.inst)
        os.mkdir(self.inst)
        self.ev = os.path.join(self.inst,
                               "events/workqueue/workqueue_execute_start")
        write_file(os.path.join(self.ev, "filter"), "function == 0x%x" % addr)
        write_file(os.path.join(self.ev, "enable"), "1")

    def count(self):
        with open(os.path.join(self.inst, "trace")) as f:
            return sum(1 for line in f if not line.startswith("#"))

    def close(self):
        write_file(os.path.join(self.ev, "enable"), "0")
        os.rmdir(self.inst)


# Starved this long; kweb retries every 8-200 ms (sk_stream_wait_memory()'s
# random 2..HZ/5+1 jiffies), about 20 times. At once in a loop, thousands.
OOM_SECONDS = 2.0
OOM_MAX_RUNS = 60


@hostile(OOM_TEST)
def t_tcp_out_of_memory():
    # Cached, so that softirq tries first, then the worker.
    s = connect()
    s.sendall(req("/small.txt", close=True))
    read_all(s, idle=CFG.timeout)
    fail = FailSkbs()
    runs = None
    try:
        work = WorkRuns()
        try:
            s = connect()
            fail.set(True)
            s.sendall(req("/small.txt", close=True))
            time.sleep(OOM_SECONDS)
            runs = work.count()
            fail.set(False)
            data, how = read_all(s, idle=CFG.timeout)
        finally:
            work.close()
    finally:
        fail.close()
    note("%d runs of kweb's work item in %.0f s of failed sends" %
         (runs, OOM_SECONDS))
    resps, rest = split_responses(data)
    check(len(resps) == 1 and not rest and how == "eof",
          "%d responses, %d bytes more, ended by %s: %s" %
          (len(resps), len(rest), how, show(data[:300])))
    code, f, body = resps[0]
    check(code == 200 and body == docfile("small.txt"),
          "status %d: %s" % (code, show(body)))
    check(0 < runs <= OOM_MAX_RUNS,
          "kweb's work item ran %d times in %.0f s of failed sends (at "
          "most %d: it must wait between tries)" %
          (runs, OOM_SECONDS, OOM_MAX_RUNS))


# ---------------------------------------------------------------------------
# An orphan's timers

class LoLoss:
    """Drops every packet on lo while on: a FIFO of no room as its root
    qdisc (every kernel has pfifo; the debug one has no netem). One tc
    reads its commands from a pipe, so that switching costs no fork: a
    fork takes seconds on a loaded debug guest, and a loss that long also
    drops the probes the test waits for."""

    def __init__(self):
        self.tc = subprocess.Popen(
            ["stdbuf", "-oL", "tc", "-batch", "-"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            bufsize=1)
        self.on = False
        self._do("")

    def _do(self, cmd):
        # Each command is followed by a show: its line says it is done.
        self.tc.stdin.write("%sqdisc show dev lo\n" % cmd)
        self.tc.stdin.flush()
        line = self.tc.stdout.readline()
        check(line.startswith("qdisc "), "tc: %s%s" % (cmd, line.strip()))
        return line

    def set(self, on):
        line = self._do("qdisc %s dev lo root%s\n" % (
            "add" if on else "del", " pfifo limit 0" if on else ""))
        check(("pfifo" in line) == on, "tc: lo's qdisc is %s" % line)
        self.on = on

    def close(self):
        if self.on:
            subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"],
                           capture_output=True)
        self.tc.stdin.close()
        self.tc.wait()


@hostile("kweb closes (linger timeout) with its response queued to a zero "
         "window, then the client's window update is lost: the orphan "
         "probes again and the client gets every byte")
def t_orphan_window_lost():
    # tcp_close() stops the timers of a kernel socket's child unless it
    # holds a netns reference: without one, this orphan never probes
    # again and the client waits for good.
    size = 256 << 10
    target = make_file("orphan.bin", size)
    want = docfile(target.lstrip("/"))
    # A tiny window that is never read: kweb queues the rest and its FIN,
    # lingers for the client's FIN (5 s), and closes.
    loss = LoLoss()
    try:
        base = counters().get("connections_open", 0)
        seen = Seen()
        s = connect(rcvbuf=4096)
        s.sendall(req(target, close=True))
        time.sleep(0.5)
        deadline = time.monotonic() + CFG.close_wait
        while counters().get("connections_open", 0) > base and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        check(counters().get("connections_open", 0) == base,
              "kweb still holds the connection after %.0f s" %
              CFG.close_wait)
        seen.snap("after kweb's close")
        data = bytearray()
        loss.set(True)
        # Reading sends the window update, which is dropped.
        s.setblocking(False)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except BlockingIOError:
            pass
        time.sleep(0.2)
        loss.set(False)
    finally:
        loss.close()
    # Probes back off to seconds apart: wait for three times the usual.
    rest, how = read_all(s, idle=CFG.timeout * 3, limit=CFG.timeout * 20)
    data += rest
    resps, extra = split_responses(bytes(data))
    if len(resps) != 1 or extra or how != "eof":
        # The counters and sockets only when it failed: a fork or two.
        seen.snap("at the end")
        raise Fail("%d responses, %d bytes more (%d in all), ended by %s; "
                   "%s" % (len(resps), len(extra), len(data), how,
                           seen.show()))
    code, f, body = resps[0]
    check(code == 200 and body == want,
          "status %d, %d bytes; want 200, %d" % (code, len(body), size))


# ---------------------------------------------------------------------------
# --exit-load: load across a namespace's deletion, for integration.sh

# The zero-window orphans' file: larger than the client's 4 KiB window, so
# most of it waits in kweb's send queue behind a shut window, and small
# enough that all of it fits there, so that kweb closes at once. At 32 KiB
# it did not always fit on the debug kernel: TCP splits what it queues to
# half the peer's largest window, and each of those small skbs costs its
# own overhead against the send buffer. A response left waiting for room
# is kweb's until send_timeout (60 s), as it would be nginx's.
EXIT_FILE = ("exit.bin", 16 << 10)


class ExitLoad:
    """Clients of a listener in a network namespace that is deleted
    while they run (integration.sh's netns_exit). Every response must be
    exact: the namespace lives on, deleted, while something holds it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.deleted = False
        self.after = 0          # requests answered after the deletion
        self.counts = {}
        self.errors = []
        self.quiet = []         # clients that never close
        self.small = docfile("small.txt")
        self.big = docfile("big.bin")

    def sock(self, rcvbuf=None):
        s = socket.socket(family(), socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(CFG.timeout)
        s.connect((CFG.host, CFG.port))
        return s

    def done(self, kind, n=1):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + n
            if self.deleted:
                self.after += n

    def error(self, kind, msg):
        with self.lock:
            self.errors.append("%s%s: %s" % (
                kind, " (after the deletion)" if self.deleted else "", msg))

    def small_ok(self, kind, data, how, want_eof=True):
        resps, rest = split_responses(data)
        if len(resps) != 1 or rest or (want_eof and how != "eof"):
            raise Fail("%d responses, %d bytes more, ended by %s: %s" %
                       (len(resps), len(rest), how, show(data)))
        code, _, body = resps[0]
        if code != 200 or body != self.small:
            raise Fail("status %d, %s" % (code, show(body)))
        self.done(kind)

    def one(self, s):
        """One response on a keep-alive connection."""
        data = bytearray()
        while True:
            resps, rest = split_responses(bytes(data))
            if resps:
                check(len(resps) == 1 and not rest,
                      "%d responses at once" % len(resps))
                return resps[0]
            chunk = s.recv(65536)
            check(chunk, "EOF after %s" % show(bytes(data)))
            data += chunk

    @staticmethod
    def idle_before_send(s):
        """Seconds between the last data this socket received (or its
        connection) and the last it sent, by the kernel's clock
        (struct tcp_info: tcpi_last_data_sent and tcpi_last_data_recv,
        milliseconds ago, at offsets 44 and 52). kweb's idle clock runs
        from its last send (or its accept); this thread's own clock can
        lag it by seconds on a slow guest."""
        info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 64)
        sent_ago, recv_ago = struct.unpack_from("=I4xI", info, 44)
        return (recv_ago - sent_ago) / 1000

    def keepalive(self):
        """Requests on one connection; now and then idle past the
        keep-alive timeout, for kweb to close it with its FIN."""
        s, n = None, 0
        while not self.stop.is_set():
            if s is None:
                s = self.sock()
            s.sendall(req("/small.txt"))
            try:
                code, _, body = self.one(s)
            except Fail:
                # kweb may close an idle connection as its timeout ends
                # (a slow guest's thread can idle that long before its
                # request): not well before.
                if self.idle_before_send(s) < CFG.keepalive * 0.5:
                    raise
                s.close()
                s, n = None, 0
                self.done("keep-alive timeout")
                continue
            check(code == 200 and body == self.small,
                  "status %d, %s" % (code, show(body)))
            self.done("keep-alive")
            n += 1
            if n % 8 == 0:
                time.sleep(CFG.keepalive + 0.5)
                data, how = read_all(s, idle=CFG.timeout)
                check(not data and how == "eof",
                      "idle past keep-alive: %s, %s" % (how, show(data)))
                s.close()
                s, n = None, 0
                self.done("keep-alive timeout")
        if s is not None:
            s.close()

    def per_request(self):
        """A connection per request, HTTP/1.0: kweb closes first."""
        while not self.stop.is_set():
            s = self.sock()
            s.sendall(req("/small.txt", "HTTP/1.0"))
            data, how = read_all(s, idle=CFG.timeout)
            s.close()
            self.small_ok("per request", data, how)

    def fin_first(self):
        """The client's FIN behind its request: kweb closes right after
        its own FIN, which is still in flight (LAST_ACK)."""
        while not self.stop.is_set():
            s = self.sock()
            s.sendall(req("/small.txt", close=True))
            s.shutdown(socket.SHUT_WR)
            data, how = read_all(s, idle=CFG.timeout)
            s.close()
            self.small_ok("client FIN first", data, how)

    def reset(self):
        """A reset mid-body."""
        while not self.stop.is_set():
            s = self.sock()
            s.sendall(req("/big.bin"))
            data = read_n(s, 40000)
            check(data.startswith(b"HTTP/1.1 200 ") and
                  self.big[:1000] in data,
                  "big.bin: %s" % show(data[:200]))
            rst(s)
            self.done("reset mid-body")

    def silent(self):
        """Reads kweb's FIN and never sends its own: kweb lingers, then
        closes in FIN_WAIT2."""
        while not self.stop.is_set():
            if len(self.quiet) == 8:
                self.stop.wait()
                return
            s = self.sock()
            s.sendall(req("/small.txt", close=True))
            data, how = read_all(s, idle=CFG.timeout)
            self.quiet.append(s)
            self.small_ok("never closed", data, how)
            self.stop.wait(1)

    def worker(self, fn):
        kind = fn.__name__
        while not self.stop.is_set():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - reported as the load's
                self.error(kind, str(e) if isinstance(e, Fail) else
                           "%s: %s" % (type(e).__name__, e))
                self.stop.wait(0.5)

    def on_deleted(self, *_):
        with self.lock:
            self.deleted = True


def kweb_open_in(ns):
    """connections_open of kweb in namespace ns."""
    r = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/kweb"],
                       capture_output=True, text=True, timeout=120)
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) == 2 and p[0] == "connections_open":
            return int(p[1])
    return -1


def exit_load():
    """--exit-load S: see the module's docstring. Prints "ready" once
    the zero-window orphans exist and the load runs."""
    name, size = EXIT_FILE
    target = make_file(name, size)
    want = docfile(target.lstrip("/"))
    load = ExitLoad()
    signal.signal(signal.SIGUSR1, load.on_deleted)
    bad = []
    # Orphans that hold the namespace through the load: a request and the
    # client's FIN, the response queued to a window that stays shut. kweb
    # closes at once, with its FIN behind the unsent bytes.
    zero = []
    for _ in range(CFG.exit_orphans):
        s = load.sock(rcvbuf=4096)
        s.sendall(req(target, close=True))
        s.shutdown(socket.SHUT_WR)
        zero.append(s)
    end = time.monotonic() + CFG.close_wait
    n = kweb_open_in(CFG.netns)
    while n != 0 and time.monotonic() < end:
        time.sleep(0.2)
        n = kweb_open_in(CFG.netns)
    if n != 0:
        print("kweb still holds %d of the %d zero-window connections after "
              "%.0f s" % (n, len(zero), CFG.close_wait), flush=True)
        return 1
    workers = [load.keepalive, load.keepalive, load.per_request,
               load.per_request, load.fin_first, load.fin_first,
               load.reset, load.silent]
    threads = [threading.Thread(target=load.worker, args=(fn,))
               for fn in workers]
    for t in threads:
        t.start()
    print("ready %d" % len(zero), flush=True)
    # S seconds of load in all, half of them at least after the deletion.
    t0 = time.monotonic()
    while not load.deleted and time.monotonic() < t0 + CFG.exit_load * 20:
        time.sleep(0.1)
    time.sleep(max(CFG.exit_load / 2, t0 + CFG.exit_load - time.monotonic()))
    load.stop.set()
    for t in threads:
        t.join()
    for kind, n in sorted(load.counts.items()):
        print("%s: %d" % (kind, n))
    print("answered after the deletion: %d" % load.after)
    bad += load.errors
    if not load.deleted:
        bad.append("no SIGUSR1: the namespace was not deleted under load")
    elif not load.after:
        bad.append("nothing answered after the namespace's deletion")
    # Last, with no other connection left to kweb (none of the clients',
    # and kweb's own closes done), the orphans finish, their namespace
    # deleted meanwhile: every byte. No close of kweb's comes after them.
    for s in load.quiet:
        s.close()
    time.sleep(CFG.settle)
    for i, s in enumerate(zero):
        data, how = read_all(s, idle=CFG.timeout, limit=CFG.timeout * 3)
        s.close()
        resps, rest = split_responses(data)
        if len(resps) != 1 or rest or how != "eof" or \
                resps[0][0] != 200 or resps[0][2] != want:
            bad.append("zero-window orphan %d: %d responses, %d bytes "
                       "(%d more), ended by %s; want 200, %d bytes, EOF" %
                       (i, len(resps), len(resps[0][2]) if resps else 0,
                        len(rest), how, size))
    print("zero-window orphans read: %d" % len(zero))
    for line in bad[:20]:
        print("error: %s" % line)
    return 1 if bad else 0


# ---------------------------------------------------------------------------
# --hold: zero-window clients for the shell-level cases

def hold():
    socks = []
    for _ in range(CFG.hold):
        s = new_sock(rcvbuf=2048)
        s.connect((CFG.host, CFG.port))
        s.sendall(req(CFG.hold_target))
        socks.append(s)
    for s in socks:
        got = read_n(s, 12)
        if not got.startswith(b"HTTP/1.1 200"):
            print("hold: no 200: %s" % show(got), flush=True)
            return 1
    print("ready %d" % len(socks), flush=True)
    time.sleep(CFG.hold_seconds)
    return 0


def main():
    global CFG
    ap = client_args(
        __doc__, timeout_help="seconds a blocking call may take")
    ap.add_argument("--close-wait", type=float, default=15.0,
                    help="seconds kweb may take to drop a closed connection")
    ap.add_argument("--light", action="store_true",
                    help="smaller files (the debug kernel)")
    ap.add_argument("--kwebctl", help="kwebctl, to change settings")
    ap.add_argument("--only", help="run only tests whose name matches")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--hold", type=int, default=0, metavar="N")
    ap.add_argument("--hold-target", default="/big.bin")
    ap.add_argument("--hold-seconds", type=float, default=600)
    ap.add_argument("--exit-load", type=float, default=0, metavar="S")
    ap.add_argument("--netns", help="--exit-load: the listener's namespace")
    ap.add_argument("--exit-orphans", type=int, default=4, metavar="N")
    ap.add_argument("--keepalive", type=float, default=1,
                    help="--exit-load: kweb's keep-alive timeout, seconds")
    ap.add_argument("--settle", type=float, default=3,
                    help="--exit-load: seconds for kweb to close the "
                    "load's connections before the orphans finish")
    CFG = ap.parse_args()
    if CFG.hold:
        return hold()
    if CFG.exit_load:
        return exit_load()
    if not failslab_ready():
        note("not run: %s: no failslab (CONFIG_FAILSLAB) in this kernel"
             % OOM_TEST)
        TESTS.tests = [t for t in TESTS.tests if t[0] != OOM_TEST]
    if CFG.only:
        TESTS.tests = [t for t in TESTS.tests if re.search(CFG.only, t[0])]
    if CFG.list:
        for name, _ in TESTS.tests:
            if not (CFG.light and name in TESTS.not_light):
                print(name)
        return 0
    return TESTS.run(light=CFG.light)


if __name__ == "__main__":
    sys.exit(main())
