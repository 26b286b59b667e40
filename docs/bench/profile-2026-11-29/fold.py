#!/usr/bin/env python3
"""Summarize profile.sh's bpftrace stacks: share of samples by command,
user or kernel, the hottest kernel functions (self), and the inclusive
share of the functions named on the command line (or a default list).

    fold.py OUT [FUNC ...]

OUT holds SIDE.stacks (or SIDE.stacks.gz) for kweb, nginx and handoff.
"""
import collections
import gzip
import os
import re
import sys

DEFAULT = ["kweb_conn_event", "kweb_conn_read", "kweb_http_parse",
           "kweb_http_head_ready", "kweb_request_cached", "kweb_path_normalize",
           "kweb_cache_lookup", "kweb_reply_body", "kweb_resp_format",
           "kweb_http_date_format", "kweb_send_response", "kweb_recv_peek",
           "kweb_recv_consume", "kweb_conn_response_done", "kweb_log_begin",
           "kweb_log_end", "__kmalloc_noprof", "krealloc_noprof", "kfree",
           "mod_timer", "tcp_sendmsg_locked", "tcp_push", "tcp_v4_rcv",
           "net_rx_action", "tcp_recvmsg", "tcp_sendmsg", "do_epoll_wait",
           "__schedule", "ksys_read", "ksys_write", "do_syscall_64"]
ENTRY = re.compile(r"^@\[(\S+), ?$")
USER = re.compile(r"^@\[(\S+), \]: (\d+)$")


def parse(path):
    stacks = []
    comm, frames = None, []
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            m = USER.match(line)
            if m:
                stacks.append((m.group(1), [], int(m.group(2))))
                continue
            m = ENTRY.match(line)
            if m:
                comm, frames = m.group(1), []
                continue
            if comm is None:
                continue
            if line.startswith("]:"):
                stacks.append((comm, frames, int(line.split()[-1])))
                comm = None
                continue
            parts = line.split()
            if len(parts) >= 2:
                frames.append(parts[1].split("+")[0])
    return stacks


def report(side, stacks, funcs):
    total = sum(n for _, _, n in stacks)
    by_comm = collections.Counter()
    user = collections.Counter()
    self_ = collections.Counter()
    incl = collections.Counter()
    for comm, frames, n in stacks:
        by_comm[comm] += n
        if not frames:
            user[comm] += n
            continue
        self_[frames[0]] += n
        for fn in set(frames):
            incl[fn] += n
    print(f"== {side}: {total} samples")
    for comm, n in by_comm.most_common(8):
        print(f"  {comm:16} {100 * n / total:5.1f}%  (user {100 * user[comm] / total:4.1f}%)")
    print("  self, top 25:")
    for fn, n in self_.most_common(25):
        print(f"    {100 * n / total:5.1f}%  {fn}")
    print("  inclusive:")
    for fn in funcs:
        if incl[fn]:
            print(f"    {100 * incl[fn] / total:5.1f}%  {fn}")
    kweb = sum(n for _, fr, n in stacks if any(f.startswith("kweb_") for f in fr))
    print(f"    {100 * kweb / total:5.1f}%  any kweb_* frame")


def main():
    out = sys.argv[1]
    funcs = sys.argv[2:] or DEFAULT
    for side in ("kweb", "nginx", "handoff"):
        for path in (f"{out}/{side}.stacks", f"{out}/{side}.stacks.gz"):
            if os.path.exists(path):
                report(side, parse(path), funcs)
                break


if __name__ == "__main__":
    main()
