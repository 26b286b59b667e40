#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The host's side of the bench's CPU measure: what QEMU's vCPU threads
cost the host, read when the guest asks.

    hostcpu.py --name QEMU_NAME --dir DIR [--icount FILE] [--timeout SECS]

Under TCG a guest CPU is a host thread ("CPU N/TCG", named so by QEMU's
-name debug-threads=on). The thread runs while its vCPU executes and
sleeps while it is halted, so its CPU time on the host is the vCPU's
work, in host time, whatever else the host runs: a vCPU thread the host
preempts stops accruing it, while inside the guest the preempted time
looks busy (TCG has no steal time).

Protocol, through DIR (shared with the guest, which sees the host's
filesystem): the guest creates DIR/req.N; this process, polling, answers
with DIR/resp.N (written whole, then renamed), one JSON object: the
nanoseconds each vCPU thread has run (/proc/PID/task/TID/schedstat) and
those of QEMU's other threads together; with --icount, also the
instructions each vCPU has executed ("insn0", ...; of them, the kernel's,
"insn0_kernel", and those in the range a request set, "insn0_range"),
from the counters bench/qemu/kwebicount.so keeps in FILE. A request file
may hold "range LO HI" (hex addresses): the range is set before the
answer is read; "blocks" adds "blocks", the instructions vCPU 0 ran
in each block of the range (see blocks()), and "kernel-blocks" the same
for every block of the kernel's text. It waits for the QEMU whose
command line has "-name QEMU_NAME" and exits once that QEMU is gone.
Python 3.9+ standard library only.
"""

import argparse
import json
import os
import re
import struct
import sys
import time


def find_qemu(name):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if not argv or b"qemu-system" not in argv[0]:
            continue
        for i, a in enumerate(argv[:-1]):
            if a == b"-name" and argv[i + 1].split(b",")[0] in (
                    name.encode(), b"guest=" + name.encode()):
                return int(pid)
    return None


def thread_times(pid):
    """{"vcpu0": ns, "vcpu1": ns, ..., "other": ns} of QEMU pid."""
    out = {"other": 0}
    for tid in os.listdir("/proc/%d/task" % pid):
        base = "/proc/%d/task/%s/" % (pid, tid)
        try:
            with open(base + "comm") as f:
                comm = f.read().strip()
            with open(base + "schedstat") as f:
                ns = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        m = re.match(r"CPU (\d+)/", comm)
        if m:
            out["vcpu" + m.group(1)] = out.get("vcpu" + m.group(1), 0) + ns
        else:
            out["other"] += ns
    return out


ICOUNT_MAGIC = 0x544e434943424557


def icounts(path):
    """{"insn0": n, "insn0_kernel": n, "insn0_range": n, ...} from
    kwebicount.so's page (its layout: a 64-byte header of magic, vCPU
    count and the range, then a 64-byte slot per vCPU: instructions,
    blocks, the kernel's instructions, the range's); {} if it is not
    there (yet)."""
    try:
        with open(path, "rb") as f:
            page = f.read(4096)
    except OSError:
        return {}
    if len(page) < 64:
        return {}
    magic, nr = struct.unpack_from("<QQ", page, 0)
    if magic != ICOUNT_MAGIC:
        return {}
    out = {}
    for i in range(min(nr, len(page) // 64 - 1)):
        ins, _, kern, rng = struct.unpack_from("<QQQQ", page, 64 * (i + 1))
        out.update({"insn%d" % i: ins, "insn%d_kernel" % i: kern,
                    "insn%d_range" % i: rng})
    return out


def blocks(path, whole=False):
    """{hex address: instructions vCPU 0 ran in blocks starting there}
    over the blocks kwebicount.so keeps records of (the kernel text's):
    those in the range set (where the counted module's instructions
    went), or with whole, all of them (the kernel's and every module's)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            _, _, lo, hi, n = struct.unpack_from("<QQQQQ", head, 0)
            f.seek(4096)
            data = f.read(32 * n)
    except (OSError, struct.error):
        return {}
    out = {}
    data = data[:len(data) // 32 * 32]
    for vaddr, insns, execs0, _ in struct.iter_unpack("<QQQQ", data):
        if execs0 and (whole or lo <= vaddr < hi):
            key = "%x" % vaddr
            out[key] = out.get(key, 0) + insns * execs0
    return out


def set_range(path, lo, hi):
    """The address range whose instructions kwebicount.so counts apart
    (a module's code); 0, 0 for none."""
    with open(path, "r+b") as f:
        f.seek(16)
        f.write(struct.pack("<QQ", lo, hi))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--icount",
                    help="kwebicount.so's counters (its out= file)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds to wait for the QEMU to appear")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    end = time.monotonic() + args.timeout
    pid = None
    while pid is None:
        if time.monotonic() > end:
            print("hostcpu: no QEMU named %s" % args.name, file=sys.stderr)
            return 1
        time.sleep(0.5)
        pid = find_qemu(args.name)
    while os.path.exists("/proc/%d" % pid):
        for f in os.listdir(args.dir):
            if not f.startswith("req."):
                continue
            n = f[4:]
            # A request may carry "range LO HI" (hex): set it first.
            try:
                with open(os.path.join(args.dir, f)) as r:
                    words = r.read().split()
            except OSError:
                words = []
            if args.icount and len(words) == 3 and words[0] == "range":
                try:
                    set_range(args.icount, int(words[1], 16),
                              int(words[2], 16))
                except (OSError, ValueError) as e:
                    print("hostcpu: range: %s" % e, file=sys.stderr)
            rec = thread_times(pid)
            if args.icount:
                rec.update(icounts(args.icount))
                if words in (["blocks"], ["kernel-blocks"]):
                    rec["blocks"] = blocks(args.icount,
                                           words == ["kernel-blocks"])
            rec["host_monotonic"] = time.monotonic()
            tmp = os.path.join(args.dir, ".resp." + n)
            with open(tmp, "w") as out:
                json.dump(rec, out)
            os.rename(tmp, os.path.join(args.dir, "resp." + n))
            os.unlink(os.path.join(args.dir, f))
        time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(main())
