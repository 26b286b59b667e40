#!/usr/bin/env python3
"""Fast-path tests for kweb, run inside a guest next to http_test.py.

    fastpath_test.py --host H --port P --docroot D [--wrk SECONDS]
                     [--churn N]

Proves with /proc/net/kweb's counters that cached files are answered in
softirq and spliced, never copied; that a file rewritten, truncated,
replaced by rename or whose directory is renamed is served fresh; and
(with --wrk) runs a 64-connection keep-alive wrk load whose every
response must be a 200 of the right size; (with --churn) two httperf
processes side by side make N connections each, one request apiece, so
that new connections are served and closed while others are still being
adopted. TAP lines, then
"# N passed, N failed"; exit status 0 iff none failed.
"""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

PROC = "/proc/net/kweb"
# struct tcp_info (linux/tcp.h): tcpi_segs_in, tcpi_data_segs_in.
TCPI_SEGS_IN = 140
TCPI_DATA_SEGS_IN = 152


def segments_in(sock):
    """Segments the socket received, and those of them with data."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 160)
    return (struct.unpack_from("I", info, TCPI_SEGS_IN)[0],
            struct.unpack_from("I", info, TCPI_DATA_SEGS_IN)[0])


def counters():
    """The "name value" lines; "listener ..." lines are not counters."""
    with open(PROC) as f:
        return {p[0]: int(p[1]) for p in (line.split() for line in f)
                if len(p) == 2 and p[1].lstrip("-").isdigit()}


class Client:
    """One keep-alive connection; exact status and body checks."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("server closed the connection")
        self.buf += data

    def response(self):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        fields = dict(l.split(": ", 1) for l in lines[1:])
        n = int(fields.get("Content-Length", "0"))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return lines[0], fields, body

    def get(self, path):
        self.send(path)
        return self.response()

    def send(self, *paths):
        req = b"".join(b"GET %s HTTP/1.1\r\nHost: kweb\r\n\r\n" % p.encode()
                       for p in paths)
        self.sock.sendall(req)

    def close(self):
        self.sock.close()


class Runner:
    def __init__(self):
        self.n = self.passed = self.failed = 0

    def check(self, name, cond, diag=""):
        self.n += 1
        if cond:
            self.passed += 1
            print("ok %d - %s" % (self.n, name))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, name))
            for line in str(diag).splitlines():
                print("#   " + line)
        sys.stdout.flush()

    def run(self, name, fn):
        try:
            fn()
        except Exception as e:  # a crash is a failed test, not the end
            self.check(name + " (raised)", False, "%s: %s" % (type(e).__name__, e))


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o644)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--docroot", required=True)
    ap.add_argument("--wrk", type=int, default=0,
                    help="seconds of 64-connection wrk load (0: none)")
    ap.add_argument("--churn", type=int, default=0,
                    help="connections per httperf process (0: none)")
    args = ap.parse_args()
    t = Runner()
    top = os.path.join(args.docroot, "fast")
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(os.path.join(top, "d"))
    os.chmod(top, 0o755)
    os.chmod(os.path.join(top, "d"), 0o755)
    small = b"fast path\n"
    mid = bytes((i * 7 + 3) & 0xFF for i in range(1 << 20))  # 1 MiB
    write(os.path.join(top, "small.txt"), small)
    write(os.path.join(top, "mid.bin"), mid)
    write(os.path.join(top, "d", "index.html"), b"<p>d</p>\n")
    # kweb keeps no cache entry in the timestamp tick of a change on its
    # way: these must be cached by their first GET.
    time.sleep(0.05)

    def expect(c, path, body, name):
        status, fields, got = c.get(path)
        t.check(name, status == "HTTP/1.1 200 OK" and got == body,
                "status %r, %d bytes, first %r (want %d bytes %r)"
                % (status, len(got), got[:40], len(body), body[:40]))

    def softirq_small():
        c = Client(args.host, args.port)
        expect(c, "/fast/small.txt", small, "first GET of a small file (fills the cache)")
        before = counters()
        for _ in range(10):
            c.get("/fast/small.txt")
        after = counters()
        c.close()
        d = after["requests_softirq"] - before["requests_softirq"]
        t.check("10 repeated GETs of a cached file answered in softirq",
                d == 10, "requests_softirq grew by %d" % d)
        h = after["cache_hits"] - before["cache_hits"]
        t.check("... each a cache hit", h == 10, "cache_hits grew by %d" % h)

    def pipelined():
        c = Client(args.host, args.port)
        c.get("/fast/d/")
        before = counters()
        c.send("/fast/small.txt", "/fast/d/", "/fast/small.txt")
        bodies = [c.response()[2] for _ in range(3)]
        after = counters()
        c.close()
        t.check("3 pipelined cached requests answered in order",
                bodies == [small, b"<p>d</p>\n", small], repr(bodies))
        d = after["requests_softirq"] - before["requests_softirq"]
        t.check("... all 3 in softirq", d == 3, "requests_softirq grew by %d" % d)

    def spliced():
        c = Client(args.host, args.port)
        expect(c, "/fast/mid.bin", mid, "1 MiB file, first GET")
        before = counters()
        for i in range(3):
            expect(c, "/fast/mid.bin", mid, "1 MiB file from the cache, GET %d" % (i + 2))
        after = counters()
        c.close()
        s = after["body_bytes_spliced"] - before["body_bytes_spliced"]
        t.check("cached bodies are spliced: %d bytes" % (3 * len(mid)),
                s == 3 * len(mid), "body_bytes_spliced grew by %d" % s)
        t.check("no body byte was ever copied",
                after["body_bytes_copied"] == 0,
                "body_bytes_copied = %d" % after["body_bytes_copied"])
        t.check("pinned bytes cover the cached files",
                after["pinned_bytes"] >= len(mid), after)

    def freshness():
        c = Client(args.host, args.port)
        path = os.path.join(top, "small.txt")
        url = "/fast/small.txt"
        expect(c, url, small, "before any change")
        c.get(url)  # surely cached now
        write(path, b"rewritten in place, longer\n")
        expect(c, url, b"rewritten in place, longer\n", "rewritten: new bytes at once")
        with open(path, "r+b") as f:
            f.truncate(4)
        expect(c, url, b"rewr", "truncated: new bytes at once")
        with open(path, "r+b") as f:   # same size, same second: ctime moves
            f.write(b"REWR")
        expect(c, url, b"REWR", "rewritten, same size: new bytes at once")
        tmp = os.path.join(top, "tmp.txt")
        write(tmp, b"replaced by rename\n")
        os.rename(tmp, path)
        expect(c, url, b"replaced by rename\n", "replaced by rename: new file at once")
        c.get("/fast/d/")
        os.rename(os.path.join(top, "d"), os.path.join(top, "d.old"))
        os.mkdir(os.path.join(top, "d"))
        os.chmod(os.path.join(top, "d"), 0o755)
        write(os.path.join(top, "d", "index.html"), b"<p>new d</p>\n")
        expect(c, "/fast/d/", b"<p>new d</p>\n", "directory renamed and recreated: new index")
        os.unlink(path)
        status, _, _ = c.get(url)
        t.check("deleted: 404 at once", status == "HTTP/1.1 404 Not Found", status)
        write(path, small)
        os.chmod(path, 0o600)
        status, _, _ = c.get(url)
        t.check("made unreadable: 403 at once", status == "HTTP/1.1 403 Forbidden", status)
        os.chmod(path, 0o644)
        expect(c, url, small, "readable again")
        c.close()

    def wrk_load():
        script = os.path.join(top, "check.lua")
        with open(script, "w") as f:
            f.write("""
-- Each wrk thread has its own Lua state: count there, add up in done().
local threads = {}
function setup(thread) table.insert(threads, thread) end
bad = 0
function response(status, headers, body)
  if status ~= 200 or #body ~= %d then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("bad") end
  io.write(string.format("requests %%d bad %%d errors %%d\\n",
    summary.requests, total, summary.errors.connect +
    summary.errors.read + summary.errors.write +
    summary.errors.status + summary.errors.timeout))
end
""" % len(small))
        host = "[%s]" % args.host if ":" in args.host else args.host
        before = counters()
        out = subprocess.run(
            ["wrk", "-t2", "-c64", "-d%ds" % args.wrk, "--timeout", "30s",
             "-s", script,
             "http://%s:%d/fast/small.txt" % (host, args.port)],
            capture_output=True, text=True, timeout=args.wrk + 90).stdout
        after = counters()
        m = re.search(r"requests (\d+) bad (\d+) errors (\d+)", out)
        t.check("wrk -c64 %ds keep-alive: every response a 200 of the right size"
                % args.wrk, m and int(m.group(1)) > 0 and m.group(2) == "0"
                and m.group(3) == "0", out)
        d = after["requests_softirq"] - before["requests_softirq"]
        print("# wrk: %s; softirq %d of %d requests" % (
            m.group(0) if m else "?", d,
            d + after["requests_worker"] - before["requests_worker"]))

    def churn():
        before = counters()
        cmd = ["httperf", "--server", args.host, "--port", str(args.port),
               "--uri", "/fast/small.txt", "--num-conns", str(args.churn),
               "--num-calls", "1", "--timeout", "10", "--hog"]
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
                 for _ in range(2)]
        outs = [p.communicate(timeout=600)[0] for p in procs]
        after = counters()
        replies = 0
        for i, out in enumerate(outs):
            m = re.search(r"Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) "
                          r"4xx=(\d+) 5xx=(\d+)", out)
            e = re.search(r"Errors: total (\d+)", out)
            good = (m and int(m.group(2)) == args.churn and e and
                    e.group(1) == "0" and procs[i].returncode == 0)
            replies += int(m.group(2)) if m else 0
            t.check("httperf %d: %d connections, each a 200, no error"
                    % (i + 1, args.churn), good,
                    "\n".join(l for l in out.splitlines()
                              if re.match(r"(Total|Reply status|Errors)", l))
                    or out[-400:])
        n = sum(after[k] - before[k] for k in ("requests_softirq", "requests_worker"))
        a = after["connections_accepted"] - before["connections_accepted"]
        t.check("... kweb accepted and answered every one",
                a == 2 * args.churn and n == 2 * args.churn,
                "connections_accepted grew by %d, requests by %d, want %d"
                % (a, n, 2 * args.churn))
        print("# churn: %d replies" % replies)

    def segments():
        # A response from softirq carries the ACK of its request, and a
        # connection's last also kweb's FIN: after the SYN-ACK the client
        # gets one segment, with neither a pure ACK before it (nginx sends
        # one) nor a FIN of its own after it.
        warm = Client(args.host, args.port)
        warm.get("/fast/small.txt")
        warm.close()
        for last in (False, True):
            c = Client(args.host, args.port)
            c.sock.sendall(b"GET /fast/small.txt HTTP/1.1\r\nHost: kweb\r\n%s\r\n"
                           % (b"Connection: close\r\n" if last else b""))
            status, fields, body = c.response()
            if last:
                while c.sock.recv(65536):
                    pass
            segs, data = segments_in(c.sock)
            c.close()
            what = "Connection: close" if last else "keep-alive"
            t.check("cached, %s: 200, and after the SYN-ACK one segment%s"
                    % (what, ", with the FIN" if last else ""),
                    status == "HTTP/1.1 200 OK" and body == small and
                    segs == 2 and data == 1,
                    "%r, %d bytes, %d segments in, %d with data"
                    % (status, len(body), segs, data))

    t.run("softirq", softirq_small)
    t.run("segments", segments)
    t.run("pipelined", pipelined)
    t.run("spliced", spliced)
    t.run("freshness", freshness)
    with open(os.path.join(top, "small.txt"), "wb") as f:
        f.write(small)
    if args.wrk:
        t.run("wrk", wrk_load)
    if args.churn:
        t.run("churn", churn)
    print("# %d passed, %d failed" % (t.passed, t.failed))
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
