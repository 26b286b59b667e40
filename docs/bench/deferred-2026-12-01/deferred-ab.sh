#!/bin/bash
# nginx's listen ... deferred (TCP_DEFER_ACCEPT) alone and as kweb's
# backend, against plain listeners, alternating in one guest: httperf, one
# connection per request, 1 KiB, one process. Sides: ng and ngd (nginx
# alone, plain and deferred), ho and hod (every connection handed off by
# kweb to a plain and to a deferred backend listener).
#   run in a guest: scripts/vm.sh --name df --memory 2G --timeout 1800 \
#     /boot/vmlinuz-6.12.117+deb12-amd64 -- deferred-ab.sh OUT ROUNDS KO
OUT=$1; ROUNDS=$2; KO=$3; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
sysctl -qw net.ipv4.tcp_tw_reuse=1 net.ipv4.ip_local_port_range="1024 65000"
ip link set lo up
mkdir -p /run/p && mount -t tmpfs tmpfs /run/p
mkdir -p /run/p/www/b /run/p/ng
head -c 1024 /dev/urandom > /run/p/www/1k.bin
cp /run/p/www/1k.bin /run/p/www/b/
cat > /run/p/ng/nginx.conf <<NG
worker_processes 2;
user root root;
pid /run/p/ng/nginx.pid;
error_log /run/p/ng/error.log;
worker_rlimit_nofile 65536;
events { worker_connections 16384; }
http { access_log off; log_not_found off; sendfile on; tcp_nopush on; tcp_nodelay on;
  open_file_cache max=10000 inactive=60s; open_file_cache_valid 60s;
  server { listen 8081 reuseport; listen 8083 reuseport deferred;
    listen 127.0.0.1:8080 reuseport; listen 127.0.0.1:8082 reuseport deferred;
    root /run/p/www; } }
NG
ulimit -n 65536
/usr/sbin/nginx -c /run/p/ng/nginx.conf
uname -r
hp() { httperf --server 127.0.0.1 --port "$1" --uri "$2" --num-conns "$3" --num-calls 1 --timeout 10; }
for round in $(seq "$ROUNDS"); do
  for side in ng ngd ho hod; do
    case $side in
    ng) port=8081 path=/1k.bin ;;
    ngd) port=8083 path=/1k.bin ;;
    ho) port=80 path=/b/1k.bin
        insmod "$KO" docroot=/run/p/www port=80 dynamic_prefixes=/b/ backend_port=8080 ;;
    hod) port=80 path=/b/1k.bin
         insmod "$KO" docroot=/run/p/www port=80 dynamic_prefixes=/b/ backend_port=8082 ;;
    esac
    hp "$port" "$path" 500 > /dev/null 2>&1
    hp "$port" "$path" 3000 > "$OUT/$side.$round.plain" 2>&1
    if [[ $side == ho* ]]; then
      cat /proc/net/kweb > "$OUT/$side.$round.proc"
      rmmod kweb
    fi
    echo "round $round $side: $(grep -E '^Connection rate' "$OUT/$side.$round.plain")"
  done
done
dmesg | grep -E "BUG|WARNING|kmemleak|Oops" && echo "KERNEL REPORT"
echo "all done"
