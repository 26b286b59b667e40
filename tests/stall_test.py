#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A docroot that never answers holds only its own listener: a tenant
whose FUSE daemon stops (SIGSTOP) keeps its listener's requests waiting,
and nothing of another listener or namespace waits with them. Run in a
guest as root with kweb loaded, serving --docroot on --port in the
initial namespace (tests/guest/integration.sh, suite stall).

The tenant is a network namespace of its own, with a listener on
--tenant-port serving a bindfs (FUSE) mount of a directory under
--base. Its requests then wait on the stopped daemon; the initial
namespace's listener must still serve files it has not cached, its
control must go on, the tenant's listener-del must not wait under any
lock of kweb's, its namespace's exit must not begin while its runs wait
(every namespace's exit on the host would wait behind it), and all of
it must end once the daemon runs again. With --rmmod-cmd, last, kweb is
unloaded under runs waiting on the stopped daemon: the unload waits for
them, and no namespace's creation or exit waits with it.
"""

import json
import os
import re
import resource
import signal
import socket
import struct
import subprocess
import sys
import time

import taplib

TESTS = taplib.Suite()
args = None
NS = "kweb-stall"
# Another tenant's, deleted while the first one's runs wait.
NS2 = "kweb-stall-other"
# The ends, in this namespace, of veth pairs into NS and NS2.
VETH, VETH2 = "kwst0", "kwso0"
# KWEB_SERVER_RUNS (kmod/kweb.h): a listener's runs at a time.
RUNS = 32
# Requests left waiting on the stopped daemon: more than the 256 runs
# the module's one shared workqueue used to allow, so that they would
# have taken every run of every listener.
WAITING = 300
# How long a thing that must not wait may take (a debug guest is slow).
PROMPT = 30.0

state = {"fuse": None, "lid": None, "socks": [], "stopped": False,
         "mnt": None}


def body_of(i):
    return b"stall file %d\n" % i * 64


def socket_in(path):
    """A TCP socket made in the network namespace at path, or in this
    thread's own if path is None."""
    if path is None:
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    return taplib.socket_in_netns(path)


def ns_path():
    return "/run/netns/" + NS


def send_get(ns, port, target):
    s = socket_in(ns)
    s.settimeout(PROMPT)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET %s HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
              % target.encode())
    return s


def read_all(s):
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return data
            data += d
    finally:
        s.close()


def get(ns, port, target):
    """(status line, body) of a GET, within PROMPT seconds."""
    try:
        data = read_all(send_get(ns, port, target))
    except socket.timeout:
        raise taplib.Fail("GET %s on port %d: no answer within %.0f s" %
                          (target, port, PROMPT))
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0], body


def check_get(ns, port, target, want):
    status, body = get(ns, port, target)
    taplib.check(status == b"HTTP/1.1 200 OK" and body == want,
                 "GET %s on port %d: %r, %d body bytes" %
                 (target, port, status, len(body)))


def kwebctl(*argv, ns=None, timeout=PROMPT):
    """kwebctl argv (in namespace ns): its stdout; a Fail if it does not
    end within timeout. A call stuck in the kernel cannot be killed, so
    it is left running, not waited for."""
    cmd = [args.kwebctl] + list(argv)
    if ns:
        cmd = ["ip", "netns", "exec", ns] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise taplib.Fail("%s: still running after %.0f s" %
                          (" ".join(argv), timeout))
    taplib.check(p.returncode == 0, "%s: status %d: %s" %
                 (" ".join(argv), p.returncode, err.strip()))
    return out


def workers(pattern):
    """Kernel threads whose name (a worker's shows the workqueue of the
    work it runs, "kworker/u4:2+kweb-8111") matches pattern: their pids."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith("kworker/") and re.search(pattern, comm):
            pids.append(int(pid))
    return pids


def tenant_workers():
    # The module's shared workqueue was "kweb": count it too.
    return workers(r"\+kweb(-%d)?$" % args.tenant_port)


def stack_has(pid, func):
    try:
        with open("/proc/%d/stack" % pid) as f:
            return func in f.read()
    except OSError:
        return False


def wait_for(cond, what, timeout=PROMPT):
    return taplib.wait_for(cond, what, timeout)


def proc_kweb(ns):
    out = subprocess.run(["ip", "netns", "exec", ns, "cat", "/proc/net/kweb"],
                         capture_output=True, text=True, timeout=PROMPT,
                         check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines()
                                   if len(line.split()) == 2)}


def fuse_signal(sig):
    os.kill(state["fuse"].pid, sig)
    state["stopped"] = sig == signal.SIGSTOP


@TESTS.test("both listeners serve: the tenant's from FUSE, the initial "
            "namespace's")
def both_serve():
    check_get(ns_path(), args.tenant_port, "/f0.txt", body_of(0))
    with open(os.path.join(args.docroot, "stall-b0.txt"), "wb") as f:
        f.write(body_of(0))
    check_get(None, args.port, "/stall-b0.txt", body_of(0))


@TESTS.test("FUSE daemon stopped: %d requests of the tenant's wait on it, "
            "in %d runs of its listener's" % (WAITING, RUNS))
def tenant_waits():
    fuse_signal(signal.SIGSTOP)
    for i in range(1, WAITING + 1):
        state["socks"].append(send_get(ns_path(), args.tenant_port,
                                       "/f%d.txt" % i))

    def runs():
        n = len(tenant_workers())
        return n >= RUNS, "%d runs" % n
    wait_for(runs, "the tenant's runs waiting")
    # Every other request waits for a run, not for a thread of its own.
    time.sleep(2)
    n = len(tenant_workers())
    taplib.check(n == RUNS, "%d runs wait on the stopped daemon, not %d" %
                 (n, RUNS))
    for s in state["socks"]:
        s.setblocking(False)
        try:
            d = s.recv(1)
        except BlockingIOError:
            continue
        raise taplib.Fail("a request answered by a stopped daemon: %r" % d)


@TESTS.test("meanwhile the initial namespace's listener serves a file it "
            "has not cached")
def other_serves():
    with open(os.path.join(args.docroot, "stall-b1.txt"), "wb") as f:
        f.write(body_of(1))
    check_get(None, args.port, "/stall-b1.txt", body_of(1))


@TESTS.test("the tenant's listener-del returns; its port is closed, its "
            "connections still counted as they close")
def tenant_del():
    before = proc_kweb(NS)
    kwebctl("listener", "del", str(state["lid"]), ns=NS)
    state["lid"] = None
    s = socket_in(ns_path())
    s.settimeout(PROMPT)
    try:
        s.connect(("127.0.0.1", args.tenant_port))
        raise taplib.Fail("the deleted listener's port still accepts")
    except ConnectionRefusedError:
        pass
    finally:
        s.close()
    after = proc_kweb(NS)
    taplib.check(after["listeners"] == 0, "listeners %d" % after["listeners"])
    # No counter dips while the connections close (a Prometheus reset).
    dips = [k for k in before if k in after and after[k] < before[k] and
            k not in ("listeners", "port")]
    taplib.check(not dips, "counters went down at the del: %s" %
                 ", ".join("%s %d -> %d" % (k, before[k], after[k])
                           for k in dips))
    taplib.check(after["connections_open"] == WAITING,
                 "connections_open %d, %d waiting" %
                 (after["connections_open"], WAITING))


@TESTS.test("control in the initial namespace goes on: a listener added, "
            "serving, deleted")
def other_control():
    control_elsewhere("stall-b2.txt", body_of(2))


def control_elsewhere(name, body):
    port = args.port + 20
    out = kwebctl("-j", "listener", "add", "port", str(port), "docroot",
                  args.docroot)
    lid = json.loads(out)[0]["id"]
    try:
        with open(os.path.join(args.docroot, name), "wb") as f:
            f.write(body)
        check_get(None, port, "/" + name, body)
    finally:
        kwebctl("listener", "del", str(lid))


@TESTS.test("the tenant's namespace deleted: it lives on while its runs "
            "wait, and another namespace's exit ends meanwhile")
def tenant_exit():
    # The clients' sockets hold the namespace: its exit starts once they
    # are gone, reset rather than left to finish (FIN_WAIT2 for 60 s).
    for s in state["socks"]:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    state["socks"] = []
    subprocess.run(["ip", "netns", "del", NS], check=True, timeout=PROMPT)
    # Every namespace of the host exits in one work item, in turn: had
    # the tenant's exit begun and waited on its daemon, this one's would
    # wait behind it (its veth would stay).
    another_namespace_freed("")
    taplib.check(link_exists(VETH), "the tenant's namespace was freed "
                 "(%s gone) while its runs wait" % VETH)
    ex = [p for p in workers(r"\+netns$")
          if stack_has(p, "kweb_servers_net_exit")]
    taplib.check(not ex, "a netns worker waits in kweb_servers_net_exit")
    control_elsewhere("stall-b3.txt", body_of(3))


@TESTS.test("FUSE daemon running again: the tenant's runs end, then its "
            "namespace's exit")
def tenant_ends():
    fuse_signal(signal.SIGCONT)

    def gone():
        n, freed = len(tenant_workers()), not link_exists(VETH)
        return not n and freed, "%d runs left, namespace %s" % (
            n, "freed" if freed else "not freed")
    wait_for(gone, "after SIGCONT", timeout=3 * PROMPT)
    check_get(None, args.port, "/stall-b0.txt", body_of(0))


def unload_stalled():
    """With --rmmod-cmd, last: the unload waits for runs in a stopped
    daemon, and for nothing else; no namespace's creation or exit waits
    behind it (pernet_ops_rwsem)."""
    port = args.port + 21
    kwebctl("listener", "add", "port", str(port), "docroot", state["mnt"])
    fuse_signal(signal.SIGSTOP)
    for i in range(1, RUNS + 1):
        state["socks"].append(send_get(None, port, "/f%d.txt" % i))

    def runs():
        n = len(workers(r"\+kweb-%d$" % port))
        return n >= RUNS, "%d runs" % n
    wait_for(runs, "runs waiting on the stopped daemon")
    unload = subprocess.Popen(args.rmmod_cmd, shell=True,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    time.sleep(2)
    taplib.check(unload.poll() is None, "the unload did not wait for the "
                 "runs: %s" % unload.poll())
    another_namespace_freed(", the unload waiting")
    fuse_signal(signal.SIGCONT)
    try:
        out, _ = unload.communicate(timeout=3 * PROMPT)
    except subprocess.TimeoutExpired:
        raise taplib.Fail("the unload still runs %.0f s after SIGCONT"
                          % (3 * PROMPT))
    taplib.check(unload.returncode == 0, "%s: status %d: %s" %
                 (args.rmmod_cmd, unload.returncode, out.strip()))


def another_namespace_freed(why):
    """NS2 made, with a veth into it, and deleted: each step within PROMPT
    and the namespace freed (its veth gone) soon after, else a Fail."""
    for cmd in (["ip", "netns", "add", NS2],
                ["ip", "link", "add", VETH2, "type", "veth", "peer", "name",
                 "kwso1", "netns", NS2],
                ["ip", "netns", "del", NS2]):
        try:
            subprocess.run(cmd, check=True, timeout=PROMPT)
        except subprocess.TimeoutExpired:
            raise taplib.Fail("%s did not end within %.0f s%s" %
                              (" ".join(cmd), PROMPT, why))

    def gone():
        return not link_exists(VETH2), "%s still there" % VETH2
    # A namespace's exit runs hundreds of operations: slow on KASAN.
    wait_for(gone, "the other namespace's exit" + why, timeout=3 * PROMPT)


def link_exists(name):
    return os.path.exists("/sys/class/net/" + name)


def setup():
    src = os.path.join(args.base, "stall-src")
    mnt = os.path.join(args.base, "stall-mnt")
    os.makedirs(src, exist_ok=True)
    os.makedirs(mnt, exist_ok=True)
    for i in range(WAITING + 1):
        with open(os.path.join(src, "f%d.txt" % i), "wb") as f:
            f.write(body_of(i))
    state["fuse"] = subprocess.Popen(["bindfs", "-f", src, mnt])
    deadline = time.monotonic() + PROMPT
    while not os.path.ismount(mnt):
        if time.monotonic() > deadline or state["fuse"].poll() is not None:
            raise RuntimeError("bindfs did not mount %s" % mnt)
        time.sleep(0.1)
    subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "add", NS], check=True)
    subprocess.run(["ip", "-n", NS, "link", "set", "lo", "up"], check=True)
    # Its end here goes when the namespace is freed.
    subprocess.run(["ip", "link", "add", VETH, "type", "veth", "peer",
                    "name", "kwst1", "netns", NS], check=True)
    out = kwebctl("-j", "listener", "add", "port", str(args.tenant_port),
                  "docroot", mnt, ns=NS)
    state["lid"] = json.loads(out)[0]["id"]
    state["mnt"] = mnt
    return mnt


def cleanup(mnt):
    if state["stopped"]:
        fuse_signal(signal.SIGCONT)
    for s in state["socks"]:
        s.close()
    if state["lid"] is not None:
        subprocess.run(["ip", "netns", "exec", NS, args.kwebctl, "listener",
                        "del", str(state["lid"])], timeout=PROMPT)
    subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "del", NS2], stderr=subprocess.DEVNULL)
    for name in (VETH, VETH2):
        subprocess.run(["ip", "link", "del", name], stderr=subprocess.DEVNULL)
    subprocess.run(["umount", mnt], timeout=PROMPT)
    state["fuse"].wait(timeout=PROMPT)
    for name in ("stall-b0.txt", "stall-b1.txt", "stall-b2.txt",
                 "stall-b3.txt"):
        try:
            os.unlink(os.path.join(args.docroot, name))
        except FileNotFoundError:
            pass


def main():
    global args
    ap = taplib.client_args(__doc__)
    ap.add_argument("--kwebctl", required=True)
    ap.add_argument("--base", required=True,
                    help="a directory for the FUSE mount and its source")
    ap.add_argument("--tenant-port", type=int, default=9111)
    ap.add_argument("--rmmod-cmd", metavar="CMD",
                    help="last, unload kweb with CMD while runs wait on "
                    "the stopped daemon")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    if args.rmmod_cmd:
        TESTS.tests.append(("rmmod while runs wait on the stopped daemon: "
                            "it waits for them alone, a namespace is "
                            "created and freed meanwhile", unload_stalled))
    mnt = setup()
    try:
        return TESTS.run()
    finally:
        cleanup(mnt)


if __name__ == "__main__":
    sys.exit(main())
