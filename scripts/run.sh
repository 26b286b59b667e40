#!/usr/bin/env bash
# `make run`: serve examples/www with kweb.ko inside a guest running the
# stock Debian 6.12 kernel, reachable from the host at
# http://127.0.0.1:${KWEB_RUN_PORT:-8080}/ until interrupted (Ctrl-C).
#
# Installs what is missing (scripts/deps.sh), builds the module, then boots
# the guest through scripts/vm.sh, whose guest runs tests/guest/serve.sh.
# The guest is under QEMU without KVM: allow ~30-60 s before it answers.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly HOST_PORT=${KWEB_RUN_PORT:-8080}
readonly KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}
export KWEB_CACHE

say() { echo "run: $*" >&2; }
die() { echo "run: $*" >&2; exit 1; }

cd "$REPO"

port_busy() {
  # A leftover QEMU (or anything else) on the port would make the forward
  # fail with a less helpful error deep in QEMU's output.
  ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

main() {
  "$REPO/scripts/deps.sh"
  local kernels
  kernels=$("$REPO/scripts/kernels.sh") || die "no stock kernels"
  eval "$kernels"
  say "building kweb.ko for $(basename "$K612_KDIR")"
  local log=$KWEB_CACHE/run-build.log
  mkdir -p "$KWEB_CACHE"
  if ! make -C "$REPO" modules KDIR="$K612_KDIR" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "build failed (full log: $log)"
  fi
  local ko
  ko=$REPO/build/$(basename "$K612_KDIR")/kweb.ko
  [[ -r $ko ]] || die "no $ko after the build"

  port_busy "$HOST_PORT" && die "127.0.0.1:$HOST_PORT is already in use"

  export KWEB_RESULTS=${KWEB_RESULTS:-$KWEB_CACHE/results/run-$(date +%Y%m%d-%H%M%S)}
  export KWEB_HOST_URL="http://127.0.0.1:$HOST_PORT/"
  say "booting $(basename "$K612_IMAGE") under QEMU (TCG, ~30-60 s);" \
    "then open $KWEB_HOST_URL"
  # vm.sh stops the guest (and frees the port) on Ctrl-C or termination.
  # The timeout is only a backstop for a forgotten session: a day.
  local rc=0
  "$REPO/scripts/vm.sh" --name serve --memory 1G --timeout 86400 \
    --net-forward "$HOST_PORT:80" "$K612_IMAGE" -- \
    "$REPO/tests/guest/serve.sh" "$ko" 80 || rc=$?
  # Ctrl-C is how this ends: vm.sh says 130 once the guest is gone.
  if ((rc == 130)); then
    say "stopped"
    return 0
  fi
  return "$rc"
}

main "$@"
