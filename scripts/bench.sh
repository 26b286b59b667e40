#!/usr/bin/env bash
# `make bench` / `make bench-smoke`: kweb against nginx in one QEMU guest
# with 2 vCPUs running a stock Debian kernel (no debug options).
#
#   bench.sh [--kernel 6.12|6.1] [--smoke] [--kvm] [-- GUEST_PY_ARGS...]
#
# Installs what is missing (scripts/deps.sh), builds kweb.ko for the
# kernel, boots the guest through scripts/vm.sh, whose guest runs
# tests/guest/bench.sh (bench/guest.py: A/A calibration, kweb against
# nginx, nginx behind kweb against nginx), then makes the report on the
# host with bench/report.py: bench.md (printed) and bench.png, next to
# the raw bench.jsonl in
#   ${KWEB_RESULTS:-results/bench-<timestamp>}/bench<kernel>[-smoke]/
# (results/bench-latest points to the newest).
#
#   --kernel   6.12 (default) or 6.1
#   --smoke    one short round of six rows (what `make check` runs)
#   --kvm      KVM instead of TCG (needs /dev/kvm); TCG emulates every
#              instruction, which under-reports servers that make many
#              system calls and flatters kernel-side serving
#   GUEST_PY_ARGS  passed to bench/guest.py, e.g. --rounds 7
#              --duration 10 --comparisons kweb --rows wrk256:1k, or
#              --comparisons tls-aa,tls,tls-ossl (HTTPS, with userctl's
#              kwebctl and kwebtlsd, built here; --tls-port, --tls-rows)
#
# KWEB_BENCH_TIMEOUT bounds the guest (seconds; default 900 for --smoke,
# 14400 otherwise). Under TCG, QEMU counts the instructions each vCPU
# executes (bench/qemu/kwebicount.c, built here), the report's headline;
# KWEB_BENCH_ICOUNT=0 leaves the plugin out. Exit status: the guest's (0 iff every timed run
# passed its checks), or 1 if the report could not be made. Timing is
# reported, never asserted.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
export KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}
# Debian's python: matplotlib comes from python3-matplotlib.
readonly PY=${KWEB_PYTHON:-/usr/bin/python3}

say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }
usage() {
  echo "usage: $0 [--kernel 6.12|6.1] [--smoke] [--kvm] [-- GUEST_PY_ARGS...]" >&2
  exit 2
}

kernel=6.12
smoke=0
kvm=0
while (($#)); do
  case $1 in
    --kernel) kernel=${2:?}; shift 2 ;;
    --smoke) smoke=1; shift ;;
    --kvm) kvm=1; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) usage ;;
  esac
done
extra=("$@")

main() {
  "$REPO/scripts/deps.sh"
  local kernels image kdir tag
  # kernels.sh fails if either kernel is missing; take what it found.
  kernels=$("$REPO/scripts/kernels.sh") || true
  eval "$(grep -E '^K6[0-9]+_(IMAGE|KDIR)=' <<<"$kernels" || true)"
  case $kernel in
    6.12) image=${K612_IMAGE:-}; kdir=${K612_KDIR:-}; tag=bench612 ;;
    6.1) image=${K61_IMAGE:-}; kdir=${K61_KDIR:-}; tag=bench61 ;;
    *) die "--kernel must be 6.12 or 6.1, not $kernel" ;;
  esac
  [[ -n $image && -n $kdir ]] || die "no stock $kernel kernel (see scripts/kernels.sh)"
  ((smoke)) && tag+=-smoke

  local stamp results dir log ko floor_ko
  stamp=$(date +%Y%m%d-%H%M%S)
  results=${KWEB_RESULTS:-$REPO/results/bench-$stamp}
  export KWEB_RESULTS=$results
  dir=$results/$tag
  mkdir -p "$dir"
  log=$dir/build.log
  say "building kweb.ko for $(basename "$kdir")"
  if ! make -C "$REPO" modules KDIR="$kdir" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "build failed (full log: $log)"
  fi
  ko=$REPO/build/$(basename "$kdir")/kweb.ko
  [[ -r $ko ]] || die "no $ko after the build"
  # The floor (bench/floor), for the floor comparison.
  if ! make -C "$REPO/bench/floor" modules KDIR="$kdir" >>"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "floor build failed (full log: $log)"
  fi
  floor_ko=$REPO/build/floor/$(basename "$kdir")/kwebfloor.ko
  # kwebctl and kwebtlsd, for the TLS comparisons (kweb-tls).
  if ! make -C "$REPO/userctl" >>"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "userctl build failed (full log: $log)"
  fi

  local timeout_s vm_args=(--name "$tag" --cpus 2 --memory 2G)
  # The TSC as clocksource, as on hardware. TCG's CPU model is an AMD one
  # without constant_tsc, which 6.1 takes for unsynchronized TSCs on 2
  # vCPUs: it falls back to the HPET, whose every read is an emulated
  # MMIO access (read_hpet() was 14-22% of a 6.1 guest's samples, and
  # none on 6.12, which keeps the TSC). See docs/bench/README.md.
  vm_args+=(--append tsc=reliable)
  timeout_s=${KWEB_BENCH_TIMEOUT:-$( ((smoke)) && echo 900 || echo 14400)}
  vm_args+=(--timeout "$timeout_s")
  if ((kvm)); then
    vm_args+=(--kvm)
    export KWEB_BENCH_ACCEL=kvm
  else
    export KWEB_BENCH_ACCEL=tcg
    # KWEB_BENCH_PIN=1: the server's vCPU on a host CPU of its own (see
    # scripts/vm.sh). Not the default: with vCPU 1 and QEMU's main loop
    # sharing the other host CPU, kweb's CPU per keep-alive request read
    # 2.7x higher (209 against 78 ms per 1,000), nginx's 1.1x: the
    # server's vCPU waits, busy, for the main loop (the BQL, IPIs).
    ((${KWEB_BENCH_PIN:-0})) && vm_args+=(--pin-vcpu0)
  fi
  local guest_args=()
  ((smoke)) && guest_args+=(--smoke)
  guest_args+=(--floor-ko "$floor_ko")
  guest_args+=("$ko" "$dir" "$tag")
  ((${#extra[@]})) && guest_args+=(-- "${extra[@]}")

  # The host's view of the server's CPU: its vCPU thread's CPU time,
  # read by bench/hostcpu.py whenever the guest asks (the guest falls
  # back to its own measure without it, as under `make check`).
  local hostcpu_pid='' icount=()
  if ((!kvm)); then
    export KWEB_HOSTCPU_DIR=$dir/hostcpu
    rm -rf "$KWEB_HOSTCPU_DIR"
    mkdir -p "$KWEB_HOSTCPU_DIR"
    vm_args+=(--thread-names)
    # And the instructions each vCPU executes, counted by a TCG plugin
    # into a page of shared memory (KWEB_BENCH_ICOUNT=0: not counted).
    if ((${KWEB_BENCH_ICOUNT:-1})); then
      local so=$REPO/build/qemu/kwebicount.so
      local page=/dev/shm/kweb-icount-$tag-$$
      mkdir -p "$(dirname "$so")"
      if ! cc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden \
          -o "$so" "$REPO/bench/qemu/kwebicount.c" >>"$log" 2>&1; then
        tail -n 30 "$log" >&2
        die "bench/qemu/kwebicount.c: build failed (full log: $log)"
      fi
      vm_args+=(--qemu-plugin "$so,out=$page")
      icount=(--icount "$page")
    fi
    "$PY" "$REPO/bench/hostcpu.py" --name "kweb-$tag" \
      --dir "$KWEB_HOSTCPU_DIR" "${icount[@]}" 2>"$dir/hostcpu.err" &
    hostcpu_pid=$!
  fi
  say "booting $(basename "$image") ($KWEB_BENCH_ACCEL, 2 vCPUs);" \
    "results in $dir"
  local rc=0
  "$REPO/scripts/vm.sh" "${vm_args[@]}" "$image" -- \
    "$REPO/tests/guest/bench.sh" "${guest_args[@]}" || rc=$?
  if [[ -n $hostcpu_pid ]]; then
    kill "$hostcpu_pid" 2>/dev/null || true
    wait "$hostcpu_pid" 2>/dev/null || true
  fi
  ((${#icount[@]})) && rm -f "${icount[1]}"

  if [[ -s $dir/bench.jsonl ]]; then
    if ! "$PY" "$REPO/bench/report.py" --out "$dir" "$dir/bench.jsonl"; then
      say "report failed"
      ((rc)) || rc=1
    fi
  else
    say "no results in $dir/bench.jsonl"
    ((rc)) || rc=1
  fi
  if [[ $results == "$REPO/results/bench-$stamp" ]]; then
    ln -sfn "bench-$stamp" "$REPO/results/bench-latest"
  fi
  say "results: $dir (guest status $rc)"
  return "$rc"
}

main
