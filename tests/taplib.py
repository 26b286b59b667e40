# SPDX-License-Identifier: GPL-2.0
"""A minimal TAP runner for the guest-side test scripts that run their
tests in order, one after another (limits_test.py, hardening_test.py).

    TESTS = taplib.Suite()

    @TESTS.test("name")
    def t(): taplib.check(cond, "why")

    @TESTS.test("name", not_light="why the debug kernel does without")
    def t2(): ...

    sys.exit(TESTS.run(light=args.light))

client_args() starts every guest client's command line: the server's
--host, --port and --docroot, and --timeout.

Output: `ok N - name` or `not ok N - name` with `# ` diagnostics, then
`# slowest: ...` and `# N passed, N failed`; run() returns the exit
status, 0 iff none failed. run(light=True) (the debug kernel, several
times slower under TCG) leaves out the tests marked not_light, with a
note each: tests whose time goes to user space rather than to kernel
paths the others do not reach.
"""

import argparse
import ctypes
import os
import socket
import sys
import time
import traceback


class Fail(Exception):
    """A failed check: its message is the diagnostic."""


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def note(msg):
    print("# " + msg)


def drop_not_light(tests, not_light):
    """tests (tuples, the name first) without those not_light names, with
    a note for each left out: what --light does."""
    for name, why in not_light.items():
        note("not run with --light: %s: %s" % (name, why))
    return [t for t in tests if t[0] not in not_light]


def wait_for(cond, what, timeout):
    """Poll cond() (returns ok, detail) every 0.25 s until ok: detail;
    a Fail naming what, and the last detail, after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        ok, detail = cond()
        if ok:
            return detail
        if time.monotonic() > deadline:
            raise Fail("%s, after %.0f s: %s" % (what, timeout, detail))
        time.sleep(0.25)


CLONE_NEWNET = 0x40000000


def socket_in_netns(path):
    """A TCP socket made in the network namespace at path (setns() of
    this thread, then back)."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    other = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(other, CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), "setns " + path)
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        finally:
            if libc.setns(own, CLONE_NEWNET):
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(own)
        os.close(other)


def client_args(doc, port=80, timeout=10.0, timeout_help=None):
    """An ArgumentParser (described by doc's first paragraph) with what
    every guest client takes: the server's --host, --port and --docroot,
    and --timeout in seconds (none if timeout is None)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=port)
    ap.add_argument("--docroot", required=True)
    if timeout is not None:
        ap.add_argument("--timeout", type=float, default=timeout,
                        help=timeout_help)
    return ap


def slowest(times, n=5):
    """A `# slowest:` line naming the n longest of (name, seconds): where a
    slow guest's time goes, without a timing line per test."""
    top = sorted(times, key=lambda t: -t[1])[:n]
    return "# slowest: " + "; ".join("%.1f s %s" % (s, name) for name, s in top)


class Suite:
    def __init__(self):
        self.tests = []
        self.not_light = {}

    def test(self, name, not_light=None):
        def deco(fn):
            self.tests.append((name, fn))
            if not_light:
                self.not_light[name] = not_light
            return fn
        return deco

    def run(self, light=False):
        if light:
            self.tests = drop_not_light(self.tests, self.not_light)
        passed = failed = 0
        times = []
        for i, (name, fn) in enumerate(self.tests, 1):
            t0 = time.monotonic()
            try:
                fn()
                print("ok %d - %s" % (i, name))
                passed += 1
            except Exception as e:  # noqa: BLE001 - any failure is the test's
                print("not ok %d - %s" % (i, name))
                detail = str(e) if isinstance(e, Fail) else \
                    traceback.format_exc()
                for line in detail.rstrip().splitlines():
                    print("# " + line)
                failed += 1
            times.append((name, time.monotonic() - t0))
            sys.stdout.flush()
        print(slowest(times))
        print("# %d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
