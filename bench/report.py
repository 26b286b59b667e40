#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tables and a chart from bench/guest.py's JSON lines.

    report.py BENCH.jsonl [MORE.jsonl...] [--out DIR] [--no-png]

Writes DIR/bench.md (default: the first file's directory) and, if
matplotlib is there, DIR/bench.png; prints the Markdown. For every row
(workload x file set) and side: the median and min-max of requests/s and
body MB/s over the rounds that passed their checks, the guest's CPU time
per 1000 requests (all CPUs, from /proc/stat: user + system + irq +
softirq + steal), and the ratio of the medians A/B, with the min-max of
the ratios of each round's A and B runs. MB/s counts every response byte
the load tool received (headers included). The A/A calibration (nginx
against nginx, the same rounds) is shown beside every row: a ratio
within it of 1 is noise. Targets are reported, never asserted: the exit
status is 0 unless the input is unusable.
"""

import argparse
import gzip
import json
import os
import statistics
import sys

WORKLOAD_NAMES = {
    "httperf": "httperf, 1 conn/request",
    "httperf4": "httperf, 1 conn/request, 4 clients",
    "wrk16": "wrk, keep-alive, 16 conns",
    "wrk256": "wrk, keep-alive, 256 conns",
    "httperfr": "1 conn/request, session resumed (tlsload)",
}
FILESET_NAMES = {"spec": "SPECweb99 mix", "1k": "1 KiB", "64k": "64 KiB",
                 "1m": "1 MiB", "64kgz": "64 KiB script as its .gz (20 KiB)"}
SERVER_NAMES = {"kweb": "kweb", "nginx": "nginx",
                "handoff": "nginx behind kweb", "floor": "the floor",
                "kweb-tls": "kweb (kwebtlsd, kTLS)",
                "nginx-ktls": "nginx (kTLS)", "nginx-tls": "nginx (OpenSSL)"}
COMP_TITLES = {
    "aa": "A/A calibration: nginx against nginx",
    "kweb": "kweb against nginx",
    "handoff": "Handoff: nginx behind kweb (every request handed off) "
               "against nginx alone",
    "floor": "The floor (bench/floor/kwebfloor.ko) against kweb",
    "tls": "HTTPS: kweb (kwebtlsd, kTLS) against nginx with kTLS",
    "tls-ossl": "HTTPS: kweb (kwebtlsd, kTLS) against nginx with OpenSSL",
    "tls-nginx": "HTTPS: nginx with kTLS against nginx with OpenSSL",
    "tls-aa": "A/A calibration for HTTPS: nginx with OpenSSL against "
              "itself",
}
# The comparisons in the order the report gives them.
COMP_ORDER = ("aa", "kweb", "handoff", "floor", "tls-aa", "tls",
              "tls-ossl", "tls-nginx")
TLS_COMPS = ("tls", "tls-ossl", "tls-nginx", "tls-aa")
# The A/A comparisons, and which one calibrates a comparison's rows: the
# TLS rows share names with cleartext ones, not their noise.
AA_COMPS = ("aa", "tls-aa")

# A tool whose own user-space code keeps its threads busy this much of
# the run may be what limits the result.
TOOL_BUSY_LIMIT = 0.5


def aa_of(table, comp):
    """{(workload, file set): the A/A row} that calibrates comp's."""
    src = "tls-aa" if comp in TLS_COMPS else "aa"
    return {(r.wl, r.fs): r for r in table.get(src, [])}


def load(paths):
    """The meta lines, the timed runs, the idle measurements (idle.py),
    the CPU meter's calibrations."""
    meta, runs, idle, cal, prof = [], [], [], [], []
    for p in paths:
        with (gzip.open(p, "rt") if p.endswith(".gz") else open(p)) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    raise SystemExit("%s:%d: %s" % (p, n, e))
                kind = rec.get("type")
                (meta if kind == "meta" else idle if kind == "idle"
                 else cal if kind == "calibration" else
                 prof if kind == "profile" else runs).append(rec)
    return meta, runs, idle, cal, prof


def idle_section(idle):
    """Memory per idle keep-alive connection, by side (bench/idle.py)."""
    if not idle:
        return []
    by = {}
    for r in idle:
        by.setdefault(r["side"], []).append(r)
    tcp = [r["kernel_per_conn"] for r in by.get("tcp", []) if "error" not in r]
    base = med(tcp) if tcp else 0
    n = max(r["conns"] for r in idle)
    lines = ["## Idle keep-alive connections: memory per connection", "",
             "%d connections, each after one 1 KiB GET, held open idle; "
             "bytes per connection (median, min–max over rounds). Kernel = "
             "all memory in use less the page cache and anonymous memory "
             "(/proc/meminfo; the per-CPU free lists counted as free), so "
             "pages outside any slab count; TCP sockets = the same for "
             "connections left in "
             "an accept queue (client and server socket, nothing else); own "
             "= kernel less TCP sockets, plus the server's resident memory "
             "(nginx's workers)." % n, ""]
    rows = []
    for side in ("tcp", "kweb", "nginx"):
        ok = [r for r in by.get(side, []) if "error" not in r]
        if not ok:
            continue
        k = [r["kernel_per_conn"] for r in ok]
        rss = [r["rss_per_conn"] for r in ok]
        own = [r["kernel_per_conn"] - base + r["rss_per_conn"] for r in ok]
        rows.append([{"tcp": "TCP sockets alone", "kweb": "kweb",
                      "nginx": "nginx"}[side],
                     "%.0f (%.0f–%.0f)" % (med(k), min(k), max(k)),
                     "%.0f" % med(rss),
                     "—" if side == "tcp" else
                     "%.0f (%.0f–%.0f)" % (med(own), min(own), max(own))])
    lines += md_table(["side", "kernel B/conn", "RSS B/conn", "own B/conn"],
                      rows)
    lines.append("")
    bad = [r for r in idle if "error" in r]
    for r in bad:
        lines.append("- round %s %s failed: %s" % (r.get("round"), r["side"],
                                                   r["error"][:300]))
    if bad:
        lines.append("")
    return lines


def med(xs):
    return statistics.median(xs) if xs else None


def fmt_num(x):
    if x is None:
        return "-"
    if x >= 1000:
        return "{:,.0f}".format(x)
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return "%.2f" % x


def fmt_range(xs):
    """median (min-max)"""
    if not xs:
        return "-"
    if len(xs) == 1:
        return fmt_num(xs[0])
    return "%s (%s–%s)" % (fmt_num(med(xs)), fmt_num(min(xs)), fmt_num(max(xs)))


def fmt_ratio(r, pairs=None):
    if r is None:
        return "-"
    s = "%.2f" % r
    if pairs and len(pairs) > 1:
        s += " (%.2f–%.2f)" % (min(pairs), max(pairs))
    return s


def dev(r):
    """How far a ratio is from 1, the same either way (2.0 and 0.5: 100%)."""
    return max(r, 1 / r) - 1


def pct(x):
    return "-" if x is None else "%.0f%%" % (100 * x)


class Cell:
    """The ok runs of one (comparison, row, side)."""

    def __init__(self, runs):
        self.runs = [r for r in runs if r.get("ok")]
        self.failed = [r for r in runs if not r.get("ok")]
        self.by_round = {r["round"]: r for r in self.runs}

    def vals(self, key):
        return [r[key] for r in self.runs]

    def median(self, key):
        return med(self.vals(key))

    def server(self):
        for r in self.runs + self.failed:
            return r["server"]
        return "?"

    def tool_user_busy(self):
        """Median share of its threads' time the tool spent in its own
        user-space code."""
        return med([r["tool_utime"] / (r["wall"] * r["tool_threads"])
                    for r in self.runs if r.get("wall")])

    def tool_busy(self):
        return med([(r["tool_utime"] + r["tool_stime"]) /
                    (r["wall"] * r["tool_threads"])
                    for r in self.runs if r.get("wall")])

    def idle(self):
        out = []
        for r in self.runs:
            t = r["cpu_ticks"]
            total = sum(t.values())
            if total:
                out.append((t["idle"] + t["iowait"]) / total)
        return med(out)


class Row:
    def __init__(self, comp, wl, fs, runs):
        self.comp, self.wl, self.fs = comp, wl, fs
        self.a = Cell([r for r in runs if r["side"] == "A"])
        self.b = Cell([r for r in runs if r["side"] == "B"])

    def ratio(self, key="rps"):
        a, b = self.a.median(key), self.b.median(key)
        return a / b if a and b else None

    def pair_ratios(self, key="rps"):
        out = []
        for rnd, ra in self.a.by_round.items():
            rb = self.b.by_round.get(rnd)
            if rb and ra.get(key) and rb.get(key):
                out.append(ra[key] / rb[key])
        return out

    def cpu_ratio(self):
        a, b = self.a.median("cpu_ms_per_1k"), self.b.median("cpu_ms_per_1k")
        return a / b if a and b else None

    def tool_flag(self):
        busy = [x for x in (self.a.tool_user_busy(), self.b.tool_user_busy())
                if x is not None]
        return bool(busy) and max(busy) >= TOOL_BUSY_LIMIT


def rps_target(wl):
    """Issue 15's req/s target for kweb at 1 KiB: 2x with a connection per
    request, 3x with keep-alive on 16 connections, 3.5x on 256."""
    return (2.0 if wl.startswith("httperf") else 3.5 if wl == "wrk256" else
            3.0)


def target(row, aa):
    """(what, verdict) of the issue's target for this row, if any."""
    r = row.ratio()
    if r is None:
        return ""
    noise = ""
    if aa and aa.ratio() is not None:
        spread = max([dev(aa.ratio())] + [dev(x) for x in aa.pair_ratios()])
        if dev(r) <= spread:
            noise = ", within the A/A spread"
    if row.comp == "kweb" and row.fs == "1k":
        want = rps_target(row.wl)
        return "req/s ≥ %gx: %s%s" % (want, "met" if r >= want else "missed",
                                      noise)
    if row.comp == "kweb" and row.fs == "1m":
        mb = row.ratio("mbps")
        cpu = row.cpu_ratio()
        if mb is None or cpu is None:
            return ""
        ok = mb >= 1.0 and cpu < 1.0
        return "MB/s ≥ 1x (%.2f), less CPU/byte (%.2f): %s%s" % (
            mb, cpu, "met" if ok else "missed", noise)
    if row.comp == "handoff":
        return "within 10%%: %s%s" % ("met" if r >= 0.9 else "missed", noise)
    return noise.lstrip(", ")


def resumed_share(cell):
    """The share of the connections the client resumed (httperfr)."""
    v = [r["resumed_share"] for r in cell.runs if "resumed_share" in r]
    return med(v) if v else None


def counters_cell(row):
    """What /proc/net/kweb said about side A."""
    runs = row.a.runs
    if row.comp in TLS_COMPS:
        cell = []
        if runs and "tls_connections" in runs[0].get("kweb_check", {}):
            cell.append("%.0f TLS conns/run" % med(
                [r["kweb_check"]["tls_connections"] for r in runs]))
            td = [r["kwebtlsd"] for r in runs if r.get("kwebtlsd")]
            if td and row.wl != "wrk16" and "resumed_share" in td[0]:
                cell.append("kwebtlsd resumed %s" % pct(
                    med([t["resumed_share"] for t in td])))
        ra, rb = resumed_share(row.a), resumed_share(row.b)
        if ra is not None or rb is not None:
            cell.append("client resumed %s/%s" % (pct(ra), pct(rb)))
        return ", ".join(cell)
    if row.comp == "kweb" and runs:
        served = sum(r["kweb_check"]["served"] for r in runs)
        reqs = sum(r["requests"] for r in runs)
        cell = "served %s" % pct(served / reqs if reqs else None)
        if row.wl.startswith("httperf"):
            # Connections the work item only closed, if at all.
            closed = sum(r["kweb"].get("connections_closed", 0) for r in runs)
            soft = sum(r["kweb"].get("connections_softirq", 0) for r in runs)
            if closed:
                cell += ", softirq-only conns %s" % pct(soft / closed)
        return cell
    if row.comp == "handoff" and runs:
        if row.wl.startswith("httperf"):
            h = sum(r["kweb_check"]["handed_off"] for r in runs)
            reqs = sum(r["requests"] for r in runs)
            cell = "handed off %s" % pct(h / reqs if reqs else None)
            # Moved from softirq, without a work item (newer kweb only).
            soft = [r["kweb"]["handoffs_softirq"] for r in runs
                    if "handoffs_softirq" in r["kweb"]]
            if h and soft:
                cell += ", from softirq %s" % pct(sum(soft) / h)
            return cell
        return "%.0f handoffs/run" % med(
            [r["kweb_check"]["handed_off"] for r in runs])
    return ""


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    return out


def comparison_table(comp, rows, aa_rows):
    first = rows[0]
    na = SERVER_NAMES.get(first.a.server(), first.a.server())
    nb = SERVER_NAMES.get(first.b.server(), first.b.server())
    is_aa = comp in AA_COMPS
    if is_aa:
        na, nb = na + " (A)", nb + " (B)"
    header = ["workload", "files", "%s req/s" % na, "%s req/s" % nb,
              "A/B req/s"] + (["A/A"] if not is_aa else [])
    header += ["%s MB/s" % na, "%s MB/s" % nb,
               "CPU ms/1k req A", "CPU ms/1k req B", "runs A/B",
               "tool busy A/B"]
    if not is_aa:
        header += ["kweb counters", "target"]
    body = []
    for row in rows:
        aa = aa_rows.get((row.wl, row.fs))
        cells = [WORKLOAD_NAMES.get(row.wl, row.wl),
                 FILESET_NAMES.get(row.fs, row.fs),
                 fmt_range(row.a.vals("rps")), fmt_range(row.b.vals("rps")),
                 fmt_ratio(row.ratio(), row.pair_ratios())]
        if not is_aa:
            cells.append(fmt_ratio(aa.ratio(), aa.pair_ratios()) if aa else "-")
        cells += [fmt_range(row.a.vals("mbps")), fmt_range(row.b.vals("mbps")),
                 fmt_num(row.a.median("cpu_ms_per_1k")),
                 fmt_num(row.b.median("cpu_ms_per_1k")),
                 "%d/%d" % (len(row.a.runs), len(row.b.runs)) +
                 (" (%d failed)" % (len(row.a.failed) + len(row.b.failed))
                  if row.a.failed or row.b.failed else ""),
                 "%s/%s%s" % (pct(row.a.tool_user_busy()),
                              pct(row.b.tool_user_busy()),
                              " †" if row.tool_flag() else "")]
        if not is_aa:
            cells += [counters_cell(row), target(row, aa)]
        body.append(cells)
    return md_table(header, body)


def build(meta, runs):
    order_rows = []
    comps = []
    for m in meta:
        for wl, fs in m.get("rows", []) + m.get("tls_rows", []):
            if (wl, fs) not in order_rows:
                order_rows.append((wl, fs))
        for c in m.get("comparisons", []):
            if c not in comps:
                comps.append(c)
    for r in runs:
        if (r["workload"], r["fileset"]) not in order_rows:
            order_rows.append((r["workload"], r["fileset"]))
        if r["comparison"] not in comps:
            comps.append(r["comparison"])
    table = {}
    for c in comps:
        rows = []
        for wl, fs in order_rows:
            rr = [r for r in runs if r["comparison"] == c and
                  r["workload"] == wl and r["fileset"] == fs]
            if rr:
                rows.append(Row(c, wl, fs, rr))
        if rows:
            table[c] = rows
    return table


def aa_spread(aa_rows):
    """Largest deviation from 1 of the A/A medians' ratios, and of single
    rounds' ratios (max(r, 1/r) - 1: the two sides are alike)."""
    med_s = [dev(r.ratio()) for r in aa_rows if r.ratio() is not None]
    pair_s = [dev(x) for r in aa_rows for x in r.pair_ratios() if x > 0]
    return (max(med_s) if med_s else None, max(pair_s) if pair_s else None)


def markdown(meta, runs, table, headline=()):
    m = meta[0] if meta else {}
    lines = ["# kweb benchmark", ""]
    if m:
        lines.append(
            "Kernel %s, %s CPUs%s; nginx: %s; %s; %s. %d round(s) per side, "
            "%ss per timed run after a warm-up of %ss (wrk: the checked "
            "run, at least 1 s)%s." % (
                m.get("kernel"), m.get("cpus"),
                " (%s)" % m["accel"] if m.get("accel") else "",
                m.get("nginx", "?").replace("nginx version: ", ""),
                m.get("wrk", "?").split(" Copyright")[0],
                m.get("httperf", "?").split(" compiled")[0].replace(
                    "httperf: ", ""),
                m.get("rounds", 0), m.get("duration"), m.get("warmup"),
                "; SMOKE MODE: the numbers mean nothing" if m.get("smoke")
                else ""))
        spec = m.get("spec")
        if spec:
            lines.append("SPECweb99 mix as requested: %s of requests "
                         "< 1 KiB, 1–10, 10–100, 100 KiB–1 MiB; mean body "
                         "%.0f bytes." % (" / ".join(
                             "%.0f%%" % (100 * x) for x in spec["class_share"]),
                             spec["mean_size"]))
        lines.append("")
    lines += list(headline)
    for comp, what in (("aa", "nginx against nginx"),
                       ("tls-aa", "HTTPS: nginx with OpenSSL against itself")):
        aa_rows = table.get(comp)
        if not aa_rows:
            continue
        s_med, s_pair = aa_spread(aa_rows)
        if s_med is None:
            lines.append("**A/A spread of this harness** (%s): unknown, no "
                         "A/A round passed its checks." % what)
        else:
            lines.append(
                "**A/A spread of this harness** (%s, same rounds): the "
                "ratios of the medians stay within %s of 1 (either way: r "
                "or 1/r), those of single rounds within %s. Differences "
                "between servers smaller than that are noise."
                % (what, pct(s_med), pct(s_pair)))
        lines.append("")
    busy = [(c.tool_user_busy(), row) for rows in table.values()
            for row in rows for c in (row.a, row.b)
            if c.tool_user_busy() is not None]
    if busy:
        top, row = max(busy, key=lambda x: x[0])
        lines.append(
            "**Load tool check**: the load tool's own user-space code kept "
            "its threads busy at most %s of the time (%s, %s, %s); a row "
            "where it reaches %s is marked †, the tool may limit it. The "
            "rest of the tool's time is the kernel's (its system calls, and "
            "on loopback the TCP work of the server's packets too) or "
            "waiting for the server. Timed wrk runs only count (statuses, "
            "errors, bytes against the responses' lengths): checking each "
            "response makes wrk copy every body, which costs it more than "
            "a server's 1 MiB files do; the checked run of every row and "
            "round is its warm-up." % (
                pct(top), row.comp, WORKLOAD_NAMES.get(row.wl, row.wl),
                FILESET_NAMES.get(row.fs, row.fs), pct(TOOL_BUSY_LIMIT)))
        lines.append("")
    for comp in COMP_ORDER:
        if comp not in table:
            continue
        lines.append("## " + COMP_TITLES[comp])
        lines.append("")
        lines += comparison_table(comp, table[comp], aa_of(table, comp))
        lines.append("")
        if comp == "handoff":
            lines.append(
                "With keep-alive (wrk), only each connection's first request "
                "is handed off; the connection is nginx's from then on, so "
                "those rows compare nginx on handed-off connections with "
                "nginx alone. httperf hands off every request.")
            lines.append("")
    lines += [
        "Columns: median (min–max) over the rounds that passed their "
        "checks; MB/s = 10^6 response bytes (headers and bodies) received "
        "per second; CPU ms/1k req = "
        "the guest's busy CPU time (all CPUs, /proc/stat, load tool "
        "included) per 1000 requests; A/B req/s = ratio of the medians "
        "(min–max of each round's A/B); A/A = the same for nginx against "
        "nginx in this row; tool busy = share of its threads' time the "
        "load tool spent in its own user-space code († where it reaches "
        "%s: the tool may be the limit). Load tool and servers share the "
        "guest's CPUs." % pct(TOOL_BUSY_LIMIT), ""]
    failed = [r for r in runs if not r.get("ok")]
    if failed:
        lines.append("## Failed runs (not timed)")
        lines.append("")
        for r in failed:
            lines.append("- %s round %s side %s (%s) %s %s: %s" % (
                r["comparison"], r["round"], r["side"], r["server"],
                r["workload"], r["fileset"], r.get("why", "?")[:300]))
            ev = r.get("evidence") or {}
            for what in ("kweb", "tcp", "tlsd"):
                if ev.get(what):
                    lines.append("  - %s counters that moved over the row: "
                                 "%s" % (what, ", ".join(
                                     "%s %d" % kv for kv in
                                     sorted(ev[what].items()))))
            if ev.get("tlsd_error"):
                lines.append("  - kwebtlsd: %s" % ev["tlsd_error"][:300])
            if ev.get("error_log"):
                lines.append("  - nginx's error log over the row: `%s`"
                             % ev["error_log"].strip()[-600:]
                             .replace("`", "'").replace("\n", " | "))
        lines.append("")
    return "\n".join(lines)


def chart(table, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (apt-get install python3-matplotlib)"
    comps = [c for c in ("kweb", "handoff", "aa") if c in table]
    keys = []
    for c in comps:
        for r in table[c]:
            if (r.wl, r.fs) not in keys:
                keys.append((r.wl, r.fs))
    labels = ["%s\n%s" % (WORKLOAD_NAMES.get(wl, wl).replace(", ", "\n", 1),
                          FILESET_NAMES.get(fs, fs)) for wl, fs in keys]
    names = {"kweb": "kweb / nginx", "handoff": "nginx behind kweb / nginx",
             "aa": "nginx / nginx (A/A)"}
    colors = {"kweb": "tab:blue", "handoff": "tab:orange", "aa": "tab:gray"}
    fig, axes = plt.subplots(2, 1, figsize=(max(8, 1.1 * len(keys) + 3), 9))
    width = 0.8 / max(1, len(comps))
    for panel, (ax, key, title) in enumerate((
            (axes[0], "rps", "requests/s, ratio to nginx alone"),
            (axes[1], "cpu", "guest CPU time per 1000 requests (ms)"))):
        for i, c in enumerate(comps):
            rows = {(r.wl, r.fs): r for r in table[c]}
            xs, ys, lo, hi = [], [], [], []
            for j, k in enumerate(keys):
                r = rows.get(k)
                if r is None:
                    continue
                if key == "rps":
                    v, pr = r.ratio(), r.pair_ratios()
                else:
                    v = r.a.median("cpu_ms_per_1k")
                    pr = r.a.vals("cpu_ms_per_1k")
                if v is None:
                    continue
                xs.append(j + (i - (len(comps) - 1) / 2) * width)
                ys.append(v)
                # A run missing from a round can leave v outside pr.
                lo.append(max(0, v - min(pr)) if pr else 0)
                hi.append(max(0, max(pr) - v) if pr else 0)
            label = names[c] if key == "rps" else SERVER_NAMES.get(
                table[c][0].a.server(), c) + (" (A/A side A)" if c == "aa" else "")
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=label,
                   color=colors[c])
        if key == "cpu" and "kweb" in table:
            # nginx alone, from the kweb comparison's B side.
            rows = {(r.wl, r.fs): r for r in table["kweb"]}
            xs, ys = [], []
            for j, k in enumerate(keys):
                r = rows.get(k)
                v = r.b.median("cpu_ms_per_1k") if r else None
                if v is not None:
                    xs.append(j)
                    ys.append(v)
            ax.plot(xs, ys, "k_", markersize=28, mew=2,
                    label="nginx alone (kweb comparison)")
            ax.set_yscale("log")
        if key == "rps":
            ax.axhline(1.0, color="black", linewidth=0.8)
            xs, ys = [], []
            for j, (wl, fs) in enumerate(keys):
                if "kweb" in table and fs == "1k":
                    xs.append(j)
                    ys.append(rps_target(wl))
            if xs:
                ax.plot(xs, ys, "r_", markersize=28, mew=2,
                        label="kweb target (req/s)")
        ax.set_title(title)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# Issue 34's goals: nginx's server CPU over kweb's (B/A) at least this.
def cpu_goal(row):
    # Issue 35's, against one nginx each (the one against the cheaper of
    # the two is in the HTTPS section): 2x per keep-alive request at
    # 1 KiB, no more per byte at 1 MiB than nginx with kTLS, no more per
    # new or resumed connection.
    if row.comp in ("tls", "tls-ossl"):
        if row.fs == "1k":
            return 2.0 if row.wl.startswith("wrk") else 1.0
        if row.fs == "1m" and row.comp == "tls":
            return 1.0
        return None
    if row.comp == "kweb" and row.fs == "1k":
        return 2.5 if row.wl.startswith("httperf") else 5.0
    if row.comp == "kweb" and row.fs == "1m":
        return 1 / 0.8
    if row.comp == "handoff":
        return 1 / 1.05
    return None


# The server CPU measures, headline first: its vCPU thread's time on the
# host, the instructions CPU0 executed (bench/qemu/kwebicount.so), the
# guest's own wall less idle.
MEASURES = ("host", "insn", "guest")


def server_key(fs, measure="guest"):
    """The server CPU figure of a file set (per byte for the big file)
    by one of MEASURES: (record key, unit)."""
    if measure == "insn":
        if fs == "1m":
            return "minsn_per_mib", "M insn/MiB"
        return "kinsn_per_req", "k insn/req"
    pre = "host_cpu" if measure == "host" else "server_cpu"
    if fs == "1m":
        return pre + "_ms_per_mib", "ms/MiB"
    return pre + "_ms_per_1k", "ms/1k req"


def profile_section(prof):
    """Where the server's CPU went (bench/cpuprofile.py), by row."""
    if not prof:
        return []
    insn = any(p.get("measure") == "insn" for p in prof)
    if insn:
        how = ("The instructions the server's CPU (CPU0) ran during one "
               "more run of each row and side (first round only), each "
               "block of the kernel's text counted to the function it "
               "starts in (bench/qemu/kwebicount.c), as shares of them "
               "less the idle loop's: kweb.ko's own code, the rest of the "
               "kernel (TCP/IP, scheduler, page cache, system calls), user "
               "space (nginx); then the busiest functions, and the "
               "instructions per request.")
    else:
        how = ("perf's cpu-clock samples of the server's CPU (CPU0) during "
               "one more run of each row and side (first round only), as "
               "shares of its busy samples: kweb.ko's own code, the rest "
               "of the kernel (TCP/IP, scheduler, page cache, system "
               "calls), user space (nginx); then the busiest symbols.")
    lines = ["## Where the server's CPU goes", "", how, ""]
    body = []
    for p in prof:
        who = "%s: %s" % (p["comparison"], SERVER_NAMES.get(p["server"],
                                                          p["server"]))
        row = [who, WORKLOAD_NAMES.get(p["workload"], p["workload"]),
               FILESET_NAMES.get(p["fileset"], p["fileset"])]
        if "error" in p:
            body.append(row + ["-", "-", "-", "-", p["error"][:100]])
            continue
        if p.get("measure") == "insn":
            reqs = p.get("requests") or 0
            per = p["busy_insns"] / reqs if reqs else 0
            size = "%.1f k" % (per / 1e3)
            top = ", ".join("%s %s (%.0f)" % (s, pct(x), x * per)
                            for s, _, x in p["top"][:8])
        else:
            size = ("%d samples" if insn else "%d") % p["busy_samples"]
            top = ", ".join("%s %s" % (s, pct(x)) for s, _, x in p["top"][:5])
        body.append(row + [pct(p["kweb"]), pct(p["kernel"]), pct(p["user"]),
                           size, top])
    lines += md_table(["side", "workload", "files", "kweb", "kernel",
                       "user", "insn/req" if insn else "busy samples",
                       "top functions" if insn else "top symbols"], body)
    lines.append("")
    return lines


def tls_section(table):
    """Issue 35's goals for HTTPS, each row's server CPU of kweb-tls
    against nginx's cheaper configuration (the smaller of nginx-ktls's
    and nginx-tls's medians), over every TLS comparison's runs."""
    rows = [row for c in TLS_COMPS for row in table.get(c, [])]
    if not rows:
        return []
    runs = [r for row in rows for c in (row.a, row.b) for r in c.runs]
    measure = next((m for m in ("host", "guest") if runs and all(
        server_key("1k", m)[0] in r for r in runs)), None)
    if measure is None:
        return []
    order = []
    for row in rows:
        if (row.wl, row.fs) not in order:
            order.append((row.wl, row.fs))
    sides = ("kweb-tls", "nginx-ktls", "nginx-tls")
    body = []
    for wl, fs in order:
        key, unit = server_key(fs, measure)
        if not wl.startswith("wrk"):
            unit = unit.replace("req", "conn")
        vals = {s: [] for s in sides}
        resumed = {s: [] for s in sides}
        for row in rows:
            if (row.wl, row.fs) != (wl, fs):
                continue
            for c in (row.a, row.b):
                for r in c.runs:
                    if key in r and r["server"] in vals:
                        vals[r["server"]].append(r[key])
                    if "resumed_share" in r and r["server"] in resumed:
                        resumed[r["server"]].append(r["resumed_share"])
        k, nk, nt = (med(vals[s]) for s in sides)
        if fs == "1m":
            ref, what, goal = nk, "nginx kTLS", 1.0
        else:
            ref = min([x for x in (nk, nt) if x is not None], default=None)
            what = "cheaper nginx"
            goal = 2.0 if wl.startswith("wrk") else 1.0
        ratio = ref / k if ref and k else None
        verdict = "-"
        if ratio is not None:
            verdict = "%s / kweb ≥ %.0fx: %s" % (
                what, goal, "met" if ratio >= goal else "missed")
        body.append([WORKLOAD_NAMES.get(wl, wl), FILESET_NAMES.get(fs, fs),
                     unit] + [fmt_range(vals[s]) for s in sides] +
                    [fmt_ratio(ratio), verdict,
                     "/".join(pct(med(resumed[s])) if resumed[s] else "-"
                              for s in sides)])
    lines = ["## HTTPS against issue 35's goals", "",
             "Server CPU (%s's figure) of kweb's TLS listener (kwebtlsd "
             "doing the handshake, kweb serving through kTLS), of nginx "
             "with OpenSSL's kTLS and of nginx with OpenSSL alone, median "
             "(min–max) over every TLS comparison's runs; per 1,000 "
             "keep-alive requests for wrk at 1 KiB, per MiB of bodies at "
             "1 MiB, per 1,000 connections (one request each) for httperf "
             "(a full handshake each) and the resumed row (tlsload). "
             "Goals: at 1 KiB with keep-alive, nginx's cheaper "
             "configuration spends at least 2x kweb's CPU; at 1 MiB kweb "
             "spends no more per byte than nginx with kTLS; per new or "
             "resumed connection no more than nginx's cheaper one. "
             "Resumed: the share of the client's connections that resumed "
             "a session, kweb / nginx kTLS / nginx OpenSSL." % measure, ""]
    lines += md_table(["workload", "files", "unit", "kweb", "nginx kTLS",
                       "nginx OpenSSL", "ratio", "goal", "resumed"], body)
    lines.append("")
    return lines


def own_share(row):
    """The share of the server's instructions in its own module's code
    (kweb.ko, kwebfloor.ko), A/B, median over the rounds; "-" for nginx."""
    out = []
    for c in (row.a, row.b):
        v = [r["insn_module_share"] for r in c.runs
             if r.get("module") and r.get("insn_module_share") is not None]
        out.append(pct(med(v)) if v else "-")
    return "/".join(out)


def segments_section(table):
    """TCP segments the server sent and received per request, by side:
    the packet exchange each design makes (response and FIN together,
    ACKs carried or on their own)."""
    body = []
    for comp in ("kweb", "handoff", "floor", "aa") + TLS_COMPS:
        for row in table.get(comp, []):
            cells = []
            for c in (row.a, row.b):
                o = [r["segs_out_per_req"] for r in c.runs
                     if "segs_out_per_req" in r]
                i = [r["segs_in_per_req"] for r in c.runs
                     if "segs_in_per_req" in r]
                d = [r["server_segs"].get("DelayedACKs", 0) / r["requests"]
                     for r in c.runs if "server_segs" in r]
                cells += ["%.2f / %.2f" % (med(o), med(i)) if o else "-",
                          "%.3f" % med(d) if d else "-"]
            if any(x != "-" for x in cells):
                body.append([comp, WORKLOAD_NAMES.get(row.wl, row.wl),
                             FILESET_NAMES.get(row.fs, row.fs)] + cells)
    if not body:
        return []
    lines = ["## Segments per request, the server's", "",
             "TCP segments the server sent / received per request "
             "(/proc/net/snmp of the server's namespace; the client has "
             "its own), and its delayed ACKs (ACK-only segments sent by "
             "the delayed-ACK timer), median over the rounds.", ""]
    lines += md_table(["comparison", "workload", "files", "A out / in",
                       "A delayed ACKs", "B out / in", "B delayed ACKs"],
                      body)
    lines.append("")
    return lines


def functions_section(runs, top=8):
    """Where the module's own instructions went, by function (first
    round's runs, bench/qemu/kwebicount.so's block records)."""
    rows = [r for r in runs if r.get("ok") and r.get("module_functions")]
    if not rows:
        return []
    lines = ["## kweb's own instructions, by function", "",
             "The server CPU's instructions in the side's module, by the "
             "function each translated block starts in (first round), as "
             "shares of the module's own; own code is the module's share "
             "of all the server's instructions.", ""]
    body = []
    for r in rows:
        own = r.get("insn_module_share")
        body.append([
            "%s: %s" % (r["comparison"], SERVER_NAMES.get(r["server"],
                                                         r["server"])),
            WORKLOAD_NAMES.get(r["workload"], r["workload"]),
            FILESET_NAMES.get(r["fileset"], r["fileset"]),
            pct(own) if own is not None else "-",
            ", ".join("%s %s" % (f, pct(x))
                      for f, x in r["module_functions"][:top])])
    lines += md_table(["side", "workload", "files", "own code",
                       "functions"], body)
    lines.append("")
    return lines


def server_cpu_section(table, cal):
    """The headline: the server's CPU (CPU0, exact) per request, kweb
    against nginx, with the A/A spread of the same figure in each row."""
    if not any(r.get("server_cpu_ms_per_1k") is not None
               for rows in table.values() for row in rows
               for r in row.a.runs + row.b.runs):
        return []
    # A measure is shown when every run has it; the first shown heads.
    shown = [m for m in MEASURES
             if all(server_key("1k", m)[0] in r for rows in table.values()
                    for row in rows for r in row.a.runs + row.b.runs)]
    shown = shown or ["guest"]
    host = "host" in shown
    lines = ["## Server CPU per request (the headline)", ""]
    if cal:
        ratio = [c["measured_over_spin"] for c in cal
                 if c.get("measured_over_spin")]
        quiet = [c["quiet_busy_per_s"] * 1000 for c in cal]
        samp = [c["sampled"] / c["spin_wall"] for c in cal if c["spin_wall"]]
        lines += [
            "The client runs on CPU1 in a network namespace of its own "
            "behind a veth pair; the server (nginx's one worker, kweb's "
            "work items, the receive softirq of its packets, steered by "
            "RPS) on CPU0. Server CPU = CPU0's wall time less its idle "
            "time (exact; /proc/stat's tick-sampled busy fields are not). "
            "Calibration, %d times: a spin on CPU0 read %s of its wall "
            "time (tick-sampled: %s); a quiet CPU0 was busy %s ms/s." % (
                len(cal), fmt_range(ratio), fmt_range(samp),
                fmt_range(quiet)), ""]
        hs = [c["host_over_spin"] for c in cal if c.get("host_over_spin")]
        if host and hs:
            hq = [c["host_quiet_per_s"] * 1000 for c in cal
                  if c.get("host_quiet_per_s") is not None]
            lines += [
                "The figures below are the host's: the CPU time of the "
                "server's vCPU thread (QEMU's \"CPU 0/TCG\"), which a vCPU "
                "the host preempts does not accrue, while inside the guest "
                "the preempted time looks busy. The same spin cost its "
                "thread %s of its wall time on the host; a quiet CPU0 %s "
                "ms/s. The guest's own figure (wall less idle) is the "
                "\"guest\" columns." % (fmt_range(hs), fmt_range(hq)), ""]
    if "insn" in shown:
        ispin = [c["insn_spin_per_s"] / 1e6 for c in cal
                 if c.get("insn_spin_per_s")]
        iquiet = [c["insn_quiet_per_s"] / 1e6 for c in cal
                  if c.get("insn_quiet_per_s") is not None]
        lines += [
            "Instructions: the spin executed %s M/s on CPU0, a quiet CPU0 "
            "%s M/s." % (fmt_range(ispin), fmt_range(iquiet)), ""]
        lines += [
            "The \"insn\" columns count instructions: those CPU0 "
            "executed, counted by a QEMU plugin (bench/qemu/kwebicount.so) "
            "as the guest runs them. No clock is in them; they weigh every "
            "instruction alike, where TCG makes system calls, exceptions "
            "and page walks far dearer than hardware does (which flatters "
            "kernel-side serving in the CPU times): the instructions' "
            "ratio is the one less flattering to kweb.", ""]
    header = ["comparison", "workload", "files", "unit", "A", "B",
              "B/A (rounds)", "A/A (rounds)", "A/A spread", "req/s A/B",
              "client CPU A/B", "goal"]
    header[-1:-1] = [h for m in shown[1:] for h in
                     ("%s B/A" % m, "%s A/A spread" % m)]
    if "insn" in shown:
        header[-1:-1] = ["own code A/B"]
    body = []
    for comp in ("kweb", "handoff", "floor", "aa") + TLS_COMPS:
        aa_rows = aa_of(table, comp)
        for row in table.get(comp, []):
            key, unit = server_key(row.fs, shown[0])
            pairs = [1 / x for x in row.pair_ratios(key) if x]
            aa = aa_rows.get((row.wl, row.fs))
            aap = aa.pair_ratios(key) if aa else []
            spread = dev(med(aap)) if aap else None
            others = []
            for m in shown[1:]:
                mkey, _ = server_key(row.fs, m)
                mpairs = [1 / x for x in row.pair_ratios(mkey) if x]
                maap = aa.pair_ratios(mkey) if aa else []
                others += [fmt_ratio(med(mpairs)) if mpairs else "-",
                           pct(dev(med(maap))) if maap else "-"]
            goal = cpu_goal(row)
            verdict = ""
            if goal and pairs:
                verdict = "≥ %.2fx: %s" % (goal, "met" if med(pairs) >= goal
                                           else "missed")
            cli = ["%.0f%%" % (100 * med(c.vals("client_cpu_util")))
                   if c.runs and "client_cpu_util" in c.runs[0] else "-"
                   for c in (row.a, row.b)]
            body.append([
                comp, WORKLOAD_NAMES.get(row.wl, row.wl),
                FILESET_NAMES.get(row.fs, row.fs), unit,
                fmt_range([r[key] for r in row.a.runs if key in r]),
                fmt_range([r[key] for r in row.b.runs if key in r]),
                fmt_ratio(med(pairs), pairs) if pairs else "-",
                fmt_ratio(med(aap), aap) if aap else "-",
                pct(spread), fmt_ratio(row.ratio()), "/".join(cli)] +
                others + ([own_share(row)] if "insn" in shown else []) +
                [verdict])
    lines += md_table(header, body)
    lines += ["", "A and B: server CPU, median (min–max) over the rounds; "
              "B/A: the median of each round's B over A (for kweb and "
              "handoff, nginx alone over kweb: how many times kweb's CPU "
              "nginx spends; for the floor, kweb over the floor: how many "
              "times the least responder of kweb's design kweb spends); "
              "A/A: the same for nginx against nginx in the "
              "same row, and its spread, how far its median is from 1. "
              "Client CPU: CPU1 busy, wall less idle (near 100%: the client "
              "was the limit of the rate, not of the CPU figure)." +
              (" Own code: the share of the server's instructions that ran "
               "in the side's module (kweb.ko; the floor's kwebfloor.ko), "
               "by where each translated block starts; the rest is the "
               "kernel's TCP/IP, scheduler and page cache work (and "
               "nginx's user space). Goal for kweb: at most 15%."
               if "insn" in shown else ""), ""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("jsonl", nargs="+")
    ap.add_argument("--out", help="directory for bench.md and bench.png "
                    "(default: the first file's)")
    ap.add_argument("--no-png", action="store_true")
    args = ap.parse_args()
    meta, runs, idle, cal, prof = load(args.jsonl)
    if not runs:
        raise SystemExit("no runs in %s" % " ".join(args.jsonl))
    table = build(meta, runs)
    text = markdown(meta, runs, table, server_cpu_section(table, cal) +
                    tls_section(table)) + \
        "\n".join([""] + segments_section(table) + functions_section(runs) +
                  profile_section(prof) + idle_section(idle))
    out = args.out or os.path.dirname(os.path.abspath(args.jsonl[0]))
    os.makedirs(out, exist_ok=True)
    md = os.path.join(out, "bench.md")
    with open(md, "w") as f:
        f.write(text + "\n")
    print(text)
    print("report: %s" % md, flush=True)
    if not args.no_png:
        png = os.path.join(out, "bench.png")
        err = chart(table, png)
        if err:
            print("report: no chart: %s" % err, file=sys.stderr)
        else:
            print("report: %s" % png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
