#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kweb on one filesystem, for tests/guest/fsmatrix.sh.

    fs_test.py make DIR
        write the test files into DIR (before mksquashfs, or into an
        overlay's lower layer)
    fs_test.py run --host H --port P --docroot DIR --fs NAME
                   [--readonly] [--copied-up]
        check kweb serving DIR (the mounted filesystem)

Every file's bytes are known here, so each check is exact: status,
Content-Length, Content-Type, ETag, Content-Range and body bytes (large
ones by SHA-256). --readonly skips what writes (squashfs); --copied-up
checks copied.txt, which the caller rewrote through overlayfs. TAP lines
named "NAME: ...", then "# N passed, N failed"; exit status 0 iff none
failed. Standard library only.
"""
import argparse
import gzip
import hashlib
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import httplib_raw  # noqa: E402
import taplib  # noqa: E402

SMALL = b"a small file, served whole\n"
INDEX = b"<p>the index of dir</p>\n"
SECRET = b"only root may read this directory\n"
LOWER_COPIED = b"as in the lower layer\n"
COPIED = b"copied up through overlayfs\n"
OLD = b"old bytes, same size: AAAA\n"
NEW = b"new bytes, same size: BBBB\n"
BIG = 4 << 20       # cached (cache_max_file is 4 MiB)
HUGE = 6 << 20      # over cache_max_file: sent page batches from the file
SPARSE = 1 << 20
APP_JS = b"console.log('served as app.js.gz');\n" * 100
LATE_CSS = b"p { margin: 0 }\n" * 100
REMOTE = b"as first written at the server\n"
REMOTE_NEW = b"as the server has it now: AAAA\n"


def blob(seed, n):
    return random.Random(seed).randbytes(n)


def sparse_bytes():
    return b"head" + bytes(SPARSE - 8) + b"tail"


def make(top):
    def write(name, data, mode=0o644):
        path = os.path.join(top, name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)

    os.makedirs(os.path.join(top, "dir"), exist_ok=True)
    write("small.txt", SMALL)
    write("big.bin", blob(1, BIG))
    write("huge.bin", blob(2, HUGE))
    write("dir/index.html", INDEX)
    write("rewrite.txt", OLD)
    write("copied.txt", LOWER_COPIED)
    write("app.js", APP_JS)
    write("app.js.gz", gzip.compress(APP_JS, mtime=0))
    write("late.css", LATE_CSS)
    write("remote.txt", REMOTE)
    # A hole in the middle: tmpfs splices the zero page for it.
    with open(os.path.join(top, "sparse.bin"), "wb") as f:
        f.write(b"head")
        f.seek(SPARSE - 4)
        f.write(b"tail")
    os.chmod(os.path.join(top, "sparse.bin"), 0o644)
    # Out of the docroot, relative: refused by the lookup (403).
    os.symlink("../../../../../etc/passwd", os.path.join(top, "escape.txt"))
    # Readable file, but in a directory only its owner (root) may enter.
    os.makedirs(os.path.join(top, "private"), exist_ok=True)
    write("private/secret.txt", SECRET)
    os.chmod(os.path.join(top, "private"), 0o700)
    os.chmod(top, 0o755)
    os.chmod(os.path.join(top, "dir"), 0o755)


def counters():
    with open("/proc/net/kweb") as f:
        return {p[0]: int(p[1]) for p in (line.split() for line in f)
                if len(p) == 2 and p[1].isdigit()}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make")
    mk.add_argument("dir")
    run = sub.add_parser("run")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=80)
    run.add_argument("--docroot", required=True)
    run.add_argument("--fs", required=True)
    run.add_argument("--readonly", action="store_true")
    run.add_argument("--copied-up", action="store_true")
    run.add_argument("--no-posix", action="store_true")
    run.add_argument("--remote-clock", action="store_true")
    run.add_argument("--server-dir")
    run.add_argument("--no-page-cache", action="store_true")
    run.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    if args.cmd == "make":
        make(args.dir)
        return 0

    top = args.docroot
    check = taplib.check
    suite = taplib.Suite()
    big, huge = blob(1, BIG), blob(2, HUGE)

    def get(path, extra=b"", method="GET"):
        c = httplib_raw.Connection(args.host, args.port,
                                   time.monotonic() + args.timeout)
        try:
            return c.request(b"%s %s HTTP/1.1\r\nHost: t\r\n%s\r\n"
                             % (method.encode(), path.encode(), extra),
                             method)
        finally:
            c.close()

    def expect(path, body, ctype):
        r = get(path)
        check(r.code == 200, "status %d, not 200" % r.code)
        check(r.get("Content-Length") == str(len(body)),
              "Content-Length %s, not %d" % (r.get("Content-Length"),
                                             len(body)))
        check(r.get("Content-Type") == ctype,
              "Content-Type %r, not %r" % (r.get("Content-Type"), ctype))
        if len(body) > 4096:
            got = hashlib.sha256(r.body).hexdigest()
            want = hashlib.sha256(body).hexdigest()
            check(got == want, "sha256 %s (%d bytes), not %s"
                  % (got, len(r.body), want))
        else:
            check(r.body == body, "body %s, not %s"
                  % (httplib_raw.show(r.body), httplib_raw.show(body)))
        return r

    def name(s):
        return "%s: %s" % (args.fs, s)

    # A filesystem that keeps no file data in the page cache (9p with
    # cache=none reads every byte from its server) has none to pin: kweb
    # serves each request from the file, and counts no hit.
    hit = 0 if args.no_page_cache else 1

    def expect_hit(fn):
        before = counters()["cache_hits"]
        fn()
        hits = counters()["cache_hits"] - before
        check(hits == hit, "%d cache hits, not %d" % (hits, hit))

    @suite.test(name("small file: exact bytes, Content-Length, Content-Type"))
    def _():
        expect("/small.txt", SMALL, "text/plain")

    @suite.test(name("4 MiB file, cold: sha256"))
    def _():
        expect("/big.bin", big, "application/octet-stream")

    @suite.test(name("4 MiB file again: sha256, %s" %
                     ("one cache hit" if hit else "no cache hit")))
    def _():
        # A remote file's entry is opened again a second after its fill
        # (below), which a busy guest's 4 MiB may take: then the request
        # after it hits.
        for left in range(2 if args.server_dir else 0, -1, -1):
            try:
                expect_hit(lambda: expect("/big.bin", big,
                                          "application/octet-stream"))
                break
            except taplib.Fail:
                if not left:
                    raise

    # Only a file that may change at a server is opened again after a
    # second (below); vfat and exfat revalidate negative dentries, not
    # files, and are as local as ext4.
    if not args.server_dir and not args.no_page_cache:
        @suite.test(name("local file: still from the cache 2 s later"))
        def _():
            expect("/small.txt", SMALL, "text/plain")
            time.sleep(2)
            expect_hit(lambda: expect("/small.txt", SMALL, "text/plain"))

    @suite.test(name("range inside the 4 MiB file: 206, Content-Range, bytes"))
    def _():
        r = get("/big.bin", b"Range: bytes=1000000-1000999\r\n")
        check(r.code == 206, "status %d, not 206" % r.code)
        check(r.get("Content-Range") == "bytes 1000000-1000999/%d" % BIG,
              "Content-Range %r" % r.get("Content-Range"))
        check(r.body == big[1000000:1001000], "wrong range bytes")

    @suite.test(name("If-None-Match with the file's ETag: 304, no body"))
    def _():
        st = os.stat(os.path.join(top, "big.bin"))
        etag = '"%x-%x"' % (int(st.st_mtime), st.st_size)
        r = get("/big.bin")
        check(r.get("ETag") == etag, "ETag %r, not %r" % (r.get("ETag"), etag))
        r = get("/big.bin", b"If-None-Match: %s\r\n" % etag.encode())
        check(r.code == 304 and r.body == b"",
              "status %d, %d body bytes" % (r.code, len(r.body)))

    @suite.test(name("6 MiB file (not cached, sent from the file): sha256"))
    def _():
        expect("/huge.bin", huge, "application/octet-stream")

    @suite.test(name("file with a hole: exact bytes"))
    def _():
        expect("/sparse.bin", sparse_bytes(), "application/octet-stream")

    @suite.test(name("GET /dir/ serves dir/index.html"))
    def _():
        expect("/dir/", INDEX, "text/html")

    if args.no_posix:
        taplib.note("%s has no symlinks and one mode for every file: no "
                    "symlink or permission tests" % args.fs)
    else:
        @suite.test(name("symlink out of the docroot: 403"))
        def _():
            r = get("/escape.txt")
            check(r.code == 403, "status %d, not 403" % r.code)

        # Files are opened as nobody, with no capabilities: a 0700 root
        # directory cannot be searched, and nginx's answer to that is 403.
        @suite.test(name("file inside a 0700 root directory: 403"))
        def _():
            r = get("/private/secret.txt")
            check(r.code == 403, "status %d, %s" %
                  (r.code, httplib_raw.show(r.body)))

    def expect_gz(path, data, ctype):
        r = get(path, b"Accept-Encoding: gzip\r\n")
        check(r.code == 200 and r.get("Content-Encoding") == "gzip" and
              r.get("Vary") == "Accept-Encoding" and
              r.get("Content-Type") == ctype,
              "status %d, fields %r" % (r.code, r.fields))
        check(gzip.decompress(r.body) == data, "body is not %s's" % path)

    @suite.test(name("precompressed: gzip gets app.js.gz, then from the cache"))
    def _():
        for _ in range(2):
            expect_gz("/app.js", APP_JS, "text/javascript")
        r = get("/app.js")
        check(r.code == 200 and r.body == APP_JS and
              r.get("Vary") == "Accept-Encoding" and
              not r.has("Content-Encoding"), "without Accept-Encoding: %r"
              % r.fields)

    if args.copied_up:
        @suite.test(name("file copied up to the upper layer: its new bytes"))
        def _():
            expect("/copied.txt", COPIED, "text/plain")

    if args.server_dir:
        # What kweb has cached is opened again a second after it was:
        # a change made at the server, which nothing on this side saw
        # (open() asks the server, a cache hit does not), shows then.
        @suite.test(name("a file changed at the server, not through this "
                         "mount: its new bytes a second later"))
        def _():
            for _ in range(2):
                expect("/remote.txt", REMOTE, "text/plain")
            expect_hit(lambda: expect("/remote.txt", REMOTE, "text/plain"))
            with open(os.path.join(args.server_dir, "remote.txt"),
                      "r+b") as f:
                f.write(REMOTE_NEW)
            time.sleep(1.5)
            expect("/remote.txt", REMOTE_NEW, "text/plain")

    if args.readonly:
        taplib.note("%s is read-only: no rewrite or truncation tests"
                    % args.fs)
        return suite.run()

    @suite.test(name("a .gz made beside a cached file: sent from the next "
                     "request on"))
    def _():
        for _ in range(2):
            r = get("/late.css", b"Accept-Encoding: gzip\r\n")
            check(r.code == 200 and r.body == LATE_CSS and
                  not r.has("Vary"), "before: %d %r" % (r.code, r.fields))
        path = os.path.join(top, "late.css.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(LATE_CSS, mtime=0))
        os.chmod(path, 0o644)
        try:
            expect_gz("/late.css", LATE_CSS, "text/css")
        finally:
            os.unlink(path)
        r = get("/late.css", b"Accept-Encoding: gzip\r\n")
        check(r.code == 200 and r.body == LATE_CSS and
              not r.has("Content-Encoding"), "after its removal: %d %r"
              % (r.code, r.fields))

    if args.remote_clock:
        taplib.note("%s's server stamps the files by a clock this test "
                    "cannot set back: no rewrite within one tick" % args.fs)
    else:
        @suite.test(name("same-size rewrite within one ctime tick: new bytes"))
        def _():
            path = os.path.join(top, "rewrite.txt")
            # The entry's ctime is the file's when it was cached; the clock is
            # set back to it before each call that stamps the file, so size,
            # ctime (and mtime) come out the same and only the bytes differ.
            # Each call gets a tick of its own: NFS stamps the file on the
            # server, one round trip per call, and under TCG two of them
            # seldom fit in one tick.
            for attempt in range(25):
                if attempt:
                    with open(path, "wb") as f:
                        f.write(OLD)
                expect("/rewrite.txt", OLD, "text/plain")
                c0 = os.stat(path).st_ctime_ns
                fd = os.open(path, os.O_WRONLY)  # copies up on overlayfs
                real0, mono0 = time.time_ns(), time.monotonic_ns()
                try:
                    time.clock_settime_ns(time.CLOCK_REALTIME, c0)
                    os.ftruncate(fd, 0)
                    time.clock_settime_ns(time.CLOCK_REALTIME, c0)
                    os.pwrite(fd, NEW, 0)
                    time.clock_settime_ns(time.CLOCK_REALTIME, c0)
                    os.fsync(fd)  # NFS sends the write here
                    c1 = os.fstat(fd).st_ctime_ns
                finally:
                    time.clock_settime_ns(time.CLOCK_REALTIME,
                                          real0 + time.monotonic_ns() - mono0)
                    os.close(fd)
                if c1 == c0:
                    break
                taplib.note("attempt %d: ctime moved (%d -> %d), again"
                            % (attempt, c0, c1))
            check(c1 == c0, "never managed a rewrite within one tick")
            expect("/rewrite.txt", NEW, "text/plain")

    if not args.no_posix:
        # Permissions follow the filesystem, cached or not: the cached
        # dir/index.html gets what an uncached file would once its
        # directory, or the docroot two levels up, is 0700 (403), and 200
        # again once it is 0755.
        @suite.test(name("cached file, chmod 700 on its directory, then on "
                         "the docroot: 403, chmod 755: 200"))
        def _():
            for d in (os.path.join(top, "dir"), top):
                # No entry is kept in the timestamp tick of a change on its
                # way (the chmod 755 before): let it pass.
                time.sleep(0.05)
                for _ in range(2):
                    expect("/dir/", INDEX, "text/html")
                expect_hit(lambda: expect("/dir/", INDEX, "text/html"))
                os.chmod(d, 0o700)
                try:
                    r = get("/dir/")
                    check(r.code == 403,
                          "after chmod 700 %s: status %d, not 403"
                          % (d, r.code))
                finally:
                    os.chmod(d, 0o755)
                expect("/dir/", INDEX, "text/html")

    @suite.test(name("file truncated while sent: short body, then EOF"))
    def _():
        path = os.path.join(top, "huge.bin")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(args.timeout)
        # A small window keeps most of the body in the file, unsent; a
        # small MSS keeps that window many segments wide (else the sender
        # waits for a full loopback-sized segment's room, and its zero
        # window probes back off for seconds).
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1400)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.connect((args.host, args.port))
        s.sendall(b"GET /huge.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            check(chunk, "EOF before the header")
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        check(b"Content-Length: %d\r\n" % HUGE in head + b"\r\n",
              "header %r" % head)
        time.sleep(1)  # let the send buffer fill
        os.truncate(path, 0)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                body += chunk
        except socket.timeout:
            check(False, "no EOF within %d s, %d body bytes"
                  % (args.timeout, len(body)))
        except ConnectionResetError:
            pass
        finally:
            s.close()
        check(len(body) < HUGE, "whole body (%d bytes) after truncation"
              % len(body))
        check(body == huge[:len(body)], "body is not a prefix of the file")
        taplib.note("%d of %d bytes before EOF" % (len(body), HUGE))

    return suite.run()


if __name__ == "__main__":
    sys.exit(main())
