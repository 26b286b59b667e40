#!/usr/bin/env python3
"""Medians of ab.sh's summary files: summary.py DIR..."""
import re
import statistics as st
import sys

for d in sys.argv[1:]:
    rows = {}
    for line in open(f"{d}/summary"):
        m = re.match(r"r\d+ (old|new) (c16|c256) rps=([\d.]+) cpu_ms_per_1k=(\d+)", line)
        if m:
            rows.setdefault((m[1], m[2]), []).append(float(m[3]))
        m = re.match(r"r\d+ (old|new) httperf Connection rate: ([\d.]+)", line)
        if m:
            rows.setdefault((m[1], "httperf"), []).append(float(m[2]))
    print(d)
    for w in ("c16", "c256", "httperf"):
        o, n = rows[("old", w)], rows[("new", w)]
        print(f"  {w:8} old {st.median(o):8.0f} ({min(o):.0f}-{max(o):.0f})"
              f" new {st.median(n):8.0f} ({min(n):.0f}-{max(n):.0f})"
              f" new/old {st.median(n) / st.median(o):.3f}")
