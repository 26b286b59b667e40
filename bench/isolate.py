# SPDX-License-Identifier: GPL-2.0
"""The bench's client on a CPU of its own, and the server's CPU, exactly.

The guest has two vCPUs. CPU0 is the server's: nginx's one worker (and
its master), kweb's work items (the unbound workqueues' cpumask), and the
receive softirq of every packet that reaches the server, steered there by
RPS on the server's end of a veth pair. CPU1 is the client's: the load
tool, pinned there in a network namespace of its own (NS) behind the
other end, whose packets RPS steers to CPU1, and this harness itself.
CPU0's busy time is then the server's whole cost: its threads, its
receive softirq, its sends (which run the veth's transmit on CPU0 and
queue the packet to CPU1's backlog). khugepaged, whose collapses would
land on either CPU at random, does not scan meanwhile.

Busy time is measured as wall time less idle time, per CPU. /proc/stat's
user, system, irq and softirq fields are sampled at the tick, and with
NO_HZ idle a CPU that wakes for short softirq bursts is rarely sampled
busy; its idle and iowait fields are exact (the tick-less idle clock).
calibrate() checks the measure against a known spin on CPU0.
"""

import bisect
import collections
import json
import os
import subprocess
import time

NS = "kbc"                      # the client's network namespace
SERVER_DEV, CLIENT_DEV = "kbs0", "kbc0"
SERVER_ADDR, CLIENT_ADDR = "10.99.0.1", "10.99.0.2"
SERVER_CPU, CLIENT_CPU = 0, 1
WQ_CPUMASK = "/sys/devices/virtual/workqueue/cpumask"
# khugepaged collapses any process's memory into huge pages, a copy and
# a clear of up to 2 MiB each time, on whichever CPU it runs: on the
# server's, 9 k instructions per connection in one timed run (2026-12-05,
# thp_collapse_alloc in /proc/vmstat). It does not scan while the bench
# runs.
KHUGEPAGED_SLEEP = "/sys/kernel/mm/transparent_hugepage/khugepaged/" \
                   "scan_sleep_millisecs"
KHUGEPAGED_OFF_MS = 24 * 3600 * 1000
# Where bench/hostcpu.py, on the host, answers for QEMU's vCPU threads.
HOSTCPU_DIR = os.environ.get("KWEB_HOSTCPU_DIR", "")

STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq",
               "softirq", "steal")


class Error(Exception):
    pass


def _run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise Error("%s: %s" % (" ".join(cmd), p.stdout.strip()[-300:]))
    return p.stdout


def _write(path, value, ns=False):
    """Write value to path; in NS (its /sys and /proc) if ns."""
    if ns:
        _run(["ip", "netns", "exec", NS, "sh", "-c",
              "echo %s > %s" % (value, path)])
    else:
        with open(path, "w") as f:
            f.write(value)


def client_cmd(cmd):
    """cmd as the client runs it: in NS. ip execs cmd, so the process,
    its rusage and its affinity are cmd's own."""
    return ["ip", "netns", "exec", NS] + list(cmd)


def pin_client():
    os.sched_setaffinity(0, {CLIENT_CPU})


def pin_server():
    os.sched_setaffinity(0, {SERVER_CPU})


def setup(sysctls):
    """Make NS and the veth pair, steer and pin; sysctls: [(name, value)]
    the client's namespace needs (its own port range and TIME_WAIT
    reuse). Returns what it did, for the run's meta line."""
    if (os.cpu_count() or 1) < 2:
        raise Error("client isolation needs 2 CPUs, not %d" % os.cpu_count())
    teardown()
    # veth may be built in: only the link's creation says whether it is
    # there.
    subprocess.run(["modprobe", "-q", "veth"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    _run(["ip", "netns", "add", NS])
    _run(["ip", "link", "add", SERVER_DEV, "type", "veth", "peer", "name",
          CLIENT_DEV, "netns", NS])
    _run(["ip", "addr", "add", SERVER_ADDR + "/24", "dev", SERVER_DEV])
    _run(["ip", "link", "set", SERVER_DEV, "up"])
    _run(["ip", "-n", NS, "addr", "add", CLIENT_ADDR + "/24", "dev",
          CLIENT_DEV])
    _run(["ip", "-n", NS, "link", "set", CLIENT_DEV, "up"])
    _run(["ip", "-n", NS, "link", "set", "lo", "up"])
    # A packet sent into one end is received by the other through
    # netif_rx(), where RPS picks the CPU whose backlog takes it.
    _write("/sys/class/net/%s/queues/rx-0/rps_cpus" % SERVER_DEV,
           "%x" % (1 << SERVER_CPU))
    _write("/sys/class/net/%s/queues/rx-0/rps_cpus" % CLIENT_DEV,
           "%x" % (1 << CLIENT_CPU), ns=True)
    for name, value in sysctls:
        _run(["ip", "netns", "exec", NS, "sysctl", "-qw",
              "%s=%s" % (name, value)])
    done = {"netns": NS, "server": SERVER_ADDR, "client": CLIENT_ADDR,
            "server_cpu": SERVER_CPU, "client_cpu": CLIENT_CPU}
    try:
        with open(WQ_CPUMASK) as f:
            done["wq_cpumask_was"] = _saved["wq_cpumask"] = f.read().strip()
        _write(WQ_CPUMASK, "%x" % (1 << SERVER_CPU))
        done["wq_cpumask"] = "%x" % (1 << SERVER_CPU)
    except OSError as e:
        raise Error("unbound workqueues to CPU%d: %s" % (SERVER_CPU, e))
    try:
        with open(KHUGEPAGED_SLEEP) as f:
            _saved["khugepaged"] = f.read().strip()
        _write(KHUGEPAGED_SLEEP, str(KHUGEPAGED_OFF_MS))
        done["khugepaged_sleep_ms"] = KHUGEPAGED_OFF_MS
    except OSError:
        pass    # no transparent huge pages: nothing to collapse them
    pin_client()
    return done


# What setup() changed outside the namespace, for teardown() to restore.
_saved = {}


def teardown():
    for path, key in ((WQ_CPUMASK, "wq_cpumask"),
                      (KHUGEPAGED_SLEEP, "khugepaged")):
        was = _saved.pop(key, None)
        if was:
            try:
                _write(path, was)
            except OSError:
                pass
    subprocess.run(["ip", "netns", "del", NS], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    subprocess.run(["ip", "link", "del", SERVER_DEV],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=60)


def cpu_stat():
    """{cpu: {field: ticks}} of /proc/stat's per-CPU lines."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                p = line.split()
                out[int(p[0][3:])] = dict(zip(STAT_FIELDS,
                                              (int(x) for x in p[1:9])))
    return out


_host_seq = [0]


def host_threads(timeout=10.0, body=""):
    """Seconds each of QEMU's vCPU threads has run on the host
    ({"vcpu0": s, "vcpu1": s, "other": s}, and with the instruction
    counter, "insn0": n, "insn1": n), from bench/hostcpu.py through the
    shared HOSTCPU_DIR; None without it."""
    if not HOSTCPU_DIR or not os.path.isdir(HOSTCPU_DIR):
        return None
    _host_seq[0] += 1
    n = "%d-%d" % (os.getpid(), _host_seq[0])
    req = os.path.join(HOSTCPU_DIR, "req." + n)
    resp = os.path.join(HOSTCPU_DIR, "resp." + n)
    # Made whole, then renamed: the host may answer and remove it at once.
    tmp = os.path.join(HOSTCPU_DIR, ".req." + n)
    with open(tmp, "w") as f:
        f.write(body)
    os.rename(tmp, req)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(resp) as f:
                rec = json.load(f)
        except (OSError, ValueError):
            time.sleep(0.01)
            continue
        os.unlink(resp)
        # Thread times in seconds; instruction counts ("insnN...") and
        # the blocks' as they are.
        return {k: v if k.startswith("insn") or k == "blocks" else v / 1e9
                for k, v in rec.items() if k != "host_monotonic"}
    try:
        os.unlink(req)
    except OSError:
        pass
    return None


def text_symbols():
    """Every function /proc/kallsyms lists: [(address, name, module)],
    module "" for the kernel's own."""
    out = []
    try:
        with open("/proc/kallsyms") as f:
            for line in f:
                p = line.split()
                if len(p) >= 3 and p[1] in "tT":
                    mod = p[3].strip("[]") if len(p) >= 4 else ""
                    out.append((int(p[0], 16), p[2], mod))
    except (OSError, ValueError):
        return []
    return out


def module_functions(name, syms=None):
    """A loaded module's functions, [(address, name)] sorted."""
    return sorted((a, n) for a, n, m in
                  (text_symbols() if syms is None else syms) if m == name)


def module_text(name):
    """[lo, hi) around a loaded module's functions: from its first
    function to the next function above its last, of whatever owner
    (kallsyms gives no sizes), or a page past it; None if it has none."""
    syms = text_symbols()
    mine = [a for a, _ in module_functions(name, syms)]
    if not mine or not mine[-1]:
        return None
    above = [a for a, _, _ in syms if a > mine[-1]]
    return mine[0], min(above) if above else mine[-1] + 4096


def function_totals(blocks, funcs, unknown="?"):
    """{block address: instructions} to a Counter of them by function,
    funcs [(address, function)] sorted: a block belongs to the function
    at or below it (unknown below the first)."""
    addrs = [a for a, _ in funcs]
    tot = collections.Counter()
    for a, n in blocks.items():
        i = bisect.bisect_right(addrs, a) - 1
        tot[funcs[i][1] if i >= 0 else unknown] += n
    return tot


def by_function(blocks, funcs, top=15):
    """{block address: instructions} to [(function, share of them)],
    busiest first."""
    if not blocks or not funcs:
        return []
    tot = function_totals(blocks, funcs)
    whole = sum(tot.values())
    return [(f, n / whole) for f, n in tot.most_common(top)]


def count_module(name):
    """Have the host's instruction counter count a module's code apart
    (None: nothing apart). Returns the range, or None."""
    rng = module_text(name) if name else None
    lo, hi = rng or (0, 0)
    host_threads(body="range %x %x" % (lo, hi))
    return rng


class Meter:
    """Busy time per CPU over an interval: wall less idle (exact), and
    the tick-sampled busy fields beside it; and, where the host answers,
    the host CPU time of each vCPU's thread."""

    def __init__(self, blocks=False):
        """blocks: also the instructions of each block of the counted
        module (the host's "blocks" answer), or with "kernel" of every
        block of the kernel's text, as out["blocks"]."""
        self.tck = os.sysconf("SC_CLK_TCK")
        self.ask = ("kernel-blocks" if blocks == "kernel" else
                    "blocks" if blocks else "")
        # The kernel's blocks are some 10^5 records to write and parse.
        self.wait = 120.0 if blocks == "kernel" else 10.0
        self.h0 = host_threads(timeout=self.wait, body=self.ask)
        self.t0 = time.monotonic()
        self.s0 = cpu_stat()

    def read(self):
        wall = time.monotonic() - self.t0
        s1 = cpu_stat()
        h1 = (host_threads(timeout=self.wait, body=self.ask)
              if self.h0 is not None else None)
        out = {"wall": wall, "host": None, "blocks": None}
        if h1 is not None:
            b0, b1 = self.h0.pop("blocks", None), h1.pop("blocks", None)
            out["host"] = {k: h1[k] - self.h0.get(k, 0) for k in h1}
            if b0 is not None and b1 is not None:
                out["blocks"] = {int(a, 16): n - b0.get(a, 0)
                                 for a, n in b1.items() if n > b0.get(a, 0)}
        for cpu in (SERVER_CPU, CLIENT_CPU):
            d = {k: s1[cpu][k] - self.s0[cpu][k] for k in STAT_FIELDS}
            idle = (d["idle"] + d["iowait"]) / self.tck
            sampled = sum(v for k, v in d.items()
                          if k not in ("idle", "iowait")) / self.tck
            out[cpu] = {"busy": max(0.0, wall - idle), "sampled": sampled,
                        "ticks": d}
        return out


def _spin(secs):
    """Spin secs; the wall time it took, first call to last."""
    t0 = time.monotonic()
    end = t0 + secs
    t = t0
    while t < end:
        t = time.monotonic()
    return t - t0


def calibrate(secs=2.0):
    """A known load on CPU0: a process spinning secs of wall time, alone
    on it, then secs of nothing. Returns what the meter read for both;
    the spin must read as its wall time. (Its CPU time from times(2) is
    recorded too: under TCG it read up to 20% more than its wall time,
    the scheduler's clock and the guest's clocksource disagreeing.)"""
    r, w = os.pipe()
    m = Meter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            pin_server()
            wall = _spin(secs)
            t = os.times()
            os.write(w, ("%r %r" % (wall, t.user + t.system)).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    got = m.read()
    with os.fdopen(r) as f:
        spun, spun_cpu = (float(x) for x in (f.read() or "0 0").split())
    m = Meter()
    time.sleep(secs)
    quiet = m.read()
    s = got[SERVER_CPU]
    host = {}
    if got["host"] and quiet["host"]:
        v = "vcpu%d" % SERVER_CPU
        i = "insn%d" % SERVER_CPU
        if i in got["host"] and i in quiet["host"]:
            # What CPU0 executes per second of a spin, and per second
            # of quiet (the tick, housekeeping).
            host.update({"insn_spin_per_s": got["host"][i] / spun if spun
                         else None,
                         "insn_quiet_per_s": quiet["host"][i] /
                         quiet["wall"]})
        host.update({
            "host_spin": got["host"].get(v),
            "host_over_spin": got["host"].get(v, 0) / spun if spun else None,
            "host_quiet_per_s": quiet["host"].get(v, 0) / quiet["wall"]})
    return dict(host, **{"type": "calibration", "spin_wall": spun, "spin_cpu": spun_cpu,
            "measured": s["busy"], "sampled": s["sampled"],
            "measured_over_spin": s["busy"] / spun if spun else None,
            "quiet_busy_per_s": quiet[SERVER_CPU]["busy"] / quiet["wall"],
            "quiet_sampled_per_s": quiet[SERVER_CPU]["sampled"] /
            quiet["wall"]})


def settle(limit=0.02, most=20.0, window=0.5):
    """Wait (at most `most` seconds) until CPU0 is quiet: busy less than
    `limit` of a window. What a side leaves behind when it stops (its
    sockets' timers, freed caches) must not be charged to the next.
    Returns (seconds waited, the last window's busy share)."""
    t0 = time.monotonic()
    while True:
        m = Meter()
        time.sleep(window)
        r = m.read()
        share = r[SERVER_CPU]["busy"] / r["wall"]
        if share < limit or time.monotonic() - t0 > most:
            return time.monotonic() - t0, share
