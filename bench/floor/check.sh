#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest-side check of kwebfloor.ko (not part of make check): exact answers
# (check.py), wrk and httperf runs, rmmod with connections open, a clean
# dmesg. As root in a throw-away guest, e.g.
#
#   scripts/vm.sh --name floor --cpus 2 --memory 2G \
#       /boot/vmlinuz-6.12.*-amd64 -- bench/floor/check.sh KO
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
KO=${1:?usage: check.sh KWEBFLOOR_KO}
PY=/usr/bin/python3
fails=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
param() { cat /sys/module/kwebfloor/parameters/"$1"; }

ip link set lo up
dmesg -C
echo "kernel $(uname -r)"
insmod "$KO" port=80 size=1024 || { not_ok insmod; exit 1; }
for h in 127.0.0.1 ::1; do
  if $PY "$HERE/check.py" 80 1024 "$h"; then ok "exact answers ($h)"; else not_ok "exact answers ($h)"; fi
done
n=$(curl -s -o /tmp/body http://127.0.0.1/anything -w '%{http_code} %{size_download}')
[[ $n == "200 1024" && $(head -c 8 /tmp/body) == 00001024 ]] && ok "curl: $n" || not_ok "curl: $n"
list=/tmp/list.txt
echo /b/1k.bin >$list
out=$(wrk -t1 -c16 -d2s -s "$REPO/bench/wrk/bench.lua" http://127.0.0.1/ -- $list check 2>&1 | grep bench-wrk)
echo "$out"
[[ $out =~ requests=([0-9]+)\ good=([0-9]+)\ bad=0 && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" && ${BASH_REMATCH[1]} -gt 0 && $out =~ errors_connect=0\ errors_read=0\ errors_write=0\ errors_status=0\ errors_timeout=0 ]] &&
  ok "wrk -c16, every response checked" || not_ok "wrk -c16"
out=$(wrk -t1 -c256 -d2s -s "$REPO/bench/wrk/bench.lua" http://127.0.0.1/ -- $list check 2>&1 | grep bench-wrk)
echo "$out"
[[ $out =~ requests=([0-9]+)\ good=([0-9]+)\ bad=0 && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" && ${BASH_REMATCH[1]} -gt 0 ]] &&
  ok "wrk -c256, every response checked" || not_ok "wrk -c256"
out=$(httperf --server 127.0.0.1 --port 80 --uri /b/1k.bin --num-conns 1000 --num-calls 1 --timeout 10 2>&1)
echo "$out" | grep -E "^(Total|Reply status|Reply size|Errors: total)"
echo "$out" | grep -q "^Reply status: 1xx=0 2xx=1000 3xx=0 4xx=0 5xx=0" &&
  echo "$out" | grep -q "^Errors: total 0 " && echo "$out" | grep -q "content 1024.0" &&
  ok "httperf: 1000 connections, 1000 good replies" || not_ok "httperf"
out=$(httperf --server 127.0.0.1 --port 80 --uri /b/1k.bin --num-conns 100 --num-calls 10 --timeout 10 2>&1)
echo "$out" | grep -q "^Reply status: 1xx=0 2xx=1000 " && echo "$out" | grep -q "^Errors: total 0 " &&
  ok "httperf: 10 calls per connection" || not_ok "httperf --num-calls 10"
sleep 1
echo "responses $(param responses) errors $(param errors)"
[[ $(param errors) == 0 ]] && ok "no errors counted" || not_ok "errors counted: $(param errors)"
echo "sockets: $(grep -E '^TCP' /proc/net/sockstat)"

# rmmod with connections open: idle, half a head, mid-keep-alive.
$PY - <<'PYEOF' &
import socket, time
socks = []
for i in range(50):
    s = socket.create_connection(("127.0.0.1", 80))
    if i % 3 == 1:
        s.sendall(b"GET / HTTP/1.1\r\nHo")
    elif i % 3 == 2:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
    socks.append(s)
for i in range(20):
    socks.append(socket.create_connection(("::1", 80)))
time.sleep(6)
PYEOF
pyp=$!
sleep 3
if rmmod kwebfloor; then ok "rmmod with 70 connections open"; else not_ok "rmmod with connections open"; fi
wait $pyp
sleep 1
echo "sockets after rmmod: $(grep -E '^TCP' /proc/net/sockstat)"

# Bigger bodies, and sizes refused.
insmod "$KO" port=8081 size=10000 && $PY "$HERE/check.py" 8081 10000 && rmmod kwebfloor &&
  ok "three pages of body" || not_ok "three pages of body"
insmod "$KO" size=0 2>/dev/null && { rmmod kwebfloor; not_ok "size=0 refused"; } || ok "size=0 refused"
insmod "$KO" size=20000 2>/dev/null && { rmmod kwebfloor; not_ok "size=20000 refused"; } || ok "size=20000 refused"
# Load and unload under load.
insmod "$KO" port=80
wrk -t1 -c64 -d3s http://127.0.0.1/ >/dev/null 2>&1 &
wp=$!
sleep 1.5
rmmod kwebfloor && ok "rmmod under wrk load" || not_ok "rmmod under wrk load"
wait $wp

dmesg | grep -E "BUG|WARNING|Oops|refcount|leak|general protection" && not_ok "dmesg clean" || ok "dmesg clean"
dmesg | tail -n 5
echo "failures: $fails"
exit $((fails > 0))
