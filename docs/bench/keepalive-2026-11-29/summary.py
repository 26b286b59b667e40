# Per request, from keepalive-stat.sh OUT: perf stat -a counts / requests.
import glob
import os
import re
import sys

out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "*.stat"))):
    side, conns, rnd, _ = os.path.basename(f).split(".")
    wrk = open(f[:-len("stat")] + "wrk").read()
    n = int(re.search(r"(\d+) requests in", wrk).group(1))
    ev = {}
    for line in open(f):
        p = line.strip().split(",")
        if len(p) > 2 and p[0].replace(".", "").isdigit():
            ev[p[2].split(":")[-1]] = round(float(p[0]) / n, 2)
    print(side, "c%s" % conns, "round", rnd, n, "requests", ev)
