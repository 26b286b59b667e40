#!/bin/bash
# Connection rate, one build of kweb against another, alternating in one
# guest beside nginx: httperf (one connection per request, 1 KiB), one
# process and four at once; perf stat -a counts work runs, context
# switches and wake-ups per connection (and KWEB_AB_EVENTS, if set).
#   closer-ab.sh OUTDIR ROUNDS A.ko [B.ko [C.ko]]   (sides nginx a b c)
#   run in a guest: scripts/vm.sh --name ab --memory 2G --timeout 1200 \
#     /boot/vmlinuz-6.12.117+deb12-amd64 -- closer-ab.sh OUT 2 A.ko B.ko
#   then: summary.py OUT
OUT=$1; ROUNDS=$2; shift 2; KOS=("$@"); mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
sysctl -qw net.ipv4.tcp_tw_reuse=1 net.ipv4.ip_local_port_range="1024 65000"
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
uname -r
PERF=$(ls /usr/bin/perf_* 2>/dev/null | sort -r | head -1); PERF=${PERF:-perf}
EV=context-switches,workqueue:workqueue_execute_start,sched:sched_wakeup${KWEB_AB_EVENTS:+,$KWEB_AB_EVENTS}
N=3000
hp() { httperf --server 127.0.0.1 --port "$1" --uri /1k.bin --num-conns "$2" --num-calls 1 --timeout 10; }
for round in $(seq "$ROUNDS"); do
SIDES=(nginx a b c)
for side in "${SIDES[@]:0:${#KOS[@]} + 1}"; do
  port=80
  case $side in
  nginx) port=8081 ;;
  a) insmod "${KOS[0]}" docroot=/run/p/www port=80 ;;
  b) insmod "${KOS[1]}" docroot=/run/p/www port=80 ;;
  c) insmod "${KOS[2]}" docroot=/run/p/www port=80 ;;
  esac
  hp "$port" 500 > /dev/null 2>&1
  hp "$port" "$N" > "$OUT/$side.$round.plain" 2>&1
  for i in 1 2 3 4; do hp "$port" $((N / 2)) > "$OUT/$side.$round.p4.$i" 2>&1 & done; wait
  timeout -s KILL 300 "$PERF" stat -a -x, -e "$EV" -o "$OUT/$side.$round.stat" -- \
    httperf --server 127.0.0.1 --port "$port" --uri /1k.bin --num-conns "$N" --num-calls 1 --timeout 10 > "$OUT/$side.$round.perf" 2>&1
  [[ $side != nginx ]] && { cat /proc/net/kweb > "$OUT/$side.$round.proc"; rmmod kweb; }
  echo "round $round $side done"
done
done
dmesg | grep -E "BUG|WARNING|kmemleak|Oops" && echo "KERNEL REPORT"
echo "all done"
