#!/usr/bin/env bash
# `make soak`: everything at once for a while in one QEMU guest, by
# default the debug kernel (KASAN, lockdep, kmemleak): wrk keep-alive
# load, handoffs to nginx, file churn, kwebctl config set and cache flush,
# slowloris (tests/guest/soak.sh says what each checks). Nothing may be
# lost, no byte wrong, nothing in dmesg or kmemleak.
#
#   soak.sh [--minutes N] [--kernel debug|6.12|6.1]
#
#   --minutes  how long the clients run (default 10)
#   --kernel   debug (default; scripts/debug-kernel.sh, built if needed),
#              or a stock Debian kernel for a quicker loop
#
# Installs what is missing (scripts/deps.sh), builds kweb.ko and kwebctl,
# boots the guest through scripts/vm.sh, then writes the report
# (scripts/soak_report.py) to docs/soak/<kernel>.md and prints it. The
# guest's results go to ${KWEB_RESULTS:-$KWEB_CACHE/results/soak-<stamp>}/
# soak-<kernel>/. Exit status: the guest's (0 iff every check passed), or
# 1 if the report could not be made.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
export KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}
readonly PY=${KWEB_PYTHON:-/usr/bin/python3}

say() { echo "soak: $*" >&2; }
die() { echo "soak: $*" >&2; exit 1; }
usage() {
  echo "usage: $0 [--minutes N] [--kernel debug|6.12|6.1]" >&2
  exit 2
}

minutes=10
kernel=debug
while (($#)); do
  case $1 in
    --minutes) minutes=${2:?}; shift 2 ;;
    --kernel) kernel=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) usage ;;
  esac
done
[[ $minutes =~ ^[1-9][0-9]*$ ]] || die "--minutes must be a positive integer"

main() {
  "$REPO/scripts/deps.sh"
  local image='' kdir='' out vm_args=() guest_env=()
  case $kernel in
    debug)
      out=$("$REPO/scripts/debug-kernel.sh") || die "no debug kernel"
      image=$(sed -n 's/^KERNEL=//p' <<<"$out")
      kdir=$(sed -n 's/^KDIR=//p' <<<"$out")
      # As make check's debug guest: the host's files cached (a 9p round
      # trip per access made boot take minutes), and more time for what
      # KASAN and lockdep slow down.
      vm_args=(--root-cache loose)
      guest_env=(KWEB_SOAK_CLIENT_TIMEOUT=60 KWEB_SOAK_MARGIN=15
        KWEB_CLOSE_WAIT=6)
      ;;
    6.12|6.1)
      # kernels.sh fails if either kernel is missing; take what it found.
      out=$("$REPO/scripts/kernels.sh") || true
      eval "$(grep -E '^K6[0-9]+_(IMAGE|KDIR)=' <<<"$out" || true)"
      if [[ $kernel == 6.12 ]]; then
        image=${K612_IMAGE:-}; kdir=${K612_KDIR:-}
      else
        image=${K61_IMAGE:-}; kdir=${K61_KDIR:-}
      fi
      ;;
    *) die "--kernel must be debug, 6.12 or 6.1, not $kernel" ;;
  esac
  [[ -n $image && -r $image && -n $kdir ]] || die "no $kernel kernel"

  local stamp results dir tag log ko
  stamp=$(date +%Y%m%d-%H%M%S)
  results=${KWEB_RESULTS:-$KWEB_CACHE/results/soak-$stamp}
  export KWEB_RESULTS=$results
  tag=soak-$kernel
  dir=$results/$tag
  mkdir -p "$dir"
  log=$dir/build.log
  say "building kweb.ko for $(basename "$kdir") and kwebctl"
  if ! { make -C "$REPO" modules KDIR="$kdir" && make -C "$REPO/userctl"; } \
      >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "build failed (full log: $log)"
  fi
  ko=$REPO/build/$(basename "$kdir")/kweb.ko
  [[ -r $ko ]] || die "no $ko after the build"

  # Boot and setup (the debug kernel: 300 s under TCG, 900 on a busy
  # host), the soak, then the clients' last rounds, kmemleak's scans and
  # rmmod.
  local secs=$((minutes * 60)) timeout_s
  timeout_s=$((secs + $([[ $kernel == debug ]] && echo 2400 || echo 900)))
  say "booting $(basename "$image") for a ${minutes}-minute soak" \
    "(timeout ${timeout_s}s); results in $dir"
  local rc=0
  "$REPO/scripts/vm.sh" --name "$tag" --memory 2G --timeout "$timeout_s" \
    "${vm_args[@]}" "$image" -- env KWEB_SOAK_SECONDS="$secs" \
    "${guest_env[@]}" "$REPO/tests/guest/soak.sh" "$ko" "$dir" "$kernel" ||
    rc=$?

  local md=$REPO/docs/soak/$kernel.md
  if ! "$PY" "$REPO/scripts/soak_report.py" "$dir" --out "$md" \
      --command "scripts/soak.sh --kernel $kernel --minutes $minutes"; then
    say "no report (guest status $rc; see $dir)"
    ((rc)) || rc=1
  fi
  say "report: $md; results: $dir (guest status $rc)"
  return "$rc"
}

main
