# shellcheck shell=bash
# Sourced by the ad-hoc measurement scripts below docs/bench, in a
# throw-away guest: loopback up, a tmpfs docroot with one 1 KiB file
# (/run/p/www/1k.bin), and nginx tuned as in bench/nginx.conf.in, alone
# on port 8081 and as kweb's backend on 127.0.0.1:8080.
ip link set lo up
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
