#!/bin/bash
# Per-connection kernel work, 6.12 against 6.1: httperf (one connection
# per request, 1 KiB) at kweb, at nginx alone, and through kweb's handoff,
# each under perf stat -a (perf record -a hangs in these guests).
KO=$1; OUT=$2; mkdir -p $OUT
exec > $OUT/trace.txt 2>&1
ip link set lo up
sysctl -qw net.ipv4.tcp_tw_reuse=1 net.ipv4.ip_local_port_range="1024 65000"
mkdir -p /run/p && mount -t tmpfs tmpfs /run/p
mkdir -p /run/p/www /run/p/ng
head -c 1024 /dev/urandom > /run/p/www/1k.bin
cat > /run/p/ng/nginx.conf <<NG
worker_processes 2;
user root root;
pid /run/p/ng/nginx.pid;
error_log /run/p/ng/error.log;
worker_rlimit_nofile 65536;
events { worker_connections 16384; }
http { access_log off; log_not_found off; sendfile on; tcp_nopush on; tcp_nodelay on;
  open_file_cache max=10000 inactive=60s; open_file_cache_valid 60s;
  server { listen 8081 reuseport; listen 127.0.0.1:8080 reuseport; root /run/p/www; } }
NG
ulimit -n 65536
/usr/sbin/nginx -c /run/p/ng/nginx.conf
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
