# Per-side rates and perf stat counts per connection from closer-ab.sh OUT.
import glob, re, sys, statistics, os
out = sys.argv[1]
def rate(f):
    m = re.search(r"Connection rate: ([\d.]+) conn/s", open(f).read())
    return float(m.group(1)) if m else None
N = 3000
for side in ("nginx", "a", "b", "c"):
    if not glob.glob(f"{out}/{side}.*"):
        continue
    r1 = [rate(f) for f in sorted(glob.glob(f"{out}/{side}.*.plain"))]
    r4 = []
    for rd in sorted(set(f.split(".")[-3] for f in glob.glob(f"{out}/{side}.*.p4.*"))):
        r4.append(sum(rate(f) or 0 for f in glob.glob(f"{out}/{side}.{rd}.p4.*")))
    ev = {}
    for f in glob.glob(f"{out}/{side}.*.stat"):
        for line in open(f):
            p = line.strip().split(",")
            if len(p) > 2 and p[0].replace(".", "").isdigit():
                ev.setdefault(p[2], []).append(float(p[0]) / N)
    print(side, "1 client:", r1, "4 clients:", [round(x) for x in r4],
          " per conn:", {k: round(statistics.mean(v), 2) for k, v in ev.items()})
