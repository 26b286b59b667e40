#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Control-plane tests for kweb: kwebctl, the netlink family, /proc/net/kweb.

    ctl_test.py --host H --port P --docroot D --kwebctl PATH
                [--base DIR] [--ynl-cli PATH] [--spec PATH] [--uapi PATH]
                [--metrics-file PATH] [--log-requests N] [--light]

Run as root in a guest, with kweb loaded (docroot=D port=P and the routes
/api/,/dyn/ and .php) and nginx (tests/guest/nginx.sh) as its backend on
8080. Covers every kwebctl subcommand, invalid values rejected with the
kernel's extack text shown, an unprivileged user refused with exit 4,
access log lines matching the requests made (count and fields), two
listeners with two docroots, a listener in another network namespace,
the Prometheus format (equal to -j stats; promtool check metrics, which
must be on PATH unless --metrics-file leaves that to the caller), batch
files (kwebctl -b and apply: all or nothing, the state they describe,
apply again changing nothing), the access log
written to a file and rotated under load with no record lost, and one
family call through the kernel's generic ynl CLI. Everything changed is put back. TAP output, "# N passed, N failed",
exit status 0 iff none failed.
"""

import email.utils
import http.client
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import (Fail, Suite, check, client_args, note,  # noqa: E402
                    socket_in_netns)

CFG = None
TESTS = Suite()

# --light (the debug kernel, and stock 6.1 in make check) does without
# kwebctl's own logic, which is user space: the netlink requests these
# make are the other tests' too.
KWEBCTL_OWN = ("kwebctl's own logic (user space), minutes under KASAN "
               "for requests the other tests make")
# Each of these runs kwebctl dozens of times: 1-2 minutes apiece on the
# debug kernel, half a minute on a stock one. Stock 6.12 (no --light)
# runs them; make check had no time for them twice on a slow host.
SETTINGS_ROUNDS = ("dozens of kwebctl runs over the settings' kernel "
                   "paths; stock 6.12 runs it")
# With --light (the debug kernel and 6.1) these go too: their kernel
# paths are the ones other tests take, a run of kwebctl costing seconds
# under KASAN.
PER_LISTENER = ("the per-listener counters the Prometheus test reads; "
                "stock 6.12 runs it")
SETTINGS_SWAP = ("a settings swap as config set's and a cache flush as "
                 "cache flush's; stock 6.12 runs it")
LOG_FORMAT = ("kwebctl's own handling of the records the JSON log test "
              "checks; stock 6.12 runs it")
IDENTITY = ("the file-identity paths of the identity suite, which the "
            "stock kernels run")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
PARAMS = "/sys/module/kweb/parameters"

# kwebctl's exit codes (kwebctl --help).
EXIT_ERROR, EXIT_USAGE, EXIT_NOT_LOADED, EXIT_PERM, EXIT_NOT_FOUND = 1, 2, 3, 4, 5


def kwebctl(*args, user=None, timeout=30):
    """Run kwebctl; returns (exit status, stdout, stderr)."""
    if user == "nobody":
        cmd = NOBODY + [CFG.kwebctl_nobody] + list(args)
    else:
        cmd = [CFG.kwebctl] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def kwebctl_ok(*args):
    rc, out, err = kwebctl(*args)
    check(rc == 0, "kwebctl %s: exit %d, stderr: %s" %
          (" ".join(args), rc, err.strip()))
    return out


def kwebctl_fails(want_rc, want_err, *args, user=None):
    """kwebctl must exit want_rc and say want_err (a regex) on stderr."""
    rc, out, err = kwebctl(*args, user=user)
    check(rc == want_rc, "kwebctl %s: exit %d, want %d; stderr: %s" %
          (" ".join(args), rc, want_rc, err.strip()))
    check(re.search(want_err, err), "kwebctl %s: stderr %r does not match %r"
          % (" ".join(args), err.strip(), want_err))
    note("kwebctl %s -> %s" % (" ".join(args), err.strip().splitlines()[0]))


def proc():
    """/proc/net/kweb: counters ("name value") and listener lines."""
    counters, listeners = {}, []
    with open("/proc/net/kweb") as f:
        for line in f:
            p = line.split()
            if p and p[0] == "listener":
                listeners.append(line.rstrip("\n"))
            elif len(p) == 2 and p[1].isdigit():
                counters[p[0]] = int(p[1])
    return counters, listeners


def param(name):
    with open(os.path.join(PARAMS, name)) as f:
        return f.read().strip()


def recv_all(s):
    """Everything until the peer closes."""
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


def fetch(host, port, target, method="GET", timeout=10.0, fields=""):
    """One request on its own connection: (status, body, client port).
    fields: more field lines, each ending in CRLF."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect((host, port))
        cport = s.getsockname()[1]
        hhost = "[%s]" % host if fam == socket.AF_INET6 else host
        s.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n"
                   "\r\n" % (method, target, hhost, fields)).encode())
        data = recv_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", head)
    check(m, "no status line from %s:%d%s: %r" % (host, port, target,
                                                   data[:80]))
    return int(m.group(1)), body, cport


def content_type(target):
    """GET target from the default listener: its Content-Type."""
    with socket.create_connection((CFG.host, CFG.port), timeout=10) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                   % target).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    m = re.search(rb"\r\nContent-Type: ([^\r]*)\r\n", data)
    check(m, "no Content-Type for %s: %r" % (target, data[:200]))
    return m.group(1).decode()


def refused(host, port):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(fam, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        try:
            s.connect((host, port))
        except ConnectionRefusedError:
            return True
    return False


def small():
    with open(os.path.join(CFG.docroot, "small.txt"), "rb") as f:
        return f.read()


def listeners_json():
    out = kwebctl_ok("-j", "listener", "list")
    return json.loads(out)


# ---- a raw generic netlink client, to send what kwebctl never would ----

def uapi_enums(path):
    """Every enumerator of the generated uAPI header, by name."""
    vals = {}
    with open(path) as f:
        text = f.read()
    for block in re.findall(r"enum\s*\w*\s*\{(.*?)\};", text, re.S):
        n = 0
        for m in re.finditer(r"^\s*(\w+)(?:\s*=\s*([^,\n]+))?,?\s*$", block,
                             re.M):
            name, val = m.group(1), m.group(2)
            if val is not None:
                try:
                    n = int(val, 0)
                except ValueError:
                    n = vals.get(val.strip("() ").split()[0], 0)
            vals[name] = n
            n += 1
    return vals


NETLINK_GENERIC, SOL_NETLINK, NETLINK_EXT_ACK = 16, 270, 11
NLMSG_ERROR, NLM_F_REQUEST, NLM_F_ACK = 2, 1, 4
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 16, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_MISS_TYPE = 1, 5


def nla(atype, payload):
    hdr = struct.pack("=HH", 4 + len(payload), atype)
    return hdr + payload + b"\0" * ((4 - len(payload) % 4) % 4)


def nla_parse(data):
    out = {}
    while len(data) >= 4:
        alen, atype = struct.unpack_from("=HH", data)
        if alen < 4:
            break
        out[atype & 0x3fff] = data[4:alen]
        data = data[(alen + 3) & ~3:]
    return out


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                               NETLINK_GENERIC)
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.s.bind((0, 0))
        self.seq = 0

    def talk(self, family, cmd, attrs):
        """Returns (errno, extack message, reply attributes); the extack
        attributes of the last error are in self.ext."""
        self.seq += 1
        body = struct.pack("=BBH", cmd, 1, 0) + b"".join(attrs)
        msg = struct.pack("=IHHII", 16 + len(body), family,
                          NLM_F_REQUEST | NLM_F_ACK, self.seq, 0) + body
        self.s.send(msg)
        reply = {}
        while True:
            data = self.s.recv(65536)
            while data:
                mlen, mtype, flags = struct.unpack_from("=IHH", data)
                payload = data[16:mlen]
                if mtype == NLMSG_ERROR:
                    err = -struct.unpack_from("=i", payload)[0]
                    # The request follows unless capped; TLVs after it.
                    tlv = payload[4:]
                    if not flags & 0x100:
                        olen = struct.unpack_from("=I", tlv)[0]
                        tlv = tlv[olen:]
                    else:
                        tlv = tlv[16:]
                    ext = nla_parse(tlv) if flags & 0x200 else {}
                    self.ext = ext
                    m = ext.get(NLMSGERR_ATTR_MSG, b"").rstrip(b"\0")
                    return err, m.decode(), reply
                reply = nla_parse(payload[4:])
                data = data[(mlen + 3) & ~3:]

    def family(self, name):
        err, msg, reply = self.talk(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                                    [nla(CTRL_ATTR_FAMILY_NAME,
                                         name.encode() + b"\0")])
        check(err == 0, "no %s family: errno %d %s" % (name, err, msg))
        return struct.unpack("=H", reply[CTRL_ATTR_FAMILY_ID][:2])[0]


# ---- tests ----

@TESTS.test("kwebctl status: loaded, one listener")
def t_status():
    out = kwebctl_ok("status")
    check("kweb: loaded" in out, "no 'kweb: loaded' in %r" % out)
    check(re.search(r"^listeners: 1$", out, re.M), "not one listener: %r" % out)
    st = json.loads(kwebctl_ok("-j", "status"))
    check(st["loaded"] and st["version"] == 2 and st["listeners"] == 1,
          "status -j: %r" % st)


@TESTS.test("kwebctl --help and OBJECT --help exit 0; bad usage exits 2",
            not_light=KWEBCTL_OWN)
def t_help():
    for args in (["--help"], ["status", "--help"], ["stats", "--help"],
                 ["listener", "--help"], ["config", "--help"],
                 ["cache", "--help"], ["log", "--help"],
                 ["apply", "--help"]):
        rc, out, _ = kwebctl(*args)
        check(rc == 0 and out.startswith("Usage: kwebctl"),
              "kwebctl %s: exit %d, %r" % (" ".join(args), rc, out[:60]))
    for args in ([], ["frobnicate"], ["st"], ["config", "set", "nope", "1"],
                 ["config", "set", "header-timeout", "x"],
                 ["listener", "add", "port", "8081"],
                 ["log", "--format", "xml"], ["apply"],
                 ["apply", "--frob", "x"], ["-b"], ["-b", "x", "status"],
                 ["-b", "/nonexistent/kweb.conf"]):
        rc, _, err = kwebctl(*args)
        check(rc == EXIT_USAGE, "kwebctl %s: exit %d, want %d (%s)" %
              (" ".join(args), rc, EXIT_USAGE, err.strip()))


@TESTS.test("kwebctl stats: the counters of /proc/net/kweb, growing with requests")
def t_stats():
    before = {}
    for line in kwebctl_ok("stats").splitlines():
        name, value = line.split()
        before[name] = int(value)
    pc, _ = proc()
    for name in before:
        pname = name.replace("-", "_")
        check(pname in pc, "%s is not in /proc/net/kweb" % pname)
    for _ in range(3):
        status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
        check(status == 200 and body == small(), "GET /small.txt: %d" % status)
    after = json.loads(kwebctl_ok("stats", "--json"))
    served = (after["requests_softirq"] + after["requests_worker"] -
              before["requests-softirq"] - before["requests-worker"])
    check(served >= 3, "requests grew by %d, want >= 3" % served)
    check(after["connections_accepted"] >= before["connections-accepted"] + 3,
          "connections_accepted did not grow by 3")


@TESTS.test("kwebctl stats listener 1: that listener's counters; 999 is not found",
            not_light=PER_LISTENER)
def t_stats_listener():
    st = json.loads(kwebctl_ok("-j", "stats", "listener", "1"))
    whole = json.loads(kwebctl_ok("-j", "stats"))
    check(set(st) == set(whole) - {"pinned_bytes"}, "keys %s, want %s" %
          (sorted(st), sorted(set(whole) - {"pinned_bytes"})))
    check(0 < st["requests_softirq"] + st["requests_worker"] <=
          whole["requests_softirq"] + whole["requests_worker"],
          "listener 1's requests %r" % st)
    check(st["cache_limit"] == int(param("cache_size")) << 20,
          "cache_limit %d, cache_size %s MiB" % (st["cache_limit"],
                                                 param("cache_size")))
    kwebctl_fails(EXIT_NOT_FOUND, r"no such listener in this network namespace",
                  "stats", "listener", "999")


# `kwebctl stats --format prometheus`: each family (after kweb_ and
# kweb_listener_), its type, the label its series differ by, and for each
# value of that label the key of `kwebctl -j stats` the series carries.
# Written out here, not taken from kwebctl, so a renamed or lost series
# fails the test.
PROM_FAMILIES = {
    "connections_accepted_total": ("counter", None,
                                   {None: "connections_accepted"}),
    "connections_closed_total": ("counter", None,
                                 {None: "connections_closed"}),
    "connections_softirq_total": ("counter", None,
                                  {None: "connections_softirq"}),
    "connections_open": ("gauge", None, {None: "connections_open"}),
    "requests_total": ("counter", "context",
                       {"softirq": "requests_softirq",
                        "worker": "requests_worker"}),
    "error_responses_total": ("counter", None, {None: "responses_error"}),
    "body_bytes_total": ("counter", "mode",
                         {"spliced": "body_bytes_spliced",
                          "copied": "body_bytes_copied"}),
    "cache_hits_total": ("counter", None, {None: "cache_hits"}),
    "cache_misses_total": ("counter", None, {None: "cache_misses"}),
    "cache_evictions_total": ("counter", None, {None: "cache_evictions"}),
    "cache_invalidations_total": ("counter", None,
                                  {None: "cache_invalidations"}),
    "cache_bytes": ("gauge", None, {None: "cache_bytes"}),
    "cache_limit_bytes": ("gauge", None, {None: "cache_limit"}),
    "cache_pinned_bytes": ("gauge", None, {None: "pinned_bytes"}),
    "handoffs_total": ("counter", "reason", {
        r: "handoff_" + r for r in ("method", "query", "prefix", "extension",
                                    "upgrade", "h2", "unparsed", "missing",
                                    "connection_limit")}),
    "handoffs_softirq_total": ("counter", None, {None: "handoffs_softirq"}),
    "handoff_failures_total": ("counter", "reason",
                               {"no_backend": "handoff_failed_no_backend",
                                "queue_full": "handoff_failed_queue_full",
                                "other": "handoff_failed"}),
    "log_records_total": ("counter", None, {None: "log_records"}),
    "log_records_dropped_total": ("counter", None, {None: "log_dropped"}),
    "tls_connections_total": ("counter", None, {None: "tls_connections"}),
    "tls_bytes_total": ("counter", None, {None: "tls_bytes"}),
}
PROM_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)")
PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')


def prom_parse(text):
    """The text format, checked for order as it is parsed: {family:
    {"help", "type", "samples": [(labels, int value)]}}. Each family has
    one HELP, then one TYPE, then its samples, all together."""
    fams, cur = {}, None
    check(text.endswith("\n"), "no final line feed: %r" % text[-80:])
    for line in text[:-1].split("\n"):
        m = re.fullmatch(r"# (HELP|TYPE) (\S+) (.+)", line)
        if m:
            kind, name, rest = m.groups()
            if kind == "HELP":
                check(name not in fams, "%s: a second HELP, or after "
                      "its samples" % name)
                fams[name] = {"help": rest, "type": None, "samples": []}
                cur = name
            else:
                check(name == cur and fams[cur]["type"] is None and
                      not fams[cur]["samples"],
                      "TYPE %s not right after its HELP" % name)
                check(rest in ("counter", "gauge"), "%s: TYPE %s" %
                      (name, rest))
                fams[name]["type"] = rest
            continue
        m = PROM_SAMPLE.fullmatch(line)
        check(m, "not a sample: %r" % line)
        name, body, value = m.groups()
        check(name == cur and fams[cur]["type"],
              "sample %r outside its family (HELP and TYPE first)" % line)
        labels = {}
        if body is not None:
            pairs = PROM_LABEL.findall(body)
            check(",".join('%s="%s"' % p for p in pairs) == body,
                  "labels of %r" % line)
            labels = dict(pairs)
            check(len(labels) == len(pairs), "a label twice: %r" % line)
        check(re.fullmatch(r"\d+", value), "value not an integer: %r" % line)
        fams[cur]["samples"].append((labels, int(value)))
    return fams


def prom_snapshot():
    """(listeners, -j stats, each listener's -j stats, the Prometheus
    text): the JSON read before and after the text, repeated until both
    reads agree, so the text was read while nothing changed."""
    def read_json():
        ls = sorted((x["id"], x["port"]) for x in listeners_json())
        return (ls, json.loads(kwebctl_ok("-j", "stats")),
                {i: json.loads(kwebctl_ok("-j", "stats", "listener", str(i)))
                 for i, _ in ls})
    for _ in range(20):
        before = read_json()
        text = kwebctl_ok("stats", "--format", "prometheus")
        if read_json() == before:
            return before + (text,)
        time.sleep(0.25)
    raise Fail("the counters kept changing with no traffic")


def prom_series(fams, name, label, per_listener):
    """Family name's samples as {(listener id, port, label value): value},
    the listener's two None for the namespace's families; each sample
    must have exactly the labels it should, and be there once."""
    got = {}
    want_names = ({"listener", "port"} if per_listener else set()) | \
        ({label} if label else set())
    for labels, value in fams[name]["samples"]:
        check(set(labels) == want_names, "%s labels %r, want %s" %
              (name, labels, sorted(want_names)))
        key = ((int(labels["listener"]), int(labels["port"]))
               if per_listener else (None, None)) + (labels.get(label),)
        check(key not in got, "%s: %r twice" % (name, key))
        got[key] = value
    return got


# The metrics and the log rotation run on every kernel, the debug one
# too: what they read (counters, the log stream) is the kernel's.
@TESTS.test("kwebctl stats --format prometheus: HELP and TYPE per family, "
            "values as -j stats, per-listener labels, promtool passes")
def t_stats_prometheus():
    port = CFG.port2 + 5
    added = None
    try:
        lst = json.loads(kwebctl_ok("-j", "listener", "add", "port",
                                    str(port), "docroot", CFG.docroot))
        added = lst[0]["id"]
        for p, target in ((CFG.port, "/small.txt"), (port, "/small.txt"),
                          (port, "/small.txt"), (port, "/no-such-file")):
            status, _, _ = fetch(CFG.host, p, target)
            check(status == (404 if "no-such" in target else 200),
                  "GET :%d%s: %d" % (p, target, status))
        ls, whole, per, text = prom_snapshot()
        check(len(ls) == 2 and added in dict(ls),
              "listener list: %r, want 1 and %d" % (ls, added))
        fams = prom_parse(text)
        want = {"kweb_" + n for n in PROM_FAMILIES} | {"kweb_listeners"}
        want |= {"kweb_listener_" + n for n in PROM_FAMILIES
                 if n != "cache_pinned_bytes"}
        check(set(fams) == want, "families: missing %s, unknown %s" %
              (sorted(want - set(fams)), sorted(set(fams) - want)))
        for name, f in fams.items():
            check(f["help"].strip(), "%s: empty HELP" % name)
            check((f["type"] == "counter") == name.endswith("_total"),
                  "%s is a %s" % (name, f["type"]))
        check(fams["kweb_listeners"]["type"] == "gauge" and
              fams["kweb_listeners"]["samples"] == [({}, len(ls))],
              "kweb_listeners: %r, %d listed" %
              (fams["kweb_listeners"]["samples"], len(ls)))
        for short, (kind, label, series) in PROM_FAMILIES.items():
            # The namespace's, unlabelled but for the family's own label.
            name = "kweb_" + short
            check(fams[name]["type"] == kind, "%s: %s, want %s" %
                  (name, fams[name]["type"], kind))
            got = prom_series(fams, name, label, False)
            wantv = {(None, None, k): whole[key] for k, key in series.items()}
            check(got == wantv, "%s: %r, -j stats: %r" % (name, got, wantv))
            if short == "cache_pinned_bytes":
                continue
            # Each listener's, labelled as listener list has it.
            name = "kweb_listener_" + short
            check(fams[name]["type"] == kind, "%s: %s, want %s" %
                  (name, fams[name]["type"], kind))
            got = prom_series(fams, name, label, True)
            wantv = {(i, p, k): per[i][key] for i, p in ls
                     for k, key in series.items()}
            check(got == wantv, "%s: %r, -j stats listener: %r" %
                  (name, got, wantv))
        # The requests above are the new listener's.
        reqs = sum(v for (i, _, _), v in prom_series(
            fams, "kweb_listener_requests_total", "context", True).items()
            if i == added)
        check(reqs == 3, "listener %d answered %d requests, want 3" %
              (added, reqs))
        # promtool's parser and linter: exit 0, nothing said. deps.sh
        # installs it (Debian's prometheus), so its absence fails. With
        # --metrics-file the host runs it over the text saved there: a
        # 48 MB Go binary's start alone took a debug guest over a minute.
        if CFG.metrics_file:
            with open(CFG.metrics_file, "w") as f:
                f.write(text)
            note("promtool check metrics: by the host, over %s" %
                 CFG.metrics_file)
        else:
            promtool = shutil.which("promtool")
            check(promtool, "promtool is not on PATH (scripts/deps.sh "
                  "installs the prometheus package)")
            p = subprocess.run([promtool, "check", "metrics"], input=text,
                               capture_output=True, text=True, timeout=60)
            check(p.returncode == 0 and not p.stdout and not p.stderr,
                  "promtool check metrics: exit %d: %s%s" %
                  (p.returncode, p.stdout, p.stderr))
        # -f is --format: the same series (their values may have moved).
        again = prom_parse(kwebctl_ok("stats", "-f", "prometheus"))
        check({n: [lb for lb, _ in f["samples"]] for n, f in again.items()}
              == {n: [lb for lb, _ in f["samples"]] for n, f in fams.items()},
              "stats -f prometheus has other series than --format")
    finally:
        if added:
            kwebctl("listener", "del", str(added))
    for args in (["stats", "--format", "xml"], ["stats", "-f"],
                 ["stats", "--format", "prometheus", "listener", "1"]):
        rc, out, err = kwebctl(*args)
        check(rc == EXIT_USAGE and not out,
              "kwebctl %s: exit %d, want %d, stdout %r (%s)" %
              (" ".join(args), rc, EXIT_USAGE, out[:60], err.strip()))


@TESTS.test("kwebctl listener list: the listener of the module parameters")
def t_listener_list():
    ls = listeners_json()
    check(len(ls) == 1, "%d listeners" % len(ls))
    lst = ls[0]
    check(lst["id"] == 1 and lst["port"] == CFG.port and
          lst["docroot"] == CFG.docroot and lst["addresses"] == ["*"] and
          lst["backend_port"] == int(param("backend_port")) and
          lst["backend_ipv4"] == "127.0.0.1" and lst["backend_ipv6"] == "::1",
          "listener %r" % lst)
    out = kwebctl_ok("listener", "list")
    check(re.search(r"^1\s+%d\s+\*\s+\d+\s+%s\s+%s$" %
                    (CFG.port, param("backend_port"), re.escape(CFG.docroot)),
                    out, re.M), "listener list: %r" % out)
    pc, pl = proc()
    check(pc.get("listeners") == 1 and pc.get("port") == CFG.port,
          "/proc: listeners %s port %s" % (pc.get("listeners"),
                                           pc.get("port")))
    check(len(pl) == 1 and pl[0].startswith("listener 1 port %d " % CFG.port)
          and pl[0].endswith(" docroot " + CFG.docroot), "/proc: %r" % pl)


@TESTS.test("kwebctl config get: the module parameters' values")
def t_config_get():
    cfg = json.loads(kwebctl_ok("-j", "config", "get"))
    for key in ("header_timeout", "keepalive_timeout", "send_timeout",
                "max_connections", "max_requests", "max_header_size",
                "cache_size", "cache_max_file", "backend_port"):
        check(cfg[key] == int(param(key)), "%s: %r, parameter %s" %
              (key, cfg[key], param(key)))
    for key in ("backend_missing", "precompressed"):
        check(cfg[key] == (param(key) == "Y"), "%s %r" % (key, cfg[key]))
    check(cfg["dynamic_prefixes"] == param("dynamic_prefixes") == "/api/,/dyn/",
          "dynamic_prefixes %r" % cfg["dynamic_prefixes"])
    check(cfg["dynamic_extensions"] == param("dynamic_extensions") == ".php",
          "dynamic_extensions %r" % cfg["dynamic_extensions"])
    out = kwebctl_ok("config", "get")
    check(re.search(r"^header-timeout %s$" % param("header_timeout"), out,
                    re.M), "config get: %r" % out)


@TESTS.test("module parameters: root's alone (0400), refused to an "
            "unprivileged user")
def t_params_private():
    names = sorted(os.listdir(PARAMS))
    modes = {n: os.stat(os.path.join(PARAMS, n)).st_mode & 0o777
             for n in names}
    bad = {n: oct(m) for n, m in modes.items() if m != 0o400}
    check(len(names) >= 20 and not bad, "%d parameters, modes %r" %
          (len(names), bad))
    p = subprocess.run(NOBODY + ["cat", os.path.join(PARAMS, "docroot")],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "Permission denied" in p.stderr and
          not p.stdout, "nobody read docroot: %d %r %r" %
          (p.returncode, p.stdout, p.stderr))


@TESTS.test("kwebctl config set: values change, parameters follow, routes apply at once")
def t_config_set():
    old = json.loads(kwebctl_ok("-j", "config", "get"))
    try:
        kwebctl_ok("config", "set", "keepalive-timeout", "30",
                   "max-requests", "500", "dynamic-prefixes", "/api/,/dyn/,/small")
        cfg = json.loads(kwebctl_ok("-j", "config", "get"))
        check(cfg["keepalive_timeout"] == 30 and cfg["max_requests"] == 500,
              "config after set: %r" % cfg)
        check(param("keepalive_timeout") == "30" and
              param("dynamic_prefixes") == "/api/,/dyn/,/small",
              "parameters: %s %s" % (param("keepalive_timeout"),
                                     param("dynamic_prefixes")))
        # /small.txt now goes to nginx, which serves the same file.
        pc0, _ = proc()
        status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
        pc1, _ = proc()
        check(status == 200 and body == small(), "GET /small.txt: %d" % status)
        check(pc1["handoff_prefix"] == pc0["handoff_prefix"] + 1,
              "handoff_prefix %d -> %d" % (pc0["handoff_prefix"],
                                          pc1["handoff_prefix"]))
    finally:
        kwebctl_ok("config", "set",
                   "keepalive-timeout", str(old["keepalive_timeout"]),
                   "max-requests", str(old["max_requests"]),
                   "dynamic-prefixes", old["dynamic_prefixes"])
    cfg = json.loads(kwebctl_ok("-j", "config", "get"))
    check(cfg == old, "not restored: %r" % cfg)


@TESTS.test("kwebctl config set mime-types: overrides win, caches emptied, put back",
            not_light=SETTINGS_SWAP)
def t_mime_types():
    check(content_type("/small.txt") == "text/plain", "small.txt not text/plain")
    override = ".TXT=text/x-kweb-test; charset=utf-8,.md=text/markdown"
    try:
        kwebctl_ok("config", "set", "mime-types", override)
        check(param("mime_types") == override, "parameter: %r" %
              param("mime_types"))
        cfg = json.loads(kwebctl_ok("-j", "config", "get"))
        check(cfg["mime_types"] == override, "config get: %r" % cfg)
        # Even though /small.txt was cached with text/plain.
        got = content_type("/small.txt")
        check(got == "text/x-kweb-test; charset=utf-8",
              "Content-Type %r after the override" % got)
        kwebctl_fails(EXIT_ERROR,
                      r"each entry must be \.ext=type/subtype.*\(mime-types\)",
                      "config", "set", "mime-types", "txt=text/plain")
        kwebctl_fails(EXIT_ERROR, r"each entry must be", "config", "set",
                      "mime-types", ".txt=text/plain\r\nX-Evil: 1")
        kwebctl_fails(EXIT_ERROR, r"more than 32 entries", "config", "set",
                      "mime-types",
                      ",".join(".e%d=a/b" % i for i in range(33)))
        check(param("mime_types") == override, "changed by a refused set")
    finally:
        kwebctl_ok("config", "set", "mime-types", "")
    got = content_type("/small.txt")
    check(got == "text/plain", "Content-Type %r after putting back" % got)


def fetch_head(target, fields="", port=None):
    """GET target from the default listener, or the one on port:
    (status, head, body)."""
    with socket.create_connection((CFG.host, port or CFG.port),
                                  timeout=10) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n"
                   "\r\n" % (target, fields)).encode())
        data = recv_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", head)
    check(m, "no status line for %s: %r" % (target, data[:80]))
    return int(m.group(1)), head.decode("latin-1"), body


@TESTS.test("kwebctl config set precompressed: no serves NAME alone, yes NAME.gz again",
            not_light=SETTINGS_SWAP)
def t_precompressed():
    gz = os.path.join(CFG.docroot, "pre/app.js.gz")
    with open(gz, "rb") as f:
        gz_bytes = f.read()
    with open(os.path.join(CFG.docroot, "pre/app.js"), "rb") as f:
        js_bytes = f.read()
    ae = "Accept-Encoding: gzip\r\n"
    check(param("precompressed") == "Y", "default: %r" % param("precompressed"))
    # Twice each: from the file, then from the cache (softirq).
    for _ in range(2):
        status, head, body = fetch_head("/pre/app.js", ae)
        check(status == 200 and body == gz_bytes and
              "\r\nContent-Encoding: gzip" in head and
              "\r\nVary: Accept-Encoding" in head, "on: %d %r" % (status, head))
    try:
        kwebctl_ok("config", "set", "precompressed", "no")
        check(param("precompressed") == "N", "parameter: %r" %
              param("precompressed"))
        cfg = json.loads(kwebctl_ok("-j", "config", "get"))
        check(cfg["precompressed"] is False, "config get: %r" % cfg)
        for _ in range(2):
            status, head, body = fetch_head("/pre/app.js", ae)
            check(status == 200 and body == js_bytes and
                  "Content-Encoding" not in head and "Vary" not in head,
                  "off: %d %r" % (status, head))
    finally:
        kwebctl_ok("config", "set", "precompressed", "yes")
    status, head, body = fetch_head("/pre/app.js", ae)
    check(status == 200 and body == gz_bytes, "on again: %d %r" % (status, head))
    # Settings change through netlink alone, in their namespace: the
    # parameter file, the initial namespace's, only shows them, to root.
    mode = os.stat(os.path.join(PARAMS, "precompressed")).st_mode & 0o777
    check(mode == 0o400, "parameter file mode %o" % mode)


@TESTS.test("kwebctl config set user/group: names resolved, new opens use them, put back",
            not_light=SETTINGS_ROUNDS)
def t_identity():
    # make_docroot.py's: nobody's (0600) and uid 1000's (0600) files.
    nobody, uid1000 = "/owned/nobody0600.txt", "/owned/uid1000.txt"

    def status(target):
        return fetch(CFG.host, CFG.port, target)[0]

    cfg = json.loads(kwebctl_ok("-j", "config", "get"))
    check((cfg["user"], cfg["group"]) == (65534, 65534) and
          param("user") == param("group") == "65534",
          "default identity: %r %r" % (cfg["user"], cfg["group"]))
    check(status(nobody) == 200 and status(uid1000) == 403,
          "as nobody: %d %d" % (status(nobody), status(uid1000)))
    try:
        kwebctl_ok("config", "set", "user", "1000", "group", "1000")
        check(param("user") == param("group") == "1000", "parameters")
        # nobody's file may be cached: the caches are emptied.
        check(status(nobody) == 403 and status(uid1000) == 200,
              "as 1000: %d %d" % (status(nobody), status(uid1000)))
        # The kernel refuses an id that does not map; nothing changes.
        kwebctl_fails(EXIT_ERROR, r"does not map.*\(user\)", "config", "set",
                      "user", "4294967295")
        kwebctl_fails(EXIT_USAGE, r'no user "no-such-user-kweb"', "config",
                      "set", "user", "no-such-user-kweb")
        check(param("user") == "1000", "changed by a refused set")
        # nobody (CAP_NET_ADMIN only) may not make a listener that opens
        # files as another user: it has no CAP_SETUID.
        p = subprocess.run(NOBODY + ["--inh-caps=-all,+net_admin",
                                     "--ambient-caps=-all,+net_admin",
                                     CFG.kwebctl_nobody, "listener", "add",
                                     "port", str(CFG.port2), "docroot",
                                     CFG.docroot],
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == EXIT_PERM and
              "may not take that user (no CAP_SETUID)" in p.stderr and
              "CAP_NET_ADMIN" not in p.stderr,
              "nobody's listener as user 1000: exit %d %r" %
              (p.returncode, p.stderr.strip()))
    finally:
        kwebctl_ok("config", "set", "user", "nobody", "group", "nogroup")
    cfg = json.loads(kwebctl_ok("-j", "config", "get"))
    check((cfg["user"], cfg["group"]) == (65534, 65534),
          "names not resolved: %r %r" % (cfg["user"], cfg["group"]))
    check(status(nobody) == 200 and status(uid1000) == 403,
          "put back: %d %d" % (status(nobody), status(uid1000)))


@TESTS.test("invalid values: refused with the kernel's extack text, nothing changed",
            not_light=SETTINGS_ROUNDS)
def t_invalid():
    before = kwebctl_ok("config", "get")
    # The generated policy's range, and the bounds it reports.
    kwebctl_fails(EXIT_ERROR, r"out of range.*\(header-timeout\); valid: 1\.\.32767",
                  "config", "set", "header-timeout", "0")
    kwebctl_fails(EXIT_ERROR, r"\(cache-size\)", "config", "set",
                  "cache-size", "40000")
    kwebctl_fails(EXIT_ERROR, r"out of range.*\(backend-port\)", "config",
                  "set", "backend-missing", "yes", "backend-port", "0")
    # What the handlers check.
    kwebctl_fails(EXIT_ERROR,
                  r"each prefix must be /something.*\(dynamic-prefixes\)",
                  "config", "set", "header-timeout", "5",
                  "dynamic-prefixes", "api")
    kwebctl_fails(EXIT_ERROR, r"each extension must be \.something",
                  "config", "set", "dynamic-extensions", ".php,x")
    kwebctl_fails(EXIT_ERROR, r"more than 16 entries", "config", "set",
                  "dynamic-extensions", ",".join(".e%d" % i for i in range(17)))
    kwebctl_fails(EXIT_ERROR, r"kweb listener's port cannot be the backend port",
                  "config", "set", "backend-port", str(CFG.port))
    kwebctl_fails(EXIT_ERROR, r"docroot must be an absolute path.*\(docroot\)",
                  "listener", "add", "port", "8091", "docroot", "www")
    kwebctl_fails(EXIT_ERROR, r"cannot open docroot as a directory",
                  "listener", "add", "port", "8091", "docroot",
                  os.path.join(CFG.docroot, "small.txt"))
    kwebctl_fails(EXIT_ERROR, r"the port is in use.*\(port\)",
                  "listener", "add", "port", str(CFG.port), "docroot",
                  CFG.docroot)
    kwebctl_fails(EXIT_ERROR, r"kweb listener's port would be a backend port",
                  "listener", "add", "port", param("backend_port"),
                  "docroot", CFG.docroot)
    kwebctl_fails(EXIT_ERROR, r"out of range.*\(port\)", "listener", "add",
                  "port", "0", "docroot", CFG.docroot)
    kwebctl_fails(EXIT_NOT_FOUND, r"no such listener", "listener", "del", "999")
    kwebctl_fails(EXIT_ERROR, r"not a request path.*\(path\)", "cache", "flush",
                  "no-slash")
    after = kwebctl_ok("config", "get")
    check(after == before, "config changed:\n%s\n%s" % (before, after))
    check(len(listeners_json()) == 1, "a listener was added")


@TESTS.test("raw netlink: an attribute config-set does not take is refused with extack")
def t_raw_unsupported():
    e = uapi_enums(CFG.uapi)
    g = Genl()
    fam = g.family("kweb")
    size = struct.pack("=I", 1024)
    err, msg, _ = g.talk(fam, e["KWEB_CMD_CONFIG_SET"],
                         [nla(e["KWEB_A_CONFIG_MAX_HEADER_SIZE"], size)])
    check(err == 22, "errno %d, want EINVAL (22); extack %r" % (err, msg))
    check(msg, "no extack message")
    note("max-header-size in config-set -> %r" % msg)
    # Another that config-get takes, and a u32 of the wrong size.
    err, msg, _ = g.talk(fam, e["KWEB_CMD_CONFIG_SET"],
                         [nla(e["KWEB_A_CONFIG_LISTENER_ID"], size)])
    check(err == 22 and msg, "listener-id in config-set: %d %r" % (err, msg))
    err, msg, _ = g.talk(fam, e["KWEB_CMD_CONFIG_SET"],
                         [nla(e["KWEB_A_CONFIG_SEND_TIMEOUT"], b"\1\0")])
    check(err == 22 and msg, "a 2-byte u32: %d %r" % (err, msg))
    note("2-byte send-timeout -> %r" % msg)
    # A missing attribute is named, with no text (NL_SET_ERR_ATTR_MISS).
    err, msg, _ = g.talk(fam, e["KWEB_CMD_LISTENER_GET"], [])
    miss = g.ext.get(NLMSGERR_ATTR_MISS_TYPE, b"")
    check(err == 22 and len(miss) == 4 and
          struct.unpack("=I", miss)[0] == e["KWEB_A_LISTENER_ID"],
          "listener-get without id: %d %r %r" % (err, msg, g.ext))


def sock_adopter():
    """adopt(lid, fd): KWEB_CMD_SOCK_ADOPT of descriptor fd for listener
    lid, raw: (errno, extack message, reply)."""
    e = uapi_enums(CFG.uapi)
    g = Genl()
    fam = g.family("kweb")

    def adopt(lid, fd):
        return g.talk(fam, e["KWEB_CMD_SOCK_ADOPT"],
                      [nla(e["KWEB_A_LISTENER_ID"], struct.pack("=I", lid)),
                       nla(e["KWEB_A_LISTENER_FD"], struct.pack("=I", fd))])
    return adopt


def add_tls_listener(port):
    """A listener on port whose tls-port is port + 1: its id."""
    return json.loads(kwebctl_ok("-j", "listener", "add", "port", str(port),
                                 "docroot", CFG.docroot, "tls-port",
                                 str(port + 1)))[0]["id"]


@TESTS.test("raw netlink: sock-adopt takes only a connected kTLS socket of "
            "the TLS listener's own namespace; what it refuses stays the "
            "caller's")
def t_sock_adopt_refused():
    sock_adopt = sock_adopter()
    ns = "kweb-adopt"
    port = CFG.port2 + 7
    added = None
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    made = []
    try:
        added = add_tls_listener(port)
        before = proc()[0]["tls_connections"]

        def refused(what, lid, fd, errno, text):
            err, msg, _ = sock_adopt(lid, fd)
            check(err == errno and text in msg,
                  "%s: errno %d %r, want %d %r" % (what, err, msg, errno, text))
            note("%s -> %s" % (what, msg))

        with open("/dev/null") as f:
            refused("a file", added, f.fileno(), 88, "not a socket")
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        made.append(u)
        refused("a UDP socket", added, u.fileno(), 22, "not a TCP socket")
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        made.append(t)
        refused("an unconnected socket", added, t.fileno(), 107,
                "not connected")
        c = socket.create_connection((CFG.host, CFG.port), timeout=10)
        made.append(c)
        refused("a cleartext listener", 1, c.fileno(), 22,
                "not a TLS listener")
        refused("a connected socket without kTLS", added, c.fileno(), 22,
                "kTLS is not installed")
        # Another namespace's socket, by a caller of the listener's.
        subprocess.run(["ip", "netns", "add", ns], check=True,
                       capture_output=True)
        o = socket_in_netns("/run/netns/" + ns)
        made.append(o)
        refused("a socket of another namespace", added, o.fileno(), 22,
                "another network namespace")
        # Nothing was taken: the connected socket is still ours to use.
        c.sendall(b"GET /small.txt HTTP/1.1\r\nHost: a\r\n"
                  b"Connection: close\r\n\r\n")
        got = recv_all(c)
        check(got.startswith(b"HTTP/1.1 200 ") and got.endswith(small()),
              "GET on the refused socket: %r" % got[:80])
        after = proc()[0]["tls_connections"]
        check(after == before, "tls_connections %d -> %d" % (before, after))
    finally:
        for x in made:
            x.close()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        if added is not None:
            kwebctl_ok("listener", "del", str(added))


@TESTS.test("raw netlink: sock-adopt into a listener at max-connections is "
            "refused (EBUSY), and the socket stays the caller's")
def t_sock_adopt_full():
    sock_adopt = sock_adopter()
    was = json.loads(kwebctl_ok("-j", "config", "get"))["max_connections"]
    added = add_tls_listener(CFG.port2 + 13)
    made = []
    try:
        # The limit is each listener's: one adopted fills this one.
        kwebctl_ok("config", "set", "max-connections", "1")
        cli, srv = ktls_pair()
        made.append(cli)
        err, msg, _ = sock_adopt(added, srv.detach())
        check(err == 0, "the first sock-adopt: errno %d %r" % (err, msg))
        cli, srv = ktls_pair()
        made += [cli, srv]
        err, msg, _ = sock_adopt(added, srv.fileno())
        check(err == 16 and "at max-connections" in msg,
              "sock-adopt at max-connections: errno %d %r" % (err, msg))
        check(srv.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) ==
              socket.SOCK_STREAM, "the refused descriptor lost its socket")
    finally:
        kwebctl_ok("config", "set", "max-connections", str(was))
        for x in made:
            x.close()
        kwebctl_ok("listener", "del", str(added))


@TESTS.test("a listener's port is never a TLS listener's tls-port: its "
            "connections would reach kweb still encrypted")
def t_tls_port_taken():
    port = CFG.port2 + 11
    added = add_tls_listener(port)
    try:
        kwebctl_fails(EXIT_ERROR, r"kweb listener's port would be a "
                      r"backend port or tls-port", "listener", "add", "port",
                      str(port + 1), "docroot", CFG.docroot)
    finally:
        kwebctl_ok("listener", "del", str(added))
    check(len(listeners_json()) == 1, "a listener was left")


SOL_TLS = 282
TLS_TX, TLS_RX = 1, 2
TCP_ULP = 31


def ktls_pair():
    """A connected loopback pair whose server end has kTLS installed both
    ways (TLS 1.3, AES-GCM-128, made-up keys): what kwebtlsd gives back,
    without a handshake."""
    lsn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(1)
    cli = socket.create_connection(lsn.getsockname(), timeout=10)
    srv, _ = lsn.accept()
    lsn.close()
    srv.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b"tls")
    for d, key in ((TLS_TX, b"t" * 16), (TLS_RX, b"r" * 16)):
        # struct tls12_crypto_info_aes_gcm_128: version, cipher (51),
        # iv, key, salt, rec_seq.
        info = struct.pack("=HH8s16s4s8s", 0x0304, 51, b"i" * 8, key,
                           b"s" * 4, bytes(8))
        srv.setsockopt(SOL_TLS, d, info)
    return cli, srv


def fd_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


@TESTS.test("raw netlink: sock-adopt takes the caller's descriptor; a dup'd "
            "or epoll-watched socket is refused and stays the caller's; kweb "
            "closes what it adopted at the peer's FIN")
def t_sock_adopt_taken():
    sock_adopt = sock_adopter()
    added = None
    made = []
    try:
        added = add_tls_listener(CFG.port2 + 9)
        before = proc()[0]["tls_connections"]

        def adopt(fd):
            return sock_adopt(added, fd)

        # Alone: the descriptor is closed, the socket kweb's.
        cli, srv = ktls_pair()
        made.append(cli)
        fd = srv.detach()
        err, msg, _ = adopt(fd)
        check(err == 0, "sock-adopt: errno %d %r" % (err, msg))
        check(not fd_open(fd), "descriptor %d still open" % fd)
        # Shared (a dup), or watched by epoll, which polls a file it
        # holds no reference to: a handoff would leave the other holder
        # a file without its socket. Refused; both stay the caller's.
        cli2, srv2 = ktls_pair()
        made += [cli2, srv2]
        fd = os.dup(srv2.fileno())
        err, msg, _ = adopt(fd)
        check(err == 16 and "shared or polled" in msg,
              "sock-adopt of a dup: errno %d %r" % (err, msg))
        check(fd_open(fd), "dup'd descriptor %d closed" % fd)
        os.close(fd)
        ep = select.epoll()
        ep.register(srv2.fileno(), select.EPOLLIN)
        err, msg, _ = adopt(srv2.fileno())
        check(err == 16 and "shared or polled" in msg,
              "sock-adopt of an epoll-watched socket: errno %d %r" %
              (err, msg))
        ep.close()
        check(srv2.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) ==
              socket.SOCK_STREAM, "the refused descriptor lost its socket")
        after = proc()[0]["tls_connections"]
        check(after == before + 1, "tls_connections %d -> %d" %
              (before, after))
        # Our FIN: kTLS reads the end of the stream, and kweb answers
        # with its close_notify, one record: a TLS 1.3 header (outer type
        # application_data), the alert, its inner type and the tag. Its
        # file's last reference gone, the socket sends its FIN.
        record = b"\x17\x03\x03\x00\x13"
        cli.shutdown(socket.SHUT_WR)
        cli.settimeout(10)
        got = recv_all(cli)
        check(len(got) == 24 and got.startswith(record),
              "kweb's close_notify, then FIN: %r" % got[:8])

        def still_open():
            line = [x for x in proc()[1] if x.split()[1] == str(added)]
            return int(line[0].split()[5])
        end = time.monotonic() + 10
        while time.monotonic() < end and still_open():
            time.sleep(0.1)
        check(still_open() == 0, "connections_open %d" % still_open())
    finally:
        for x in made:
            x.close()
        if added is not None:
            kwebctl_ok("listener", "del", str(added))


@TESTS.test("an unprivileged user: reads allowed, changes refused with exit 4",
            not_light="the refusals are genetlink's, by the ops' flags: "
            "the same on every kernel")
def t_unprivileged():
    rc, _, err = kwebctl("stats", user="nobody")
    check(rc == 0, "stats as nobody: exit %d %s" % (rc, err.strip()))
    rc, _, err = kwebctl("listener", "list", user="nobody")
    check(rc == 0, "listener list as nobody: exit %d %s" % (rc, err.strip()))
    for args in (["config", "set", "keepalive-timeout", "10"],
                 ["cache", "flush"],
                 ["listener", "add", "port", "8091", "docroot", CFG.docroot],
                 ["listener", "del", "1"]):
        kwebctl_fails(EXIT_PERM, r"Operation not permitted[\s\S]*CAP_NET_ADMIN",
                      *args, user="nobody")
    kwebctl_fails(EXIT_PERM, r"CAP_NET_ADMIN", "log", "--count", "1",
                  user="nobody")
    check(len(listeners_json()) == 1, "a listener changed")


def wait_pinned(want_zero, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        pinned = proc()[0]["pinned_bytes"]
        if (pinned == 0) == want_zero:
            return pinned
        time.sleep(0.1)
    raise Fail("pinned_bytes %d" % proc()[0]["pinned_bytes"])


@TESTS.test("kwebctl cache flush PATH, then all: entries and pinned pages go")
def t_cache_flush():
    for _ in range(2):
        fetch(CFG.host, CFG.port, "/small.txt")
        fetch(CFG.host, CFG.port, "/index.html")
    check(proc()[0]["cache_bytes"] > 0, "nothing cached")
    out = kwebctl_ok("cache", "flush", "/small.txt")
    check(out.strip() == "flushed 1 entry", "flush /small.txt: %r" % out)
    out = kwebctl_ok("cache", "flush", "/small.txt")
    check(out.strip() == "flushed 0 entries", "again: %r" % out)
    # Normalized as a request path is: this is /index.html.
    out = kwebctl_ok("cache", "flush", "/a/../index.html")
    check(out.strip() == "flushed 1 entry", "flush /a/../index.html: %r" % out)
    fetch(CFG.host, CFG.port, "/small.txt")
    res = json.loads(kwebctl_ok("-j", "cache", "flush"))
    check(res["entries"] >= 1, "flush all: %r" % res)
    check(proc()[0]["cache_bytes"] == 0, "cache_bytes not 0")
    wait_pinned(True)
    status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
    check(status == 200 and body == small(), "GET after flush: %d" % status)


class LogReader:
    """kwebctl log in the background; its lines as they come."""

    def __init__(self, *args):
        self.p = subprocess.Popen([CFG.kwebctl, "log"] + list(args),
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def snapshot(self):
        with self.lock:
            return list(self.lines)

    def wait_for(self, pred, limit=10.0):
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if any(pred(line) for line in self.snapshot()):
                return True
            time.sleep(0.1)
        return False

    def close(self):
        self.p.terminate()
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
        return self.p.stderr.read()


def log_ready(reader):
    """Probe until the reader shows a record: it has joined the group."""
    for i in range(50):
        target = "/ctl-probe-%d" % i
        fetch(CFG.host, CFG.port, target)
        if reader.wait_for(lambda line, t=target: t in line, 0.3):
            return
    raise Fail("kwebctl log printed no probe line; stderr: %s" %
               reader.close())


@TESTS.test("kwebctl log --format json: a record per request, fields as sent")
def t_log_json():
    reader = LogReader("--format", "json")
    try:
        log_ready(reader)
        start = len(reader.snapshot())
        rec0 = proc()[0]["log_records"]
        # (client, port) -> what its record must say: an IPv4 and an IPv6
        # connection may well be given the same ephemeral port.
        made = {}
        extra = {}  # (client, port) -> (referer, user_agent)
        kweb = ("softirq", "worker")

        def want(port, method, target, status, nbytes, who=kweb,
                 client="127.0.0.1"):
            made[(client, port)] = (method, target, status, nbytes, who)

        status, body, port = fetch(CFG.host, CFG.port, "/small.txt")
        want(port, "GET", "/small.txt", 200, len(small()))
        # The first of each field, cut at 512 bytes; quotes kept.
        ua = 'Mozilla/5.0 "q" ' + "u" * 600
        status, body, port = fetch(
            CFG.host, CFG.port, "/small.txt",
            fields="Referer: http://r.example/a?b=1\r\nUser-Agent: %s\r\n"
            "User-Agent: second\r\n" % ua)
        want(port, "GET", "/small.txt", 200, len(small()))
        extra[("127.0.0.1", port)] = ("http://r.example/a?b=1", ua[:512])
        status, body, port = fetch(CFG.host, CFG.port, "/small.txt", "HEAD")
        want(port, "HEAD", "/small.txt", 200, 0)
        status, body, port = fetch(CFG.host, CFG.port, "/ctl-missing")
        check(status == 404, "GET /ctl-missing: %d" % status)
        want(port, "GET", "/ctl-missing", 404, len(body), ("worker",))
        status, body, port = fetch(CFG.host, CFG.port, "/api/ctl?x=1")
        check(status == 200 and b"uri=/api/ctl?x=1" in body,
              "GET /api/ctl?x=1 via nginx: %d %r" % (status, body[:80]))
        want(port, "GET", "/api/ctl?x=1", None, 0, ("backend",))
        status, body, port = fetch("::1", CFG.port, "/small.txt")
        want(port, "GET", "/small.txt", 200, len(small()), client="::1")
        reader.wait_for(lambda line: False, 1.0)    # batches: 100 ms
        recs = [json.loads(line) for line in reader.snapshot()[start:]]
        mine = [r for r in recs if (r["client"], r["port"]) in made]
        check(len(mine) == len(made), "%d records for %d requests: %r" %
              (len(mine), len(made), mine))
        for r in mine:
            key = (r["client"], r["port"])
            method, target, status, nbytes, who = made[key]
            check(r["method"] == method and r["target"] == target and
                  r["protocol"] == "HTTP/1.1" and r["status"] == status and
                  r["bytes"] == nbytes and r["answered"] in who and
                  r["listener"] == 1 and
                  0 < r["duration_ns"] < 10 * 10**9 and
                  abs(r["time_ns"] / 1e9 - time.time()) < 60 and
                  (r["referer"], r["user_agent"]) ==
                  extra.get(key, (None, None)),
                  "record %r, want %r %r" % (r, made[key], extra.get(key)))
        check(proc()[0]["log_records"] >= rec0 + len(made),
              "log_records did not grow")
    finally:
        err = reader.close()
    check(not err.strip(), "kwebctl log stderr: %s" % err.strip())


@TESTS.test("kwebctl log: nginx combined lines, one per request",
            not_light=LOG_FORMAT)
def t_log_combined():
    reader = LogReader()
    try:
        log_ready(reader)
        start = len(reader.snapshot())
        status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
        fetch(CFG.host, CFG.port, "/ctl-clf-missing")
        fetch(CFG.host, CFG.port, "/small.txt", "HEAD",
              fields='Referer: /from\r\nUser-Agent: a "b" \\c\r\n')
        reader.wait_for(lambda line: False, 1.0)
        lines = [line for line in reader.snapshot()[start:]
                 if "/ctl-probe-" not in line]
    finally:
        reader.close()
    check(len(lines) == 3, "%d lines for 3 requests: %r" % (len(lines), lines))
    when = r'\[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]'
    # Referer and User-Agent escaped as nginx does ("\x22", "\x5C").
    want = [r'"GET /small\.txt HTTP/1\.1" 200 %d "-" "-"' % len(small()),
            r'"GET /ctl-clf-missing HTTP/1\.1" 404 \d+ "-" "-"',
            r'"HEAD /small\.txt HTTP/1\.1" 200 0 "/from" '
            r'"a \\x22b\\x22 \\x5Cc"']
    # Batches are per CPU: lines need not come in the requests' order.
    for w in want:
        hits = [line for line in lines if re.match(
            r'^127\.0\.0\.1 - - %s %s$' % (when, w), line)]
        check(len(hits) == 1, "%d combined lines for %s in %r" %
              (len(hits), w, lines))


@TESTS.test("kwebctl log --count N: exits 0 after N records",
            not_light=LOG_FORMAT)
def t_log_count():
    p = subprocess.Popen([CFG.kwebctl, "log", "--count", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    end = time.monotonic() + 15
    while p.poll() is None and time.monotonic() < end:
        fetch(CFG.host, CFG.port, "/small.txt")
        time.sleep(0.2)
    if p.poll() is None:
        p.kill()
        raise Fail("kwebctl log --count 2 still running after 15 s")
    out, err = p.communicate()
    check(p.returncode == 0 and len(out.splitlines()) == 2,
          "exit %d, %d lines, stderr %r" % (p.returncode,
                                            len(out.splitlines()), err))


@TESTS.test("two listeners, two ports, two docroots: each serves its own files")
def t_two_listeners():
    who = "ctl-who.txt"
    docroot2 = os.path.join(CFG.base, "www2")
    os.makedirs(docroot2, exist_ok=True)
    os.chmod(docroot2, 0o755)
    for d, text in ((CFG.docroot, b"one\n"), (docroot2, b"two\n")):
        with open(os.path.join(d, who), "wb") as f:
            f.write(text)
        os.chmod(os.path.join(d, who), 0o644)
    port2 = CFG.port2
    added = None
    try:
        lst = json.loads(kwebctl_ok("-j", "listener", "add", "port",
                                    str(port2), "docroot", docroot2))
        check(len(lst) == 1 and lst[0]["port"] == port2 and
              lst[0]["docroot"] == docroot2, "add: %r" % lst)
        added = lst[0]["id"]
        for host in ("127.0.0.1", "::1"):
            for port, want in ((CFG.port, b"one\n"), (port2, b"two\n")):
                status, body, _ = fetch(host, port, "/" + who)
                check(status == 200 and body == want, "%s:%d/%s: %d %r" %
                      (host, port, who, status, body))
        # The other listener's files are not there.
        status, _, _ = fetch("127.0.0.1", port2, "/small.txt")
        check(status == 404, "%d/small.txt: %d, want 404" % (port2, status))
        ids = sorted(x["id"] for x in listeners_json())
        check(ids == [1, added], "listener ids %r" % ids)
        pc, pl = proc()
        check(pc["listeners"] == 2 and any(
            line.startswith("listener %d port %d " % (added, port2)) and
            line.endswith(" docroot " + docroot2) for line in pl),
            "/proc: %r" % pl)
        st = json.loads(kwebctl_ok("-j", "stats", "listener", str(added)))
        check(st["cache_bytes"] > 0, "listener %d caches nothing" % added)
        # Its own counters: the three requests made to it.
        check(st["requests_softirq"] + st["requests_worker"] == 3 and
              st["responses_error"] == 1 and
              st["connections_accepted"] == 3,
              "listener %d's counters: %r" % (added, st))
        kwebctl_ok("listener", "del", str(added))
        added = None
        check(refused("127.0.0.1", port2) and refused("::1", port2),
              "port %d still open after del" % port2)
        check(proc()[0]["listeners"] == 1, "/proc still lists 2")
        status, body, _ = fetch(CFG.host, CFG.port, "/" + who)
        check(status == 200 and body == b"one\n", "listener 1 after del")
    finally:
        if added:
            kwebctl("listener", "del", str(added))
        os.unlink(os.path.join(CFG.docroot, who))


@TESTS.test("a listener on one address listens there only, with its own backend port")
def t_listener_address():
    port3 = CFG.port2 + 1
    lst = json.loads(kwebctl_ok("-j", "listener", "add", "port", str(port3),
                                "docroot", CFG.docroot, "address",
                                "127.0.0.1", "backend-port",
                                param("backend_port")))
    lid = lst[0]["id"]
    try:
        check(lst[0]["addresses"] == ["127.0.0.1"], "addresses %r" %
              lst[0]["addresses"])
        status, body, _ = fetch("127.0.0.1", port3, "/small.txt")
        check(status == 200 and body == small(), "127.0.0.1:%d: %d" %
              (port3, status))
        check(refused("::1", port3), "[::1]:%d answers" % port3)
        status, body, _ = fetch("127.0.0.1", port3, "/api/x")
        check(status == 200 and b"uri=/api/x" in body,
              "handoff from the new listener: %d %r" % (status, body[:60]))
    finally:
        kwebctl_ok("listener", "del", str(lid))


def owned_listener(port, uid):
    """A listening socket on 127.0.0.1:port made by uid (its sk_uid: the
    fsuid at socket(), which follows the euid), listening as root."""
    os.seteuid(uid)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    finally:
        os.seteuid(0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(8)
    return s


def handoff_refused(b, port, path):
    """A client's request on port gets 502, and b's queue stays empty."""
    status, _, _ = fetch("127.0.0.1", port, path)
    b.setblocking(False)
    try:
        b.accept()[0].close()
        got = True
    except BlockingIOError:
        got = False
    return status == 502 and not got, "%d, accepted %s" % (status, got)


def handoff_reaches(b, port, req):
    """A client's req on port reaches b's accept queue unread, and b's
    answer the client: (whether, what each side got)."""
    b.settimeout(10)
    result = {}

    def client():
        with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
            c.sendall(req)
            result["data"] = recv_all(c)
    t = threading.Thread(target=client)
    t.start()
    try:
        s, _ = b.accept()
    except socket.timeout:
        s = None
    head = b""
    if s:
        with s:
            s.settimeout(10)
            while not head.endswith(b"\r\n\r\n"):
                d = s.recv(4096)
                if not d:
                    break
                head += d
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
                      b"Connection: close\r\n\r\nok\n")
    t.join(15)
    data = result.get("data", b"")
    return (head == req and data.endswith(b"\r\n\r\nok\n"),
            "request %r, client got %r" % (head, data[:80]))


def backend_listener(port, bport, *settings):
    """A listener of its own on 127.0.0.1:port handing off to bport: its
    id, as a string."""
    return str(json.loads(kwebctl_ok(
        "-j", "listener", "add", "port", str(port), "docroot", CFG.docroot,
        "address", "127.0.0.1", "backend-port", str(bport),
        *settings))[0]["id"])


@TESTS.test("a backend port another user binds gets no connection (502, "
            "as with no backend); "
            "one root binds gets the request, unread")
def t_backend_owner():
    port, bport = CFG.port2 + 15, 18097
    req = b"GET /api/owner HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    lid = backend_listener(port, bport)
    try:
        with owned_listener(bport, 65534) as b:
            ok, what = handoff_refused(b, port, "/api/owner")
            check(ok, "nobody's listener: " + what)
        with owned_listener(bport, 0) as b:
            ok, what = handoff_reaches(b, port, req)
            check(ok, "root's listener: " + what)
    finally:
        kwebctl_ok("listener", "del", lid)


@TESTS.test("backend-user: a listener's named user's backend gets the "
            "request, unread; another user's still 502; none takes it back")
def t_backend_user():
    port, bport = CFG.port2 + 15, 18097
    req = b"GET /api/user HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    lid = backend_listener(port, bport, "backend-user", "nobody")
    try:
        shown = json.loads(kwebctl_ok("-j", "listener", "show", lid))
        check(shown.get("backend_user", "absent") == 65534,
              "show says backend_user %r, not 65534" %
              shown.get("backend_user", "absent"))
        with owned_listener(bport, 65534) as b:
            ok, what = handoff_reaches(b, port, req)
            check(ok, "backend-user nobody, nobody's listener: " + what)
        with owned_listener(bport, 1) as b:
            ok, what = handoff_refused(b, port, "/api/user")
            check(ok, "backend-user nobody, uid 1's listener: " + what)
        kwebctl_ok("listener", "set", lid, "backend-user", "none")
        text = kwebctl_ok("listener", "show", lid)
        check("\nbackend-user none\n" in text,
              "show after none: %r" % text)
        with owned_listener(bport, 65534) as b:
            ok, what = handoff_refused(b, port, "/api/user")
            check(ok, "backend-user none, nobody's listener: " + what)
        kwebctl_ok("listener", "set", lid, "backend-user", "1")
        with owned_listener(bport, 1) as b:
            ok, what = handoff_reaches(b, port, req)
            check(ok, "backend-user 1, uid 1's listener: " + what)
    finally:
        kwebctl_ok("listener", "del", lid)


def header(head, name):
    """A field's value in a response head, or None."""
    m = re.search(r"\r\n%s: ([^\r]*)" % name, head, re.I)
    return m.group(1) if m else None


@TESTS.test("kwebctl listener set/show: a listener's own settings; others keep theirs; default follows config again",
            not_light=SETTINGS_ROUNDS)
def t_listener_settings():
    port4 = CFG.port2 + 2
    ae = "Accept-Encoding: gzip\r\n"
    with open(os.path.join(CFG.docroot, "pre/app.js"), "rb") as f:
        js_bytes = f.read()
    with open(os.path.join(CFG.docroot, "pre/app.js.gz"), "rb") as f:
        gz_bytes = f.read()
    rules = "/pre/=max-age=60, immutable; .txt=no-cache"
    lst = json.loads(kwebctl_ok("-j", "listener", "add", "port", str(port4),
                                "docroot", CFG.docroot, "precompressed",
                                "no", "cache-control", rules,
                                "expires", "yes"))
    lid = str(lst[0]["id"])
    try:
        sh = json.loads(kwebctl_ok("-j", "listener", "show", lid))
        check(sh["precompressed"] is False and sh["expires"] is True and
              sh["cache_control"] == rules and
              sorted(sh["inherit"]) == ["backend-port", "dynamic-extensions",
                                        "dynamic-prefixes", "mime-types"] and
              sh["dynamic_prefixes"] == param("dynamic_prefixes") and
              sh["backend_port"] == int(param("backend_port")),
              "show: %r" % sh)
        out = kwebctl_ok("listener", "show", lid)
        check(re.search(r"^cache-control %s$" % re.escape(rules), out, re.M)
              and re.search(r"^inherit backend-port dynamic-prefixes "
                            r"dynamic-extensions mime-types$", out, re.M),
              "show: %r" % out)
        # Its own precompressed (no), and listener 1's (yes), side by side.
        for _ in range(2):
            status, head, body = fetch_head("/pre/app.js", ae, port4)
            check(status == 200 and body == js_bytes and
                  header(head, "Content-Encoding") is None,
                  "own precompressed no: %d %r" % (status, head))
            check(header(head, "Cache-Control") == "max-age=60, immutable",
                  "Cache-Control: %r" % head)
            date = email.utils.parsedate_to_datetime(header(head, "Date"))
            exp = email.utils.parsedate_to_datetime(header(head, "Expires"))
            check((exp - date).total_seconds() == 60,
                  "Expires %s, Date %s" % (exp, date))
            status, head, body = fetch_head("/pre/app.js", ae)
            check(status == 200 and body == gz_bytes and
                  header(head, "Cache-Control") is None and
                  header(head, "Expires") is None,
                  "listener 1: %d %r" % (status, head))
        # An extension rule without max-age: no Expires.
        status, head, body = fetch_head("/small.txt", "", port4)
        check(status == 200 and header(head, "Cache-Control") == "no-cache"
              and header(head, "Expires") is None, "small.txt: %r" % head)
        etag = header(head, "ETag")
        status, head, _ = fetch_head("/small.txt", "If-None-Match: %s\r\n"
                                     % etag, port4)
        check(status == 304 and header(head, "Cache-Control") == "no-cache",
              "304: %d %r" % (status, head))
        status, head, _ = fetch_head("/small.txt", "Range: bytes=0-1\r\n",
                                     port4)
        check(status == 206 and header(head, "Cache-Control") == "no-cache",
              "206: %d %r" % (status, head))
        # Errors are not the file's: no rule applies.
        status, head, _ = fetch_head("/pre/missing.txt", "", port4)
        check(status == 404 and header(head, "Cache-Control") is None,
              "404: %d %r" % (status, head))

        # Its own routes; listener 1 keeps the module-wide ones.
        kwebctl_ok("listener", "set", lid, "dynamic-prefixes", "/own/")
        status, body, _ = fetch("127.0.0.1", port4, "/own/x")
        check(status == 200 and b"uri=/own/x" in body,
              "own prefix not handed off: %d %r" % (status, body[:60]))
        status, body, _ = fetch("127.0.0.1", port4, "/api/x")
        check(status == 404, "/api/ of listener %s: %d" % (lid, status))
        status, body, _ = fetch("127.0.0.1", CFG.port, "/api/x")
        check(status == 200 and b"uri=/api/x" in body,
              "listener 1's /api/: %d" % status)
        status, body, _ = fetch("127.0.0.1", port4, "/x.php")
        check(status == 200 and b"uri=/x.php" in body,
              "inherited extension: %d %r" % (status, body[:60]))
        cfg = json.loads(kwebctl_ok("-j", "config", "get", "listener", lid))
        check(cfg["dynamic_prefixes"] == "/own/" and
              cfg["precompressed"] is False, "config get listener: %r" % cfg)
        cfg = json.loads(kwebctl_ok("-j", "config", "get"))
        check(cfg["dynamic_prefixes"] == param("dynamic_prefixes") and
              cfg["precompressed"] is True, "config get: %r" % cfg)

        # Its own MIME overrides: its cached files change type, listener
        # 1's do not.
        kwebctl_ok("listener", "set", lid, "mime-types",
                   ".txt=text/x-own; charset=utf-8")
        status, head, _ = fetch_head("/small.txt", "", port4)
        check(header(head, "Content-Type") == "text/x-own; charset=utf-8",
              "own mime-types: %r" % head)
        status, head, _ = fetch_head("/small.txt")
        check(header(head, "Content-Type") == "text/plain",
              "listener 1's type: %r" % head)
        sh = json.loads(kwebctl_ok("-j", "listener", "show", lid))
        check(sh["mime_types"] == ".txt=text/x-own; charset=utf-8" and
              "mime-types" not in sh["inherit"], "show mime: %r" % sh)
        kwebctl_fails(EXIT_ERROR, r"each entry must be .ext=type/subtype",
                      "listener", "set", lid, "mime-types", "txt=text/plain")
        kwebctl_ok("listener", "set", lid, "mime-types", "default")
        status, head, _ = fetch_head("/small.txt", "", port4)
        check(header(head, "Content-Type") == "text/plain",
              "mime-types default: %r" % head)

        # Refused as a whole: nothing of the request changes.
        kwebctl_fails(EXIT_ERROR, r"port cannot be the backend port",
                      "listener", "set", lid, "backend-port", str(CFG.port),
                      "precompressed", "yes")
        kwebctl_fails(EXIT_ERROR, r"each rule must be",
                      "listener", "set", lid, "cache-control",
                      "/a/=max-age=1\r\nX-Injected: 1")
        kwebctl_fails(EXIT_ERROR, r"each rule must be",
                      "listener", "set", lid, "cache-control",
                      '.css=max-age="60"')
        kwebctl_fails(EXIT_ERROR, r"more than 32 rules",
                      "listener", "set", lid, "cache-control",
                      ";".join("/r%d/=no-store" % i for i in range(33)))
        kwebctl_fails(EXIT_NOT_FOUND, r"no such listener",
                      "listener", "set", "999", "expires", "no")
        kwebctl_fails(EXIT_USAGE, r"unknown key", "listener", "set", lid,
                      "colour", "blue")
        for bad in ("../x", "Upper.example", "a.example:80", "a/b", ""):
            kwebctl_fails(EXIT_ERROR, r"not a host name", "listener", "set",
                          lid, "vhost-default", bad)
        check(sh["vhosts"] is False and sh["vhost_default"] == "default",
              "vhosts: %r" % sh)
        sh = json.loads(kwebctl_ok("-j", "listener", "show", lid))
        check(sh["precompressed"] is False and sh["cache_control"] == rules,
              "changed by a refused set: %r" % sh)

        # Back to config's values.
        kwebctl_ok("listener", "set", lid, "precompressed", "default",
                   "dynamic-prefixes", "default", "cache-control", "")
        sh = json.loads(kwebctl_ok("-j", "listener", "show", lid))
        check(sh["precompressed"] is True and sh["cache_control"] == "" and
              "precompressed" in sh["inherit"] and
              "dynamic-prefixes" in sh["inherit"], "default: %r" % sh)
        status, head, body = fetch_head("/pre/app.js", ae, port4)
        check(status == 200 and body == gz_bytes and
              header(head, "Cache-Control") is None,
              "after default: %d %r" % (status, head))
        status, body, _ = fetch("127.0.0.1", port4, "/api/x")
        check(status == 200 and b"uri=/api/x" in body,
              "module-wide prefix again: %d" % status)
        # Listener 1 is the module parameters': no rules of its own.
        check(param("cache_control") == "" and param("expires") == "N",
              "parameters: %r %r" % (param("cache_control"),
                                     param("expires")))
    finally:
        kwebctl_ok("listener", "del", lid)


@TESTS.test("listener error-pages: a site's own pages with the error's status; missing or unreadable pages fall back to the built-in",
            not_light=SETTINGS_ROUNDS)
def t_error_pages():
    port5 = CFG.port2 + 3
    page = os.path.join(CFG.docroot, "ctl-404.html")
    with open(page, "wb") as f:
        f.write(b"<p>our own 404</p>\n")
    os.chmod(page, 0o644)
    pages = ("404=/ctl-404.html;403=/ctl-missing.html;"
             "416=/owned/uid1000.txt;400,414=/pre")
    lst = json.loads(kwebctl_ok("-j", "listener", "add", "port", str(port5),
                                "docroot", CFG.docroot, "error-pages",
                                pages))
    lid = str(lst[0]["id"])
    try:
        sh = json.loads(kwebctl_ok("-j", "listener", "show", lid))
        check(sh["error_pages"] == pages, "show: %r" % sh)
        # Twice: from the file, then from the cache.
        for _ in range(2):
            status, head, body = fetch_head("/no/such.txt", "", port5)
            check(status == 404 and body == b"<p>our own 404</p>\n" and
                  header(head, "Content-Type") == "text/html" and
                  header(head, "Content-Length") == str(len(body)) and
                  header(head, "ETag") and
                  header(head, "Last-Modified") is None,
                  "404 page: %d %r %r" % (status, head, body))
        # HEAD: the page's fields, no body; the connection still usable.
        with socket.create_connection((CFG.host, port5), timeout=10) as c:
            c.sendall(b"HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                      b"GET /small.txt HTTP/1.1\r\nHost: x\r\n"
                      b"Connection: close\r\n\r\n")
            data = recv_all(c)
        first, _, rest = data.partition(b"\r\n\r\n")
        check(first.startswith(b"HTTP/1.1 404 ") and
              b"\r\nContent-Length: 19" in first and
              rest.startswith(b"HTTP/1.1 200 ") and rest.endswith(small()),
              "HEAD then GET: %r" % data[:300])
        # A page that is not there, one kweb's identity may not read, and
        # a directory: the built-in page, the status kept.
        status, head, body = fetch_head("/private/x", "", port5)
        check(status == 403 and b"<center>kweb</center>" in body,
              "missing 403 page: %d %r" % (status, body[:80]))
        status, head, body = fetch_head("/small.txt",
                                        "Range: bytes=99999-\r\n", port5)
        check(status == 416 and b"<center>kweb</center>" in body and
              header(head, "Content-Range") == "bytes */%d" % len(small()),
              "unreadable 416 page: %d %r" % (status, head))
        status, _, body = fetch_head("/a/../../x", "", port5)
        check(status == 400 and b"<center>kweb</center>" in body,
              "directory as a page: %d %r" % (status, body[:80]))
        # Listener 1 has none.
        status, _, body = fetch_head("/no/such.txt")
        check(status == 404 and b"<center>kweb</center>" in body,
              "listener 1: %d" % status)
        # A 416 page that can be read, answered by the worker even when
        # the file is cached.
        kwebctl_ok("listener", "set", lid, "error-pages",
                   "416=/ctl-404.html")
        for _ in range(2):
            status, head, body = fetch_head("/small.txt",
                                            "Range: bytes=99999-\r\n",
                                            port5)
            check(status == 416 and body == b"<p>our own 404</p>\n" and
                  header(head, "Content-Range") == "bytes */%d" %
                  len(small()), "416 page: %d %r" % (status, head))
        status, _, body = fetch_head("/no/such.txt", "", port5)
        check(status == 404 and b"<center>kweb</center>" in body,
              "404 after set: %d" % status)
        for bad in ("404=no-slash.html", "404=/a/../b.html", "404=/dir/",
                    "399=/x.html", "404=/a.html;404=/b.html",
                    "404=/a b.html", "404=/a.html?x"):
            kwebctl_fails(EXIT_ERROR, r"each entry must be", "listener",
                          "set", lid, "error-pages", bad)
        kwebctl_fails(EXIT_ERROR, r"more than 16 status codes", "listener",
                      "set", lid, "error-pages",
                      ",".join(str(c) for c in range(400, 417)) + "=/x.html")
    finally:
        kwebctl_ok("listener", "del", lid)
        os.unlink(page)


@TESTS.test("vhosts: a host directory kweb's identity may not search is 403, not the default's",
            not_light=IDENTITY)
def t_vhost_locked():
    port6 = CFG.port2 + 4
    root = os.path.join(CFG.base, "vh")
    shutil.rmtree(root, ignore_errors=True)
    for d, mode in (("default", 0o755), ("locked.example", 0o700)):
        os.makedirs(os.path.join(root, d))
        with open(os.path.join(root, d, "index.html"), "wb") as f:
            f.write(d.encode() + b"\n")
        os.chmod(os.path.join(root, d, "index.html"), 0o644)
        os.chmod(os.path.join(root, d), mode)
    os.chmod(root, 0o755)
    lst = json.loads(kwebctl_ok("-j", "listener", "add", "port", str(port6),
                                "docroot", root, "vhosts", "yes"))
    lid = str(lst[0]["id"])
    try:
        for host, want, body in (("locked.example", 403, None),
                                 ("LOCKED.Example.:80", 403, None),
                                 ("other.example", 200, b"default\n")):
            with socket.create_connection((CFG.host, port6), timeout=10) as c:
                c.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: "
                           "close\r\n\r\n" % host).encode())
                data = recv_all(c)
            check(data.startswith(b"HTTP/1.1 %d " % want) and
                  (body is None or data.endswith(b"\r\n\r\n" + body)),
                  "Host %s: %r" % (host, data[:120]))
    finally:
        kwebctl_ok("listener", "del", lid)
        shutil.rmtree(root, ignore_errors=True)


def ip(*args):
    return subprocess.run(["ip"] + list(args), capture_output=True,
                          text=True, timeout=30)


@TESTS.test("listeners belong to the caller's network namespace; its exit closes them")
def t_netns():
    ns = "kweb-ctl-test"
    ip("netns", "del", ns)
    r = ip("netns", "add", ns)
    check(r.returncode == 0, "ip netns add: %s" % r.stderr)
    try:
        ip("-n", ns, "link", "set", "lo", "up")
        nsrun = ["ip", "netns", "exec", ns]
        p = subprocess.run(nsrun + [CFG.kwebctl, "-j", "listener", "list"],
                           capture_output=True, text=True,
                           timeout=CFG.cli_timeout)
        check(p.returncode == 0 and json.loads(p.stdout) == [],
              "listeners in a new namespace: %r %s" % (p.stdout, p.stderr))
        p = subprocess.run(nsrun + [CFG.kwebctl, "-j", "listener", "add",
                                    "port", str(CFG.port), "docroot",
                                    CFG.docroot],
                           capture_output=True, text=True,
                           timeout=CFG.cli_timeout)
        check(p.returncode == 0, "add in the namespace: %s" % p.stderr)
        nsid = json.loads(p.stdout)[0]["id"]
        # Invisible from here, and this namespace's port 80 is still ours.
        # Its id is its namespace's own (1 again), and names our listener
        # 1 here, not it.
        check(nsid == 1, "the namespace's first listener's id: %d" % nsid)
        check([x["id"] for x in listeners_json()] == [1],
              "the namespace's listener is visible outside")
        # curl, not a Python: a Python's start alone can take longer than
        # the timeout in a debug guest under TCG.
        p = subprocess.run(nsrun + ["curl", "-sS", "-o", "/dev/null",
                                    "-w", "%{http_code}", "--max-time",
                                    "20", "http://127.0.0.1:%d/small.txt"
                                    % CFG.port],
                           capture_output=True, text=True,
                           timeout=CFG.cli_timeout)
        check(p.stdout.strip() == "200",
              "GET in the namespace: %r %s" % (p.stdout, p.stderr))
        with open("/proc/net/kweb") as f:
            check("listeners 1\n" in f.read(), "/proc counts the namespace's")
        # Counters are the namespace's: the one GET made there, none of
        # the traffic out here (thousands of connections by now).
        p = subprocess.run(nsrun + ["cat", "/proc/net/kweb"],
                           capture_output=True, text=True,
                           timeout=CFG.cli_timeout)
        ns_counters = dict(line.split() for line in p.stdout.splitlines()
                           if len(line.split()) == 2)
        check(ns_counters.get("connections_accepted") == "1" and
              int(ns_counters.get("requests_softirq", 0)) +
              int(ns_counters.get("requests_worker", 0)) == 1,
              "the namespace's counters: %r" % ns_counters)
        check(proc()[0]["connections_accepted"] > 1,
              "the initial namespace's counters")
    finally:
        # The namespace's exit (pernet) must close its listener.
        ip("netns", "del", ns)
    # Give cleanup_net its time: then only listener 1 is left anywhere.
    time.sleep(2)
    check([x["id"] for x in listeners_json()] == [1], "listeners changed")
    status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
    check(status == 200 and body == small(), "listener 1 after netns exit")


@TESTS.test("a listener opens files with its creator's rights, not root's")
def t_listener_creds():
    # nobody, given CAP_NET_ADMIN and nothing else, adds a listener whose
    # docroot holds a world-readable file in a directory only root may
    # search: kweb (whose worker is root) must not serve it for nobody.
    docroot = os.path.join(CFG.base, "www-creds")
    locked = os.path.join(docroot, "locked")
    os.makedirs(locked, exist_ok=True)
    os.chmod(docroot, 0o755)
    os.chmod(locked, 0o700)
    for d in (docroot, locked):
        with open(os.path.join(d, "f.txt"), "wb") as f:
            f.write(b"secret\n" if d == locked else b"open\n")
        os.chmod(os.path.join(d, "f.txt"), 0o644)
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
           "--inh-caps=-all,+net_admin", "--ambient-caps=-all,+net_admin",
           CFG.kwebctl_nobody, "-j", "listener", "add", "port",
           str(CFG.port2), "docroot", docroot]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "nobody with CAP_NET_ADMIN: listener add: "
          "exit %d %s" % (p.returncode, p.stderr.strip()))
    added = json.loads(p.stdout)[0]["id"]
    try:
        status, body, _ = fetch(CFG.host, CFG.port2, "/f.txt")
        check(status == 200 and body == b"open\n", "/f.txt: %d %r" %
              (status, body))
        status, body, _ = fetch(CFG.host, CFG.port2, "/locked/f.txt")
        check(status in (403, 404) and b"secret" not in body,
              "/locked/f.txt served to nobody's listener: %d %r" %
              (status, body))
    finally:
        kwebctl_ok("listener", "del", str(added))


# ---- tenants: network and user namespaces ----

# What a namespace that never set anything has: kweb's defaults, never
# the initial namespace's parameters or another namespace's settings.
NS_DEFAULTS = {"header_timeout": 60, "keepalive_timeout": 75,
               "send_timeout": 60, "max_connections": 16384,
               "max_requests": 1000, "cache_size": 64,
               "cache_max_file": 4096, "backend_port": 8080,
               "backend_missing": False, "precompressed": True,
               "dynamic_prefixes": "", "dynamic_extensions": "",
               "mime_types": "", "user": 65534, "group": 65534}


class Netns:
    """A network namespace of the test's own, with lo up; deleted on exit."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        ip("netns", "del", self.name)
        r = ip("netns", "add", self.name)
        check(r.returncode == 0, "ip netns add %s: %s" % (self.name,
                                                          r.stderr))
        ip("-n", self.name, "link", "set", "lo", "up")
        return self

    def __exit__(self, *exc):
        ip("netns", "del", self.name)

    def run(self, *argv, prefix=(), timeout=None):
        """argv in the namespace (after prefix, e.g. setpriv's)."""
        return subprocess.run(["ip", "netns", "exec", self.name] +
                              list(prefix) + list(argv),
                              capture_output=True, text=True,
                              timeout=timeout or CFG.cli_timeout)

    def kwebctl(self, *args, prefix=(), ok=True):
        kc = CFG.kwebctl_nobody if prefix else CFG.kwebctl
        p = self.run(kc, *args, prefix=prefix)
        if ok:
            check(p.returncode == 0, "%s: kwebctl %s: exit %d %s" %
                  (self.name, " ".join(args), p.returncode, p.stderr.strip()))
        return p

    def config(self):
        return json.loads(self.kwebctl("-j", "config", "get").stdout)

    def curl(self, port, target):
        p = self.run("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                     "--max-time", "20",
                     "http://127.0.0.1:%d%s" % (port, target))
        return p.stdout.strip()


def config_subset(cfg):
    return {k: cfg.get(k) for k in NS_DEFAULTS}


@TESTS.test("namespaces are tenants: each has its own settings and "
            "listeners, and no other namespace reads or changes them")
def t_tenant_settings():
    init_before = json.loads(kwebctl_ok("-j", "config", "get"))
    params_before = {n: param(n) for n in ("backend_port",
                                            "keepalive_timeout", "user")}
    with Netns("kweb-tenant-a") as a, Netns("kweb-tenant-b") as b:
        check(config_subset(a.config()) == NS_DEFAULTS,
              "a new namespace's settings: %r" % a.config())
        # A container's admin points its handoff elsewhere, shortens its
        # timeouts and changes its identity and routes: its own only.
        a.kwebctl("config", "set", "backend-port", "31337",
                  "keepalive-timeout", "7", "max-connections", "1",
                  "dynamic-prefixes", "/api/", "mime-types",
                  ".md=text/markdown", "user", "0", "group", "0")
        cfg = a.config()
        check((cfg["backend_port"], cfg["keepalive_timeout"],
               cfg["max_connections"], cfg["dynamic_prefixes"],
               cfg["mime_types"], cfg["user"]) ==
              (31337, 7, 1, "/api/", ".md=text/markdown", 0),
              "a's own settings: %r" % cfg)
        check(config_subset(b.config()) == NS_DEFAULTS,
              "b's settings changed by a's: %r" % b.config())
        init_after = json.loads(kwebctl_ok("-j", "config", "get"))
        check(init_after == init_before, "the initial namespace's settings "
              "changed by a's: %s" % state_diff((init_before, {}),
                                               (init_after, {})))
        check({n: param(n) for n in params_before} == params_before,
              "the parameters changed by a's settings")
        status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
        check(status == 200 and body == small(), "listener 1 after a's set")

        # Listeners: a's follows a's settings; nobody else sees it.
        p = a.kwebctl("-j", "listener", "add", "port", str(CFG.port2),
                      "docroot", CFG.docroot)
        aid = json.loads(p.stdout)[0]["id"]
        sh = json.loads(a.kwebctl("-j", "listener", "show",
                                  str(aid)).stdout)
        check(sh["backend_port"] == 31337 and
              sh["dynamic_prefixes"] == "/api/",
              "a's listener follows a's settings: %r" % sh)
        check(a.curl(CFG.port2, "/small.txt") == "200", "GET in a")
        p = b.kwebctl("-j", "listener", "list")
        check(json.loads(p.stdout) == [], "b sees a's listener: %s" %
              p.stdout)
        for ns, args in ((b, ("listener", "del", str(aid))),
                         (b, ("listener", "set", str(aid), "vhosts", "yes")),
                         (b, ("listener", "show", str(aid)))):
            p = ns.kwebctl(*args, ok=False)
            check(p.returncode == EXIT_NOT_FOUND and
                  "no such listener" in p.stderr,
                  "b: kwebctl %s: exit %d %s" % (" ".join(args),
                                                 p.returncode, p.stderr))
        check(all(x["port"] != CFG.port2 for x in listeners_json()),
              "a's listener is visible in the initial namespace")
        # The counters and cache figures a reader of a sees are a's own.
        p = a.run("cat", "/proc/net/kweb")
        fig = dict(line.split() for line in p.stdout.splitlines()
                   if len(line.split()) == 2)
        check(fig.get("pinned_bytes") == fig.get("cache_bytes") and
              fig.get("connections_accepted") == "1",
              "a's /proc/net/kweb: %r" % fig)
        # b's cache flush, and a change in b, leave a's listener serving.
        b.kwebctl("cache", "flush")
        b.kwebctl("config", "set", "backend-port", "8081")
        check(a.config()["backend_port"] == 31337, "b's set changed a's")
    # Their exit took a's listener and settings with it.
    with Netns("kweb-tenant-a") as a:
        check(config_subset(a.config()) == NS_DEFAULTS,
              "a namespace of the same name starts afresh: %r" % a.config())
        check(json.loads(a.kwebctl("-j", "listener", "list").stdout) == [],
              "a listener outlived its namespace")


@TESTS.test("a namespace's admin cannot give kweb more file access than "
            "it has: user and group need its own CAP_SETUID/CAP_SETGID")
def t_tenant_identity():
    # nobody with CAP_NET_ADMIN alone: enough to configure a namespace
    # owned by the initial user namespace, not to open files as root.
    caps = NOBODY + ["--inh-caps=-all,+net_admin",
                     "--ambient-caps=-all,+net_admin"]
    with Netns("kweb-tenant-id") as a:
        a.kwebctl("-j", "listener", "add", "port", str(CFG.port2),
                  "docroot", CFG.docroot)
        p = a.kwebctl("config", "set", "user", "0", "group", "0",
                      prefix=caps, ok=False)
        check(p.returncode == EXIT_PERM and
              "the caller may not take that user" in p.stderr,
              "nobody with CAP_NET_ADMIN: user 0: exit %d %r" %
              (p.returncode, p.stderr.strip()))
        check(a.config()["user"] == 65534, "changed by a refused set")
        # Its own ids it may name; other settings it may change.
        a.kwebctl("config", "set", "user", "65534", "group", "65534",
                  "keepalive-timeout", "9", prefix=caps)
        check(a.config()["keepalive_timeout"] == 9, "nobody's set")
        # Without CAP_NET_ADMIN, nothing.
        p = a.kwebctl("config", "set", "keepalive-timeout", "8",
                      prefix=NOBODY, ok=False)
        check(p.returncode == EXIT_PERM, "nobody without CAP_NET_ADMIN: "
              "exit %d %r" % (p.returncode, p.stderr.strip()))


@TESTS.test("an unprivileged user's own user and network namespace "
            "(unshare -Urn): a listener of its own, serving as that user; "
            "backend-user only one of its users")
def t_tenant_userns():
    docroot = os.path.join(CFG.base, "www-userns")
    os.makedirs(docroot, exist_ok=True)
    os.chmod(docroot, 0o755)
    for name, mode in (("open.txt", 0o644), ("root-only.txt", 0o600)):
        with open(os.path.join(docroot, name), "wb") as f:
            f.write(name.encode())
        os.chmod(os.path.join(docroot, name), mode)
    init_before = json.loads(kwebctl_ok("-j", "config", "get"))
    kc, port = CFG.kwebctl_nobody, CFG.port2 + 1
    # One shell: the namespaces live as long as it does. Each step prints
    # its exit status and stderr's first line.
    script = """
ip link set lo up
step() { err=$("$@" 2>&1 >/dev/null); echo "$1 $2 $3 rc=$? ${err%%%%$'\n'*}"; }
step %(kc)s listener add port %(port)d docroot %(root)s
step %(kc)s config set user 1 group 1
step %(kc)s config set user 0 group 0
step %(kc)s listener add port %(port)d docroot %(root)s
id=$(%(kc)s -j listener list | grep -o '"id": [0-9]*' | cut -d' ' -f2)
step %(kc)s listener set "$id" backend-user 1
step %(kc)s listener set "$id" backend-user 0
for f in open.txt root-only.txt; do
  echo "GET $f $(curl -sS -o /dev/null -w '%%{http_code}' --max-time 20 http://127.0.0.1:%(port)d/$f)"
done
""" % {"kc": kc, "port": port, "root": docroot}
    # Debian's kernels allow unprivileged user namespaces unless told not.
    knob = "/proc/sys/kernel/unprivileged_userns_clone"
    if os.path.exists(knob):
        with open(knob, "w") as f:
            f.write("1")
    p = subprocess.run(NOBODY + ["unshare", "-Urn", "bash", "-c", script],
                       capture_output=True, text=True,
                       timeout=4 * CFG.cli_timeout)
    # The debug kernel, built from Debian's source with its own config,
    # refuses unprivileged user namespaces; Debian's stock kernels run it.
    if p.returncode and "unshare failed: Operation not permitted" in \
            p.stderr:
        note("not run: this kernel refuses unprivileged user namespaces "
             "(%s)" % p.stderr.strip())
        return
    lines = p.stdout.splitlines()
    note("unshare -Urn: %r" % lines)
    check(len(lines) == 8, "the script's steps: %r %s" % (lines, p.stderr))
    # 65534 does not map in a namespace that maps only its root.
    check(re.search(r"rc=1 .*does not map", lines[0]),
          "listener add as 65534: %r" % lines[0])
    check(re.search(r"rc=1 .*does not map", lines[1]),
          "user 1, unmapped: %r" % lines[1])
    check("rc=0" in lines[2] and "rc=0" in lines[3],
          "user 0 (the user itself), then its listener: %r" % lines[2:4])
    check(re.search(r"rc=1 .*no such user in the namespace's user "
                    r"namespace", lines[4]) and "rc=0" in lines[5],
          "backend-user 1 (unmapped), then 0: %r" % lines[4:6])
    check(lines[6] == "GET open.txt 200" and
          lines[7] == "GET root-only.txt 403",
          "served as the unprivileged user: %r" % lines[6:])
    check(json.loads(kwebctl_ok("-j", "config", "get")) == init_before,
          "the initial namespace's settings changed")
    check(all(x["port"] != port for x in listeners_json()),
          "the user's listener is visible here")
    status, body, _ = fetch(CFG.host, CFG.port, "/small.txt")
    check(status == 200 and body == small(), "listener 1 after the user's")


# ---- batch files: kwebctl -b FILE, kwebctl apply FILE ----

def batch_ports():
    """Two free ports of --port2's range for the batch tests' listeners."""
    return CFG.port2 + 5, CFG.port2 + 9


def batch_docroot():
    docroot2 = os.path.join(CFG.base, "www2")
    os.makedirs(docroot2, exist_ok=True)
    os.chmod(docroot2, 0o755)
    return docroot2


def batch_file(name, text):
    path = os.path.join(CFG.base, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def ctl_state():
    """config, and every listener's settings by id, as kwebctl -j shows
    them (connection counts left out: they come and go)."""
    cfg = json.loads(kwebctl_ok("-j", "config", "get"))
    ls = {}
    for lst in listeners_json():
        sh = json.loads(kwebctl_ok("-j", "listener", "show", str(lst["id"])))
        sh.pop("connections_open", None)
        ls[sh["id"]] = sh
    return cfg, ls


def state_diff(a, b):
    """What differs between two ctl_state()s, for a failure's message."""
    out = ["config %s: %r -> %r" % (k, a[0].get(k), b[0].get(k))
           for k in sorted(set(a[0]) | set(b[0])) if a[0].get(k) != b[0].get(k)]
    for i in sorted(set(a[1]) | set(b[1])):
        if a[1].get(i) != b[1].get(i):
            out.append("listener %s: %r -> %r" % (i, a[1].get(i), b[1].get(i)))
    return "; ".join(out) or "nothing"


def listener_on(port):
    """The id of this namespace's listener on port, or None."""
    ids = [x["id"] for x in listeners_json() if x["port"] == port]
    return ids[0] if ids else None


def del_on(*ports):
    for port in ports:
        lid = listener_on(port)
        if lid:
            kwebctl("listener", "del", str(lid))


def apply_line(sh):
    """A listener add line describing the listener kwebctl -j listener show
    printed as sh: apply must find nothing to change in it."""
    words = ["listener", "add", "port", str(sh["port"]), "docroot",
             sh["docroot"]]
    for a in sh["addresses"]:
        if a != "*":
            words += ["address", a]
    for key in ("backend-port", "precompressed", "dynamic-prefixes",
                "dynamic-extensions", "mime-types", "cache-control",
                "expires", "error-pages", "vhosts", "vhost-default",
                "hsts", "hsts-subdomains", "https-redirect",
                "backend-user"):
        v = sh[key.replace("-", "_")]
        if key in sh["inherit"]:
            v = "default"
        elif v is None:
            v = "none"
        elif v is True or v is False:
            v = "yes" if v else "no"
        words += [key, str(v)]
    return " ".join(shlex.quote(w) for w in words)


@TESTS.test("kwebctl -b: all lines checked before any is sent; a line the kernel refuses undoes those before it (FILE:LINE)",
            not_light=KWEBCTL_OWN)
def t_batch_all_or_nothing():
    pa, pb = batch_ports()
    docroot2 = batch_docroot()
    del_on(pa, pb)
    lst = json.loads(kwebctl_ok("-j", "listener", "add", "port", str(pb),
                                "docroot", CFG.docroot, "expires", "yes"))
    x = lst[0]["id"]
    try:
        before = ctl_state()
        # Mistakes kwebctl sees itself: each bad line told, nothing sent.
        f = batch_file("bad.conf",
                       "config set keepalive-timeout 31\n"
                       "# a comment, then a line in two\n"
                       "listener add port %d docroot %s \\\n"
                       "    expires maybe\n"
                       "config set colour blue\n"
                       "listener set 999999 expires yes\n"
                       "cache flush\n" % (pa, docroot2))
        rc, out, err = kwebctl("-b", f)
        check(rc == EXIT_USAGE and not out, "bad.conf: exit %d, stdout %r"
              % (rc, out))
        for want in (r"bad\.conf:3: expires: yes or no",
                     r'bad\.conf:5: config set: unknown key "colour"',
                     r"bad\.conf:6: listener set: no listener 999999",
                     r'bad\.conf:7: "cache flush": not a command -b runs'):
            check(re.search(want, err), "no %r in %r" % (want, err))
        note("bad.conf -> %s" % err.strip().splitlines()[0])
        after = ctl_state()
        check(after == before, "bad.conf changed %s" % state_diff(before,
                                                                  after))
        # Valid lines, then one the kernel refuses: all undone, last first,
        # the deletion (run last) never made.
        for failing, want in (
                ("listener add port %d docroot %s" % (CFG.port, CFG.docroot),
                 r"refused\.conf:8: listener add: the port is in use "
                 r"\(port\)"),
                ("listener set 1 cache-control '.css=max-age=\"60\"'",
                 r"refused\.conf:8: listener set: each rule must be")):
            f = batch_file("refused.conf",
                           "# all of it, or none\n"
                           "config set keepalive-timeout 31 max-requests 501\n"
                           "listener add port %d docroot %s \\\n"
                           "    cache-control \"/a/=max-age=60, immutable\"\n"
                           "listener set 1 expires yes precompressed no\n"
                           "listener del %d\n"
                           "config set dynamic-prefixes /api/,/dyn/,/batch/\n"
                           "%s\n" % (pa, docroot2, x, failing))
            rc, out, err = kwebctl("-b", f)
            check(rc == EXIT_ERROR, "refused.conf: exit %d, want %d; %s" %
                  (rc, EXIT_ERROR, err.strip()))
            check(re.search(want, err), "no %r in %r" % (want, err))
            check(re.search(r"refused\.conf:3: listener add port %d .*: "
                            r"listener \d+$" % pa, out, re.M),
                  "the add not printed: %r" % out)
            check("undoing the 4 changes made" in err and "all undone" in err,
                  "undo: %r" % err)
            note("refused.conf -> %s" % err.strip().splitlines()[0])
            after = ctl_state()
            check(after == before, "refused.conf left %s" %
                  state_diff(before, after))
            check(listener_on(pa) is None and listener_on(pb) == x,
                  "listeners: %r" % listeners_json())
    finally:
        del_on(pa, pb)


@TESTS.test("kwebctl -b and apply: the state the file says; apply again changes nothing; --dry-run, in-place sets, remakes and --prune",
            not_light=KWEBCTL_OWN)
def t_batch_ok():
    pa, pb = batch_ports()
    docroot2 = batch_docroot()
    del_on(pa, pb)
    before = ctl_state()
    old = before[0]
    lst = json.loads(kwebctl_ok("-j", "listener", "add", "port", str(pb),
                                "docroot", CFG.docroot))
    x = lst[0]["id"]
    try:
        # -b: the commands as written, deletions last.
        f = batch_file("ok.conf",
                       "listener del %d\n"
                       "config set keepalive-timeout 32\n"
                       "listener add port %d docroot %s cache-control \\\n"
                       "    '/a/=max-age=60' expires yes\n"
                       "listener set 1 error-pages \"404=/errors/404.html\"\n"
                       % (x, pa, docroot2))
        out = kwebctl_ok("-b", f)
        m = re.search(r"^%s:3: listener add port %d .*: listener (\d+)$"
                      % (re.escape(f), pa), out, re.M)
        check(m and out.splitlines()[-2] == "%s:1: listener del %d" % (f, x)
              and out.splitlines()[-1] == "%s: 4 changes made" % f,
              "ok.conf: %r" % out)
        cfg, ls = ctl_state()
        a = ls.get(int(m.group(1)), {})
        check(cfg["keepalive_timeout"] == 32 and x not in ls and
              a.get("cache_control") == "/a/=max-age=60" and
              a.get("expires") is True and a.get("docroot") == docroot2 and
              ls[1]["error_pages"] == "404=/errors/404.html",
              "after ok.conf: %s" % state_diff(before, (cfg, ls)))
        # Put back by a batch on standard input.
        p = subprocess.run([CFG.kwebctl, "-b", "-"], capture_output=True,
                           text=True, timeout=30,
                           input="config set keepalive-timeout %d\n"
                                 "listener del %s\n"
                                 "listener set 1 error-pages ''\n"
                           % (old["keepalive_timeout"], m.group(1)))
        check(p.returncode == 0 and "stdin:2: listener del" in p.stdout,
              "-b -: exit %d %r %r" % (p.returncode, p.stdout, p.stderr))
        after = ctl_state()
        check(after == before, "not put back: %s" % state_diff(before,
                                                                after))

        # apply: the file is the state wanted.
        one = apply_line(before[1][1])
        conf = ("config set keepalive-timeout 33 max-requests %d\n"
                "listener add port %d docroot %s \\\n"
                "    cache-control '/a/=max-age=60' expires yes\n"
                "listener add port %d docroot %s address 127.0.0.1 "
                "precompressed no\n"
                % (old["max_requests"], pa, docroot2, pb, CFG.docroot))
        f = batch_file("kweb.conf", conf)
        out = kwebctl_ok("apply", f)
        check("kweb.conf: listener 1 on port %d is not in the file: kept "
              "(--prune deletes it)" % CFG.port in out and
              "kweb.conf:1: config set keepalive-timeout 33\n" in out and
              "kweb.conf: 3 changes made" in out, "apply: %r" % out)
        ida, idb = listener_on(pa), listener_on(pb)
        cfg, ls = ctl_state()
        check(cfg["keepalive_timeout"] == 33 and ida and idb and
              ls[idb]["addresses"] == ["127.0.0.1"] and
              ls[idb]["precompressed"] is False and
              ls[ida]["expires"] is True and ls[1] == before[1][1],
              "after apply: %s" % state_diff(before, (cfg, ls)))
        out = kwebctl_ok("apply", f)
        check(out.endswith("kweb.conf: nothing to change\n"),
              "apply again: %r" % out)
        # A listener line made from listener show: nothing to change.
        f1 = batch_file("one.conf", one + "\n")
        out = kwebctl_ok("apply", f1)
        check("one.conf: nothing to change" in out, "%s: %r" % (one, out))

        # Keys left out go back to their defaults, in place (same id);
        # --dry-run says so and changes nothing.
        conf = conf.replace("    cache-control '/a/=max-age=60' expires yes",
                            "    cache-control '.css=no-cache'")
        f = batch_file("kweb.conf", conf)
        state = ctl_state()
        out = kwebctl_ok("apply", "--dry-run", f)
        want = ("kweb.conf:2: listener set %d cache-control .css=no-cache "
                "expires no\n" % ida)
        check(want in out and "1 change to make (--dry-run: none made)" in out
              and ctl_state() == state, "--dry-run: %r" % out)
        out = kwebctl_ok("apply", f)
        cfg, ls = ctl_state()
        check(want in out and listener_on(pa) == ida and
              ls[ida]["cache_control"] == ".css=no-cache" and
              ls[ida]["expires"] is False, "in place: %r" % out)
        # A docroot cannot change in place: made anew, and said why.
        conf = conf.replace("docroot %s address" % CFG.docroot,
                            "docroot %s address" % docroot2)
        f = batch_file("kweb.conf", conf)
        out = kwebctl_ok("apply", f)
        idb2 = listener_on(pb)
        check("cannot change in place" in out and idb2 and idb2 != idb and
              ctl_state()[1][idb2]["docroot"] == docroot2,
              "remake: %r" % out)
        check(kwebctl_ok("apply", f).endswith("nothing to change\n"),
              "apply after the remake")
        # --prune: listeners the file does not name are deleted.
        f = batch_file("kweb.conf", "config set keepalive-timeout %d\n%s\n"
                       % (old["keepalive_timeout"], one))
        out = kwebctl_ok("apply", "--prune", f)
        check(out.count("deleted (--prune)") == 2 and
              listener_on(pa) is None and listener_on(pb) is None,
              "--prune: %r" % out)
        after = ctl_state()
        check(after == before, "left: %s" % state_diff(before, after))
    finally:
        del_on(pa, pb)
        kwebctl("config", "set", "keepalive-timeout",
                str(old["keepalive_timeout"]), "max-requests",
                str(old["max_requests"]))


def log_tags(paths, prefix):
    """The User-Agents beginning with prefix in the combined lines of the
    files, and the lines that are not whole combined lines."""
    line_re = re.compile(r'^\S+ - - \[[^\]]+\] "[^"]*" (?:\d{3}|-) (?:\d+|-) '
                         r'"[^"]*" "([^"]*)"$')
    tags, bad = [], []
    for path in paths:
        with open(path, "rb") as f:
            data = f.read().decode("latin-1")
        if data and not data.endswith("\n"):
            bad.append("%s ends in a partial line" % path)
        for line in data.splitlines():
            m = line_re.match(line)
            if not m:
                bad.append(line)
            elif m.group(1).startswith(prefix):
                tags.append(m.group(1))
    return tags, bad


@TESTS.test("kwebctl log --output: renamed and signalled every 100 ms under load, a line per request served, none lost, split or doubled")
def t_log_rotation_under_load():
    d = os.path.join(CFG.base, "logrot")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = os.path.join(d, "access.log")
    rc, _, err = kwebctl("log", "--output", os.path.join(d, "no", "a.log"))
    check(rc == EXIT_ERROR and "No such file or directory" in err,
          "a missing directory: exit %d %r" % (rc, err))
    n, nthreads, prefix = CFG.log_requests, 4, "ctl-rot-"
    p = subprocess.Popen([CFG.kwebctl, "log", "--output", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        # It has joined once a probe's line is in the file.
        for i in range(50):
            fetch(CFG.host, CFG.port, "/ctl-rot-probe-%d" % i)
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                # Not there until kwebctl has started and opened it.
                try:
                    with open(path) as f:
                        if "/ctl-rot-probe-%d " % i in f.read():
                            break
                except FileNotFoundError:
                    pass
                time.sleep(0.05)
            else:
                continue
            break
        else:
            raise Fail("no probe line in %s" % path)
        check(os.stat(path).st_mode & 0o777 == 0o640, "mode %o" %
              os.stat(path).st_mode)
        time.sleep(0.3)     # the probes' records: batches within 100 ms
        st0 = json.loads(kwebctl_ok("-j", "stats"))
        errors = []
        want = small()

        def client(t):
            c = http.client.HTTPConnection(CFG.host, CFG.port, timeout=30)
            try:
                for i in range(t, n, nthreads):
                    c.request("GET", "/small.txt",
                              headers={"User-Agent": "%s%d" % (prefix, i)})
                    r = c.getresponse()
                    body = r.read()
                    if r.status != 200 or body != want:
                        errors.append("request %d: %d" % (i, r.status))
            except (OSError, http.client.HTTPException) as e:
                errors.append("client %d: %r" % (t, e))
            finally:
                c.close()

        threads = [threading.Thread(target=client, args=(t,))
                   for t in range(nthreads)]
        for t in threads:
            t.start()
        rotations = 0
        while any(t.is_alive() for t in threads) or rotations < 5:
            time.sleep(0.1)
            # Opened again after the last signal (at once, but a slow guest).
            end = time.monotonic() + 10
            while not os.path.exists(path) and time.monotonic() < end:
                time.sleep(0.01)
            rotations += 1
            os.rename(path, "%s.%d" % (path, rotations))
            p.send_signal(signal.SIGHUP if rotations % 2 else signal.SIGUSR1)
        for t in threads:
            t.join()
        check(not errors, "client errors: %s" % errors[:5])

        def files():
            return [path] + ["%s.%d" % (path, k)
                             for k in range(1, rotations + 1)]

        # Let the last batches reach the files.
        end = time.monotonic() + 20
        while time.monotonic() < end:
            if os.path.exists(path) and len(log_tags(files(), prefix)[0]) >= n:
                break
            time.sleep(0.2)
        time.sleep(0.5)
        st1 = json.loads(kwebctl_ok("-j", "stats"))
        p.send_signal(signal.SIGTERM)
        rc = p.wait(10)
        err = p.stderr.read()
        check(rc == 0, "kwebctl log exit %d after SIGTERM: %s" % (rc, err))
        served = (st1["requests_softirq"] + st1["requests_worker"] -
                  st0["requests_softirq"] - st0["requests_worker"])
        dropped = st1["log_dropped"] - st0["log_dropped"]
        published = st1["log_records"] - st0["log_records"]
        present = [f for f in files() if os.path.exists(f)]
        tags, bad = log_tags(present, prefix)
        check(not bad, "lines not whole: %r" % bad[:5])
        check(len(tags) == len(set(tags)), "%d lines for %d requests: "
              "doubled" % (len(tags), len(set(tags))))
        check(served == n, "served %d, made %d" % (served, n))
        note("%d rotations; %d requests served, %d lines, %d records "
             "published, %d dropped" % (rotations, served, len(tags),
                                        published, dropped))
        if dropped:
            check("the kernel dropped" in err and
                  len(tags) + dropped == served,
                  "%d lines + %d dropped != %d served; stderr %r" %
                  (len(tags), dropped, served, err))
        else:
            check(len(tags) == served and published == served and
                  set(tags) == {"%s%d" % (prefix, i) for i in range(n)},
                  "%d lines, %d published for %d served" %
                  (len(tags), published, served))
            check(not err.strip(), "kwebctl log stderr: %s" % err.strip())
        with_lines = [f for f in present if log_tags([f], prefix)[0]]
        check(len(with_lines) >= 2, "the load's lines all in %s: no "
              "rotation took" % with_lines)
        for f in present:
            check(os.stat(f).st_mode & 0o777 == 0o640, "%s: mode %o" %
                  (f, os.stat(f).st_mode))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@TESTS.test("the kernel's ynl CLI drives the family from uapi/kweb.yaml")
def t_ynl_cli():
    if not CFG.ynl_cli:
        note("SKIP: no --ynl-cli (integration.sh gives the one "
             "scripts/ynl-regen.sh fetches, except on the debug kernel)")
        return
    # The CLI parses the whole spec at each start: under the debug
    # kernel and TCG that alone takes minutes (--cli-timeout).
    base = [sys.executable, CFG.ynl_cli, "--spec", CFG.spec, "--no-schema",
            "--output-json"]
    p = subprocess.run(base + ["--dump", "listener-get"], capture_output=True,
                       text=True, timeout=CFG.cli_timeout)
    check(p.returncode == 0, "cli.py --dump listener-get: %s" % p.stderr)
    ls = json.loads(p.stdout)
    check(len(ls) == 1 and ls[0]["port"] == CFG.port and
          ls[0]["docroot"] == CFG.docroot, "listener-get: %r" % ls)
    p = subprocess.run(base + ["--do", "stats-get"], capture_output=True,
                       text=True, timeout=CFG.cli_timeout)
    check(p.returncode == 0, "cli.py --do stats-get: %s" % p.stderr)
    st = json.loads(p.stdout)
    check(st["requests-softirq"] + st["requests-worker"] > 0,
          "stats-get: %r" % st)
    # Refused by the policy, with the extack in the CLI's error.
    p = subprocess.run(base + ["--do", "config-set", "--json",
                               '{"send-timeout": 0}'],
                       capture_output=True, text=True,
                       timeout=CFG.cli_timeout)
    check(p.returncode != 0 and "out of range" in p.stdout + p.stderr,
          "config-set send-timeout 0: %d %r %r" % (p.returncode, p.stdout,
                                                   p.stderr[-300:]))


def main():
    global CFG
    ap = client_args(__doc__, timeout=30.0)
    ap.add_argument("--port2", type=int, default=8091,
                    help="free ports for more listeners: this, the next "
                         "four, the fifth and the ninth after it")
    ap.add_argument("--cli-timeout", type=float, default=60,
                    help="seconds for each run of the kernel's ynl CLI and "
                         "of each command in another namespace")
    ap.add_argument("--base", default="/run/kweb-it",
                    help="where a second docroot may be made")
    ap.add_argument("--kwebctl", default=os.path.join(REPO, "userctl",
                                                      "kwebctl"))
    ap.add_argument("--ynl-cli", default="")
    ap.add_argument("--only", help="run only tests whose name matches this "
                    "regex")
    ap.add_argument("--spec", default=os.path.join(REPO, "uapi", "kweb.yaml"))
    ap.add_argument("--uapi", default=os.path.join(REPO, "uapi", "linux",
                                                   "kweb.h"))
    ap.add_argument("--log-requests", type=int, default=2000,
                    help="requests of the log rotation test")
    ap.add_argument("--metrics-file", default="",
                    help="save the Prometheus text here for promtool to "
                         "check (scripts/check.sh does, on the host) "
                         "instead of running promtool")
    ap.add_argument("--light", action="store_true",
                    help="leave out the tests of kwebctl's own logic")
    CFG = ap.parse_args()
    CFG.docroot = os.path.realpath(CFG.docroot)
    # A copy nobody may run: the repository can be in root's home.
    CFG.kwebctl_nobody = os.path.join(CFG.base, "kwebctl")
    shutil.copy(CFG.kwebctl, CFG.kwebctl_nobody)
    os.chmod(CFG.kwebctl_nobody, 0o755)
    if CFG.only:
        TESTS.tests = [t for t in TESTS.tests if re.search(CFG.only, t[0])]
    return TESTS.run(light=CFG.light)


if __name__ == "__main__":
    sys.exit(main())
