#!/bin/bash
# Segments per connection, both directions, for one 1 KiB GET per
# connection: 300 httperf connections (the client closes first), then
# curl with Connection: close, at kweb and at nginx (nstat's TcpOutSegs
# counts both ends of loopback); then one connection of each, packet by
# packet (scapy, on lo). Run in a guest:
#   scripts/vm.sh --name pk --memory 2G --timeout 600 KERNEL -- packets.sh KO OUT
KO=$1; OUT=$2; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
insmod "$KO" docroot=/run/p/www port=80
count() { nstat -z TcpOutSegs | awk 'NR > 1 { print $2 }'; }
for side in "kweb 80" "nginx 8081"; do
  read -r name port <<< "$side"
  nstat -n
  httperf --server 127.0.0.1 --port "$port" --uri /1k.bin --num-conns 300 \
    --num-calls 1 > /dev/null 2>&1
  echo "$name httperf: $(count) segments for 300 connections"
  nstat -n
  curl -s -o /dev/null -H "Connection: close" "http://127.0.0.1:$port/1k.bin"
  echo "$name Connection: close: $(count) segments for 1 connection"
done
/usr/bin/python3 - <<'PY'
import socket, subprocess, time
from scapy.all import AsyncSniffer

def sniffed(fn):
    s = AsyncSniffer(iface="lo", lfilter=lambda p: "TCP" in p)
    s.start()
    time.sleep(1)
    fn()
    time.sleep(1)
    # Each segment is seen twice on lo, going out and coming in.
    seen = set()
    for p in s.stop():
        t = p["TCP"]
        key = (t.sport, t.dport, t.seq, t.ack, int(t.flags), len(t.payload))
        if key not in seen:
            seen.add(key)
            print("  %5d > %5d %-4s len=%d" % (t.sport, t.dport, t.sprintf("%flags%"),
                                              len(t.payload)))

def close_get(port):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"GET /1k.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while c.recv(65536):
        pass
    c.close()

for port in (80, 8081):
    print("port %d, httperf:" % port)
    sniffed(lambda: subprocess.run(["httperf", "--server", "127.0.0.1", "--port", str(port),
                                    "--uri", "/1k.bin", "--num-conns", "1", "--num-calls", "1"],
                                   capture_output=True))
    print("port %d, Connection: close:" % port)
    sniffed(lambda: close_get(port))
PY
rmmod kweb
