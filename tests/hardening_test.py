#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile-client and file-churn tests for kweb, run inside a guest.

    hardening_test.py --host H --port P --docroot D --header-timeout S

kweb must be loaded with header_timeout=S (a few seconds). Tests:

- slowloris: --slow connections (default 300) each trickle a request head
  one field a second; every one of them must be closed by the server within
  S seconds and a margin, while a normal client, making one request per
  fresh connection throughout, gets every answer right. Its latency during
  the attack is reported (median, 99th percentile, max), never asserted.
- file churn: clients fetch files that another thread keeps rewriting in
  place, truncating, replacing by rename, deleting and making unreadable.
  Every 200 must be one whole version of the file (never a mix, never a
  version older than one that was complete before the request was sent);
  a body shorter than its Content-Length is only allowed if the server
  then closed the connection.
- idle connections: --idle-conns (default 2,000) keep-alive connections,
  each after one GET, held open idle, must add less than a page each to
  the kernel's memory beyond what as many connections left in a plain
  listener's accept queue add (bench/idle.py's measure). Not with
  --light (the debug kernel).

TAP output, "# N passed, N failed"; exit status 0 iff none failed.
"""

import os
import select
import socket
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "bench"))
from httplib_raw import (Connection, NoResponse, ProtocolError,  # noqa: E402
                         Timeout, show)
from taplib import Suite, check, client_args, note  # noqa: E402
import guest  # noqa: E402  (bench/: the file descriptor limit)
import idle  # noqa: E402  (bench/: the kernel's memory, measured as there)

CFG = None
TESTS = Suite()



def family():
    return socket.AF_INET6 if ":" in CFG.host else socket.AF_INET


def req(target):
    host = "[%s]" % CFG.host if ":" in CFG.host else CFG.host
    return ("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" %
            (target, host)).encode()


def fetch(target, timeout=10.0):
    """One request on a fresh connection: (response, state after it)."""
    conn = Connection(CFG.host, CFG.port, time.monotonic() + timeout)
    try:
        resp = conn.request(req(target))
        return resp, conn
    except BaseException:
        conn.close()
        raise


# ---------------------------------------------------------------------------
# slowloris

class SlowlorisRound:
    """What one slowloris round saw (tests/soak.py runs rounds in a loop)."""

    def __init__(self, slow, limit, closed_at, latencies, errors):
        self.slow = slow                # slow connections opened
        self.limit = limit              # seconds they had to be closed in
        self.closed_at = closed_at      # {index: seconds after start}
        self.latencies = latencies      # the normal client's, seconds
        self.errors = errors            # the normal client's failures
        self.late = [t for t in closed_at.values() if t > limit]


def slowloris_round(nslow):
    """nslow connections trickle a request head one field a second until
    the server closes them all (or limit + 5 s pass), while a normal client
    makes one request per fresh connection and checks every answer."""
    with open(os.path.join(CFG.docroot, "small.txt"), "rb") as f:
        want = f.read()
    slow = []
    for i in range(nslow):
        s = socket.socket(family(), socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((CFG.host, CFG.port))
        s.sendall(b"GET /small.txt HTTP/1.1\r\n")
        s.setblocking(False)
        slow.append(s)
    start = time.monotonic()
    closed_at = {}
    latencies, errors = [], []
    stop = threading.Event()

    def normal():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                resp, conn = fetch("/small.txt")
                conn.close()
                if resp.code != 200 or resp.body != want:
                    errors.append("status %d, %d body bytes" %
                                  (resp.code, len(resp.body)))
            except (OSError, NoResponse, ProtocolError, Timeout) as e:
                errors.append(repr(e))
            latencies.append(time.monotonic() - t0)

    th = threading.Thread(target=normal)
    th.start()
    limit = CFG.header_timeout + CFG.margin
    try:
        n = 0
        while len(closed_at) < len(slow) and \
                time.monotonic() - start < limit + 5:
            n += 1
            for i, s in enumerate(slow):
                if i in closed_at:
                    continue
                try:
                    s.send(b"X-Slow-%d: %d\r\n" % (n, i))
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    closed_at[i] = time.monotonic() - start
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                live = [s for i, s in enumerate(slow) if i not in closed_at]
                if not live:
                    break
                r, _, _ = select.select(live, [], [],
                                        max(0, deadline - time.monotonic()))
                for s in r:
                    i = slow.index(s)
                    try:
                        data = s.recv(4096)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""
                    if not data:
                        closed_at[i] = time.monotonic() - start
    finally:
        stop.set()
        th.join()
        for s in slow:
            s.close()

    return SlowlorisRound(len(slow), limit, closed_at, latencies, errors)


@TESTS.test("slowloris: trickling connections are cut off at header_timeout; "
      "a normal client is answered throughout")
def t_slowloris():
    r = slowloris_round(CFG.slow)
    closed_at, latencies, errors = r.closed_at, r.latencies, r.errors
    note("%d slow connections: %d closed by the server, first at %.1f s, "
         "last at %.1f s (header_timeout %d s)" %
         (r.slow, len(closed_at),
          min(closed_at.values(), default=0),
          max(closed_at.values(), default=0), CFG.header_timeout))
    if latencies:
        q = sorted(latencies)
        note("normal client during the attack: %d requests, %d errors, "
             "latency median %.1f ms, p99 %.1f ms, max %.1f ms" %
             (len(q), len(errors), statistics.median(q) * 1000,
              q[min(len(q) - 1, int(len(q) * 0.99))] * 1000, q[-1] * 1000))
    check(len(closed_at) == r.slow, "%d of %d slow connections still "
          "open after %.0f s" % (r.slow - len(closed_at), r.slow,
                                 r.limit + 5))
    check(not r.late, "%d closed later than %d s" % (len(r.late), r.limit))
    check(latencies and not errors, "normal client: %d errors, first: %s" %
          (len(errors), errors[:1]))


# ---------------------------------------------------------------------------
# file churn

CHURN_DIR = "churn"


class Version:
    """Version v of a file: its bytes are all v % 251, its size depends on
    v, so a body tells which version it is."""

    @staticmethod
    def size(v):
        return 1000 + (v * 7919) % 200000

    @staticmethod
    def data(v):
        return bytes([v % 251]) * Version.size(v)


def churn_writer(root, names, stop, done_versions, gen, lock):
    """Keep changing the files. done_versions[name] = (status, body) of
    the file as it now is; gen[name] is odd while a change is under way."""
    v = 1
    step = 0
    while not stop.is_set():
        for name in names:
            path = os.path.join(root, name)
            v += 1
            kind = step % 6
            step += 1
            with lock:
                gen[name] += 1
            if kind == 0:           # rewrite in place
                with open(path, "r+b" if os.path.exists(path) else "wb") as f:
                    f.truncate(0)
                    f.write(Version.data(v))
                os.chmod(path, 0o644)
            elif kind == 1:         # replace by rename
                tmp = path + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(Version.data(v))
                os.chmod(tmp, 0o644)
                os.rename(tmp, path)
            elif kind == 2:         # truncate to a shorter version
                with lock:
                    short = done_versions[name][1]
                if short:
                    short = short[:len(short) // 3]
                    with open(path, "r+b") as f:
                        f.truncate(len(short))
                else:
                    short = Version.data(v)
                    with open(path, "wb") as f:
                        f.write(short)
                    os.chmod(path, 0o644)
                with lock:
                    done_versions[name] = (200, short)
                    gen[name] += 1
                continue
            elif kind == 3:         # delete
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
                with lock:
                    done_versions[name] = (404, None)
                    gen[name] += 1
                continue
            elif kind == 4:         # unreadable: 403
                state = (403, None) if os.path.exists(path) else (404, None)
                if state[0] == 403:
                    os.chmod(path, 0o600)
                with lock:
                    done_versions[name] = state
                    gen[name] += 1
                continue
            else:                   # a new file in its place
                with open(path, "wb") as f:
                    f.write(Version.data(v))
                os.chmod(path, 0o644)
            with lock:
                done_versions[name] = (200, Version.data(v))
                gen[name] += 1
        # Stable spells between changes, for requests to fall into.
        time.sleep(CFG.churn_period)


def classify(body):
    """The version a body is all of (mod 251), or None if mixed."""
    if not body:
        return None
    b = body[0]
    if body.count(bytes([b])) != len(body):
        return None
    return b


@TESTS.test("file churn: rewritten, truncated, renamed over, deleted and "
      "unreadable files are never served mixed or stale")
def t_churn():
    root = os.path.join(CFG.docroot, CHURN_DIR)
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o755)
    names = ["f%d.bin" % i for i in range(4)]
    for i, name in enumerate(names):
        with open(os.path.join(root, name), "wb") as f:
            f.write(Version.data(1))
        os.chmod(os.path.join(root, name), 0o644)
    stop = threading.Event()
    lock = threading.Lock()
    done = {n: (200, Version.data(1)) for n in names}
    gen = {n: 0 for n in names}
    stats = {"stable": 0, "200": 0, "403": 0, "404": 0, "short+closed": 0,
             "other": 0}
    problems = []

    def client(k):
        i = k
        while not stop.is_set():
            name = names[i % len(names)]
            i += 1
            with lock:
                want_code, want_body = done[name]
                gen_before = gen[name]
            try:
                resp, conn = fetch("/%s/%s" % (CHURN_DIR, name))
            except (NoResponse, OSError, Timeout) as e:
                with lock:
                    problems.append("no response: %r" % e)
                continue
            except ProtocolError as e:
                # A body cut short: fine only if the server then closed.
                with lock:
                    if "closed" in str(e):
                        stats["short+closed"] += 1
                    else:
                        problems.append("protocol error: %s" % e)
                continue
            conn.close()
            with lock:
                # Unchanged from before the request to after the answer:
                # the answer must be exactly what the file was.
                stable = gen_before % 2 == 0 and gen[name] == gen_before
                if stable:
                    stats["stable"] += 1
                    if resp.code != want_code or \
                            (want_body is not None and
                             resp.body != want_body):
                        problems.append(
                            "%s unchanged: status %d, %d bytes of %s; want "
                            "%d, %s bytes of %s" %
                            (name, resp.code, len(resp.body),
                             classify(resp.body), want_code,
                             len(want_body) if want_body else 0,
                             classify(want_body or b"")))
                    continue
                if resp.code in (403, 404):
                    stats[str(resp.code)] += 1
                    continue
                if resp.code != 200:
                    stats["other"] += 1
                    problems.append("status %d" % resp.code)
                    continue
                # Changed meanwhile: any version's bytes, or a partial
                # write's (writes are not atomic): only the framing counts.
                stats["200"] += 1
    threads = [threading.Thread(target=client, args=(k,))
               for k in range(CFG.churn_clients)]
    writer = threading.Thread(target=churn_writer,
                              args=(root, names, stop, done, gen, lock))
    writer.start()
    for t in threads:
        t.start()
    time.sleep(CFG.churn_seconds)
    stop.set()
    writer.join()
    for t in threads:
        t.join()

    # After the churn: every file served exactly as it is now.
    for name in names:
        path = os.path.join(root, name)
        with open(path, "wb") as f:
            f.write(b"final " + name.encode())
        os.chmod(path, 0o644)
        resp, conn = fetch("/%s/%s" % (CHURN_DIR, name))
        conn.close()
        check(resp.code == 200 and resp.body == b"final " + name.encode(),
              "after churn, %s: status %d, body %s" %
              (name, resp.code, show(resp.body, 60)))
    note("churn %d s, %d clients: %s" %
         (CFG.churn_seconds, CFG.churn_clients,
          ", ".join("%s %d" % kv for kv in stats.items())))
    check(not problems, "%d problems, first: %s" % (len(problems),
                                                    problems[:3]))
    check(stats["stable"] > 0, "no request fell between two changes")


# ---------------------------------------------------------------------------
# idle connections

def idle_conns(port, n, ask):
    """The kernel memory n connections to port add, held open idle; each
    (if ask) after one whole keep-alive response."""
    with open(os.path.join(CFG.docroot, "small.txt"), "rb") as f:
        want = f.read()
    socks = []
    idle.settle()
    before = idle.kernel_bytes()[0]
    try:
        for _ in range(n):
            s = socket.create_connection((CFG.host, port), timeout=10)
            socks.append(s)
            if not ask:
                continue
            s.sendall(b"GET /small.txt HTTP/1.1\r\nHost: kweb\r\n\r\n")
            data = b""
            while not data.endswith(want):
                chunk = s.recv(65536)
                check(chunk, "kweb closed an idle test connection")
                data += chunk
            check(data.startswith(b"HTTP/1.1 200 "), "not a 200: %s" %
                  show(data, 80))
        idle.settle()
        used = idle.kernel_bytes()[0] - before
        # Still open, all of them: none has an EOF (or anything) to read.
        poll = select.poll()
        for s in socks:
            poll.register(s, select.POLLIN)
        ended = poll.poll(0)
        check(not ended, "%d of the %d connections ended while idle" %
              (len(ended), n))
        return used
    finally:
        for s in socks:
            s.close()


@TESTS.test("idle keep-alive connections: kweb keeps less than a page of its "
            "own per connection (TCP's sockets aside)",
            not_light="KASAN's redzones and kmemleak's record of each "
            "object would be counted as kweb's")
def t_idle_memory():
    n = CFG.idle_conns
    guest.raise_nofile(4 * n)
    ls = socket.socket(family(), socket.SOCK_STREAM)
    ls.bind((CFG.host, 0))
    ls.listen(n + 64)
    try:
        tcp = idle_conns(ls.getsockname()[1], n, False)
    finally:
        ls.close()
    kweb = idle_conns(CFG.port, n, True)
    own = (kweb - tcp) / n
    note("%d idle connections: %.0f B each with kweb, %.0f B in an accept "
         "queue (TCP's sockets alone), %.0f B kweb's own" %
         (n, kweb / n, tcp / n, own))
    # A page fragment kept by each (sk->sk_frag: 32 KiB, 4 KiB at the
    # least) fails it.
    check(own < 4096, "kweb keeps %.0f B per idle connection" % own)


def main():
    global CFG
    ap = client_args(__doc__, timeout=None)
    ap.add_argument("--header-timeout", type=int, required=True)
    ap.add_argument("--margin", type=int, default=5,
                    help="seconds allowed past header_timeout")
    ap.add_argument("--slow", type=int, default=300)
    ap.add_argument("--churn-seconds", type=int, default=10)
    ap.add_argument("--churn-clients", type=int, default=6)
    ap.add_argument("--churn-period", type=float, default=0.2,
                    help="seconds between rounds of changes")
    ap.add_argument("--idle-conns", type=int, default=2000)
    ap.add_argument("--light", action="store_true",
                    help="the debug kernel: without the not_light tests")
    CFG = ap.parse_args()

    return TESTS.run(light=CFG.light)


if __name__ == "__main__":
    sys.exit(main())
