# SPDX-License-Identifier: GPL-2.0
"""The TLS pieces of a `make bench` side (bench/guest.py): a self-signed
ECDSA P-256 certificate, kwebtlsd (userctl/kwebtlsd: the handshakes of
kweb's TLS listener, kTLS installed, the socket adopted by kweb), and
nginx's ssl directives, with or without kTLS.

Python 3.9+ standard library only.
"""

import os
import re
import signal
import subprocess
import time

# kwebtlsd's SIGUSR1 line (userctl/kwebtlsd.c, tlsd_stats()).
STATS_RE = re.compile(r"^kwebtlsd: accepted (\d+) .*$", re.M)
STATS_FIELD_RE = re.compile(r"([a-z-]+) (\d+)")


class Error(Exception):
    pass


def make_cert(base):
    """A self-signed ECDSA P-256 certificate for kweb.test in base:
    (certificate PEM, key PEM)."""
    os.makedirs(base, exist_ok=True)
    pem = os.path.join(base, "cert.pem")
    key = os.path.join(base, "cert.key")
    if os.path.exists(pem) and os.path.exists(key):
        return pem, key
    p = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
         "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", pem,
         "-days", "2", "-subj", "/CN=kweb.test"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=60)
    if p.returncode != 0:
        raise Error("openssl req: %s" % p.stdout.strip()[-300:])
    # nginx's workers (nobody) read neither: the master loads them.
    os.chmod(key, 0o600)
    os.chmod(pem, 0o644)
    return pem, key


def nginx_ssl(cert, key, ktls):
    """nginx's ssl directives (the @SSL@ lines of bench/nginx.conf.in):
    TLS 1.2 and 1.3, a shared session cache and tickets (resumption both
    ways), and with ktls, OpenSSL's kTLS (sendfile on, in the template,
    then sends the file through the kernel's TLS)."""
    lines = ["ssl_certificate %s;" % cert,
             "ssl_certificate_key %s;" % key,
             "ssl_protocols TLSv1.2 TLSv1.3;",
             "ssl_session_cache shared:SSL:10m;",
             "ssl_session_tickets on;"]
    if ktls:
        lines.append("ssl_conf_command Options KTLS;")
    return "\n".join("        " + l for l in lines)


def parse_stats(line):
    """{counter: value} of a kwebtlsd stats line."""
    body = line.split(":", 1)[1]
    return {k.replace("-", "_"): int(v)
            for k, v in STATS_FIELD_RE.findall(body)}


class Tlsd:
    """kwebtlsd for kweb's TLS listener: handshakes on loopback port
    tlsd_port, each socket then adopted by listener listener_id. Run as
    root (it needs CAP_NET_ADMIN for the adoption); preexec (e.g. the
    server CPU's pinning) runs in the child before exec."""

    def __init__(self, binary, base, preexec=None):
        self.binary = binary
        self.base = base
        self.preexec = preexec
        self.proc = None
        self.err = os.path.join(base, "kwebtlsd.err")
        self.conf = os.path.join(base, "kwebtlsd.conf")

    def start(self, listener_id, tlsd_port, cert, key):
        os.makedirs(self.base, exist_ok=True)
        with open(self.conf, "w") as f:
            f.write("listen 127.0.0.1:%d\nlisten [::1]:%d\nlistener %d\n"
                    "cert %s %s\nhandshake_timeout 5\n"
                    % (tlsd_port, tlsd_port, listener_id, cert, key))
        with open(self.err, "w") as f:
            self.proc = subprocess.Popen(
                [self.binary, "-c", self.conf], stdout=f, stderr=f,
                stdin=subprocess.DEVNULL, preexec_fn=self.preexec)
        end = time.monotonic() + 20
        while "ready" not in self.log():
            if self.proc.poll() is not None or time.monotonic() > end:
                self.stop()
                raise Error("kwebtlsd did not start: %s"
                            % self.log().strip()[-300:])
            time.sleep(0.1)

    def log(self):
        try:
            with open(self.err) as f:
                return f.read()
        except OSError:
            return ""

    def stats(self):
        """Its counters, from the line SIGUSR1 makes it print."""
        if not self.proc or self.proc.poll() is not None:
            raise Error("kwebtlsd is not running: %s"
                        % self.log().strip()[-300:])
        n = len(STATS_RE.findall(self.log()))
        self.proc.send_signal(signal.SIGUSR1)
        end = time.monotonic() + 10
        while True:
            found = list(STATS_RE.finditer(self.log()))
            if len(found) > n:
                return parse_stats(found[-1].group(0))
            if time.monotonic() > end:
                raise Error("kwebtlsd printed no counters on SIGUSR1")
            time.sleep(0.05)

    def stop(self):
        if not self.proc:
            return
        p, self.proc = self.proc, None
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
