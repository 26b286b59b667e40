#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Exact answers from kwebfloor.ko on PORT (bench/floor/check.sh runs it):

    check.py PORT SIZE [HOST]

keep-alive, pipelined, HTTP/1.0 and Connection: close, each response byte
for byte. Exit status 0 iff all are right."""

import socket
import sys

PORT, SIZE = int(sys.argv[1]), int(sys.argv[2])
HOST = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"


def body():
    tag = b"%08d kwebfloor\n" % SIZE
    return (tag + b"." * SIZE)[:SIZE]


def response(conn):
    return (b"HTTP/1.1 200 OK\r\nServer: kwebfloor\r\nContent-Length: %d\r\n"
            b"Connection: %s\r\n\r\n" % (SIZE, conn)) + body()


def exchange(req, want, closes):
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.sendall(req)
    got = b""
    while len(got) < len(want):
        d = s.recv(65536)
        if not d:
            break
        got += d
    if got != want:
        raise SystemExit("%r: got %d bytes %r..., want %d"
                         % (req[:40], len(got), got[:80], len(want)))
    s.settimeout(2 if closes else 0.5)
    try:
        more = s.recv(1)
        eof = more == b""
    except socket.timeout:
        more, eof = b"", False
    if more:
        raise SystemExit("%r: bytes after the responses" % req[:40])
    if eof != closes:
        raise SystemExit("%r: %s" % (req[:40], "closed" if eof else
                                      "not closed"))
    s.close()


GET = b"GET /b/1k.bin HTTP/1.1\r\nHost: x\r\n\r\n"
ka, cl = response(b"keep-alive"), response(b"close")
exchange(GET, ka, False)
exchange(GET * 3, ka * 3, False)
exchange(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n" + GET,
         cl, True)
exchange(b"GET / HTTP/1.0\r\n\r\n", cl, True)
exchange(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", ka, False)
# A head in pieces: answered once it is whole.
s = socket.create_connection((HOST, PORT), timeout=10)
for part in (b"GET / HT", b"TP/1.1\r\nHost: x\r", b"\n\r\n"):
    s.sendall(part)
    s.settimeout(0.3)
    try:
        d = s.recv(65536)
    except socket.timeout:
        d = b""
    s.settimeout(10)
    if part != b"\n\r\n" and d:
        raise SystemExit("answered a partial head")
while len(d) < len(ka):
    d += s.recv(65536)
if d != ka:
    raise SystemExit("split head: wrong response")
s.close()
print("check.py: %s port %d: keep-alive, pipelined, close, HTTP/1.0, split "
      "head: exact" % (HOST, PORT))
