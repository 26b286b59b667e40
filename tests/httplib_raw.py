# SPDX-License-Identifier: GPL-2.0
"""A small, strict HTTP/1.1 client over raw sockets, for tests/http_test.py.

It sends exactly the bytes it is given and parses responses strictly: CRLF
line ends only, no obs-fold, field names must be tokens, values must not
hold control characters; every field is kept in order so that duplicates
are visible. Bodies are read by Content-Length (none for HEAD, 1xx, 204 and
304). Every blocking call is bounded by the connection's deadline.
"""

import re
import socket
import struct
import time

TOKEN = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
STATUS_LINE_RE = re.compile(rb"(HTTP/[0-9]\.[0-9]) ([0-9]{3}) ([\t\x20-\x7e\x80-\xff]*)")
FIELD_RE = re.compile(rb"(" + TOKEN + rb"):[ \t]*(.*?)[ \t]*")
BAD_VALUE_RE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
MAX_HEAD = 64 * 1024


class ProtocolError(Exception):
    """The server sent something that is not a valid HTTP/1.1 response."""


class ClosedWhileSending(ProtocolError):
    """The peer reset or closed the connection before our bytes were sent."""

    def __init__(self, msg, unread):
        super().__init__(msg)
        self.unread = unread


class NoResponse(Exception):
    """The connection ended (EOF or reset) before any byte of a response."""


class Timeout(Exception):
    """The deadline passed while waiting for the server."""


def show(data, limit=300):
    """Printable prefix of raw bytes for diagnostics."""
    data = bytes(data)
    s = repr(data[:limit])
    return s + ("... (%d bytes)" % len(data) if len(data) > limit else "")


class Response:
    def __init__(self, head, version, code, reason, fields, body,
                 body_by_close=False):
        self.head = head                # raw bytes, status line to blank line
        self.version = version          # "HTTP/1.1"
        self.code = code                # int
        self.reason = reason            # str
        self.fields = fields            # [(name as sent, value)], in order
        self.body = body                # bytes
        self.body_by_close = body_by_close  # no Content-Length: read to EOF
        self.head_time = None           # time.time() when the head was read
        self.interim = []               # 1xx responses before it (read_final)

    @property
    def raw(self):
        return self.head + self.body

    @property
    def status_line(self):
        return self.head.split(b"\r\n", 1)[0].decode("latin-1")

    def all(self, name):
        name = name.lower()
        return [v for n, v in self.fields if n.lower() == name]

    def get(self, name):
        """The value of a field that must appear at most once; None if absent."""
        vals = self.all(name)
        if len(vals) > 1:
            raise ProtocolError("field %s appears %d times" % (name, len(vals)))
        return vals[0] if vals else None

    def has(self, name):
        return bool(self.all(name))

    def duplicates(self):
        seen, dups = set(), []
        for n, _ in self.fields:
            k = n.lower()
            if k in seen and k not in dups:
                dups.append(k)
            seen.add(k)
        return dups

    def __repr__(self):
        return "<Response %s %d fields, %d body bytes>" % (
            self.status_line, len(self.fields), len(self.body))


def parse_head(head):
    """Parse a response head (without the final CRLF CRLF)."""
    if b"\n" in head.replace(b"\r\n", b"") or b"\r" in head.replace(b"\r\n", b""):
        raise ProtocolError("bare CR or LF in response head: %s" % show(head))
    lines = head.split(b"\r\n")
    m = STATUS_LINE_RE.fullmatch(lines[0])
    if not m:
        raise ProtocolError("bad status line: %s" % show(lines[0]))
    fields = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            raise ProtocolError("obs-fold in response: %s" % show(line))
        fm = FIELD_RE.fullmatch(line)
        if not fm:
            raise ProtocolError("bad field line: %s" % show(line))
        if BAD_VALUE_RE.search(fm.group(2)):
            raise ProtocolError("control character in field: %s" % show(line))
        fields.append((fm.group(1).decode("ascii"), fm.group(2).decode("latin-1")))
    return (m.group(1).decode("ascii"), int(m.group(2)),
            m.group(3).decode("latin-1"), fields)


def format_host(host):
    return "[%s]" % host if ":" in host else host


class Connection:
    """One TCP connection with a deadline (time.monotonic() value)."""

    def __init__(self, host, port, deadline, on_data=None):
        self.deadline = deadline
        self.on_data = on_data          # callback(bytes) for every response
        self.buf = bytearray()
        self.eof = False
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._settimeout()
        try:
            self.sock.connect((host, port))
        except socket.timeout:
            self.sock.close()
            raise Timeout("timeout connecting to %s port %d" % (host, port))
        except OSError:
            self.sock.close()
            raise

    def _settimeout(self, limit=None):
        left = self.deadline - time.monotonic()
        if limit is not None:
            left = min(left, limit)
        if left <= 0:
            raise Timeout("test deadline passed")
        self.sock.settimeout(left)

    # -- sending --------------------------------------------------------

    def send(self, data):
        self._settimeout()
        try:
            self.sock.sendall(data)
        except socket.timeout:
            raise Timeout("timeout sending %d bytes (server not reading?)" % len(data))
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ClosedWhileSending("the server closed the connection while "
                                     "we were sending (%s); unread: %s"
                                     % (e, show(self.buf)), self.buf)

    def send_parts(self, parts, delay=0.005):
        """Send each part in its own segment, sleeping delay in between."""
        for i, part in enumerate(parts):
            if i:
                time.sleep(delay)
            self.send(part)

    # -- receiving ------------------------------------------------------

    def _fill(self, what, limit=None):
        """Read more into buf; False on EOF. ECONNRESET counts as EOF."""
        try:
            self._settimeout(limit)
        except Timeout:
            raise Timeout("timeout waiting for %s; got so far: %s" % (what, show(self.buf)))
        try:
            data = self.sock.recv(256 * 1024)
        except socket.timeout:
            raise Timeout("timeout waiting for %s; got so far: %s" % (what, show(self.buf)))
        except ConnectionResetError:
            self.eof = "reset"
            return False
        if not data:
            self.eof = "eof"
            return False
        self.buf += data
        return True

    def _read_exact(self, n, what):
        while len(self.buf) < n:
            if not self._fill(what):
                raise ProtocolError("connection closed (%s) after %d of %d bytes of %s" % (
                    self.eof, len(self.buf), n, what))
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_at_least(self, n, what="data"):
        """Buffer at least n bytes, or fewer if the connection ends."""
        while len(self.buf) < n and self._fill(what):
            pass

    def read_response(self, method="GET"):
        """Read one response to a request with this method."""
        start = 0
        while True:
            end = self.buf.find(b"\r\n\r\n", start)
            if end >= 0:
                break
            if len(self.buf) > MAX_HEAD:
                raise ProtocolError("response head longer than %d: %s" % (MAX_HEAD, show(self.buf)))
            start = max(0, len(self.buf) - 3)
            if not self._fill("a response head"):
                if not self.buf:
                    raise NoResponse("connection closed (%s) before any response" % self.eof)
                raise ProtocolError("connection closed (%s) inside a response head: %s" % (
                    self.eof, show(self.buf)))
        head = bytes(self.buf[:end])
        # When the head was in: what its Date is compared with, however
        # long the body then takes.
        head_time = time.time()
        del self.buf[:end + 4]
        version, code, reason, fields = parse_head(head)
        resp = Response(head + b"\r\n\r\n", version, code, reason, fields, b"")
        resp.head_time = head_time
        if method == "HEAD" or code in (204, 304) or 100 <= code < 200:
            pass
        elif resp.has("Transfer-Encoding"):
            raise ProtocolError("unexpected Transfer-Encoding: %s" % show(head))
        elif resp.has("Content-Length"):
            cl = resp.get("Content-Length")
            if not re.fullmatch(r"[0-9]{1,15}", cl):
                raise ProtocolError("bad Content-Length %r" % cl)
            resp.body = self._read_exact(int(cl), "a %s-byte body" % cl)
        else:
            while self._fill("a body delimited by close"):
                pass
            resp.body, resp.body_by_close = bytes(self.buf), True
            self.buf.clear()
        if self.on_data:
            self.on_data(resp.raw)
        return resp

    def request(self, data, method="GET"):
        self.send(data)
        return self.read_response(method)

    def read_final(self, method="GET"):
        """Read responses up to the first final one (not 1xx), which is
        returned; the interim ones before it are in its .interim."""
        interim = []
        while True:
            resp = self.read_response(method)
            if not 100 <= resp.code < 200:
                resp.interim = interim
                return resp
            interim.append(resp)

    def state(self, wait=2.0):
        """After a complete response: 'eof', 'reset', 'open' (nothing within
        wait seconds) or 'data' (unexpected bytes, kept in buf)."""
        if self.buf:
            return "data"
        if self.eof:
            return self.eof
        try:
            got = self._fill("EOF", limit=wait)
        except Timeout:
            return "open"
        return "data" if got else self.eof

    # -- closing --------------------------------------------------------

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def reset(self):
        """Close with RST (SO_LINGER 0)."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                 struct.pack("ii", 1, 0))
        finally:
            self.close()
