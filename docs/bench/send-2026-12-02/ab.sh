#!/bin/bash
# A/B of two kweb builds in one guest, alternating, each round: wrk -t2
# with 16 and 256 keep-alive connections (4 s) and one httperf client
# with one connection per request (4 s), 1 KiB, kweb alone (no nginx).
#   scripts/vm.sh --name ab --memory 2G --timeout 900 --append tsc=reliable \
#     KERNEL -- ab.sh OLD.ko NEW.ko OUT [ROUNDS]
# then: summary.py OUT.
OLD=$1; NEW=$2; OUT=$3; ROUNDS=${4:-3}; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
echo 8080,8081 > /proc/sys/net/ipv4/ip_local_reserved_ports
echo 1024 65535 > /proc/sys/net/ipv4/ip_local_port_range
echo 2 > /proc/sys/net/ipv4/tcp_tw_reuse
cpu() { awk '/^cpu /{print $2+$3+$4+$6+$7+$8}' /proc/stat; }
for r in $(seq "$ROUNDS"); do
  for side in old new; do
    ko=$OLD; [ $side = new ] && ko=$NEW
    insmod "$ko" docroot=/run/p/www port=80
    cmp <(curl -s http://127.0.0.1/1k.bin) /run/p/www/1k.bin || echo "BODY MISMATCH $side"
    wrk -t2 -c16 -d1s http://127.0.0.1:80/1k.bin >/dev/null
    for c in 16 256; do
      b=$(cpu)
      wrk -t2 -c$c -d4s http://127.0.0.1:80/1k.bin > "$OUT/r$r-$side-c$c.wrk"
      a=$(cpu)
      req=$(awk '/requests in/{print $1}' "$OUT/r$r-$side-c$c.wrk")
      echo "r$r $side c$c rps=$(awk '/Requests\/sec/{print $2}' "$OUT/r$r-$side-c$c.wrk") cpu_ms_per_1k=$(( (a-b)*10*1000/req )) $(grep -i 'non-2xx\|socket errors' "$OUT/r$r-$side-c$c.wrk")" | tee -a "$OUT/summary"
    done
    b=$(cpu)
    timeout -s INT 4 httperf --server 127.0.0.1 --port 80 --uri /1k.bin --num-conns 1000000 --num-calls 1 --timeout 10 > "$OUT/r$r-$side-h.txt" 2>&1
    echo "r$r $side httperf $(grep -E '^Connection rate' "$OUT/r$r-$side-h.txt") $(grep -E '^Reply status' "$OUT/r$r-$side-h.txt")" | tee -a "$OUT/summary"
    grep -E 'requests_softirq|requests_worker|body_bytes' /proc/net/kweb | tr '\n' ' ' >> "$OUT/summary"; echo >> "$OUT/summary"
    rmmod kweb
  done
done
dmesg | grep -E 'BUG|WARNING|kmemleak' && echo "DMESG BAD"
echo "all done"
