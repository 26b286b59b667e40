#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest side of `make bench`: kweb against nginx, in one machine.

    guest.py --base DIR --out FILE.jsonl [--kweb-ko KO] [options]

Makes the bench docroot under DIR/www (the SPECweb99 size mix and fixed
1 KiB, 64 KiB and 1 MiB files, all under /b/), then for each comparison
runs rounds that alternate its two sides (A B A B ...), each side
started from scratch, and on each side every row (workload x file set):

  comparisons  aa       nginx against nginx: the harness's own A/A spread
               kweb     kweb.ko serving the docroot against nginx alone
               handoff  nginx behind kweb (kweb loaded with
                        dynamic_prefixes=/b/, so every connection is handed
                        to nginx on the backend port) against nginx alone
               floor    the floor (bench/floor/kwebfloor.ko, --floor-ko:
                        every request answered with the same 1 KiB)
                        against kweb, on the 1k rows only
               tls      HTTPS: kweb-tls (kweb's TLS listener on
                        --tls-port, userctl/kwebtlsd doing the handshakes
                        and giving each socket back to kweb, which serves
                        through kTLS) against nginx-ktls (nginx with
                        OpenSSL's kTLS: ssl_conf_command Options KTLS)
               tls-ossl kweb-tls against nginx-tls (nginx encrypting in
                        OpenSSL, no kTLS)
               tls-nginx  nginx-ktls against nginx-tls
               tls-aa   nginx-tls against nginx-tls: the A/A of the
                        TLS rows (aa runs the cleartext ones only)
                        The TLS comparisons run on --tls-rows (default
                        wrk16:1k,wrk16:1m,httperf:1k,httperfr:1k), and
                        only when asked for (--comparisons tls,...).
  workloads    httperf  one connection per request, serialized: each
                        connection's latency, the client's included
               httperf4  the same from 4 httperf processes at once: the
                        connection rate the guest's CPUs can sustain
               wrk16    wrk, keep-alive, 16 connections
               wrk256   wrk, keep-alive, 256 connections
               httperfr (TLS only) a connection per request, each
                        resuming the previous one's session
                        (bench/tlsload.py: httperf's own resumption
                        resumed none); httperf on TLS rows makes a full
                        handshake per connection (--ssl --ssl-no-reuse)
  file sets    spec     SPECweb99 classes: 35% 0.1-0.9 KiB, 50% 1-9 KiB,
                        14% 10-90 KiB, 1% 100-900 KiB
               1k 64k 1m  one file of 1 KiB, 64 KiB, 1 MiB
               64kgz    a 64 KiB script asked for with Accept-Encoding:
                        gzip, answered with its precompressed 64k.js.gz
                        (nginx: gzip_static on)

"nginx alone" listens on --port itself, so clients use the same URLs on
every side. Everything is checked. Each side, once started, must answer
every file of the rows with a 200 and its exact bytes. httperf's timed
runs: its reply status counts (all 2xx) and mean body size. wrk: before
each timed run, a warm-up run in which bench/wrk/bench.lua checks every
response (a 200, body as long as the file says; for the 1 MiB file on
at most 16 connections, as wrk grows its body buffer 1 KiB at a time);
the timed run itself
only counts (a per-response hook makes wrk copy every body, which would
make it the bottleneck for big files), and must show no error and as
many bytes as its responses' known lengths add up to. /proc/net/kweb's
counters must show that kweb served every request and sent the bodies
(kweb) or handed every connection over (handoff). A run that fails a
check is recorded as failed, not timed.

Every run is one JSON line in --out (first a "meta" line): requests/s,
MB/s (response bytes received), the guest's CPU time from /proc/stat, the load tool's own CPU
(rusage), nginx's workers' CPU and kweb's counter deltas. bench/report.py
turns the file into tables and a chart.

Without --kweb-ko only the aa comparison can run: with --port and
--backend-port this validates the harness against an nginx on any
machine, e.g.

    guest.py --base /tmp/kb --out /tmp/kb/bench.jsonl --comparisons aa \\
        --port 18080 --backend-port 18081 --loopback-only --rounds 1 \\
        --duration 1

--guest (for the throw-away guest only) raises the local port range.
Python 3.9+ standard library only.
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import resource
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import isolate  # noqa: E402  (the client's CPU and namespace)
import cpuprofile  # noqa: E402  (perf samples of the server's CPU)
import tlsside  # noqa: E402  (kwebtlsd, nginx's ssl lines, the cert)

NGINX_TEMPLATE = os.path.join(HERE, "nginx.conf.in")
WRK_LUA = os.path.join(HERE, "wrk", "bench.lua")
TLSLOAD = os.path.join(HERE, "tlsload.py")
USERCTL = os.path.join(os.path.dirname(HERE), "userctl")
PROC_KWEB = "/proc/net/kweb"
PREFIX = "/b/"

# SPECweb99: four classes of nine files each, 0.1-0.9 KiB, 1-9 KiB, 10-90
# KiB and 100-900 KiB, requested 35/50/14/1 % of the time.
SPEC_CLASS_MIX = (0.35, 0.50, 0.14, 0.01)
SPEC_FILES_PER_CLASS = 9
# The checked wrk run of a row whose files are all bigger than this uses
# at most CHECK_BIG_CONNS connections (see Bench.timed()).
CHECK_BIG_BODY = 256 * 1024
CHECK_BIG_CONNS = 16
FIXED = {"1k": 1024, "64k": 64 * 1024, "1m": 1024 * 1024}
# name: (path, size, coding): a text file served from its NAME.gz.
PRECOMPRESSED = {"64kgz": (PREFIX + "64k.js", 64 * 1024, "gzip")}
FILESETS = ("spec", "1k", "64k", "1m", "64kgz")
# The rows of issue 34's goals: 1 KiB with a connection per request (one
# client, four) and with keep-alive (16 and 256 connections), 1 MiB per
# byte, and the SPECweb99 mix.
DEFAULT_ROWS = "httperf:1k,httperf4:1k,wrk16:1k,wrk256:1k,wrk16:1m,wrk16:spec"
WORKLOADS = {
    # httperf: "conns" processes at once, each one connection at a time.
    "httperf": {"tool": "httperf", "conns": 1},
    "httperf4": {"tool": "httperf", "conns": 4},
    "wrk16": {"tool": "wrk", "conns": 16},
    "wrk256": {"tool": "wrk", "conns": 256},
    # HTTPS only: a connection per request, each resuming the session of
    # the one before (bench/tlsload.py).
    "httperfr": {"tool": "tlsload", "conns": 1},
}
COMPARISONS = {
    # name: (side A, side B)
    "aa": ("nginx", "nginx"),
    "kweb": ("kweb", "nginx"),
    "handoff": ("handoff", "nginx"),
    "floor": ("floor", "kweb"),
    "tls": ("kweb-tls", "nginx-ktls"),
    "tls-ossl": ("kweb-tls", "nginx-tls"),
    "tls-nginx": ("nginx-ktls", "nginx-tls"),
    "tls-aa": ("nginx-tls", "nginx-tls"),
}
# HTTPS sides and comparisons: never run unless named.
TLS_SIDES = ("kweb-tls", "nginx-ktls", "nginx-tls")
TLS_COMPARISONS = ("tls", "tls-ossl", "tls-nginx", "tls-aa")
# Issue 35's rows: 1 KiB and 1 MiB with keep-alive, 1 KiB with a full
# handshake per connection and with a resumed one.
TLS_ROWS = "wrk16:1k,wrk16:1m,httperf:1k,httperfr:1k"
KWEB_SERVED = ("requests_softirq", "requests_worker")
KWEB_HANDOFF_OK = ("handoff_method", "handoff_query", "handoff_prefix",
                   "handoff_extension", "handoff_upgrade", "handoff_h2",
                   "handoff_unparsed", "handoff_missing",
                   "handoff_connection_limit")
KWEB_HANDOFF_FAILED = ("handoff_failed_no_backend", "handoff_failed_queue_full",
                       "handoff_failed")
FIXED_MTIME = 1700000000


T0 = time.monotonic()


def say(msg):
    # Never "ok"/"not ok" at the start: tests/guest/bench.sh owns those.
    # The elapsed time shows where a run's minutes go.
    print("bench: [%5.0fs] %s" % (time.monotonic() - T0, msg), flush=True)


class Failed(Exception):
    pass


# ---------------------------------------------------------------- docroot

def spec_sizes():
    """[(class, index, size)] of one SPECweb99 directory."""
    out = []
    for c in range(4):
        for i in range(1, SPEC_FILES_PER_CLASS + 1):
            out.append((c, i, i * 1024 * 10 ** c // 10))
    return out


def file_bytes(path, size):
    """size bytes: the size in 8 digits, the path, then filler."""
    head = b"%08d kweb-bench %s\n" % (size, path.encode())
    block = hashlib.sha256(path.encode()).digest() * 128
    body = head + block * (size // len(block) + 1)
    return body[:size]


def script_bytes(path, size):
    """size bytes of a script, about as compressible as a real one (3:1)."""
    rnd = random.Random(path)
    words = ["function", "return", "const", "let", "this", "value",
             "element", "document", "length", "index", "render", "state",
             "props", "=>", "{", "}", "(", ")", ";", "if", "else", "null"]
    out = []
    n = 0
    while n < size:
        line = "  %s %s_%d(%d);\n" % (rnd.choice(words), rnd.choice(words),
                                      rnd.randrange(500), rnd.randrange(10000))
        out.append(line)
        n += len(line)
    return "".join(out).encode()[:size]


def make_docroot(base, spec_dirs, seq_len, seed):
    """Write base/www/b/... and the request lists; return the file sets."""
    www = os.path.join(base, "www")
    lists = os.path.join(base, "lists")
    for d in (www, lists):
        os.makedirs(d, exist_ok=True)
    sizes = {}

    def put(path, size, data=None):
        full = os.path.join(www, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if data is None:
            data = file_bytes(path, size)
        try:
            with open(full, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            with open(full, "wb") as f:
                f.write(data)
        os.chmod(full, 0o644)
        os.utime(full, (FIXED_MTIME, FIXED_MTIME))
        sizes[path] = len(data)

    for name, size in FIXED.items():
        put("%s%s.bin" % (PREFIX, name), size)
    encoded = {}    # path -> (coding, the file answered)
    for name, (path, size, coding) in PRECOMPRESSED.items():
        data = script_bytes(path, size)
        put(path, size, data)
        put(path + ".gz", 0, gzip.compress(data, 9, mtime=0))
        encoded[path] = (coding, path + ".gz")
    by_class = [[] for _ in range(4)]
    for d in range(spec_dirs):
        for c, i, size in spec_sizes():
            path = "%sspec/d%d/c%d_%d.bin" % (PREFIX, d, c, i)
            put(path, size)
            by_class[c].append(path)
    for dirpath, _, _ in os.walk(base):
        os.chmod(dirpath, 0o755)

    # The request sequence. Classes by the mix, spread evenly (nginx's
    # smooth weighted round-robin: every 100 requests hold exactly 35, 50,
    # 14 and 1 of them, so even a short httperf run, which replays the
    # sequence from its start, gets the mix); within a class, its files
    # in a shuffled cycle. (SPECweb99 weighs directories and files within
    # a class by Zipf laws; an even spread keeps the class means at 0.5,
    # 5, 50 and 500 KiB in any window.)
    rnd = random.Random(seed)
    weights = [round(w * 100) for w in SPEC_CLASS_MIX]
    current = [0] * 4
    cycles = [[] for _ in range(4)]
    seq = []
    for _ in range(seq_len):
        for c in range(4):
            current[c] += weights[c]
        c = max(range(4), key=lambda i: current[i])
        current[c] -= sum(weights)
        if not cycles[c]:
            cycles[c] = by_class[c][:]
            rnd.shuffle(cycles[c])
        seq.append(cycles[c].pop())
    sets = {"spec": seq}
    for name in FIXED:
        sets[name] = ["%s%s.bin" % (PREFIX, name)]
    for name, (path, _, _) in PRECOMPRESSED.items():
        sets[name] = [path]
    info = {}
    for name, paths in sets.items():
        txt = os.path.join(lists, name + ".txt")
        wlog = os.path.join(lists, name + ".wlog")
        with open(txt, "w") as f:
            f.write("".join(p + "\n" for p in paths))
        with open(wlog, "wb") as f:
            f.write(b"".join(p.encode() + b"\0" for p in paths))
        # What is answered: the precompressed file for an encoded path.
        answered = [encoded[p][1] if p in encoded else p for p in paths]
        info[name] = {"paths": paths, "sizes": [sizes[p] for p in answered],
                      "list": txt, "wlog": wlog,
                      "coding": encoded[paths[0]][0] if paths[0] in encoded
                      else None}
    info["_encoded"] = encoded
    return www, info, sizes


def spec_summary(info):
    seq = info["spec"]["sizes"]
    n = len(seq)
    bounds = (1024, 10 * 1024, 100 * 1024, 1 << 30)
    cls = [0, 0, 0, 0]
    for s in seq:
        cls[next(i for i, b in enumerate(bounds) if s < b)] += 1
    return {"requests": n, "mean_size": sum(seq) / n,
            "class_share": [round(c / n, 4) for c in cls]}


# ---------------------------------------------------------------- system

def cpu_times():
    """The aggregate cpu line of /proc/stat, in clock ticks."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu "):
                v = [int(x) for x in line.split()[1:]]
                names = ("user", "nice", "system", "idle", "iowait", "irq",
                         "softirq", "steal")
                return dict(zip(names, v))
    raise Failed("no cpu line in /proc/stat")


def tcp_timewait():
    """TCP sockets in TIME_WAIT (both families), from /proc/net/sockstat."""
    try:
        with open("/proc/net/sockstat") as f:
            m = re.search(r"^TCP:.* tw (\d+)", f.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def tcp_all(client=False):
    """Every counter of this namespace's /proc/net/snmp Tcp table and
    /proc/net/netstat TcpExt table, as "Tcp:InSegs" and so on; of the
    client's namespace if client."""
    out = {}
    for path, table in (("/proc/net/snmp", "Tcp:"),
                        ("/proc/net/netstat", "TcpExt:")):
        try:
            if client:
                p = subprocess.run(isolate.client_cmd(["cat", path]),
                                   stdout=subprocess.PIPE, text=True,
                                   stderr=subprocess.DEVNULL, timeout=60)
                lines = p.stdout.splitlines()
            else:
                with open(path) as f:
                    lines = f.read().splitlines()
        except (OSError, subprocess.SubprocessError):
            continue
        rows = [ln.split() for ln in lines if ln.startswith(table)]
        if len(rows) >= 2:
            for k, v in zip(rows[0][1:], rows[1][1:]):
                if v.lstrip("-").isdigit():
                    out[table + k] = int(v)
    return out


# The segments a run's record keeps, and the delayed ACKs sent.
SEGMENT_COUNTERS = ("Tcp:InSegs", "Tcp:OutSegs", "Tcp:RetransSegs",
                    "Tcp:OutRsts", "TcpExt:DelayedACKs")


# Memory housekeeping that may run on the server's CPU during a run:
# khugepaged's collapses (a copy and a clear of up to 2 MiB each), the
# huge pages faulted in, compaction.
VMSTAT_COUNTERS = ("thp_fault_alloc", "thp_collapse_alloc", "compact_stall",
                   "pgmajfault")


def vmstat():
    """VMSTAT_COUNTERS from /proc/vmstat."""
    out = {}
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k in VMSTAT_COUNTERS:
                    out[k] = int(v)
    except (OSError, ValueError):
        pass
    return out


def tcp_segments():
    """This network namespace's TCP segment counters (SEGMENT_COUNTERS),
    by their names without the table's."""
    every = tcp_all()
    return {k.split(":", 1)[1]: every[k] for k in SEGMENT_COUNTERS
            if k in every}


def delta(after, before):
    return {k: after[k] - before.get(k, 0) for k in after}


def moved(after, before):
    """The counters of after that changed since before, by how much."""
    return {k: v for k, v in delta(after, before).items()
            if isinstance(v, int) and v}


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def file_tail(path, start, limit=2000):
    """What path gained after offset start, its last limit bytes."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def kweb_counters():
    try:
        with open(PROC_KWEB) as f:
            out = {}
            for line in f:
                # "name value" counters; "listener ..." lines are not.
                p = line.split()
                if len(p) == 2 and p[1].lstrip("-").isdigit():
                    out[p[0]] = int(p[1])
            return out
    except FileNotFoundError:
        return None


def proc_cpu(pid):
    """utime + stime of pid, in clock ticks; 0 if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def children_of(pid):
    kids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(name))
    return kids


def listening(port):
    """Is anything accepting on 127.0.0.1:port?"""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def wait_until(cond, secs, what):
    end = time.monotonic() + secs
    while not cond():
        if time.monotonic() > end:
            raise Failed("%s within %ds" % (what, secs))
        time.sleep(0.1)


def run(cmd, timeout=60):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout


def tool_version(cmd):
    try:
        rc, out = run(cmd, 10)
        lines = [l for l in out.strip().splitlines() if "warning" not in l]
        return lines[0] if lines else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


class Usage:
    """The rusage fields a run records, added up over its processes."""

    def __init__(self, rus):
        self.ru_utime = sum(r.ru_utime for r in rus)
        self.ru_stime = sum(r.ru_stime for r in rus)
        self.ru_minflt = sum(r.ru_minflt for r in rus)


# Set by main(): run the load tools in the client's namespace.
ISOLATED = False


def run_tools(cmds, timeout, cpus=None):
    """Run load tool processes at once (on cpus, a set, if given; in the
    client's namespace, on its CPU, if isolated); ([(status, output)],
    Usage of them all, wall seconds until the last ended)."""
    if ISOLATED:
        cmds = [isolate.client_cmd(c) for c in cmds]
        cpus = cpus or {isolate.CLIENT_CPU}
    t0 = time.monotonic()
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, preexec_fn=pin)
             for cmd in cmds]
    killers = [threading.Timer(timeout, p.kill) for p in procs]
    outs, rus = [], []
    for k in killers:
        k.start()
    try:
        # Each prints a few lines at its end: a pipe holds them while
        # the one before is read.
        for p in procs:
            out = p.stdout.read().decode("utf-8", "replace")
            _, status, ru = os.wait4(p.pid, 0)
            p.stdout.close()
            outs.append((os.waitstatus_to_exitcode(status), out))
            rus.append(ru)
    finally:
        for k in killers:
            k.cancel()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs, Usage(rus), time.monotonic() - t0


def run_tool(cmd, timeout, cpus=None):
    """Run the load tool (on cpus, a set, if given); (status, output,
    rusage, wall seconds)."""
    outs, ru, wall = run_tools([cmd], timeout, cpus)
    return outs[0][0], outs[0][1], ru, wall


# ---------------------------------------------------------------- servers

class Nginx:
    def __init__(self, args, docroot):
        self.args = args
        self.docroot = docroot
        self.base = os.path.join(args.base, "nginx")
        self.pid = None

    def user(self):
        if self.args.nginx_user:
            return self.args.nginx_user
        if os.geteuid() != 0:
            return "nobody nogroup"  # ignored by a non-root master
        # The workers (nobody) must reach the docroot and the run directory.
        for d in (self.docroot, self.base):
            p = d
            while p != "/":
                if not os.stat(p).st_mode & 0o001:
                    return "root root"
                p = os.path.dirname(p)
        return "nobody nogroup"

    def affinity(self):
        if ISOLATED:
            # One worker, on the server's CPU.
            return "worker_cpu_affinity %s;" % format(
                1 << isolate.SERVER_CPU, "b")
        return "worker_cpu_affinity auto;" if self.args.nginx_affinity else ""

    def start(self, listens, ssl_lines=""):
        os.makedirs(self.base, exist_ok=True)
        os.chmod(self.base, 0o755)
        with open(NGINX_TEMPLATE) as f:
            t = f.read()
        rp = " reuseport" if self.args.reuseport else ""
        lines = "".join("        listen %s%s;\n" % (l, rp) for l in listens)
        subst = (("@BASE@", self.base), ("@DOCROOT@", self.docroot),
                 ("@USER@", self.user()),
                 ("@WORKERS@", str(self.args.workers)),
                 ("@AFFINITY@", self.affinity()),
                 ("@LISTEN@", lines.rstrip("\n")),
                 ("@SSL@", ssl_lines))
        out = []
        for line in t.splitlines():
            if not line.lstrip().startswith("#"):  # comments name them
                for k, v in subst:
                    line = line.replace(k, v)
            out.append(line)
        t = "\n".join(out) + "\n"
        conf = os.path.join(self.base, "nginx.conf")
        with open(conf, "w") as f:
            f.write(t)
        err = os.path.join(self.base, "error.log")
        pidfile = os.path.join(self.base, "nginx.pid")
        if os.path.exists(pidfile):
            os.unlink(pidfile)
        cmd = [self.args.nginx, "-p", self.base, "-c", conf, "-e", err]
        # Output to a file: the daemon must not hold a pipe of ours open.
        log = os.path.join(self.base, "start.log")
        with open(log, "w") as f:
            # Isolated: the master and its workers on the server's CPU.
            pin = isolate.pin_server if ISOLATED else None
            rc = subprocess.call(cmd + ["-t", "-q"], stdout=f, stderr=f,
                                 stdin=subprocess.DEVNULL, timeout=60)
            if rc == 0:
                rc = subprocess.call(cmd, stdout=f, stderr=f,
                                     stdin=subprocess.DEVNULL, timeout=60,
                                     preexec_fn=pin)
        if rc != 0:
            with open(log) as f:
                raise Failed("nginx did not start (status %d): %s"
                             % (rc, f.read().strip()[-300:]))
        wait_until(lambda: os.path.exists(pidfile), 20, "nginx pid file")
        with open(pidfile) as f:
            self.pid = int(f.read().strip())

    def workers_cpu(self):
        if not self.pid:
            return 0
        return sum(proc_cpu(p) for p in children_of(self.pid))

    def stop(self):
        if not self.pid:
            return
        pid, self.pid = self.pid, None
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        end = time.monotonic() + 15
        while os.path.exists("/proc/%d" % pid):
            if time.monotonic() > end:
                for p in children_of(pid) + [pid]:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                break
            time.sleep(0.05)


class Module:
    """A module a side loads (insmod) and unloads (rmmod)."""

    NAME = ""

    def __init__(self, args):
        self.args = args
        self.loaded = False

    def insmod(self, cmd):
        if os.path.isdir("/sys/module/" + self.NAME):
            raise Failed("%s is already loaded" % self.NAME)
        rc, out = run(cmd, 60)
        if rc != 0:
            raise Failed("%s: %s" % (" ".join(cmd), out.strip()))
        self.loaded = True

    def unload(self):
        if not self.loaded:
            return
        self.loaded = False
        rc, out = run(["rmmod", self.NAME], 60)
        if rc != 0:
            raise Failed("rmmod %s: %s" % (self.NAME, out.strip()))


class Kweb(Module):
    NAME = "kweb"

    def __init__(self, args, docroot):
        super().__init__(args)
        self.docroot = docroot

    def load(self, extra):
        self.insmod(["insmod", self.args.kweb_ko, "docroot=" + self.docroot,
                     "port=%d" % self.args.port] + extra)


class Floor(Module):
    """bench/floor/kwebfloor.ko: any GET answered with FIXED["1k"] bytes."""

    NAME = "kwebfloor"
    PARAMS = "/sys/module/kwebfloor/parameters/"

    def load(self):
        self.insmod(["insmod", self.args.floor_ko,
                     "port=%d" % self.args.port, "size=%d" % FIXED["1k"]])

    def unload(self):
        if not self.loaded:
            return
        try:
            with open(self.PARAMS + "errors") as f:
                errors = int(f.read())
        except (OSError, ValueError):
            errors = None
        super().unload()
        if errors != 0:
            raise Failed("kwebfloor counted %s errors" % errors)


class Side:
    """One server setup on --port: nginx, kweb, handoff or floor; or
    HTTPS on --tls-port: kweb-tls, nginx-ktls or nginx-tls."""

    def __init__(self, name, args, docroot):
        self.name = name
        self.args = args
        self.docroot = docroot
        self.tls = name in TLS_SIDES
        self.port = args.tls_port if self.tls else args.port
        self.nginx = Nginx(args, docroot) if name in (
            "nginx", "handoff", "nginx-ktls", "nginx-tls") else None
        self.kweb = Kweb(args, docroot) if name in (
            "kweb", "handoff", "kweb-tls") else None
        self.floor = Floor(args) if name == "floor" else None
        self.tlsd = None
        if name == "kweb-tls":
            pin = isolate.pin_server if ISOLATED else None
            self.tlsd = tlsside.Tlsd(args.kwebtlsd,
                                     os.path.join(args.base, "tlsd"), pin)
        # Its module, whose instructions are counted apart.
        self.module = {"kweb": "kweb", "handoff": "kweb", "kweb-tls": "kweb",
                       "floor": "kwebfloor"}.get(name)

    def start(self):
        a = self.args
        if listening(self.port):
            raise Failed("port %d is busy before starting %s"
                         % (self.port, self.name))
        if self.tls:
            cert, key = tlsside.make_cert(os.path.join(a.base, "cert"))
        if self.name in ("nginx-ktls", "nginx-tls"):
            # The same listeners as nginx alone's, on the TLS port.
            p = a.tls_port
            if a.loopback_only:
                listens = ["127.0.0.1:%d ssl" % p, "[::1]:%d ssl" % p]
            else:
                listens = ["%d ssl" % p, "[::]:%d ssl" % p]
            self.nginx.start(listens, tlsside.nginx_ssl(
                cert, key, self.name == "nginx-ktls"))
        elif self.name == "kweb-tls":
            # insmod's cleartext listener on --port, unused; the TLS
            # listener on --tls-port hands every connection to kwebtlsd
            # on loopback, which gives it back with kTLS installed.
            self.kweb.load([])
            rc, out = run([a.kwebctl, "-j", "listener", "add", "port",
                           str(a.tls_port), "docroot", self.docroot,
                           "tls-port", str(a.tlsd_port)], 30)
            m = re.search(r'"id": *(\d+)', out)
            if rc != 0 or not m:
                raise Failed("kwebctl listener add tls-port: %s"
                             % out.strip()[-300:])
            try:
                self.tlsd.start(int(m.group(1)), a.tlsd_port, cert, key)
            except tlsside.Error as e:
                raise Failed(str(e))
        elif self.name == "nginx":
            if a.loopback_only:
                listens = ["127.0.0.1:%d" % a.port, "[::1]:%d" % a.port]
            else:
                listens = ["%d" % a.port, "[::]:%d" % a.port]
            self.nginx.start(listens)
        elif self.name == "kweb":
            self.kweb.load([])
        elif self.name == "floor":
            self.floor.load()
        else:
            # kweb's backend: one listener per family, on loopback.
            # "deferred": kweb hands a connection over with its request
            # already received, so nginx may read it right after
            # accept() instead of waiting for epoll to say so.
            opt = " deferred" if a.backend_deferred else ""
            self.nginx.start(["127.0.0.1:%d%s" % (a.backend_port, opt),
                              "[::1]:%d%s" % (a.backend_port, opt)])
            wait_until(lambda: listening(a.backend_port), 20,
                       "nginx listening on port %d" % a.backend_port)
            self.kweb.load(["dynamic_prefixes=" + PREFIX,
                            "backend_port=%d" % a.backend_port])
        wait_until(lambda: listening(self.port), 20,
                   "%s listening on port %d" % (self.name, self.port))

    def error_log(self):
        """nginx's error log (nginx sides, the handoff's backend)."""
        return os.path.join(self.nginx.base, "error.log") if self.nginx \
            else None

    def tlsd_stats(self):
        """kwebtlsd's counters (kweb-tls), else None."""
        if not self.tlsd:
            return None
        try:
            return self.tlsd.stats()
        except tlsside.Error as e:
            raise Failed(str(e))

    def stop(self):
        errs = []
        for f in ((self.tlsd.stop if self.tlsd else None),
                  (self.kweb.unload if self.kweb else None),
                  (self.nginx.stop if self.nginx else None),
                  (self.floor.unload if self.floor else None)):
            if f:
                try:
                    f()
                except Failed as e:
                    errs.append(str(e))
        if errs:
            raise Failed("; ".join(errs))


# ---------------------------------------------------------------- checks

class RawClient:
    """One keep-alive HTTP/1.1 connection, bytes as they come (for the
    exact length of each response, head included)."""

    def __init__(self, port, tls=False):
        self.port = port
        self.sock = None
        self.buf = b""
        self.ctx = None
        if tls:
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            self.ctx.check_hostname = False
            self.ctx.verify_mode = ssl.CERT_NONE

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock, self.buf = None, b""

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise Failed("connection closed early")
        self.buf += data

    def get(self, path, coding=None):
        """(status, head length, body, closes) of GET path."""
        if self.sock is None:
            self.sock = socket.create_connection(("127.0.0.1", self.port),
                                                 timeout=20)
            if self.ctx:
                self.sock = self.ctx.wrap_socket(
                    self.sock, server_hostname="kweb.test")
        ae = b"Accept-Encoding: %s\r\n" % coding.encode() if coding else b""
        self.sock.sendall(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n"
                          % (path.encode(), ae))
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        fields = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            fields[k.strip().lower()] = v.strip()
        n = int(fields.get("content-length", "-1"))
        if n < 0:
            raise Failed("GET %s: no Content-Length" % path)
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        closes = fields.get("connection", "").lower() == "close"
        if closes:
            self.close()
        return status, len(head) + 4, body, closes


def fetch_all(port, paths, www, encoded, length_only=False, tls=False):
    """GET every path once: each must be a 200 with the file's exact
    bytes (else Failed), or as many (length_only: the floor's); a path of
    encoded, {path: (coding, file)}, asked for in that coding, with that
    file's. Returns {path: length of the whole response}."""
    c = RawClient(port, tls)
    lengths = {}
    try:
        for p in paths:
            coding, answer = encoded.get(p, (None, p))
            with open(os.path.join(www, answer.lstrip("/")), "rb") as f:
                want = f.read()
            for attempt in (1, 2):
                try:
                    status, head, body, _ = c.get(p, coding)
                    break
                except (OSError, ValueError, IndexError, Failed) as e:
                    c.close()
                    if attempt == 2:
                        raise Failed("GET %s: %s" % (p, e))
            if status != 200 or (len(body) != len(want) if length_only
                                 else body != want):
                raise Failed("GET %s: status %d, %d bytes (want 200, %d bytes)"
                             % (p, status, len(body), len(want)))
            lengths[p] = head + len(body)
    finally:
        c.close()
    return lengths


HTTPERF_RE = {
    "total": re.compile(r"^Total: connections (\d+) requests (\d+) replies "
                        r"(\d+) test-duration ([\d.]+) s", re.M),
    "status": re.compile(r"^Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) "
                         r"4xx=(\d+) 5xx=(\d+)", re.M),
    "size": re.compile(r"^Reply size \[B\]: header ([\d.]+) content "
                       r"([\d.]+) footer [\d.]+ \(total ([\d.]+)\)", re.M),
    "errors": re.compile(r"^Errors: total (\d+)", re.M),
}
WRK_RE = re.compile(r"^bench-wrk: mode=\S+ requests=(\d+) good=(\d+) bad=(\d+) "
                    r"body_bytes=(\d+) bytes=(\d+) runtime_us=(\d+) "
                    r"errors_connect=(\d+) "
                    r"errors_read=(\d+) errors_write=(\d+) errors_status=(\d+) "
                    r"errors_timeout=(\d+) first_bad=(.*)$", re.M)
TLSLOAD_RE = re.compile(r"^tlsload: connections=(\d+) good=(\d+) bad=(\d+) "
                        r"resumed=(\d+) body_bytes=(\d+) bytes=(\d+) "
                        r"elapsed_us=(\d+) first_bad=(.*)$", re.M)


def parse_httperf(out, n, sizes):
    """Result dict from httperf's output for n connections over a list of
    sizes (cycled); raises Failed on any error or wrong size."""
    m = {k: r.search(out) for k, r in HTTPERF_RE.items()}
    if not all(m.values()):
        raise Failed("httperf output not understood: %s" % out.strip()[-300:])
    conns, reqs, replies = (int(x) for x in m["total"].groups()[:3])
    secs = float(m["total"].group(4))
    st = [int(x) for x in m["status"].groups()]
    errors = int(m["errors"].group(1))
    content = float(m["size"].group(2))
    full, rest = divmod(n, len(sizes))
    body = full * sum(sizes) + sum(sizes[:rest])
    res = {"requests": replies, "seconds": secs, "body_bytes": body,
           "bytes": round(replies * float(m["size"].group(3))),
           "status": dict(zip(("1xx", "2xx", "3xx", "4xx", "5xx"), st)),
           "errors": errors, "content_mean": content}
    why = []
    if conns != n or reqs != n or replies != n:
        why.append("%d connections, %d requests, %d replies of %d"
                   % (conns, reqs, replies, n))
    if st[1] != replies or sum(st) != replies:
        why.append("reply status %s" % m["status"].group(0))
    if errors:
        why.append(m["errors"].group(0))
    # httperf prints the mean content size truncated to a whole byte
    # (with one decimal): this catches wrong sizes in bulk, the status
    # counts catch error pages, and fetch_all() has compared every file
    # byte for byte before the run.
    if abs(content - body / n) > 1.001:
        why.append("mean body %.1f bytes, want %.2f" % (content, body / n))
    if secs <= 0:
        why.append("test-duration %s" % secs)
    if why:
        raise Failed("httperf: " + "; ".join(why))
    return res


def parse_tlsload(out, n, size):
    """Result dict from bench/tlsload.py's line for n connections, each
    a GET of one file of size bytes; raises Failed on any bad one."""
    m = TLSLOAD_RE.search(out)
    if not m:
        raise Failed("tlsload output not understood: %s" % out.strip()[-300:])
    conns, good, bad, resumed, body, nbytes, us = (int(x) for x in
                                                   m.groups()[:7])
    res = {"requests": good, "seconds": us / 1e6, "body_bytes": body,
           "bytes": nbytes, "good": good, "bad": bad, "resumed": resumed,
           "resumed_share": resumed / conns if conns else 0.0,
           "errors": bad}
    why = []
    if conns != n or good != n or bad:
        why.append("%d good, %d bad of %d connections (%d asked); first "
                   "bad: %s" % (good, bad, conns, n, m.group(8)))
    if body != n * size:
        why.append("%d body bytes, want %d" % (body, n * size))
    if us <= 0:
        why.append("elapsed %d us" % us)
    if why:
        raise Failed("tlsload: " + "; ".join(why))
    return res


def merge_httperf(results):
    """One result of httperf processes run at once: their requests and
    bytes added up, over the time the slowest took."""
    res = {"requests": sum(r["requests"] for r in results),
           "seconds": max(r["seconds"] for r in results),
           "body_bytes": sum(r["body_bytes"] for r in results),
           "bytes": sum(r["bytes"] for r in results),
           "errors": sum(r["errors"] for r in results),
           "status": {k: sum(r["status"][k] for r in results)
                      for k in results[0]["status"]}}
    res["content_mean"] = (sum(r["content_mean"] * r["requests"]
                               for r in results) / res["requests"])
    return res


def parse_wrk(out, checked, lengths, conns):
    """Result dict from wrk's output (bench/wrk/bench.lua's line); raises
    Failed on any error. checked: every response was checked by the
    script. Otherwise the bytes read must fit the responses' lengths
    (lengths: those of the requested paths, whole responses, as
    fetch_all() measured them on this server): a single file within a
    few bytes per response (the last response of a connection says
    Connection: close), a mix within a factor of 2 of its mean."""
    m = WRK_RE.search(out)
    if not m:
        raise Failed("wrk output not understood: %s" % out.strip()[-300:])
    v = [int(x) for x in m.groups()[:11]]
    reqs, good, bad, body, nbytes, us = v[:6]
    errs = dict(zip(("connect", "read", "write", "status", "timeout"), v[6:]))
    res = {"requests": reqs, "seconds": us / 1e6, "body_bytes": body,
           "bytes": nbytes, "good": good, "bad": bad, "errors": errs}
    why = []
    if reqs == 0:
        why.append("no request completed")
    if checked and (good != reqs or bad):
        why.append("%d good, %d bad of %d; first bad: %s"
                   % (good, bad, reqs, m.group(12)))
    if not checked and reqs:
        if len(set(lengths)) == 1:
            r = lengths[0]
            lo, hi = reqs * (r - 16), (reqs + conns) * (r + 32)
        else:
            mean = sum(lengths) / len(lengths)
            lo, hi = reqs * mean / 2, reqs * mean * 2 + conns * max(lengths)
        res["bytes_expected"] = [lo, hi]
        if not lo <= nbytes <= hi:
            why.append("%d bytes read for %d responses, want %d to %d"
                       % (nbytes, reqs, lo, hi))
    if any(errs.values()):
        why.append("wrk errors %s" % errs)
    if why:
        raise Failed("wrk: " + "; ".join(why))
    return res


def check_kweb(side, kd, res, workload, size):
    """What /proc/net/kweb says must match who served. size: of the one
    file requested (0 for a mix)."""
    if side in ("nginx", "floor", "nginx-ktls", "nginx-tls"):
        if kd is not None:
            raise Failed("kweb is loaded on an %s side" % side)
        return {}
    if kd is None:
        raise Failed("no %s counters on a %s side" % (PROC_KWEB, side))
    served = sum(kd.get(k, 0) for k in KWEB_SERVED)
    handed = sum(kd.get(k, 0) for k in KWEB_HANDOFF_OK)
    failed = sum(kd.get(k, 0) for k in KWEB_HANDOFF_FAILED)
    reqs = res["requests"]
    why = []
    if side == "kweb-tls":
        # Every connection came through kweb's TLS listener and kweb
        # itself sent every body over kTLS.
        conns = reqs if workload["tool"] != "wrk" else min(reqs,
                                                          workload["conns"])
        tconns = kd.get("tls_connections", 0)
        tbytes = kd.get("tls_bytes", 0)
        if tconns < conns:
            why.append("tls_connections grew by %d, want >= %d"
                       % (tconns, conns))
        if tbytes < reqs * size:
            why.append("tls_bytes grew by %d for %d responses of %d"
                       % (tbytes, reqs, size))
        if handed or failed:
            why.append("%d connections handed off, %d failed" % (handed, failed))
        if why:
            raise Failed("counters: " + "; ".join(why))
        return {"served": served, "tls_connections": tconns,
                "tls_bytes": tbytes}
    if side == "kweb":
        if served < reqs:
            why.append("kweb served %d requests of %d" % (served, reqs))
        body = kd.get("body_bytes_spliced", 0) + kd.get("body_bytes_copied", 0)
        if body < reqs * size:
            why.append("kweb sent %d body bytes for %d responses of %d"
                       % (body, reqs, size))
        if handed or failed:
            why.append("%d connections handed off, %d failed" % (handed, failed))
    else:
        # Every httperf connection; at least each wrk connection's first
        # request (the connection is nginx's from then on).
        want = reqs if workload["tool"] == "httperf" else min(reqs, workload["conns"])
        if kd.get("handoff_prefix", 0) < want:
            why.append("handoff_prefix grew by %d, want >= %d"
                       % (kd.get("handoff_prefix", 0), want))
        if served or failed:
            why.append("kweb served %d requests itself, %d handoffs failed"
                       % (served, failed))
    if why:
        raise Failed("counters: " + "; ".join(why))
    return {"served": served, "handed_off": handed, "handoff_failed": failed}


def check_tlsd(td, res, wl):
    """kwebtlsd's counters over a run (kweb-tls): a handshake for every
    connection, every one adopted by kweb, none failed. Returns them,
    with the share of the handshakes that resumed a session."""
    conns = res["requests"] if wl["tool"] != "wrk" else 0
    # wrk opens and closes a plain TCP connection to the address before
    # its run (wrk.resolve() checks the address with wrk.connect()),
    # which kwebtlsd counts as a failed handshake, and may leave its
    # connections' reconnects mid-handshake when it stops.
    spare = wl["conns"] + 1 if wl["tool"] == "wrk" else 0
    why = []
    if td.get("adopted", 0) < conns or td.get("handshakes", 0) < conns:
        why.append("%d handshakes, %d adopted for %d connections"
                   % (td.get("handshakes", 0), td.get("adopted", 0), conns))
    if td.get("failed", 0) > spare or td.get("timed_out", 0) > spare:
        why.append("%d handshakes failed, %d timed out"
                   % (td.get("failed", 0), td.get("timed_out", 0)))
    if why:
        raise Failed("kwebtlsd: " + "; ".join(why))
    if "resumed" in td and td.get("handshakes"):
        td["resumed_share"] = td["resumed"] / td["handshakes"]
    return td


# ---------------------------------------------------------------- runs

class Bench:
    def __init__(self, args, www, info):
        self.args = args
        self.www = www
        self.info = info
        self.rate = {}      # (server, row) -> last req/s, for httperf sizing
        self.icount = None  # does the host count instructions (profiles)
        self.lengths = {}   # path -> whole response length on this side
        self.out = open(args.out, "a")
        self.nfail = 0
        self.nruns = 0
        self.round = 0
        self.ncpu = os.cpu_count() or 1
        self.tck = os.sysconf("SC_CLK_TCK")
        self.side = None    # the Side whose rows run

    def emit(self, rec):
        self.out.write(json.dumps(rec, sort_keys=True) + "\n")
        self.out.flush()

    def url_host(self):
        return isolate.SERVER_ADDR if ISOLATED else "127.0.0.1"

    def httperf_cmd(self, fs, n):
        a = self.args
        cmd = [a.httperf, "--server", self.url_host(), "--port",
               str(self.side.port), "--num-conns", str(n), "--num-calls",
               "1", "--timeout", "10"]
        if self.side.tls:
            # A full handshake per connection.
            cmd += ["--ssl", "--ssl-no-reuse"]
        if len(self.info[fs]["paths"]) == 1:
            cmd += ["--uri", self.info[fs]["paths"][0]]
        else:
            cmd += ["--wlog", "y," + self.info[fs]["wlog"]]
        if self.info[fs]["coding"]:
            # httperf reads the escape: each header ends in \n.
            cmd += ["--add-header",
                    "Accept-Encoding: %s\\n" % self.info[fs]["coding"]]
        return cmd

    def wrk_cmd(self, fs, conns, secs, checked):
        a = self.args
        threads = max(1, min(conns, a.wrk_threads or self.ncpu))
        info = self.info[fs]
        cmd = [a.wrk, "-t", str(threads), "-c", str(conns), "-d",
               "%ds" % secs, "--timeout", "60s", "-s", WRK_LUA,
               "%s://%s:%d/" % ("https" if self.side.tls else "http",
                                self.url_host(), self.side.port), "--",
               info["list"], "check" if checked else "count"]
        if info["coding"]:
            # A compressed body does not start with its size: give it.
            cmd += [info["coding"], str(info["sizes"][0])]
        return cmd

    def load(self, wl, fs, amount, checked=True):
        """One load run: (result, rusage, wall). amount: connections
        (httperf) or seconds (wrk). checked: wrk checks every response
        (httperf always checks its status counts and mean size)."""
        if wl["tool"] == "tlsload":
            info = self.info[fs]
            if len(info["paths"]) != 1 or info["coding"]:
                raise Failed("httperfr: one plain file per row only")
            cmds = [[sys.executable, TLSLOAD, "--host", self.url_host(),
                     "--port", str(self.side.port), "--path",
                     info["paths"][0], "--size", str(info["sizes"][0]),
                     "--conns", str(amount)]]
            tmo = 120 + amount / 5
        elif wl["tool"] == "httperf":
            # amount connections in all, shared out among the processes.
            n = wl["conns"]
            shares = [amount // n + (i < amount % n) for i in range(n)]
            shares = [k for k in shares if k]
            cmds = [self.httperf_cmd(fs, k) for k in shares]
            tmo = 120 + amount / 20
        else:
            cmds = [self.wrk_cmd(fs, wl["conns"], amount, checked)]
            tmo = amount + 60
        outs, ru, wall = run_tools(cmds, tmo, self.args.tool_cpus)
        for cmd, (rc, out) in zip(cmds, outs):
            if rc != 0:
                raise Failed("%s exited %d: %s"
                             % (cmd[0], rc, out.strip()[-300:]))
        cmd = cmds[0]
        if wl["tool"] == "tlsload":
            res = parse_tlsload(outs[0][1], amount, self.info[fs]["sizes"][0])
        elif wl["tool"] == "httperf":
            res = merge_httperf([parse_httperf(out, k, self.info[fs]["sizes"])
                                 for k, (_, out) in zip(shares, outs)])
        else:
            out = outs[0][1]
            res = parse_wrk(out, checked, [self.lengths[p] for p in
                                           self.info[fs]["paths"]],
                            wl["conns"])
        res["checked"] = checked or wl["tool"] != "wrk"
        res["command"] = " ".join(cmd)
        if len(cmds) > 1:
            res["command"] += " (%d at once)" % len(cmds)
        res["tool_threads"] = (len(cmds) if wl["tool"] != "wrk" else
                               int(cmd[cmd.index("-t") + 1]))
        return res, ru, wall

    def httperf_conns(self, key, secs):
        return int(min(max(self.rate[key] * secs, 50), 2000000))

    def timed(self, side, wl_name, fs):
        """Warm up, then the timed run: the run record (ok or not)."""
        a = self.args
        wl = WORKLOADS[wl_name]
        key = (side.name, wl_name, fs)
        rec = {"workload": wl_name, "fileset": fs, "tool": wl["tool"],
               "conns": wl["conns"]}
        # Warm-up, untimed. httperf: a rate probe (to size the timed run)
        # and the warm-up proper; a failure there is noted, the timed run
        # decides (bench/tlsload.py's the same). wrk: the warm-up is the
        # run that checks every response (at least a second of it): it
        # must pass.
        if wl["tool"] != "wrk":
            try:
                if key not in self.rate:
                    r, _, _ = self.load(wl, fs, a.probe_conns)
                    self.rate[key] = r["requests"] / r["seconds"]
                if a.warmup > 0:
                    r, _, _ = self.load(wl, fs,
                                        self.httperf_conns(key, a.warmup))
                    self.rate[key] = r["requests"] / r["seconds"]
            except Failed as e:
                rec["warmup_error"] = str(e)
                self.rate.setdefault(key, 100.0)
            amount = self.httperf_conns(key, a.duration)
        else:
            # wrk hands Lua each body from a buffer it grows 1 KiB per
            # realloc(): 256 first responses of 1 MiB at once stalled wrk
            # past a minute. A row of big files only is checked on fewer
            # connections; its timed run still counts every byte.
            big = min(self.lengths[p] for p in self.info[fs]["paths"])
            cwl = wl
            if big > CHECK_BIG_BODY:
                cwl = dict(wl, conns=min(wl["conns"], CHECK_BIG_CONNS))
            secs = max(1, round(a.warmup))
            while True:
                try:
                    r, _, _ = self.load(cwl, fs, secs, True)
                    break
                except Failed as e:
                    # Many connections' handshakes can take a short run's
                    # whole second on a slow guest: longer, then it fails.
                    if "no request completed" not in str(e) or secs >= 4:
                        raise Failed("checked warm-up run: %s" % e)
                    secs *= 2
            rec["checked_run"] = {k: r[k] for k in ("requests", "good", "bad",
                                                    "seconds")}
            rec["checked_run"]["conns"] = cwl["conns"]
            amount = max(1, round(a.duration))
        rec["timewait_before"] = tcp_timewait()
        s0 = side.tlsd_stats()
        # With the client in a namespace of its own, this namespace's
        # TCP counters are the server's: its segments per request.
        g0 = tcp_segments() if ISOLATED else {}
        v0 = vmstat()
        k0 = kweb_counters()
        n0 = side.nginx.workers_cpu() if side.nginx else 0
        c0 = cpu_times()
        # Where the module's instructions went, by function: the
        # module's sides, in the first round.
        funcs = []
        if ISOLATED and side.module and self.round == 1:
            funcs = isolate.module_functions(side.module)
        meter = isolate.Meter(blocks=bool(funcs)) if ISOLATED else None
        res, ru, wall = self.load(wl, fs, amount, a.check_timed)
        per_cpu = meter.read() if meter else None
        segs = delta(tcp_segments(), g0) if g0 else {}
        vm = delta(vmstat(), v0)
        c1 = cpu_times()
        n1 = side.nginx.workers_cpu() if side.nginx else 0
        k1 = kweb_counters()
        kd = delta(k1, k0) if k0 is not None and k1 is not None else None
        s1 = side.tlsd_stats()
        if wl["tool"] != "wrk":
            self.rate[key] = res["requests"] / res["seconds"]
        cpu = delta(c1, c0)
        busy = sum(v for k, v in cpu.items() if k not in ("idle", "iowait"))
        rec.update(res)
        rec.update({
            "wall": wall,
            "rps": res["requests"] / res["seconds"],
            # All response bytes received (headers, and with wrk the
            # responses still in flight at the end, included).
            "mbps": res["bytes"] / res["seconds"] / 1e6,
            "cpu_ticks": cpu, "clk_tck": self.tck,
            "cpu_busy_s": busy / self.tck,
            "cpu_ms_per_1k": busy / self.tck * 1000 / res["requests"] * 1000,
            "tool_utime": ru.ru_utime, "tool_stime": ru.ru_stime,
            "tool_minflt": ru.ru_minflt,
            "nginx_workers_cpu_s": (n1 - n0) / self.tck,
            "kweb": kd,
            "vmstat": vm,
        })
        if ISOLATED:
            if segs:
                rec["server_segs"] = segs
                rec["segs_out_per_req"] = segs.get("OutSegs", 0) / \
                    res["requests"]
                rec["segs_in_per_req"] = segs.get("InSegs", 0) / \
                    res["requests"]
            srv = per_cpu[isolate.SERVER_CPU]
            cli = per_cpu[isolate.CLIENT_CPU]
            body = sum(self.info[fs]["sizes"]) / len(self.info[fs]["sizes"])
            mib = res["requests"] * body / 2 ** 20

            def per_unit(prefix, secs):
                """secs of CPU per 1000 requests and per MiB of bodies."""
                return {prefix + "_ms_per_1k": secs * 1e6 / res["requests"],
                        prefix + "_ms_per_mib": secs * 1e3 / mib}
            # The headline: the server's CPU (CPU0, wall less idle).
            rec.update(per_unit("server_cpu", srv["busy"]))
            rec.update({
                "server_cpu_s": srv["busy"],
                "server_cpu_sampled_s": srv["sampled"],
                "server_cpu_util": srv["busy"] / per_cpu["wall"],
                "client_cpu_util": cli["busy"] / per_cpu["wall"],
                "meter_wall": per_cpu["wall"],
            })
            host = per_cpu["host"]
            prof = isolate.by_function(per_cpu["blocks"], funcs)
            if prof:
                rec["module_functions"] = prof
            if host:
                # The same from the host: the CPU time of the server's
                # vCPU thread, which a preempted vCPU does not accrue.
                hs = host.get("vcpu%d" % isolate.SERVER_CPU, 0)
                rec.update(per_unit("host_cpu", hs))
                ins = host.get("insn%d" % isolate.SERVER_CPU)
                if ins is not None:
                    # Instructions the server's vCPU executed
                    # (bench/qemu/kwebicount.so): no clock in them.
                    kern = host.get("insn%d_kernel" % isolate.SERVER_CPU, 0)
                    own = host.get("insn%d_range" % isolate.SERVER_CPU, 0)
                    rec.update({"server_insns": ins,
                                "insn_user_share": (ins - kern) / ins
                                if ins else None,
                                # The side's module's (0 for nginx).
                                "insn_module_share": own / ins if ins
                                else None,
                                "kinsn_per_req": ins / res["requests"] / 1e3,
                                "minsn_per_mib": ins / mib / 1e6,
                                "client_insns": host.get(
                                    "insn%d" % isolate.CLIENT_CPU)})
                rec.update({
                    "host_server_s": hs,
                    "host_client_s": host.get("vcpu%d" % isolate.CLIENT_CPU),
                    "host_other_s": host.get("other"),
                })
        sizes = self.info[fs]["sizes"]
        rec["kweb_check"] = check_kweb(side.name, kd, res, wl,
                                       sizes[0] if len(sizes) == 1 else 0)
        if s0 is not None:
            rec["kwebtlsd"] = check_tlsd(delta(s1, s0), res, wl)
        if wl["tool"] == "tlsload" and res["resumed_share"] < 0.5:
            # The row is about resumed connections: it must measure them.
            raise Failed("tlsload: %d of %d connections resumed"
                         % (res["resumed"], res["requests"]))
        return rec

    def profiled(self, side, wl_name, fs):
        """One more run, untimed, with the server's CPU profiled: where
        its time goes (bench/cpuprofile.py), by the instruction counter's
        blocks where the host counts them, else by perf's samples."""
        a = self.args
        wl = WORKLOADS[wl_name]
        if wl["tool"] != "wrk":
            amount = self.httperf_conns((side.name, wl_name, fs), a.profile)
        else:
            amount = max(1, round(a.profile))
        if self.icount is None:
            self.icount = cpuprofile.InsnProfile.available()
        if self.icount:
            prof = cpuprofile.InsnProfile(isolate.SERVER_CPU)
        else:
            prof = cpuprofile.Profile(isolate.SERVER_CPU,
                                      os.path.join(a.base, "perf.data"))
        v0 = vmstat()
        prof.start()
        try:
            res, _, _ = self.load(wl, fs, amount, False)
        finally:
            out = prof.stop()
        out = out or {"error": "no profile"}
        out["requests"] = res["requests"]
        out["vmstat"] = delta(vmstat(), v0)
        return out

    def side_round(self, comp, label, side_name, rnd, rows):
        self.round = rnd
        side = Side(side_name, self.args, self.www)
        self.side = side
        base = {"type": "run", "comparison": comp, "side": label,
                "server": side_name, "round": rnd}
        try:
            side.start()
            self.lengths = fetch_all(
                side.port, sorted({p for fs in {r[1] for r in rows}
                                   for p in self.info[fs]["paths"]}),
                self.www, self.info["_encoded"], side_name == "floor",
                side.tls)
        except (Failed, OSError, subprocess.SubprocessError) as e:
            for wl, fs in rows:
                self.fail(dict(base, workload=wl, fileset=fs),
                          "start: %s" % e)
            try:
                side.stop()
            except (Failed, OSError, subprocess.SubprocessError):
                pass
            return
        if ISOLATED:
            # The instructions of the side's own module counted apart:
            # kweb's share of the server's CPU.
            module = side.module
            rng = isolate.count_module(module)
            if rng:
                base["module"], base["module_text"] = module, list(rng)
            waited, share = isolate.settle()
            base["settle_s"], base["settle_busy"] = waited, share
        try:
            for wl, fs in rows:
                rec = dict(base)
                ev0 = self.evidence_mark(side)
                try:
                    rec.update(self.timed(side, wl, fs))
                    rec["ok"] = True
                    self.nruns += 1
                    self.emit(rec)
                    if (self.args.profile and rnd == 1 and ISOLATED and
                            (wl, fs) in rows[:self.args.profile_rows] and
                            self.args.profile_sides in (None,
                                                        (comp, label))):
                        try:
                            prof = self.profiled(side, wl, fs)
                        except (Failed, OSError,
                                subprocess.SubprocessError) as e:
                            prof = {"error": str(e)}
                        prof.update({"type": "profile", "comparison": comp,
                                     "side": label, "server": side_name,
                                     "workload": wl, "fileset": fs})
                        self.emit(prof)
                    say("%-7s round %d %s %-7s %-7s %-4s %10.1f req/s %8.2f MB/s "
                        "%7.1f ms CPU/1k req%s" % (
                            comp, rnd, label, side_name, wl, fs, rec["rps"],
                            rec["mbps"], rec["cpu_ms_per_1k"],
                            " (server %.1f, host %s, %s k insn/req, "
                            "client CPU %.0f%%)" % (
                                rec["server_cpu_ms_per_1k"],
                                "%.1f" % rec["host_cpu_ms_per_1k"]
                                if "host_cpu_ms_per_1k" in rec else "-",
                                "%.1f" % rec["kinsn_per_req"]
                                if "kinsn_per_req" in rec else "-",
                                100 * rec["client_cpu_util"])
                            if ISOLATED else ""))
                except (Failed, OSError, subprocess.SubprocessError) as e:
                    rec.update({"workload": wl, "fileset": fs,
                                "evidence": self.evidence(side, ev0)})
                    self.fail(rec, str(e))
        finally:
            try:
                side.stop()
            except (Failed, OSError, subprocess.SubprocessError) as e:
                say("stopping %s: %s" % (side_name, e))
                self.nfail += 1

    @staticmethod
    def evidence_mark(side):
        """Where the counters and nginx's error log stand before a row's
        runs, so that a failed row can say what moved."""
        try:
            tlsd = side.tlsd_stats()
        except Failed:
            tlsd = None
        log = side.error_log()
        return {"kweb": kweb_counters(), "tcp": tcp_all(), "tlsd": tlsd,
                "client_tcp": tcp_all(True) if ISOLATED else None,
                "log": file_size(log) if log else 0}

    @staticmethod
    def evidence(side, mark):
        """What moved over a failed row (warm-up and timed runs): kweb's
        and the TCP counters that changed (the client's namespace's too),
        kwebtlsd's, nginx's error log lines."""
        out = {}
        k1 = kweb_counters()
        if k1 is not None and mark["kweb"] is not None:
            out["kweb"] = moved(k1, mark["kweb"])
        out["tcp"] = moved(tcp_all(), mark["tcp"])
        if mark.get("client_tcp") is not None:
            out["client_tcp"] = moved(tcp_all(True), mark["client_tcp"])
        try:
            t1 = side.tlsd_stats()
        except Failed as e:
            t1, out["tlsd_error"] = None, str(e)
        if t1 is not None and mark["tlsd"] is not None:
            out["tlsd"] = moved(t1, mark["tlsd"])
        log = side.error_log()
        if log:
            out["error_log"] = file_tail(log, mark["log"])
        return out

    def fail(self, rec, why):
        rec.update({"ok": False, "why": why})
        self.nfail += 1
        self.nruns += 1
        self.emit(rec)
        say("%s round %s %s %s %s %s FAILED: %s" % (
            rec["comparison"], rec["round"], rec["side"], rec["server"],
            rec["workload"], rec["fileset"], why))
        ev = rec.get("evidence")
        if ev:
            say("  what moved over the row: %s" % json.dumps(ev,
                                                           sort_keys=True))

    def comparison(self, comp, rows):
        a_side, b_side = COMPARISONS[comp]
        if comp in TLS_COMPARISONS:
            rows = self.args.tls_rows_list
        if comp == "floor":
            # The floor answers every request with the same 1 KiB.
            rows = [r for r in rows if r[1] == "1k"]
            if not rows:
                say("comparison floor: no 1k row, skipped")
                return
        for rnd in range(1, self.args.rounds + 1):
            if ISOLATED:
                cal = isolate.calibrate(1.0 if self.args.smoke else 2.0)
                cal.update({"comparison": comp, "round": rnd})
                self.emit(cal)
                say("calibration: a %.2f s spin on CPU%d read %.3f s "
                    "(tick-sampled %.2f s, its vCPU thread on the host %s, "
                    "%s M insn/s); quiet CPU%d %.1f ms/s busy"
                    % (cal["spin_wall"], isolate.SERVER_CPU, cal["measured"],
                       cal["sampled"], "%.3f s" % cal["host_spin"]
                       if cal.get("host_spin") is not None else "unknown",
                       "%.0f" % (cal["insn_spin_per_s"] / 1e6)
                       if cal.get("insn_spin_per_s") else "-",
                       isolate.SERVER_CPU, cal["quiet_busy_per_s"] * 1000))
            # A B, then B A: the side that runs second in a round paid
            # up to 1.3x more CPU per request (nginx against nginx,
            # 2026-12-03), so alternating the order cancels that out of
            # the median of the paired ratios.
            order = [("A", a_side), ("B", b_side)]
            if rnd % 2 == 0:
                order.reverse()
            for label, side in order:
                self.side_round(comp, label, side, rnd, rows)


# ---------------------------------------------------------------- main

def csv(value, allowed, what):
    items = [x for x in value.split(",") if x]
    for x in items:
        if x not in allowed:
            raise SystemExit("unknown %s %r (known: %s)"
                             % (what, x, ", ".join(allowed)))
    return items


def tune_guest(ports):
    """Only in the throw-away guest: room for many short connections.
    The servers' ports are reserved: a client connection (or its
    TIME_WAIT) on local port 8080 would make nginx's bind() fail."""
    reserved = ",".join(str(p) for p in ports)
    sysctls = [("/proc/sys/net/ipv4/ip_local_reserved_ports", reserved),
               ("/proc/sys/net/ipv4/ip_local_port_range", "1024 65535"),
               ("/proc/sys/net/ipv4/tcp_tw_reuse", "2")]
    for path, value in sysctls:
        try:
            with open(path, "w") as f:
                f.write(value)
        except OSError as e:
            say("could not set %s: %s" % (path, e))


def raise_nofile(want=65536):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < want:
        # root may raise the hard limit too (up to fs.nr_open): the idle
        # run holds 10,000 client sockets, past a 4096 hard limit.
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return
        except (ValueError, OSError):
            want = hard
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True,
                    help="work directory (docroot, lists, nginx run dir); "
                    "in the guest a tmpfs")
    ap.add_argument("--out", required=True, help="JSON lines appended here")
    ap.add_argument("--kweb-ko", help="kweb.ko (needed by kweb, handoff and "
                    "floor)")
    ap.add_argument("--floor-ko", help="bench/floor/kwebfloor.ko (needed by "
                    "floor)")
    ap.add_argument("--comparisons", default="",
                    help="default: aa,kweb,handoff, and floor with "
                    "--floor-ko")
    ap.add_argument("--workloads", default="",
                    help="with --filesets: every workload x file set "
                    "(known: %s)" % ",".join(WORKLOADS))
    ap.add_argument("--filesets", default="",
                    help="known: %s" % ",".join(FILESETS))
    ap.add_argument("--rows", default="",
                    help="explicit rows WORKLOAD:FILESET,... (default: "
                    "%s)" % DEFAULT_ROWS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=5,
                    help="seconds per timed run (wrk: whole seconds)")
    ap.add_argument("--warmup", type=float, default=1,
                    help="seconds of untimed load before each timed run "
                    "(wrk: the run that checks every response, at least 1)")
    ap.add_argument("--check-timed", action="store_true",
                    help="wrk checks every response in the timed runs too "
                    "(costs the load tool more than a server's big files)")
    ap.add_argument("--probe-conns", type=int, default=100,
                    help="httperf connections of the first rate probe")
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--tls-port", type=int, default=443,
                    help="the HTTPS sides' port (kweb's TLS listener, "
                    "nginx's ssl listeners)")
    ap.add_argument("--tlsd-port", type=int, default=8444,
                    help="kwebtlsd's loopback port (kweb-tls)")
    ap.add_argument("--tls-rows", default=TLS_ROWS,
                    help="the TLS comparisons' rows (default: %s)" % TLS_ROWS)
    ap.add_argument("--kwebctl", default=os.path.join(USERCTL, "kwebctl"))
    ap.add_argument("--kwebtlsd", default=os.path.join(USERCTL, "kwebtlsd"))
    ap.add_argument("--backend-port", type=int, default=8080)
    ap.add_argument("--loopback-only", action="store_true",
                    help="nginx alone listens on 127.0.0.1 and [::1] only")
    ap.add_argument("--no-reuseport", dest="reuseport", action="store_false")
    ap.add_argument("--no-backend-deferred", dest="backend_deferred",
                    action="store_false",
                    help="nginx behind kweb listens without \"deferred\"")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="nginx worker processes (default: one per CPU)")
    ap.add_argument("--wrk-threads", type=int, default=0,
                    help="wrk threads (default: one per CPU)")
    ap.add_argument("--nginx", default="/usr/sbin/nginx")
    ap.add_argument("--nginx-user", default="")
    ap.add_argument("--wrk", default="wrk")
    ap.add_argument("--httperf", default="httperf")
    ap.add_argument("--spec-dirs", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--guest", action="store_true",
                    help="tune the (throw-away) machine's sysctls")
    ap.add_argument("--tool-cpus", type=lambda s: {int(c) for c in
                                                   s.split(",")},
                    help="run the load tool on these CPUs only (e.g. 0)")
    ap.add_argument("--nginx-affinity", action="store_true",
                    help="worker_cpu_affinity auto: a worker per CPU")
    ap.add_argument("--profile", type=float, default=4,
                    help="seconds of one more run per row and side in the "
                    "first round, with the server's CPU profiled (by "
                    "the instruction counter's blocks, else by perf)")
    ap.add_argument("--profile-rows", type=int, default=None,
                    help="profile only the first N rows")
    ap.add_argument("--shared-cpus", dest="isolate", action="store_false",
                    help="with --guest: no client isolation (the client "
                    "and the servers share the CPUs, as before 2026-12-03)")
    ap.add_argument("--smoke", action="store_true",
                    help="one short round of six rows: exercises every "
                    "code path, times nothing worth reading")
    args = ap.parse_args()

    args.profile_sides = None
    if not args.comparisons:
        # The smoke run leaves out A/A: its nginx is kweb's B side.
        args.comparisons = ("" if args.smoke else "aa,") + "kweb,handoff" + (
            ",floor" if args.floor_ko else "")
    comps = csv(args.comparisons, COMPARISONS, "comparison")
    if args.smoke:
        args.rounds, args.duration, args.warmup = 1, 1, 0
        # One profile (perf's start and report take a minute under TCG):
        # kweb's, so that its symbols are looked up.
        args.profile = min(args.profile, 1)
        args.profile_rows = 1
        args.profile_sides = ("kweb", "A")
        args.probe_conns = 30
        args.spec_dirs = 1
        if not args.rows:
            # Every code path (request list and single file, for both
            # tools; big bodies; many connections), none so slow under
            # TCG that a one-second run could complete nothing.
            args.rows = ("httperf:spec,httperf4:1k,wrk16:spec,wrk256:1k,"
                         "httperf:1m,wrk16:64kgz")
    if not args.rows and not args.workloads and not args.filesets:
        args.rows = DEFAULT_ROWS
    def parse_rows(value, tls):
        out = []
        for item in value.split(","):
            wl, _, fs = item.partition(":")
            csv(wl, WORKLOADS, "workload")
            csv(fs, FILESETS, "file set")
            if WORKLOADS[wl]["tool"] == "tlsload" and not tls:
                raise SystemExit("workload %s is for the TLS comparisons "
                                 "(--tls-rows)" % wl)
            out.append((wl, fs))
        return out
    args.tls_rows_list = parse_rows(args.tls_rows, True)
    if args.rows:
        rows = parse_rows(args.rows, False)
    else:
        rows = [(wl, fs) for wl in csv(args.workloads or ",".join(WORKLOADS),
                                       WORKLOADS, "workload")
                for fs in csv(args.filesets or ",".join(FILESETS), FILESETS,
                              "file set")
                if WORKLOADS[wl]["tool"] != "tlsload"]
    sides = {s for c in comps for s in COMPARISONS[c]}
    if sides & {"kweb", "handoff", "kweb-tls"}:
        if not args.kweb_ko or not os.path.isfile(args.kweb_ko):
            raise SystemExit("comparisons %s need --kweb-ko" % args.comparisons)
        if kweb_counters() is not None:
            raise SystemExit("kweb is already loaded")
    if "kweb-tls" in sides:
        for tool in (args.kwebctl, args.kwebtlsd):
            if not os.access(tool, os.X_OK):
                raise SystemExit("the TLS comparisons need %s (make -C "
                                 "userctl)" % tool)
    if "floor" in comps and not (args.floor_ko and
                                 os.path.isfile(args.floor_ko)):
        raise SystemExit("comparison floor needs --floor-ko")
    if args.rounds < 1 or args.duration < 1:
        raise SystemExit("--rounds and --duration must be at least 1")

    global ISOLATED
    iso = None
    if args.guest:
        tune_guest((args.port, args.backend_port, args.tls_port,
                    args.tlsd_port))
        if args.isolate:
            try:
                iso = isolate.setup([
                    ("net.ipv4.ip_local_port_range", "1024 65535"),
                    ("net.ipv4.tcp_tw_reuse", "1")])
            except isolate.Error as e:
                raise SystemExit("client isolation: %s" % e)
            ISOLATED = True
            args.workers = 1
            args.wrk_threads = 1
    raise_nofile()
    os.makedirs(args.base, exist_ok=True)
    os.chmod(args.base, 0o755)
    t0 = time.monotonic()
    www, info, _ = make_docroot(args.base, args.spec_dirs, args.seq_len,
                               args.seed)
    say("docroot %s made in %.1fs; spec sequence %s" % (
        www, time.monotonic() - t0, spec_summary(info)))

    runs = args.rounds * 2 * sum(
        len(args.tls_rows_list if c in TLS_COMPARISONS else rows)
        for c in comps)
    per = args.duration + args.warmup + 2
    say("%d comparisons x %d rounds x 2 sides x their rows = %d timed "
        "runs, at least %.0f s" % (len(comps), args.rounds, runs, runs * per))
    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    b = Bench(args, www, info)
    b.emit({"type": "meta", "kernel": os.uname().release,
            "cpus": b.ncpu, "clk_tck": b.tck,
            "accel": os.environ.get("KWEB_BENCH_ACCEL", ""),
            "nginx": tool_version([args.nginx, "-v"]),
            "wrk": tool_version([args.wrk, "-v"]),
            "httperf": tool_version([args.httperf, "--version"]),
            "comparisons": comps, "rows": rows, "rounds": args.rounds,
            "tls_rows": args.tls_rows_list, "tls_port": args.tls_port,
            "duration": args.duration, "warmup": args.warmup,
            "smoke": args.smoke, "reuseport": args.reuseport,
            "backend_deferred": args.backend_deferred,
            "check_timed": args.check_timed,
            "workers": args.workers, "tool_cpus": sorted(args.tool_cpus or []),
            "nginx_affinity": args.nginx_affinity, "spec": spec_summary(info),
            "isolation": iso,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
    try:
        for comp in comps:
            say("comparison %s: A=%s B=%s" % ((comp,) + COMPARISONS[comp]))
            b.comparison(comp, rows)
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    finally:
        b.out.close()
        if ISOLATED:
            isolate.teardown()
    say("%d runs, %d failed, %.0f s" % (b.nruns, b.nfail, time.monotonic() - t0))
    return 1 if b.nfail else 0


if __name__ == "__main__":
    sys.exit(main())
