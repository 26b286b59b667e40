#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A WebSocket echo server (RFC 6455), for the handoff tests.

    tests/ws_echo.py [--host 127.0.0.1] [--port 8082]

Standard library only, one thread per connection. It answers the opening
handshake (GET with Upgrade: websocket, Connection: upgrade,
Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key) with 101 and the right
Sec-WebSocket-Accept, then sends every text or binary message back as one
unmasked frame of the same type (fragmented messages are reassembled),
answers a ping with a pong carrying its payload and a close with a close
carrying the same status code, and then closes. A client frame that is not
masked, or any other protocol error, gets a close with 1002. A request that
is not a WebSocket handshake gets a 400 and the connection is closed.
"""

import argparse
import base64
import hashlib
import socket
import socketserver
import struct
import sys

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HEAD = 16 * 1024
MAX_MESSAGE = 16 * 1024 * 1024
IDLE_TIMEOUT = 300

OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10


def accept_key(key):
    """Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + GUID).digest()).decode()


def frame(opcode, payload, fin=True):
    """An unmasked (server-to-client) frame."""
    n = len(payload)
    b0 = (0x80 if fin else 0) | opcode
    if n < 126:
        head = struct.pack("!BB", b0, n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", b0, 126, n)
    else:
        head = struct.pack("!BBQ", b0, 127, n)
    return head + payload


class ProtocolError(Exception):
    pass


class Closed(Exception):
    pass


class Handler(socketserver.BaseRequestHandler):
    def setup(self):
        self.sock = self.request
        self.sock.settimeout(IDLE_TIMEOUT)
        self.buf = bytearray()

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Closed()
        self.buf += data

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def _bad_request(self, why):
        body = ("not a WebSocket handshake: %s\n" % why).encode()
        self.sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                          b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
                          + body)

    def handshake(self):
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > MAX_HEAD:
                self._bad_request("head too long")
                return False
            self._fill()
        end = self.buf.index(b"\r\n\r\n")
        head = bytes(self.buf[:end]).decode("latin-1")
        del self.buf[:end + 4]
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[0] != "GET" or not parts[2].startswith("HTTP/1."):
            self._bad_request("request line %r" % lines[0])
            return False
        fields = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                self._bad_request("field line %r" % line)
                return False
            fields.setdefault(name.strip().lower(), []).append(value.strip())

        def tokens(name):
            return [t.strip().lower() for v in fields.get(name, []) for t in v.split(",")]

        key = fields.get("sec-websocket-key", [""])
        if "websocket" not in tokens("upgrade"):
            self._bad_request("no Upgrade: websocket")
        elif "upgrade" not in tokens("connection"):
            self._bad_request("no Connection: upgrade")
        elif fields.get("sec-websocket-version") != ["13"]:
            self._bad_request("Sec-WebSocket-Version is not 13")
        elif len(key) != 1 or len(base64.b64decode(key[0] + "==")) != 16:
            self._bad_request("bad Sec-WebSocket-Key")
        else:
            self.sock.sendall(("HTTP/1.1 101 Switching Protocols\r\n"
                               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Accept: %s\r\n\r\n"
                               % accept_key(key[0])).encode("ascii"))
            return True
        return False

    def read_frame(self):
        b0, b1 = self._take(2)
        fin, opcode = bool(b0 & 0x80), b0 & 0x0F
        if b0 & 0x70:
            raise ProtocolError("reserved bits set")
        if not b1 & 0x80:
            raise ProtocolError("client frame not masked")
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._take(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._take(8))[0]
        if n > MAX_MESSAGE:
            raise ProtocolError("frame too long")
        if opcode >= 8 and (n > 125 or not fin):
            raise ProtocolError("bad control frame")
        mask = self._take(4)
        data = self._take(n)
        keys = (mask * (n // 4 + 1))[:n]
        data = (int.from_bytes(data, "big") ^ int.from_bytes(keys, "big")).to_bytes(n, "big")
        return fin, opcode, data

    def handle(self):
        try:
            if not self.handshake():
                return
            self.echo()
        except (Closed, ConnectionError, socket.timeout):
            pass

    def echo(self):
        msg_op, parts = None, []
        while True:
            try:
                fin, opcode, data = self.read_frame()
            except ProtocolError:
                self.sock.sendall(frame(OP_CLOSE, struct.pack("!H", 1002)))
                return
            if opcode == OP_CLOSE:
                self.sock.sendall(frame(OP_CLOSE, data[:2]))
                return
            if opcode == OP_PING:
                self.sock.sendall(frame(OP_PONG, data))
                continue
            if opcode == OP_PONG:
                continue
            if opcode in (OP_TEXT, OP_BINARY) and msg_op is None:
                msg_op, parts = opcode, [data]
            elif opcode == OP_CONT and msg_op is not None:
                parts.append(data)
            else:
                self.sock.sendall(frame(OP_CLOSE, struct.pack("!H", 1002)))
                return
            if fin:
                self.sock.sendall(frame(msg_op, b"".join(parts)))
                msg_op, parts = None, []


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8082)
    args = ap.parse_args()
    Server.address_family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    with Server((args.host, args.port), Handler) as srv:
        print("ws_echo: listening on %s port %d" % (args.host, args.port), flush=True)
        try:
            srv.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
