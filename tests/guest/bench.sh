#!/usr/bin/env bash
# The benchmark's guest side (scripts/bench.sh boots it through
# scripts/vm.sh; `make check` runs it with --smoke), as root inside a
# virtme-ng guest:
#
#   bench.sh [--smoke] [--floor-ko KO] KWEB_KO [RESULTS_DIR [TAG]]
#            [-- GUEST_PY_ARGS...]
#
# or KWEB_KO, RESULTS_DIR and TAG from $KWEB_KO, $KWEB_RUN_DIR, $KWEB_TAG.
# Runs bench/guest.py on a tmpfs (docroot, nginx's run directory) with
# its raw results in RESULTS_DIR/bench.jsonl, bench/idle.py (memory per
# idle connection) into the same file, then bench/report.py
# (Markdown only, RESULTS_DIR/bench.md; the host draws the chart). Test
# lines: every timed run passed its checks (status codes, body sizes,
# kweb's counters), the report was made, dmesg is clean. Nothing about
# timing is ever a test line. --smoke: one short round of a few rows,
# so the benchmark keeps working (bench/guest.py --smoke).
set -uo pipefail # no -e: a failing check is a test line, not the end

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

smoke=()
floor=() # bench/floor/kwebfloor.ko, for the floor comparison
while [[ ${1:-} == --smoke || ${1:-} == --floor-ko ]]; do
  if [[ $1 == --smoke ]]; then
    smoke=(--smoke)
    shift
  else
    floor=(--floor-ko "${2:?}")
    shift 2
  fi
done
pos=()
while (($#)) && [[ $1 != -- ]]; do
  pos+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")

KO=${pos[0]:-${KWEB_KO:-}}
RUN_DIR=${pos[1]:-${KWEB_RUN_DIR:-}}
TAG=${pos[2]:-${KWEB_TAG:-${KWEB_GUEST_NAME:-bench}}}
[[ -n $KO && -r $KO ]] || die "$TAG: kweb.ko given and readable (${KO:-unset})"
[[ -n $RUN_DIR ]] || die "$TAG: results directory given"
mkdir -p "$RUN_DIR"

# Guest-private tmpfs: the guest's / is the host's disk (9p, slow).
BASE=/run/kweb-bench
JSONL=$RUN_DIR/bench.jsonl
umask 022

ip link set lo up 2>/dev/null || true
# kTLS, for the TLS comparisons (kweb-tls, nginx-ktls); harmless otherwise.
modprobe tls 2>/dev/null || true
# And the CPU's AES-GCM, as udev loads it at boot on hardware (by the
# CPU's modalias). A vng guest runs no udev: kTLS then got gcm(aes) on
# aes-generic, about 105 instructions a byte, while OpenSSL in user
# space used AES-NI, so kTLS read dearer than it is anywhere else.
modprobe -q aesni_intel 2>/dev/null || true
modprobe -q ghash_clmulni_intel 2>/dev/null || true
awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ { p = $3 }
  /^$/ && n == "gcm(aes)" { print "gcm(aes)", d, p }' /proc/crypto \
  >"$RUN_DIR/crypto.txt" 2>/dev/null || true
kmsg_mark "bench ($TAG) begin"
say "$TAG: kernel $(uname -r), $(nproc) CPUs, module $KO"
say "$TAG: kTLS's AES-GCM: $(sort -k3 -n "$RUN_DIR/crypto.txt" 2>/dev/null |
  tail -n 1)"

rc=0
if ! mount_tmpfs "$BASE" >"$RUN_DIR/mount.err" 2>&1; then
  not_ok "$TAG: tmpfs for the bench docroot"
  diag <"$RUN_DIR/mount.err"
  rc=1
fi

if ((rc == 0)); then
  rm -f "$JSONL"
  # Progress ("bench: ..." lines) on stdout, as it comes.
  "$PY" "$REPO/bench/guest.py" --guest --base "$BASE" --out "$JSONL" \
    --kweb-ko "$KO" "${floor[@]}" "${smoke[@]}" "${extra[@]}" \
    2>"$RUN_DIR/guest-py.err" |
    tee "$RUN_DIR/bench.log"
  rc=${PIPESTATUS[0]}
  say "$TAG: bench/guest.py took ${SECONDS}s"
  t=$SECONDS
  runs=$(grep -c '"type": "run"' "$JSONL" 2>/dev/null)
  failed=$(grep -c '"ok": false' "$JSONL" 2>/dev/null)
  if ((rc == 0)) && ((runs > 0)); then
    ok "$TAG: benchmark$( ((${#smoke[@]})) && echo ' smoke run'): $runs timed runs," \
      "every one a 200 of the right size, served by the right server"
  else
    not_ok "$TAG: benchmark$( ((${#smoke[@]})) && echo ' smoke run'): every timed" \
      "run passes its checks (status $rc, ${runs:-0} runs, ${failed:-0} failed)"
    # A failed row's next line says what moved over it (counters, logs).
    { grep -A1 'FAILED' "$RUN_DIR/bench.log"; tail -n 20 "$RUN_DIR/guest-py.err"; } |
      diag 60
  fi
  # Memory per idle keep-alive connection (bench/idle.py): kweb, nginx
  # and the TCP sockets alone, into the same results.
  # KWEB_BENCH_IDLE=0 (an experiment's loop, passed through vm.sh's
  # environment): not measured.
  idle=(--conns 10000 --rounds 3)
  ((${#smoke[@]})) && idle=(--conns 500 --rounds 1)
  if [[ ${KWEB_BENCH_IDLE:-1} == 0 ]]; then
    say "$TAG: idle connections not measured (KWEB_BENCH_IDLE=0)"
  elif "$PY" "$REPO/bench/idle.py" --guest --base "$BASE/idle" --out "$JSONL" \
    --kweb-ko "$KO" "${idle[@]}" 2>"$RUN_DIR/idle-py.err" |
    tee -a "$RUN_DIR/bench.log"; then
    say "$TAG: bench/idle.py took $((SECONDS - t))s"
    ok "$TAG: idle connections held: kweb's, nginx's and bare TCP's memory measured"
  else
    not_ok "$TAG: idle connections held and measured"
    { grep 'failed' "$RUN_DIR/bench.log"; tail -n 20 "$RUN_DIR/idle-py.err"; } |
      diag 40
  fi
  if [[ -s $JSONL ]] &&
    "$PY" "$REPO/bench/report.py" --no-png --out "$RUN_DIR" "$JSONL" \
      >"$RUN_DIR/report.log" 2>&1; then
    ok "$TAG: benchmark report ($RUN_DIR/bench.md)"
  else
    not_ok "$TAG: benchmark report"
    tail -n 20 "$RUN_DIR/report.log" 2>/dev/null | diag 20
  fi
fi

# Whatever went wrong, leave nothing loaded or listening.
if module_loaded kweb; then
  bounded 60 rmmod kweb >/dev/null 2>&1
fi
if module_loaded kwebfloor; then
  bounded 60 rmmod kwebfloor >/dev/null 2>&1
fi
kmsg_mark "bench ($TAG) end"
dmesg_check "$TAG: dmesg clean (bench)"
save_dmesg bench
umount -l "$BASE" 2>/dev/null
finish "$TAG bench"
