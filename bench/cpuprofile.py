# SPDX-License-Identifier: GPL-2.0
"""Where the server's CPU goes: perf samples of CPU0 during a load.

perf samples CPU0 with the cpu-clock event (TCG has no PMU; an hrtimer
fires in every context, softirq and idle included). Each sample is
classed by the object its instruction pointer is in:

  kweb    kweb.ko's own code ([kweb]), or the floor's (bench/floor,
          [kwebfloor])
  kernel  the rest of the kernel: TCP/IP, the scheduler, the page cache,
          system calls (nginx's and kweb's work items' alike)
  user    user space (nginx's own code and its libraries)
  idle    the idle loop, left out of the shares

so kweb's share is of the server's busy samples, as the issue asks:
its own code against the kernel's work on its behalf.
"""

import bisect
import os
import select
import signal
import subprocess

import isolate  # kallsyms, shared with the instruction counter

PERF = os.environ.get("KWEB_PERF", "perf")
FREQ = 1999
# The idle loop's own functions (the CPU halted or about to): samples
# there are idle time, not the server's.
IDLE_SYMS = {"default_idle", "native_safe_halt", "pv_native_safe_halt",
             "arch_cpu_idle", "default_idle_call", "do_idle",
             "cpu_idle_poll", "poll_idle", "mwait_idle", "acpi_idle_do_entry",
             "cpuidle_enter_state", "intel_idle", "amd_e400_idle",
             "cpu_startup_entry", "__cpuidle_text_start"}


class Profile:
    """perf record on one CPU, from start() to stop()."""

    def __init__(self, cpu, path):
        self.cpu = cpu
        self.path = path
        self.proc = None

    def start(self):
        # Under TCG a sample's interrupt takes long enough for the kernel
        # to lower the sample rate to almost nothing ("perf: interrupt
        # took too long"): in the throw-away guest, no such throttling.
        for name, value in (("perf_cpu_time_max_percent", "0"),
                            ("perf_event_max_sample_rate", "100000")):
            try:
                with open("/proc/sys/kernel/" + name, "w") as f:
                    f.write(value)
            except OSError:
                pass
        # perf starts disabled and samples from the "enable" it
        # acknowledges: under TCG its start (reading kallsyms, describing
        # every process) takes seconds, which a fixed wait would guess.
        ctl, ack = self.path + ".ctl", self.path + ".ack"
        for f in (ctl, ack):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        self.proc = subprocess.Popen(
            [PERF, "record", "-q", "-C", str(self.cpu), "-e", "cpu-clock",
             "-F", str(FREQ), "-o", self.path, "-D", "-1",
             "--control", "fifo:%s,%s" % (ctl, ack)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        afd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        try:
            cfd = os.open(ctl, os.O_WRONLY)
            os.write(cfd, b"enable\n")
            os.close(cfd)
            ready, _, _ = select.select([afd], [], [], 120)
            if not ready:
                raise OSError("perf record did not acknowledge enable")
            os.read(afd, 64)
        finally:
            os.close(afd)

    def stop(self):
        """Stop and summarize; None if perf failed."""
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return {"error": "perf record did not stop"}
        if self.proc.returncode not in (0, -signal.SIGINT, 130):
            return {"error": "perf record: %s" % err.decode()[-300:]}
        own = {n for _, n, m in isolate.text_symbols()
               if m in ("kweb", "kwebfloor")}
        return summarize(self.path, own)


class InsnProfile:
    """The same from the instruction counter (bench/qemu/kwebicount.c):
    the instructions the server's vCPU ran, each kernel block's counted
    to the function it starts in. Exact, where perf's samples under TCG
    land on whatever runs when interrupts come back on (most of them in
    handle_softirqs)."""

    def __init__(self, cpu):
        self.cpu = cpu
        self.meter = None

    @staticmethod
    def available():
        """Does the host count instructions (make bench under TCG)?"""
        host = isolate.host_threads()
        return bool(host) and "insn0" in host

    def start(self):
        self.meter = isolate.Meter(blocks="kernel")

    def stop(self):
        got = self.meter.read() if self.meter else {}
        host, blocks = got.get("host"), got.get("blocks")
        if not host or blocks is None:
            return {"error": "no answer from the instruction counter"}
        insns = host.get("insn%d" % self.cpu, 0)
        kern = host.get("insn%d_kernel" % self.cpu, 0)
        return insn_summary(blocks, insns, kern, isolate.text_symbols())


def insn_summary(blocks, insns, kern, syms, top=40):
    """{kweb, kernel, user: shares of the instructions; insns; top:
    [(function, dso, share)]} from {block address: instructions} of the
    kernel's text, the vCPU's instructions and its kernel's, and
    kallsyms' [(address, name, module)]. The idle loop's are left out,
    as perf's idle samples are."""
    funcs = sorted((a, (n, "[%s]" % m if m else "[kernel.kallsyms]"))
                   for a, n, m in syms)
    by = isolate.function_totals(blocks, funcs, ("?", "[kernel.kallsyms]"))
    idle = sum(n for (f, _), n in by.items() if f in IDLE_SYMS)
    own = sum(n for (_, d), n in by.items() if d in ("[kweb]", "[kwebfloor]"))
    # kern counts every kernel instruction: those of blocks with no
    # record (outside the text, or lost_blocks) are the kernel's share
    # too, though no function's.
    busy = insns - idle
    out = {"measure": "insn", "insns": insns, "busy_insns": busy,
           "idle_insns": idle}
    if busy <= 0:
        out["error"] = "no instructions counted"
        return out
    out["kweb"] = own / busy
    out["kernel"] = max(0, kern - idle - own) / busy
    out["user"] = (insns - kern) / busy
    ranked = sorted(((n, f, d) for (f, d), n in by.items()
                     if f not in IDLE_SYMS), reverse=True)
    out["top"] = [(f, d, n / busy) for n, f, d in ranked[:top]]
    out["own_blocks"] = own_blocks(blocks, syms)
    return out


def own_blocks(blocks, syms):
    """The server module's blocks as [(function, offset, instructions)],
    busiest first: raw data for bench/annotate.py, which maps them to
    source lines (addresses change with every load, offsets do not). A
    block belongs to the function at or below it, of whatever owner."""
    funcs = sorted(syms)
    addrs = [a for a, _, _ in funcs]
    out = []
    for a, n in blocks.items():
        i = bisect.bisect_right(addrs, a) - 1
        if i >= 0 and funcs[i][2] in ("kweb", "kwebfloor"):
            out.append((funcs[i][1], a - addrs[i], n))
    return sorted(out, key=lambda t: -t[2])


def summarize(path, own=frozenset(), top=12):
    """{kweb, kernel, user: shares of the busy samples; samples; top:
    [(symbol, dso, share)]} of a perf.data file."""
    p = subprocess.run([PERF, "report", "-i", path, "--stdio", "-q",
                        "--sort", "dso,sym", "-F", "overhead,sample,dso,sym",
                        "--percent-limit", "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    if p.returncode != 0:
        return {"error": "perf report: %s" % p.stderr[-300:]}
    return classify(p.stdout, own, top)


def classify(text, own=frozenset(), top=12):
    """The same from perf report's lines: "pct% samples dso [k] sym"
    ([k] kernel, [.] user)."""
    counts = {"kweb": 0, "kernel": 0, "user": 0, "idle": 0}
    syms = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].endswith("%"):
            continue
        try:
            n = int(parts[1])
        except ValueError:
            continue
        dso, kind = parts[2], parts[3]
        sym = " ".join(parts[4:])
        if dso in ("[kweb]", "[kwebfloor]") or sym in own:
            cls = "kweb"
        elif sym in IDLE_SYMS:
            cls = "idle"
        elif kind == "[k]":
            cls = "kernel"
        else:
            cls = "user"
        counts[cls] += n
        if cls != "idle":
            syms.append((n, sym, dso))
    busy = counts["kweb"] + counts["kernel"] + counts["user"]
    out = {"samples": sum(counts.values()), "busy_samples": busy,
           "idle_samples": counts["idle"], "freq": FREQ}
    for k in ("kweb", "kernel", "user"):
        out[k] = counts[k] / busy if busy else None
    syms.sort(reverse=True)
    out["top"] = [(s, d, n / busy) for n, s, d in syms[:top]] if busy else []
    return out
