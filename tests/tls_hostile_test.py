#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile TLS records against kweb's TLS listener (kTLS, kwebtlsd).

Each test completes a real handshake with Python's ssl through memory
BIOs, so that it holds the encrypted records it sends, and then sends
what a hostile or broken client would: a record that does not decrypt,
a bad header, a truncated record, an alert, a reset in the middle of a
record, a request cut into one record per byte. kweb must answer what is
valid, end what is not, and keep serving others.

    tls_hostile_test.py --host 127.0.0.1 --port 443 --docroot DIR

Output: TAP (taplib). Needs the docroot's index.html.
"""

import os
import socket
import ssl
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Suite, check, client_args  # noqa: E402

ARGS = None
TESTS = Suite()
INDEX = None
GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


class Conn:
    """A TLS client whose records pass through our hands."""

    def __init__(self, version=ssl.TLSVersion.TLSv1_3):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.minimum_version = ctx.maximum_version = version
        self.sock = socket.create_connection((ARGS.host, ARGS.port),
                                             timeout=ARGS.timeout)
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.inc, self.out)
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                d = self.sock.recv(65536)
                check(d, "the server closed during the handshake")
                self.inc.write(d)
        # The client's Finished.
        self.flush()

    def flush(self):
        d = self.out.read()
        if d:
            self.sock.sendall(d)

    def records(self, data):
        """data as the record(s) the client would send, not sent."""
        self.tls.write(data)
        return self.out.read()

    def ending(self, wait=None):
        """How the connection ends: (end, plaintext), end one of
        "close_notify", "eof" (a FIN without it), "reset", "timeout"."""
        self.sock.settimeout(wait or ARGS.timeout)
        plain = b""
        while True:
            try:
                d = self.sock.recv(65536)
            except ConnectionResetError:
                return "reset", plain
            except socket.timeout:
                return "timeout", plain
            # A FIN: any close_notify before it was read below. Not fed
            # to OpenSSL, which with OP_IGNORE_UNEXPECTED_EOF (Debian's
            # Python) takes a bare EOF for one.
            if not d:
                return "eof", plain
            self.inc.write(d)
            try:
                while True:
                    x = self.tls.read(65536)
                    # b"" only once the peer's close_notify is read.
                    if not x:
                        return "close_notify", plain
                    plain += x
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLZeroReturnError:
                return "close_notify", plain
            except ssl.SSLEOFError:
                return "eof", plain
            except ssl.SSLError as e:
                return "alert " + e.reason, plain

    def close(self):
        self.sock.close()


def served():
    """kweb still answers a well-behaved client."""
    c = Conn()
    c.sock.sendall(c.records(b"GET / HTTP/1.1\r\nHost: x\r\n"
                             b"Connection: close\r\n\r\n"))
    end, plain = c.ending()
    c.close()
    check(plain.startswith(b"HTTP/1.1 200 ") and plain.endswith(INDEX),
          "a well-behaved client after it: %s, %r" % (end, plain[:200]))


def ended(c, want, what):
    end, plain = c.ending()
    c.close()
    check(end in want and b"HTTP/" not in plain,
          "%s: the connection ended with %s (wanted %s) after %r" %
          (what, end, " or ".join(want), plain[:200]))
    served()


@TESTS.test("a record that fails to decrypt resets the connection")
def t_bad_mac():
    c = Conn()
    rec = bytearray(c.records(GET))
    rec[-1] ^= 0x55
    c.sock.sendall(bytes(rec))
    ended(c, ("reset",), "a flipped tag")


@TESTS.test("TLS 1.2: a record that fails to decrypt resets it")
def t_bad_mac12():
    c = Conn(ssl.TLSVersion.TLSv1_2)
    rec = bytearray(c.records(GET))
    rec[len(rec) // 2] ^= 0x01
    c.sock.sendall(bytes(rec))
    ended(c, ("reset",), "a flipped ciphertext bit")


@TESTS.test("a record header with a bad version resets it")
def t_bad_version():
    c = Conn()
    c.sock.sendall(b"\x17\x99\x99\x00\x20" + os.urandom(32))
    ended(c, ("reset",), "version 0x9999")


@TESTS.test("random bytes as a record of an unknown type reset it")
def t_random_record():
    c = Conn()
    c.sock.sendall(b"\x63\x03\x03\x00\x40" + os.urandom(64))
    ended(c, ("reset",), "type 0x63, 64 random bytes")


@TESTS.test("a record longer than TLS allows resets it")
def t_overlong():
    c = Conn()
    c.sock.sendall(b"\x17\x03\x03" + struct.pack(">H", 0x4000 + 256 + 1) +
                   os.urandom(512))
    ended(c, ("reset",), "a record of 2^14 + 257 bytes")


@TESTS.test("TLS 1.3: a change_cipher_spec after the handshake resets it")
def t_late_ccs():
    c = Conn()
    c.sock.sendall(b"\x14\x03\x03\x00\x01\x01")
    ended(c, ("reset",), "a plaintext change_cipher_spec")


@TESTS.test("a truncated record and the FIN: closed, nothing answered")
def t_truncated_fin():
    c = Conn()
    rec = c.records(GET)
    c.sock.sendall(rec[:len(rec) - 7])
    c.sock.shutdown(socket.SHUT_WR)
    ended(c, ("close_notify", "eof", "reset"), "a record 7 bytes short, FIN")


@TESTS.test("a reset in the middle of a record leaves kweb serving")
def t_rst_mid_record():
    c = Conn()
    rec = c.records(GET * 4)
    c.sock.sendall(rec[:len(rec) // 2])
    time.sleep(0.2)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                      struct.pack("ii", 1, 0))
    c.close()
    served()


@TESTS.test("close_notify before a request: kweb's close_notify, then FIN")
def t_close_notify():
    c = Conn()
    # An alert record: warning (1), close_notify (0).
    try:
        c.tls.unwrap()
    except ssl.SSLWantReadError:
        pass
    c.flush()
    ended(c, ("close_notify", "eof"), "the client's close_notify")


@TESTS.test("a request in one record per byte is served")
def t_byte_records():
    c = Conn()
    req = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    for i in range(len(req)):
        c.sock.sendall(c.records(req[i:i + 1]))
    end, plain = c.ending()
    c.close()
    check(plain.startswith(b"HTTP/1.1 200 ") and plain.endswith(INDEX) and
          end == "close_notify",
          "%d records of a byte: %s, %r" % (len(req), end, plain[:200]))


@TESTS.test("a head cut into more records than kweb keeps peeked (64), each "
            "a page in kTLS, is reset, not stored")
def t_record_flood():
    c = Conn()
    req = (b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 150 +
           b"\r\n\r\n")
    try:
        for i in range(len(req)):
            c.sock.sendall(c.records(req[i:i + 1]))
    except (ConnectionResetError, BrokenPipeError):
        # The reset, reported here: what is left to read then ends in
        # a FIN, "eof" below.
        pass
    ended(c, ("reset", "eof"), "a head in %d records of a byte" % len(req))


@TESTS.test("records that trickle in, a byte a time, are served")
def t_trickle():
    c = Conn()
    rec = c.records(b"GET / HTTP/1.1\r\nHost: x\r\n"
                    b"Connection: close\r\n\r\n")
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for i in range(len(rec)):
        c.sock.send(rec[i:i + 1])
        time.sleep(0.005)
    end, plain = c.ending()
    c.close()
    check(plain.startswith(b"HTTP/1.1 200 ") and plain.endswith(INDEX) and
          end == "close_notify",
          "a record a byte per segment: %s, %r" % (end, plain[:200]))


def main():
    global ARGS, INDEX
    ap = client_args(__doc__, port=443, timeout=15.0)
    ap.add_argument("--light", action="store_true")
    ARGS = ap.parse_args()
    with open(os.path.join(ARGS.docroot, "index.html"), "rb") as f:
        INDEX = f.read()
    return TESTS.run(light=ARGS.light)


if __name__ == "__main__":
    sys.exit(main())
