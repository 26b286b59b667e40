#!/bin/bash
# Keep-alive cost per request: wrk -c16 and -c256 at kweb and nginx, perf stat -a.
#   run in a guest: scripts/vm.sh --name ka --memory 2G --timeout 900 \
#     /boot/vmlinuz-6.12.117+deb12-amd64 -- keepalive-stat.sh KO OUT
#   then: summary.py OUT
KO=$1; OUT=$2; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
PERF=$(ls /usr/bin/perf_* 2>/dev/null | sort -r | head -1); PERF=${PERF:-perf}
EV=cpu-clock,context-switches,irq:softirq_entry,raw_syscalls:sys_enter,sched:sched_wakeup,workqueue:workqueue_execute_start,net:net_dev_xmit
insmod "$KO" docroot=/run/p/www port=80
for round in 1 2; do
for side in kweb nginx; do
  port=80; [[ $side == nginx ]] && port=8081
  for c in 16 256; do
    wrk -t2 -c$c -d1s http://127.0.0.1:$port/1k.bin > /dev/null 2>&1
    timeout -s KILL 120 "$PERF" stat -a -x, -e "$EV" -o "$OUT/$side.$c.$round.stat" -- \
      wrk -t2 -c$c -d4s http://127.0.0.1:$port/1k.bin > "$OUT/$side.$c.$round.wrk" 2>&1
    echo "$side $c $round: $(grep Requests/sec "$OUT/$side.$c.$round.wrk")"
  done
done
done
cat /proc/net/kweb > "$OUT/kweb.proc"
rmmod kweb
echo "all done"
