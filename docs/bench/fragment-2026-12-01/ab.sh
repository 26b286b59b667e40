#!/bin/bash
# kweb before and after the per-CPU page fragment, alternating in one
# guest beside nginx: closer-ab.sh's httperf rounds (one connection per
# request, 1 KiB; one process and four), with page allocations and frees
# counted per connection, then bench/idle.py's memory of 10,000 idle
# keep-alive connections for each build.
#   run in a guest: scripts/vm.sh --name ab --memory 2G --timeout 3000 \
#     /boot/vmlinuz-6.12.117+deb12-amd64 -- ab.sh OUT ROUNDS A.ko B.ko
#   then: ../closer-2026-11-29/summary.py OUT; idle.py's lines are in
#   OUT/idle.jsonl
OUT=$1; ROUNDS=$2; A=$3; B=$4
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
KWEB_AB_EVENTS=kmem:mm_page_alloc,kmem:mm_page_free \
  "$HERE/../closer-2026-11-29/closer-ab.sh" "$OUT" "$ROUNDS" "$A" "$B"
exec >> "$OUT/trace.txt" 2>&1
kill "$(cat /run/p/ng/nginx.pid)"
for ko in "$A" "$B"; do
  echo "idle: $ko"
  python3 "$REPO/bench/idle.py" --guest --base /run/p/idle --out "$OUT/idle.jsonl" \
    --kweb-ko "$ko" --conns 10000 --rounds 1
done
dmesg | grep -E "BUG|WARNING|kmemleak|Oops" && echo "KERNEL REPORT"
echo "ab done"
