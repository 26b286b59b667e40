#!/usr/bin/env bash
# Guest side of `make run` (scripts/run.sh): bring up the NIC QEMU forwards
# the host's 127.0.0.1:8080 to, copy examples/www to a tmpfs, load kweb.ko
# serving it on port 80, and wait until the guest is stopped.
#
#   serve.sh KWEB_KO [PORT]
#
# KWEB_SERVE_FAKE=1 serves with python's http.server instead of kweb.ko, to
# check the forwarding on its own.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
KO=${1:?usage: serve.sh KWEB_KO [PORT]}
PORT=${2:-80}
HOST_URL=${KWEB_HOST_URL:-http://127.0.0.1:8080/}
BASE=/run/kweb-www
DOCROOT=$BASE/www

# user_net_up; its say and die are replaced below.
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"
say() { echo "serve: $*"; }
die() { echo "serve: $*" >&2; exit 1; }

setup_net() {
  user_net_up || die "no network interface (was the guest booted with --net-forward?)"
  say "network: $NET_DEV 10.0.2.15/24"
}

# On tmpfs: the guest's / is the host's disk over 9p (slow, and shared).
make_docroot() {
  mkdir -p "$BASE"
  mountpoint -q "$BASE" || mount -t tmpfs -o mode=0755,size=256m kwebwww "$BASE"
  rm -rf "$DOCROOT"
  cp -r "$REPO/examples/www" "$DOCROOT"
  chmod -R u+rwX,go+rX,go-w "$DOCROOT"
}

start_server() {
  if [[ -n ${KWEB_SERVE_FAKE:-} ]]; then
    (cd "$DOCROOT" && exec /usr/bin/python3 -m http.server "$PORT") &
    return 0
  fi
  if ! insmod "$KO" "docroot=$DOCROOT" "port=$PORT"; then
    dmesg | grep 'kweb' | tail -n 20 >&2 || true
    die "insmod $KO failed"
  fi
}

stop_server() {
  if [[ -z ${KWEB_SERVE_FAKE:-} && -d /sys/module/kweb ]]; then
    rmmod kweb || true
  fi
}

main() {
  setup_net
  make_docroot
  start_server
  trap 'stop_server; exit 0' INT TERM
  say "kweb is serving examples/www at $HOST_URL (Ctrl-C to stop)"
  # Keep the kernel log visible on the console log (vm.sh keeps it).
  while true; do sleep 3600; done
}

main
