#!/bin/bash
# kweb with wrk -c16 against -c256: CPU per request, TCP counters, stacks.
# Run like ab.sh (one KO); the stacks (cN.stacks) fold with
# ../profile-2026-11-29/fold.py after copying one to kweb.stacks.
KO=$1; OUT=$2; ROUNDS=${3:-3}; PROF=${4:-1}; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
echo 8080,8081 > /proc/sys/net/ipv4/ip_local_reserved_ports
insmod "$KO" docroot=/run/p/www port=80
cpu() { awk '/^cpu /{print $2+$3+$4+$6+$7+$8, $5}' /proc/stat; }
run() { # conns secs tag
  local b a; b=$(cpu); nstat -n
  wrk -t2 -c"$1" -d"$2"s http://127.0.0.1:80/1k.bin > "$OUT/$3.wrk" 2>&1
  a=$(cpu); nstat -a > "$OUT/$3.nstat"
  local req; req=$(awk '/requests in/{print $1}' "$OUT/$3.wrk")
  echo "$3 req=$req rps=$(awk '/Requests\/sec/{print $2}' "$OUT/$3.wrk") busy_jiffies=$(( ${a% *} - ${b% *} )) idle=$(( ${a#* } - ${b#* } ))" | tee -a "$OUT/summary"
}
for c in 16 256; do wrk -t2 -c$c -d1s http://127.0.0.1:80/1k.bin >/dev/null; done
for r in $(seq "$ROUNDS"); do
  for c in 16 256; do run "$c" 4 "r$r-c$c"; done
done
if [ "$PROF" = 1 ]; then
for c in 16 256; do
  bpftrace -e 'BEGIN { printf("sampling\n"); }
    profile:hz:499 { @[comm, kstack(perf, 40)] = count(); }
    interval:s:6 { exit(); }' > "$OUT/c$c.stacks" 2> "$OUT/c$c.bpferr" &
  for _ in $(seq 600); do grep -q sampling "$OUT/c$c.stacks" && break; sleep 0.2; done
  run $c 7 prof-c$c
  wait
done
fi
cat /proc/net/kweb > "$OUT/kweb.proc"
rmmod kweb
echo "all done"
