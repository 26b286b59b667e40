#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The clients of the soak (tests/guest/soak.sh, `make soak`), one job each:

    soak.py make-files --docroot D        the wrk load's files (D/soak/)
    soak.py handoff   --seconds S --out F ...  handoff_test.py's exchanges
    soak.py churn     --seconds S --out F ...  file churn, exact bodies
    soak.py ctl       --seconds S --out F ...  kwebctl config set / cache flush
    soak.py slowloris --seconds S --out F ...  hardening_test.py's rounds
    soak.py summary   --dir RUN_DIR           the components' verdicts
    soak.py assemble  --dir RUN_DIR ...       RUN_DIR/soak.json, at the end

Each client runs for --seconds, counts what it did and every failure, and
writes a JSON summary to --out: {"component", "seconds", "counts",
"failures", "first_failures"}. A failure is anything a correct server
would not do: a wrong status or byte, a lost or cut-off answer, a timeout.
`summary` reads those and the wrk line (tests/wrk/soak.lua), prints one
line per component, "ok<TAB>text" or "not ok<TAB>text", and writes
RUN_DIR/components.json. Python 3.9+ standard library only.
"""

import argparse
import functools
import json
import os
import random
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from httplib_raw import (Connection, NoResponse, ProtocolError,  # noqa: E402
                         Timeout, show)

MAX_KEPT = 20           # failures kept verbatim per component
MAX_TEXT = 3000         # characters kept of each


class Stats:
    """Counts and failures of one component, written to --out at the end."""

    def __init__(self, component, args):
        self.component = component
        self.args = args
        self.t0 = time.monotonic()
        self.end = self.t0 + args.seconds
        self.counts = {}
        self.failures = 0
        self.first = []
        self.lock = threading.Lock()

    def left(self):
        return self.end - time.monotonic()

    def add(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def fail(self, msg):
        with self.lock:
            self.failures += 1
            if len(self.first) < MAX_KEPT:
                self.first.append("%.1f s: %s" % (time.monotonic() - self.t0,
                                                  msg[:MAX_TEXT]))
        print("# %s failure: %s" % (self.component, msg), flush=True)

    def write(self):
        out = {"component": self.component,
               "seconds": round(time.monotonic() - self.t0, 1),
               "counts": self.counts, "failures": self.failures,
               "first_failures": self.first}
        with open(self.args.out, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
        print("# %s: %s" % (self.component, json.dumps(out, sort_keys=True)))
        return 1 if self.failures else 0


# ---------------------------------------------------------------------------
# wrk's files: self-describing, so tests/wrk/soak.lua checks every byte

WRK_SIZES = [120, 1500, 4096, 20000, 70000, 300000]
# How often each appears in the request list: mostly the small ones.
WRK_WEIGHTS = [6, 4, 3, 2, 1, 1]


def wrk_body(rel, size):
    head = b"soak-wrk /%s %d\n" % (rel.encode(), size)
    return head + random.Random(rel).randbytes(size - len(head))


def cmd_make_files(args):
    root = os.path.join(args.docroot, "soak")
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o755)
    paths = []
    for i, (size, weight) in enumerate(zip(WRK_SIZES, WRK_WEIGHTS)):
        rel = "soak/w%d.bin" % i
        with open(os.path.join(args.docroot, rel), "wb") as f:
            f.write(wrk_body(rel, size))
        os.chmod(os.path.join(args.docroot, rel), 0o644)
        paths += ["/" + rel] * weight
    # Interleaved, so consecutive requests differ.
    random.Random(1).shuffle(paths)
    with open(args.list, "w") as f:
        f.write("\n".join(paths) + "\n")
    return 0


# ---------------------------------------------------------------------------
# handoffs: handoff_test.py's own exchanges, in a loop

def cmd_handoff(args):
    import handoff_test as ho
    st = Stats("handoff", args)
    docroot = os.path.abspath(args.docroot)
    with open(os.path.join(os.path.dirname(docroot), "manifest.json")) as f:
        manifest = json.load(f)
    # Counters are not checked: the other clients move them too.
    ho.CFG = argparse.Namespace(
        host=args.host, port=args.port, docroot=docroot,
        client_addr=args.client_addr, backend_port=8080,
        params="/sys/module/kweb/parameters", proc="/proc/net/kweb",
        counters=False, kweb_server="kweb", backend_server="nginx",
        manifest=manifest, marker=manifest["secret_marker"])
    # A Date is checked against our clock once the whole exchange is read:
    # on a starved guest a 10 MiB one took 186 s, and the Date was right.
    ho.DATE_SKEW = max(ho.DATE_SKEW, 4 * args.timeout + 60)
    # Not those that change module parameters or the backend, or unload.
    skip = {ho.t_backend_direct, ho.t_missing, ho.t_no_backend,
            ho.t_queue_full, ho.t_rmmod, ho.t_wrk}
    tests = [t for t in ho.TESTS if t[1] not in skip]
    print("# handoff: %d exchanges of handoff_test.py in a loop" % len(tests),
          flush=True)
    i = 0
    while st.left() > 0:
        name, fn, targs, factor = tests[i % len(tests)]
        i += 1
        ctx = ho.Ctx(args.timeout * factor)
        # Just before the deadline, both ends of the exchange's sockets as
        # the kernel has them: where the bytes of an answer that never
        # came are (unread at kweb, at nginx, or with us).
        seen = []
        t0 = time.monotonic()
        timer = threading.Timer(max(0.0, ctx.deadline - t0 - 2),
                                lambda: seen.append(socket_states(ctx.conns)))
        timer.start()
        ho.run_one(fn, targs, ctx)
        timer.cancel()
        st.add("exchanges")
        if ctx.errors:
            raw = (" response: " + show(ctx.fail_raw, 200)
                   if ctx.fail_raw is not None else "")
            st.fail("%s (%.1f s): %s%s%s" % (
                name, time.monotonic() - t0, "; ".join(ctx.errors[:3]), raw,
                "; sockets 2 s before the deadline: " + seen[0] if seen else ""))
    st.counts["distinct"] = len(tests)
    return st.write()


def socket_states(conns):
    """`ss -tnoi` for both ends of these connections, one line each."""
    ports = set()
    for c in conns:
        try:
            ports.add(":%d " % c.sock.getsockname()[1])
        except OSError:
            pass
    try:
        out = subprocess.run(["ss", "-Htnoi"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return "ss: %s" % e
    entries = []
    for line in out.splitlines():
        if line[:1].isspace() and entries:
            entries[-1] += " |" + " ".join(line.split())
        else:
            entries.append(" ".join(line.split()))
    return " // ".join(e for e in entries if any(p in e + " " for p in ports)) \
        or "none left"


# ---------------------------------------------------------------------------
# file churn

CHURN_SIZES = [0, 1, 100, 4095, 4096, 4097, 12000, 65536, 200000]
CHURN_OPS = ["same-size", "rename-over", "resize", "unlink-recreate"]


@functools.lru_cache(maxsize=512)
def churn_body(name, version, size):
    """Version `version` of `name`: a head line naming both, then filler
    drawn from them, so no two versions share their bytes."""
    head = b"soak-churn %s v%d size %d\n" % (name.encode(), version, size)
    if size < len(head):
        return head[:size]
    return head + random.Random("%s:%d" % (name, version)).randbytes(size - len(head))


class ChurnFile:
    """A file and its changes: state is (status, version, size) as of the
    last change that finished; changes[] = [begin seq, end seq or None,
    states it passes through, in place?]. A change made in place (the file
    rewritten where it stands) may show a reader racing it a mix of the
    old and new bytes, or a prefix of the new; rename-over never does."""

    def __init__(self, name, state):
        self.name = name
        self.first = state
        self.changes = []


class Churn:
    def __init__(self, args, st):
        self.args = args
        self.st = st
        self.root = os.path.join(args.docroot, "soak-churn")
        self.lock = threading.Lock()
        self.seq = 0
        self.files = {}
        self.rng = random.Random(7)

    def now(self):
        with self.lock:
            return self.seq

    # -- the writer ---------------------------------------------------------

    def write(self, path, data):
        with open(path, "wb") as fh:
            fh.write(data)
        os.chmod(path, 0o644)

    def state(self, f):
        return f.changes[-1][2][-1] if f.changes else f.first

    def change(self, f, op, version):
        path = os.path.join(self.root, f.name)
        status, _, size = self.state(f)
        if op == "same-size" and status != 200:
            op = "rename-over"
        if op != "same-size":
            size = self.rng.choice(CHURN_SIZES)
        new = (200, version, size)
        states = [(404, 0, 0), new] if op == "unlink-recreate" else [new]
        ch = [0, None, states, op != "rename-over"]
        with self.lock:
            self.seq += 1
            ch[0] = self.seq
            f.changes.append(ch)
            del f.changes[:-64]
        body = churn_body(f.name, version, size)
        if op == "same-size":
            with open(path, "r+b") as fh:
                fh.write(body)
        elif op == "rename-over":
            self.write(path + ".tmp", body)
            os.rename(path + ".tmp", path)
        elif op == "resize":
            with open(path, "r+b") as fh:
                fh.truncate(0)
                fh.write(body)
        else:
            os.unlink(path)
            self.write(path, body)
        with self.lock:
            self.seq += 1
            ch[1] = self.seq
        self.st.add("op " + op)

    def writer(self, stop):
        version = 1
        while not stop.is_set():
            for f in self.files.values():
                version += 1
                self.change(f, self.rng.choice(CHURN_OPS), version)
            # Stable spells between changes, for requests to fall into.
            stop.wait(self.args.period)

    # -- the checkers -------------------------------------------------------

    def window(self, f, seq0, seq1):
        """What a request sent after event seq0 and answered before seq1
        may see: the states (the file's at seq0 first), and whether a change
        made in place overlapped it. None instead of the states if nothing
        changed: then only the file's state at seq0 will do."""
        with self.lock:
            changes = [(b, e, list(s), ip) for b, e, s, ip in f.changes]
        at0 = f.first
        for b, e, s, _ in changes:
            if e is not None and e <= seq0:
                at0 = s[-1]
        racing = [(s, ip) for b, e, s, ip in changes
                  if b <= seq1 and (e is None or e > seq0)]
        if not racing:
            return [at0], None
        return [at0] + [x for s, _ in racing for x in s], \
            any(ip for _, ip in racing)

    def check(self, f, resp, states, inplace):
        """None if resp is what the file may have been shown as, else why
        not."""
        bodies = [churn_body(f.name, v, n) for st, v, n in states if st == 200]
        if inplace is None:
            st, v, n = states[0]
            if resp.code == st and (st != 200 or resp.body == bodies[0]):
                return None
        elif resp.code == 404 and any(x[0] == 404 for x in states):
            return None
        elif resp.code == 200 and resp.body in bodies:
            return None
        elif resp.code == 200 and inplace and mixed_of(resp.body, bodies):
            self.st.add("racing in-place write: mixed body")
            return None
        return "%d bytes (first line %r) %s; the file was %s" % (
            len(resp.body), resp.body.split(b"\n", 1)[0][:60],
            "while unchanged" if inplace is None else "while changing",
            states)

    def get(self, f):
        conn = Connection(self.args.host, self.args.port,
                          time.monotonic() + self.args.timeout)
        try:
            return conn.request(("GET /soak-churn/%s HTTP/1.1\r\nHost: "
                                 "soak\r\n\r\n" % f.name).encode())
        finally:
            conn.close()

    def checker(self, k, stop):
        names = sorted(self.files)
        i = k
        while not stop.is_set():
            f = self.files[names[i % len(names)]]
            i += 1
            seq0 = self.now()
            try:
                resp = self.get(f)
            except ProtocolError as e:
                states, inplace = self.window(f, seq0, self.now())
                # Cut short as the file shrank under it, then closed: what
                # sendfile does too. Only while it was rewritten in place.
                if "connection closed" in str(e) and inplace:
                    self.st.add("cut short by an in-place write, then closed")
                    continue
                self.st.fail("%s: %s; the file was %s" % (f.name, e, states))
                continue
            except (NoResponse, Timeout, OSError) as e:
                self.st.fail("%s: %s: %s" % (f.name, type(e).__name__, e))
                continue
            states, inplace = self.window(f, seq0, self.now())
            self.st.add("requests")
            self.st.add("requests while unchanged" if inplace is None
                        else "requests while changing")
            why = self.check(f, resp, states, inplace)
            if why:
                self.st.fail("%s: status %d: %s" % (f.name, resp.code, why))

    def run(self):
        os.makedirs(self.root, exist_ok=True)
        os.chmod(self.root, 0o755)
        for i in range(self.args.files):
            size = CHURN_SIZES[i % len(CHURN_SIZES)]
            f = ChurnFile("c%d.bin" % i, (200, 1, size))
            self.write(os.path.join(self.root, f.name), churn_body(f.name, 1, size))
            self.files[f.name] = f
        stop = threading.Event()
        threads = [threading.Thread(target=self.writer, args=(stop,))]
        threads += [threading.Thread(target=self.checker, args=(k, stop))
                    for k in range(self.args.clients)]
        for t in threads:
            t.start()
        stop.wait(max(0.0, self.st.left()))
        stop.set()
        for t in threads:
            t.join()
        # Afterwards every file is served exactly as it now is.
        for f in self.files.values():
            try:
                resp = self.get(f)
            except (NoResponse, ProtocolError, Timeout, OSError) as e:
                self.st.fail("after the churn, %s: %s" % (f.name, e))
                continue
            self.st.add("final checks")
            why = self.check(f, resp, [self.state(f)], None)
            if why:
                self.st.fail("after the churn, %s: status %d: %s" %
                             (f.name, resp.code, why))


def mixed_of(body, bodies):
    """Every byte of body is the byte at its offset of one of bodies (a
    prefix of one counts: a reader racing a rewrite after a truncation)."""
    if not bodies or len(body) > max(len(v) for v in bodies):
        return False
    for i, b in enumerate(body):
        if not any(i < len(v) and v[i] == b for v in bodies):
            return False
    return True


def cmd_churn(args):
    st = Stats("churn", args)
    Churn(args, st).run()
    return st.write()


# ---------------------------------------------------------------------------
# the control plane

# Two sets of settings, flipped every round: the module's own values (read
# at the start and put back at the end) and these. None of them changes
# what the other clients may expect: keep-alive stays longer than any of
# them waits, max-requests above what one connection of theirs sends.
CTL_B = {"keepalive-timeout": 10, "send-timeout": 30, "cache-size": 1,
         "cache-max-file": 16, "max-requests": 100}


def kwebctl(args, st, *argv):
    try:
        p = subprocess.run([args.kwebctl] + list(argv), capture_output=True,
                           text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        st.fail("kwebctl %s: no answer within %d s" % (" ".join(argv), args.timeout))
        return None
    if p.returncode != 0:
        st.fail("kwebctl %s: exit %d: %s" % (" ".join(argv), p.returncode,
                                             (p.stderr or p.stdout).strip()[:200]))
        return None
    return p.stdout


def cmd_ctl(args):
    st = Stats("ctl", args)
    out = kwebctl(args, st, "-j", "config", "get")
    if out is None:
        return st.write()
    orig = json.loads(out)
    a = {k: orig[k.replace("-", "_")] for k in CTL_B}
    flip = 0
    while st.left() > 0:
        flip += 1
        want = CTL_B if flip % 2 else a
        argv = ["config", "set"]
        for k, v in want.items():
            argv += [k, str(v)]
        if kwebctl(args, st, *argv) is not None:
            st.add("config set")
            out = kwebctl(args, st, "-j", "config", "get")
            if out is not None:
                got = json.loads(out)
                wrong = {k: got[k.replace("-", "_")] for k, v in want.items()
                         if got[k.replace("-", "_")] != v}
                if wrong:
                    st.fail("config get after set %s: %s" % (want, wrong))
        if kwebctl(args, st, "cache", "flush") is not None:
            st.add("cache flush")
        if flip % 3 == 0 and kwebctl(args, st, "cache", "flush",
                                     "/soak/w0.bin") is not None:
            st.add("cache flush PATH")
        if kwebctl(args, st, "-j", "stats") is not None:
            st.add("stats")
        time.sleep(min(args.period, max(0.0, st.left())))
    argv = ["config", "set"]
    for k, v in a.items():
        argv += [k, str(v)]
    if kwebctl(args, st, *argv) is not None:
        st.add("config set")
    return st.write()


# ---------------------------------------------------------------------------
# slowloris: hardening_test.py's rounds, one after another

def cmd_slowloris(args):
    import hardening_test as hd
    st = Stats("slowloris", args)
    hd.CFG = argparse.Namespace(host=args.host, port=args.port,
                                docroot=os.path.abspath(args.docroot),
                                header_timeout=args.header_timeout,
                                margin=args.margin)
    while st.left() > 0:
        try:
            r = hd.slowloris_round(args.slow)
        except OSError as e:
            st.fail("round %d: opening the slow connections: %s" %
                    (st.counts.get("rounds", 0) + 1, e))
            time.sleep(1)
            continue
        st.add("rounds")
        st.add("slow connections", r.slow)
        st.add("closed in time", len(r.closed_at) - len(r.late))
        st.add("normal requests", len(r.latencies))
        if len(r.closed_at) < r.slow:
            st.fail("%d of %d slow connections still open after %.0f s" %
                    (r.slow - len(r.closed_at), r.slow, r.limit + 5))
        if r.late:
            st.fail("%d slow connections closed later than %d s (last at "
                    "%.1f s)" % (len(r.late), r.limit, max(r.late)))
        for e in r.errors:
            st.fail("normal client: %s" % e)
    return st.write()


# ---------------------------------------------------------------------------
# summary

WRK_RE = re.compile(r"^soak-wrk: (.*?) first_bad=(.*)$", re.M)


def wrk_verdict(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        return False, "wrk: no output (%s)" % e, {}
    m = WRK_RE.search(text)
    if not m:
        return False, "wrk: no soak-wrk line in %s" % path, {}
    counts = {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    errors = sum(v for k, v in counts.items() if k.startswith("errors_"))
    good = (counts["bad"] == 0 and errors == 0 and counts["good"] > 0 and
            counts["good"] == counts["requests"])
    text = ("wrk: %d responses, %d exact, %d wrong, %d socket errors "
            "(connect %d, read %d, write %d, timeout %d), %d statuses >= 400" % (
                counts["requests"], counts["good"], counts["bad"],
                errors - counts["errors_status"], counts["errors_connect"],
                counts["errors_read"], counts["errors_write"],
                counts["errors_timeout"], counts["errors_status"]))
    if m.group(2):
        text += "; first wrong: " + m.group(2)
    return good, text, {"counts": counts, "failures": counts["bad"] + errors,
                        "first_failures": [m.group(2)] if m.group(2) else []}


def component_verdict(path, name):
    try:
        with open(path) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        return False, "%s: no summary (%s)" % (name, e), {}
    c = s["counts"]
    text = "%s: %s, %d failures" % (
        name, ", ".join("%s %d" % kv for kv in sorted(c.items())), s["failures"])
    if s["first_failures"]:
        text += "; first: " + s["first_failures"][0]
    # A component that did nothing proves nothing.
    did = {"handoff": "exchanges", "churn": "requests", "ctl": "config set",
           "slowloris": "rounds"}[name]
    return s["failures"] == 0 and c.get(did, 0) > 0, text, s


def cmd_summary(args):
    out = {}
    verdicts = [("wrk",) + wrk_verdict(os.path.join(args.dir, "wrk.txt"))]
    for name in ("handoff", "churn", "ctl", "slowloris"):
        verdicts.append((name,) + component_verdict(
            os.path.join(args.dir, "soak-%s.json" % name), name))
    for name, good, text, data in verdicts:
        data = dict(data, ok=good)
        out[name] = data
        print("%s\t%s" % ("ok" if good else "not ok", text.replace("\n", " ")))
    with open(os.path.join(args.dir, "components.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return 0


def read_proc(path):
    """/proc/net/kweb as saved: {name: int} and the listener lines."""
    counters, listeners = {}, []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if parts and parts[0] == "listener":
                    listeners.append(line.strip())
                elif len(parts) == 2 and re.fullmatch(r"-?[0-9]+", parts[1]):
                    counters[parts[0]] = int(parts[1])
    except OSError:
        return None
    return {"counters": counters, "listeners": listeners}


def cmd_assemble(args):
    """RUN_DIR/soak.json: everything the host's report needs."""
    d = args.dir
    try:
        with open(os.path.join(d, "components.json")) as f:
            components = json.load(f)
    except (OSError, ValueError):
        components = {}
    tests = []
    with open(os.path.join(d, "tap.txt")) as f:
        for line in f:
            m = re.match(r"^(ok|not ok) - (.*)$", line.rstrip("\n"))
            if m:
                tests.append({"ok": m.group(1) == "ok", "name": m.group(2)})
    out = {"tag": args.tag, "kernel": args.kernel, "seconds": args.seconds,
           "started": args.started, "ended": args.ended,
           "kmemleak": args.kmemleak == "yes", "components": components,
           "proc": {k: read_proc(os.path.join(d, "proc-%s.txt" % k))
                    for k in ("start", "end", "closed")},
           "tests": tests,
           "passed": sum(t["ok"] for t in tests),
           "failed": sum(not t["ok"] for t in tests)}
    with open(os.path.join(d, "soak.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def client(name, fn):
        p = sub.add_parser(name)
        p.add_argument("--host", default="127.0.0.1")
        p.add_argument("--port", type=int, default=80)
        p.add_argument("--docroot", required=True)
        p.add_argument("--seconds", type=float, required=True)
        p.add_argument("--out", required=True)
        p.add_argument("--timeout", type=float, default=10.0,
                       help="seconds per request (per exchange, a multiple)")
        p.set_defaults(fn=fn)
        return p

    p = sub.add_parser("make-files")
    p.add_argument("--docroot", required=True)
    p.add_argument("--list", required=True, help="file for wrk's paths")
    p.set_defaults(fn=cmd_make_files)
    p = client("handoff", cmd_handoff)
    p.add_argument("--client-addr", help="source address of every connection")
    p = client("churn", cmd_churn)
    p.add_argument("--files", type=int, default=4)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--period", type=float, default=0.2,
                   help="seconds between rounds of changes")
    p = client("ctl", cmd_ctl)
    p.add_argument("--kwebctl", required=True)
    p.add_argument("--period", type=float, default=1.0)
    p = client("slowloris", cmd_slowloris)
    p.add_argument("--header-timeout", type=int, required=True)
    p.add_argument("--margin", type=int, default=5)
    p.add_argument("--slow", type=int, default=300)
    p = sub.add_parser("summary")
    p.add_argument("--dir", required=True)
    p.set_defaults(fn=cmd_summary)
    p = sub.add_parser("assemble")
    p.add_argument("--dir", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--started", default="")
    p.add_argument("--ended", default="")
    p.add_argument("--kmemleak", default="no")
    p.set_defaults(fn=cmd_assemble)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
