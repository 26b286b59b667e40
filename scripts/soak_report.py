#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The soak's report (scripts/soak.sh), in Markdown, from the guest's
results:

    soak_report.py RUN_DIR [--out FILE] [--command TEXT]

RUN_DIR holds soak.json (tests/soak.py assemble) and guest.log (the
guest's test lines and diagnostics, scripts/vm.sh). Writes FILE (default
RUN_DIR/soak.md) and prints it. Exit status 0 iff the report was made,
whatever it says.
"""

import argparse
import json
import os
import sys

COMPONENTS = [
    ("wrk", "keep-alive GETs of six files (120 B to 300 KB), every "
            "response compared byte for byte (tests/wrk/soak.lua)"),
    ("handoff", "tests/handoff_test.py's exchanges in a loop: POST, PUT, "
                "chunked and 100-continue bodies, queries, /api/ /dyn/ *.php, "
                "WebSocket, HTTP/2 preface, keep-alive and pipelined switches "
                "from kweb to nginx; exact bodies"),
    ("churn", "four files rewritten in place, resized, renamed over, "
              "unlinked and recreated every 0.2 s while four clients GET "
              "them: every body one of the versions that existed"),
    ("ctl", "kwebctl config set (keepalive-timeout, send-timeout, "
            "cache-size, cache-max-file, max-requests flipped), config get, "
            "cache flush, stats, every second"),
    ("slowloris", "tests/hardening_test.py's slowloris rounds back to back: "
                  "slow connections trickling a head must be closed at "
                  "header_timeout while a normal client is answered"),
]


def counts_text(c):
    return ", ".join("%s %s" % (k, v) for k, v in sorted(c.items())) or "-"


def failure_blocks(guest_log):
    """Each "not ok" line of the guest with the "# " lines after it."""
    blocks, cur = [], None
    try:
        with open(guest_log, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return blocks
    for line in lines:
        if line.startswith("not ok"):
            cur = [line]
            blocks.append(cur)
        elif line.startswith("ok"):
            cur = None
        elif cur is not None and line.startswith("#") and len(cur) < 60:
            cur.append(line)
    return blocks


def report(run_dir, command):
    with open(os.path.join(run_dir, "soak.json")) as f:
        s = json.load(f)
    out = []
    w = out.append
    verdict = "passed" if s["failed"] == 0 else "FAILED"
    w("# Soak: %s" % s["tag"])
    w("")
    w("`%s`, %s to %s (UTC): every component below at once for %d s on "
      "kernel `%s` (QEMU TCG, 2 vCPUs, 2 GiB), kweb on port 80 with "
      "nginx behind it on 8080." % (command, s["started"] or "?",
                                    s["ended"] or "?", s["seconds"],
                                    s["kernel"]))
    w("")
    w("**%s**: %d test lines passed, %d failed. kmemleak: %s." % (
        verdict, s["passed"], s["failed"],
        "on (scanned after the soak)" if s["kmemleak"]
        else "not in this kernel"))
    w("")
    w("## Components")
    w("")
    w("| component | what | counts | failures | verdict |")
    w("|---|---|---|---|---|")
    for name, what in COMPONENTS:
        c = s["components"].get(name, {})
        w("| %s | %s | %s | %s | %s |" % (
            name, what, counts_text(c.get("counts", {})),
            c.get("failures", "?"), "ok" if c.get("ok") else "**not ok**"))
    w("")
    w("## Test lines")
    w("")
    for t in s["tests"]:
        w("- %s %s" % ("ok" if t["ok"] else "**not ok**",
                       t["name"].replace("|", "\\|")))
    w("")
    blocks = failure_blocks(os.path.join(run_dir, "guest.log"))
    firsts = [(n, c["first_failures"]) for n, c in s["components"].items()
              if c.get("first_failures")]
    if blocks or firsts:
        w("## Failures")
        w("")
        for b in blocks:
            w("```")
            w("\n".join(b))
            w("```")
            w("")
        for name, first in firsts:
            w("First failures of %s:" % name)
            w("")
            w("```")
            w("\n".join(first))
            w("```")
            w("")
    start = (s["proc"].get("start") or {}).get("counters", {})
    end = (s["proc"].get("end") or {}).get("counters", {})
    closed = (s["proc"].get("closed") or {}).get("counters", {})
    if end:
        w("## kweb's counters")
        w("")
        w("`/proc/net/kweb` when the clients started, when they ended, and "
          "once every connection had closed (before `rmmod`).")
        w("")
        w("| counter | start | end | closed |")
        w("|---|---:|---:|---:|")
        for k in end:
            w("| %s | %s | %s | %s |" % (k, start.get(k, ""), end[k],
                                         closed.get(k, "")))
        w("")
        for line in (s["proc"].get("end") or {}).get("listeners", []):
            w("    " + line)
        w("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--out")
    ap.add_argument("--command", default="make soak")
    args = ap.parse_args()
    try:
        text = report(args.run_dir, args.command)
    except (OSError, ValueError, KeyError) as e:
        print("soak_report: %s" % e, file=sys.stderr)
        return 1
    out = args.out or os.path.join(args.run_dir, "soak.md")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
