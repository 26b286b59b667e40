#!/bin/bash
# Per-connection kernel work, 6.12 against 6.1: httperf (one connection
# per request, 1 KiB) at kweb, at nginx alone, and through kweb's handoff,
# each under perf stat -a (perf record -a hangs in these guests).
KO=$1; OUT=$2; mkdir -p $OUT
exec > $OUT/trace.txt 2>&1
sysctl -qw net.ipv4.tcp_tw_reuse=1 net.ipv4.ip_local_port_range="1024 65000"
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
insmod $KO docroot=/run/p/www port=80
uname -r
EV=cpu-clock,context-switches,cpu-migrations,irq:softirq_entry,irq:irq_handler_entry,workqueue:workqueue_execute_start,sched:sched_wakeup,raw_syscalls:sys_enter,tcp:tcp_destroy_sock
N=4000
for round in 1 2; do
for t in kweb:80:/1k.bin nginx:8081:/1k.bin handoff:80:/1k.bin?q=1; do
  IFS=: read -r n p u <<<"$t"
  httperf --server 127.0.0.1 --port $p --uri "$u" --num-conns 1000 --num-calls 1 --timeout 10 > /dev/null 2>&1
  httperf --server 127.0.0.1 --port $p --uri "$u" --num-conns $N --num-calls 1 --timeout 10 > $OUT/$n.$round.plain 2>&1
  cat /proc/net/softnet_stat > $OUT/$n.$round.softnet0
  timeout -s KILL 300 perf stat -a -x, -e $EV -o $OUT/$n.$round.stat -- \
    httperf --server 127.0.0.1 --port $p --uri "$u" --num-conns $N --num-calls 1 --timeout 10 > $OUT/$n.$round.httperf 2>&1
  cat /proc/net/softnet_stat > $OUT/$n.$round.softnet1
done
done
cat /proc/net/kweb > $OUT/kweb.proc
rmmod kweb
echo done
