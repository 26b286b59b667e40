#!/bin/bash
# nginx's "deferred" on the listener behind kweb, and on nginx alone:
# httperf, one client, one connection per request, 1 KiB, the four
# sides in turn in one guest, ROUNDS times:
#   nginx        nginx alone, port 8081
#   nginx-def    nginx alone, port 8083 with "deferred"
#   handoff      kweb on port 80, every request handed to 127.0.0.1:8080
#   handoff-def  the same to 127.0.0.1:8082 with "deferred"
# (kweb's backend_port is switched at run time). Per side: connections/s,
# guest CPU time and context switches per connection. With KWEB_TIMELINE=1,
# timeline.bt runs beside each timed run and writes OUT/SIDE.bt: the mean
# time from a connection's SYN to each step (slower with it on).
#   scripts/vm.sh --name df --memory 2G --timeout 1800 --append tsc=reliable \
#     /boot/vmlinuz-6.12.117+deb12-amd64 -- ab.sh KO OUT ROUNDS
OUT=$2; KO=$1; ROUNDS=${3:-6}; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
kill "$(cat /run/p/ng/nginx.pid)"
while [[ -e /run/p/ng/nginx.pid ]]; do sleep 0.1; done
sed -i 's|root /run/p/www;|listen 127.0.0.1:8082 reuseport deferred; listen 8083 reuseport deferred; root /run/p/www;|' \
  /run/p/ng/nginx.conf
grep listen /run/p/ng/nginx.conf
/usr/sbin/nginx -c /run/p/ng/nginx.conf
mkdir -p /run/p/www/b && cp /run/p/www/1k.bin /run/p/www/b/
echo 8080-8083 > /proc/sys/net/ipv4/ip_local_reserved_ports
echo 1024 65535 > /proc/sys/net/ipv4/ip_local_port_range
echo 2 > /proc/sys/net/ipv4/tcp_tw_reuse
insmod "$KO" docroot=/run/p/www port=80 dynamic_prefixes=/b/ backend_port=8080
tck=$(getconf CLK_TCK)
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
ctxt() { awk '/^ctxt/{print $2}' /proc/stat; }
perf() {	# SECONDS PORT PATH
  timeout -s INT "$1" httperf --server 127.0.0.1 --port "$2" --uri "$3" \
    --num-conns 1000000 --num-calls 1 --timeout 10
}
run() {		# SIDE PORT PATH
  perf 1 "$2" "$3" > /dev/null 2>&1
  local b0 c0 b1 c1 n
  b0=$(busy); c0=$(ctxt)
  if [[ ${KWEB_TIMELINE:-} ]]; then
    bpftrace "$(dirname "$0")/timeline.bt" > "$OUT/$1.bt" 2>&1 &
    # bpftrace takes a while to start under TCG.
    for _ in $(seq 600); do grep -q go "$OUT/$1.bt" && break; sleep 0.2; done
  fi
  perf 5 "$2" "$3" > "$OUT/$1.load" 2>&1
  wait
  b1=$(busy); c1=$(ctxt)
  n=$(awk '/^Total: connections/{print $3}' "$OUT/$1.load")
  echo "$1 $(awk '/^Connection rate/{print $3}' "$OUT/$1.load")" \
    "conns $n errors $(awk '/^Errors: total/{print $3}' "$OUT/$1.load")" \
    "cpu_us/conn $(( (b1 - b0) * 1000000 / tck / n ))" \
    "ctxt/conn $(( (c1 - c0) * 100 / n ))e-2"
}
for _ in $(seq "$ROUNDS"); do
  run nginx 8081 /1k.bin
  echo 8080 > /sys/module/kweb/parameters/backend_port
  run handoff 80 /b/1k.bin
  run nginx-def 8083 /1k.bin
  echo 8082 > /sys/module/kweb/parameters/backend_port
  run handoff-def 80 /b/1k.bin
done
grep -E "^handoff|softirq" /proc/net/kweb
rmmod kweb
dmesg | grep -E "BUG|WARNING|Oops|kmemleak" && echo "KERNEL REPORT"
echo "all done"
