#!/bin/bash
# Where the CPU goes, by kernel stack and command, sampled with bpftrace on
# every CPU while one load runs at kweb, at nginx, and through kweb's
# handoff to nginx:
#   wrk16, wrk256  keep-alive, 1 KiB (wrk -t2 -cN)
#   httperf        one connection per request, 1 KiB
# Run in a guest:
#   scripts/vm.sh --name pr --memory 2G --timeout 900 KERNEL -- profile.sh KO OUT LOAD
# then: fold.py OUT. packets.sh, beside it, counts the segments of a
# connection.
KO=$1; OUT=$2; LOAD=${3:-wrk256}; mkdir -p "$OUT"
exec > "$OUT/trace.txt" 2>&1
# shellcheck source=docs/bench/adhoc-guest.sh
source "$(dirname "$0")/../adhoc-guest.sh"
mkdir -p /run/p/www/b && cp /run/p/www/1k.bin /run/p/www/b/
echo 8080,8081 > /proc/sys/net/ipv4/ip_local_reserved_ports
echo 1024 65535 > /proc/sys/net/ipv4/ip_local_port_range
echo 2 > /proc/sys/net/ipv4/tcp_tw_reuse
insmod "$KO" docroot=/run/p/www port=80 dynamic_prefixes=/b/ backend_port=8080

load() {	# load SECONDS PORT PATH
  case $LOAD in
  wrk*) wrk -t2 -c"${LOAD#wrk}" -d"$1"s "http://127.0.0.1:$2$3" ;;
  httperf) timeout -s INT "$1" httperf --server 127.0.0.1 --port "$2" --uri "$3" \
             --num-conns 1000000 --num-calls 1 --timeout 10 ;;
  esac
}

for side in kweb nginx handoff; do
  port=80 path=/1k.bin
  [[ $side == nginx ]] && port=8081
  [[ $side == handoff ]] && path=/b/1k.bin
  load 1 $port $path > /dev/null 2>&1
  # bpftrace takes a while to start under TCG: the load starts once it samples.
  bpftrace -e 'BEGIN { printf("sampling\n"); }
    profile:hz:499 { @[comm, kstack(perf, 40)] = count(); }
    interval:s:8 { exit(); }' > "$OUT/$side.stacks" 2> "$OUT/$side.bpferr" &
  for _ in $(seq 600); do grep -q sampling "$OUT/$side.stacks" && break; sleep 0.2; done
  load 10 $port $path > "$OUT/$side.load" 2>&1
  wait
  echo "$side: $(grep -E 'Requests/sec|^Connection rate' "$OUT/$side.load")"
done
cat /proc/net/kweb > "$OUT/kweb.proc"
rmmod kweb
echo "all done"
