#!/usr/bin/env python3
"""scripts/tls-judge.sh's verdict, from what it left in RESULTS_DIR:
testssl-{kweb,nginx}.json (testssl.sh --jsonfile), {kweb,nginx}.png and
{kweb,nginx}.dom.html (headless Chromium). Prints TAP-like lines, writes
RESULTS_DIR/judge.md, exits 0 iff every check passed.

  tls_judge_report.py RESULTS_DIR
"""

import html
import json
import os
import re
import sys

# testssl.sh's severities, least to most.
RANK = {"DEBUG": 0, "OK": 0, "INFO": 1, "LOW": 2, "WARN": 2, "MEDIUM": 3,
        "HIGH": 4, "CRITICAL": 5, "FATAL": 6}
# What the site's own page says once its script ran (examples/www).
TITLE = "kweb — a static file server in the Linux kernel"
SCRIPT_RAN = re.compile(r"It knows \d+ tricks")
# The page shows the time it was loaded: that much may differ.
MAX_DIFF = 0.02

failed = 0
md = []


def result(good, name, detail=""):
    global failed
    print("%s - %s" % ("ok" if good else "not ok", name))
    if not good:
        failed += 1
        for line in detail.splitlines():
            print("# " + line)
    md.append("- %s %s%s" % ("✅" if good else "❌", name,
                             (": " + detail) if detail and not good else ""))


def findings(path):
    """id -> (severity, finding) of one scan."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return None, str(e)
    out = {}
    for item in data:
        out[item["id"]] = (item.get("severity", "INFO"),
                           item.get("finding", ""))
    return out, ""


def compare_scans(res):
    kweb, err_k = findings(os.path.join(res, "testssl-kweb.json"))
    nginx, err_n = findings(os.path.join(res, "testssl-nginx.json"))
    if kweb is None or nginx is None:
        result(False, "testssl.sh results of both", err_k or err_n)
        return
    extra, differ = [], []
    for fid, (sev, text) in sorted(kweb.items()):
        theirs = nginx.get(fid)
        if RANK.get(sev, 1) >= RANK["LOW"] and (
                theirs is None or RANK.get(theirs[0], 1) < RANK[sev]):
            extra.append("%s %s: %s (nginx: %s)" % (
                sev, fid, text, "%s %s" % theirs if theirs else "none"))
        elif theirs is not None and theirs != (sev, text):
            differ.append((fid, sev, text, theirs[0], theirs[1]))
    rated = sum(1 for s, _ in kweb.values() if RANK.get(s, 1) >= RANK["LOW"])
    result(not extra, "testssl.sh: no finding above INFO for kweb that "
           "nginx does not have too (kweb %d above INFO, nginx %d)" % (
               rated, sum(1 for s, _ in nginx.values()
                          if RANK.get(s, 1) >= RANK["LOW"])),
           "\n".join(extra))
    md.append("")
    md.append("Findings above INFO (kweb | nginx):")
    md.append("")
    md.append("| id | kweb | nginx |")
    md.append("|---|---|---|")
    for fid in sorted(set(kweb) | set(nginx)):
        k, n = kweb.get(fid, ("-", "")), nginx.get(fid, ("-", ""))
        if max(RANK.get(k[0], 1), RANK.get(n[0], 1)) >= RANK["LOW"]:
            md.append("| %s | %s %s | %s %s |" % (fid, k[0], k[1][:60],
                                                 n[0], n[1][:60]))
    md.append("")
    md.append("Other findings that differ:")
    md.append("")
    md.append("| id | kweb | nginx |")
    md.append("|---|---|---|")
    for fid, s1, t1, s2, t2 in differ:
        md.append("| %s | %s %s | %s %s |" % (fid, s1, t1[:70], s2, t2[:70]))
    md.append("")


def compare_pages(res):
    try:
        from PIL import Image, ImageChops
    except ImportError:
        result(False, "Chromium screenshots compared", "no PIL (python3-pil)")
        return
    dom = ""
    try:
        with open(os.path.join(res, "kweb.dom.html"), encoding="utf-8") as f:
            dom = html.unescape(f.read())
    except OSError as e:
        dom = str(e)
    result(TITLE in dom and SCRIPT_RAN.search(dom) is not None,
           "Chromium, trusting the test CA, loads the site from kweb: its "
           "title, and what its script fetched", dom[:400])
    try:
        a = Image.open(os.path.join(res, "kweb.png")).convert("RGB")
        b = Image.open(os.path.join(res, "nginx.png")).convert("RGB")
    except OSError as e:
        result(False, "Chromium screenshots of both", str(e))
        return
    if a.size != b.size:
        result(False, "screenshots the same size", "%r %r" % (a.size, b.size))
        return
    diff = ImageChops.difference(a, b)
    n = sum(1 for px in diff.getdata() if px != (0, 0, 0))
    share = n / float(a.size[0] * a.size[1])
    colours = len(a.getcolors(1 << 20) or [])
    result(share <= MAX_DIFF and colours > 8,
           "kweb's page looks as nginx's: %.3f%% of pixels differ (bbox %s), "
           "%d colours" % (100 * share, diff.getbbox(), colours))


def main():
    res = sys.argv[1]
    md.append("# kweb's HTTPS against nginx's, judged from outside")
    md.append("")
    compare_scans(res)
    compare_pages(res)
    with open(os.path.join(res, "judge.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
