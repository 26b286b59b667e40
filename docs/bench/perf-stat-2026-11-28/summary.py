import glob, os, re, sys
N = 4000
for k in ("612", "61"):
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), {"612": "6.12", "61": "6.1"}[k])
    if not os.path.exists(d + "/kweb.proc"):
        continue
    print("== kernel", k)
    for side in ("kweb", "nginx", "handoff"):
        rows = {}
        rates = []
        for r in (1, 2):
            f = "%s/%s.%d.stat" % (d, side, r)
            for line in open(f):
                p = line.strip().split(",")
                if len(p) > 3 and p[0] and p[0][0].isdigit():
                    rows.setdefault(p[2], []).append(float(p[0]))
            for fn in ("plain",):
                m = re.search(r"Connection rate: ([\d.]+)", open("%s/%s.%d.%s" % (d, side, r, fn)).read())
                rates.append(float(m.group(1)))
        out = ["rate %s" % "/".join("%.0f" % x for x in rates)]
        for ev, v in rows.items():
            per = [x / N for x in v]
            unit = "ms" if ev == "cpu-clock" else ""
            out.append("%s %s" % (ev.split(":")[-1], "/".join("%.2f" % x for x in per)))
        print("%-8s %s" % (side, "; ".join(out)))
