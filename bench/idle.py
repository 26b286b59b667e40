#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest side of `make bench`: what an idle keep-alive connection costs.

    idle.py --base DIR --out FILE.jsonl --kweb-ko KO [--conns N] [--rounds R]

For each side (kweb alone, nginx alone, alternating), N connections each
send one GET for /b/1k, read the whole 200, and are then held open,
idle. The memory the machine gained is read from /proc/meminfo and
from the nginx workers' VmRSS, and divided by N. The kernel's part is all
memory in use less the page cache and anonymous (user) memory, with the
per-CPU free page lists (/proc/zoneinfo) counted as free: pages a socket
holds outside any slab (a page fragment, say) count too, which Slab,
KernelStack, PageTables, Percpu and VmallocUsed alone (also recorded)
would not show.

What the TCP sockets themselves cost is measured the same way against a
listener that never accepts: its connections complete the handshake and
wait in the accept queue (client socket, server socket, nothing else).
Each side's "own" memory per connection is its kernel memory less that
baseline, plus (nginx) its workers' resident memory. One JSON line per
measurement, type "idle"; bench/report.py tabulates them. Python 3.9+
standard library only; run by tests/guest/bench.sh in the guest.
"""

import argparse
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest  # noqa: E402  (the bench's sides and docroot)

KERNEL_FIELDS = ("Slab", "KernelStack", "PageTables", "Percpu", "VmallocUsed")
PATH = guest.PREFIX + "1k.bin"


def meminfo():
    vals = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, _, rest = line.partition(":")
            vals[k] = int(rest.split()[0]) * 1024
    return vals


def pcp_free_bytes():
    """Free pages on the per-CPU lists, which MemFree leaves out."""
    pages = 0
    with open("/proc/zoneinfo") as f:
        for line in f:
            k, _, v = line.strip().partition(":")
            if k == "count":
                pages += int(v)
    return pages * os.sysconf("SC_PAGE_SIZE")


def kernel_bytes():
    """(all the kernel's memory, the part in KERNEL_FIELDS)"""
    m = meminfo()
    used = m["MemTotal"] - m["MemFree"] - pcp_free_bytes()
    user = sum(m.get(k, 0) for k in ("Buffers", "Cached", "SwapCached",
                                      "AnonPages"))
    return used - user, sum(m.get(k, 0) for k in KERNEL_FIELDS)


def rss_bytes(pids):
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def settle():
    """Freed objects reach the counters: RCU grace periods, slab flushes."""
    time.sleep(1.5)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")  # slab objects only; the docroot is on tmpfs
    except OSError:
        pass
    time.sleep(0.5)


def request(port):
    return ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n"
            % (PATH, port)).encode()


def read_response(s, size):
    """Read one response with a body of size bytes; check it is a 200."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise guest.Failed("connection closed before the header")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200 "):
        raise guest.Failed("not a 200: %r" % head[:60])
    while len(body) < size:
        chunk = s.recv(65536)
        if not chunk:
            raise guest.Failed("body cut short")
        body += chunk
    if len(body) != size:
        raise guest.Failed("body of %d bytes, not %d" % (len(body), size))


def hold(port, n, ask):
    """n connections to port, each (if ask) after one whole response."""
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            socks.append(s)
            if ask:
                s.sendall(request(port))
                read_response(s, guest.FIXED["1k"])
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


def release(socks):
    for s in socks:
        s.close()


def measure(name, port, n, ask, server_pids):
    settle()
    k0, r0 = kernel_bytes(), rss_bytes(server_pids())
    t0 = time.monotonic()
    socks = hold(port, n, ask)
    secs = time.monotonic() - t0
    try:
        settle()
        k1, r1 = kernel_bytes(), rss_bytes(server_pids())
        counters = guest.kweb_counters()
    finally:
        release(socks)
    return {"type": "idle", "side": name, "conns": n,
            "kernel_per_conn": (k1[0] - k0[0]) / n,
            "listed_per_conn": (k1[1] - k0[1]) / n,
            "rss_per_conn": (r1 - r0) / n,
            "open_seconds": secs, "kweb": counters}


def baseline(port, n):
    """Connections that wait in an accept queue: the TCP sockets alone."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(n + 64)
    try:
        return measure("tcp", port, n, False, lambda: [])
    finally:
        ls.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="work directory (tmpfs)")
    ap.add_argument("--out", required=True, help="JSON lines appended here")
    ap.add_argument("--kweb-ko", required=True)
    ap.add_argument("--conns", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--backend-port", type=int, default=8080)
    ap.add_argument("--nginx", default="/usr/sbin/nginx")
    ap.add_argument("--nginx-user", default="")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--guest", action="store_true",
                    help="tune the (throw-away) machine's sysctls")
    args = ap.parse_args()
    # What guest.Side reads of the bench's options.
    args.loopback_only = False
    args.reuseport = True
    args.nginx_affinity = False

    if args.guest:
        guest.tune_guest((args.port, args.backend_port))
        with open("/proc/sys/net/core/somaxconn", "w") as f:
            f.write(str(args.conns + 64))
    guest.raise_nofile()
    os.makedirs(args.base, exist_ok=True)
    os.chmod(args.base, 0o755)
    www = os.path.join(args.base, "www")
    full = os.path.join(www, PATH.lstrip("/"))
    os.makedirs(os.path.dirname(full), mode=0o755, exist_ok=True)
    with open(full, "wb") as f:
        f.write(guest.file_bytes(PATH, guest.FIXED["1k"]))
    os.chmod(full, 0o644)
    for d in (www, os.path.dirname(full)):
        os.chmod(d, 0o755)

    failed = 0
    with open(args.out, "a") as out:
        for rnd in range(args.rounds):
            recs = [baseline(args.port, args.conns)]
            for name in ("kweb", "nginx"):
                side = guest.Side(name, args, www)
                try:
                    side.start()
                    pids = (lambda: guest.children_of(side.nginx.pid)) \
                        if side.nginx else (lambda: [])
                    rec = measure(name, args.port, args.conns, True, pids)
                except guest.Failed as e:
                    rec = {"type": "idle", "side": name, "conns": args.conns,
                           "error": str(e)}
                    failed += 1
                finally:
                    side.stop()
                recs.append(rec)
            for rec in recs:
                rec["round"] = rnd
                out.write(json.dumps(rec, sort_keys=True) + "\n")
                guest.say("idle round %d %s: %s" % (
                    rnd, rec["side"], rec.get("error") or
                    "%.0f B kernel (%.0f in slabs and the like), %.0f B "
                    "RSS per connection (%d opened in %.1f s)" % (
                        rec["kernel_per_conn"], rec["listed_per_conn"],
                        rec["rss_per_conn"],
                        rec["conns"], rec["open_seconds"])))
            out.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
