#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where kweb's own instructions go, by source line.

    bench/annotate.py BENCH.jsonl[.gz] KO [--workload wrk16]
                      [--fileset 1k] [--comparison kweb] [--top 40]
                      [--function NAME]

reads a profile record's own_blocks (bench/cpuprofile.py: each block of
the module the instruction counter saw, as function, offset and the
instructions it ran) and maps each block's first instruction to a
source line with addr2line on the same build of the module. A block may
run on past its first line: the figures are the block's, credited to
where it starts. Per request, as the profile's requests give it.
"""

import argparse
import collections
import gzip
import json
import subprocess
import sys


def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            yield json.loads(line)


def symbols(ko):
    """{function: (section, offset)} of a module's text symbols."""
    out = {}
    text = subprocess.run(["objdump", "-t", ko], check=True, text=True,
                          stdout=subprocess.PIPE).stdout
    for line in text.splitlines():
        p = line.split()
        # value flags... section size name
        if len(p) >= 5 and p[-3].startswith(".text") and "F" in p[1:-3]:
            out.setdefault(p[-1], (p[-3], int(p[0], 16)))
    return out


def lines(ko, section, addrs):
    """{address: "file:line (function)"} within one section."""
    if not addrs:
        return {}
    addrs = sorted(addrs)
    p = subprocess.run(["addr2line", "-f", "-e", ko, "-j", section] +
                       ["%x" % a for a in addrs], check=True, text=True,
                       stdout=subprocess.PIPE)
    got = p.stdout.splitlines()
    out = {}
    for i, a in enumerate(addrs):
        fn, where = got[2 * i], got[2 * i + 1]
        where = where.split(" (")[0]
        out[a] = "%s (%s)" % (where.rsplit("/", 1)[-1], fn)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jsonl")
    ap.add_argument("ko")
    ap.add_argument("--comparison", default="kweb")
    ap.add_argument("--server", default="kweb")
    ap.add_argument("--workload", default="wrk16")
    ap.add_argument("--fileset", default="1k")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--function", help="only the blocks of this function")
    a = ap.parse_args()
    prof = None
    for r in records(a.jsonl):
        if (r.get("type") == "profile" and r.get("own_blocks") and
                r.get("comparison") == a.comparison and
                r.get("server") == a.server and
                r.get("workload") == a.workload and
                r.get("fileset") == a.fileset):
            prof = r
    if prof is None:
        sys.exit("no profile with own_blocks for that row")
    if a.function:
        prof["own_blocks"] = [b for b in prof["own_blocks"]
                              if b[0] == a.function]
    reqs = max(1, prof.get("requests", 1))
    syms = symbols(a.ko)
    wanted = collections.defaultdict(set)
    for fn, off, _ in prof["own_blocks"]:
        if fn in syms:
            sec, base = syms[fn]
            wanted[sec].add(base + off)
    where = {}
    for sec, addrs in wanted.items():
        for addr, w in lines(a.ko, sec, addrs).items():
            where[(sec, addr)] = w
    by_line = collections.Counter()
    by_fn = collections.Counter()
    for fn, off, n in prof["own_blocks"]:
        by_fn[fn] += n
        if fn in syms:
            sec, base = syms[fn]
            by_line[where.get((sec, base + off), "?")] += n
        else:
            by_line["%s+%#x (not in %s)" % (fn, off, a.ko)] += n
    total = sum(by_fn.values())
    print("%s %s %s %s: %d requests, own code %.0f instructions each, "
          "of %.0f busy" % (a.comparison, a.server, a.workload, a.fileset,
                            reqs, total / reqs,
                            prof.get("busy_insns", 0) / reqs))
    print("\nby function:")
    for fn, n in by_fn.most_common(a.top):
        print("%8.1f  %s" % (n / reqs, fn))
    print("\nby line (where each block starts):")
    for w, n in by_line.most_common(a.top):
        print("%8.1f  %s" % (n / reqs, w))


if __name__ == "__main__":
    main()
