#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""HTTPS load for `make bench`'s httperfr row: a new connection per
request, each resuming the session of the connection before.

    tlsload.py --host H --port P --path PATH --size BYTES --conns N

Sequential connections; each offers the previous connection's session
(a TLS 1.3 ticket or a TLS 1.2 session), sends one GET with Connection:
close, reads the response to its end and checks a 200 with a body of
BYTES. httperf cannot do this: its --ssl resumption resumed none of 20
connections against nginx. Prints one line:

    tlsload: connections=N good=N bad=N resumed=N body_bytes=N bytes=N
        elapsed_us=N first_bad=WHY

(one line), and exits 0 whatever the checks said (the harness judges).
Python 3.9+ standard library only.
"""

import argparse
import socket
import ssl
import sys
import time


def one(ctx, host, port, path, session):
    """(status, body length, whole length, resumed, session)."""
    with socket.create_connection((host, port), timeout=20) as raw:
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with ctx.wrap_socket(raw, server_hostname="kweb.test",
                             session=session) as s:
            s.sendall(b"GET %s HTTP/1.1\r\nHost: kweb.test\r\n"
                      b"Connection: close\r\n\r\n" % path.encode())
            chunks = []
            while True:
                try:
                    data = s.recv(1 << 16)
                except ssl.SSLZeroReturnError:
                    break
                if not data:
                    break
                chunks.append(data)
            # After the response: TLS 1.3 tickets come after the
            # handshake, so the session to offer next is known by now.
            resumed, session = s.session_reused, s.session
    data = b"".join(chunks)
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError("no response head (%d bytes)" % len(data))
    status = int(head.split(b"\r\n", 1)[0].split()[1])
    return status, len(body), len(data), resumed, session


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--size", type=int, required=True,
                    help="the body's expected length")
    ap.add_argument("--conns", type=int, required=True)
    args = ap.parse_args()

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    good = bad = resumed = body_bytes = nbytes = 0
    first_bad = "-"
    session = None
    t0 = time.monotonic()
    for _ in range(args.conns):
        try:
            status, blen, n, reused, session = one(ctx, args.host, args.port,
                                                   args.path, session)
        except (OSError, ValueError, IndexError) as e:
            bad += 1
            session = None
            if first_bad == "-":
                first_bad = "%s: %s" % (type(e).__name__, e)
            continue
        body_bytes += blen
        nbytes += n
        resumed += reused
        if status == 200 and blen == args.size:
            good += 1
        else:
            bad += 1
            if first_bad == "-":
                first_bad = "status %d, %d body bytes" % (status, blen)
    us = round((time.monotonic() - t0) * 1e6)
    print("tlsload: connections=%d good=%d bad=%d resumed=%d body_bytes=%d "
          "bytes=%d elapsed_us=%d first_bad=%s"
          % (args.conns, good, bad, resumed, body_bytes, nbytes, us,
             first_bad.replace("\n", " ")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
