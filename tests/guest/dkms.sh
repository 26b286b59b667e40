#!/usr/bin/env bash
# The kweb-dkms package's module in a guest of a kernel DKMS built it for
# (scripts/check.sh installs the packages on the host first, through
# scripts/deb-check.sh; the guest's / is the host's). What kweb.service
# does, by hand (vng's guests do not boot systemd): the commands of the
# packaged kweb.service, read from the unit. ExecStart's "modprobe kweb"
# loads DKMS's kweb.ko (not the build tree's) with the packaged
# /etc/modprobe.d/kweb.conf, to serve /var/www/html on port 80, and its
# "kwebctl apply /etc/kweb/kweb.conf" makes the packaged configuration
# so; ExecReload then changes nothing; ExecStop unloads the module.
#
#   dkms.sh RESULTS_DIR [TAG]
#
# Test lines as tests/guest/lib.sh says; exit status 0 iff all passed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

RUN_DIR=${1:?usage: dkms.sh RESULTS_DIR [TAG]}
TAG=${2:-dkms}
mkdir -p "$RUN_DIR"
LOG=$RUN_DIR/dkms.log
: >"$LOG"
KVER=$(uname -r)
DOCROOT=/var/www/html
PORT=80

# The build ID of a module file (compressed or not), as hex.
file_build_id() {
  local f=$1 tmp
  tmp=$(mktemp) || return 1
  case $f in
    *.xz) xz -dc "$f" >"$tmp" ;;
    *.zst) zstd -qdc "$f" >"$tmp" ;;
    *.gz) gzip -dc "$f" >"$tmp" ;;
    *) cat "$f" >"$tmp" ;;
  esac
  readelf -n "$tmp" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1
  rm -f "$tmp"
}

# Found by modprobe's index under updates/dkms, built for this kernel.
dkms_module_found() {
  local path
  path=$(modinfo -n kweb) || return 1
  echo "modinfo -n kweb: $path"
  [[ $path == /lib/modules/$KVER/updates/dkms/kweb.ko* ]] || return 1
  modinfo -F vermagic kweb | grep -q "^$KVER "
}

# The module running is that file: the same build ID.
loaded_is_dkms() {
  local path want got
  path=$(modinfo -n kweb) || return 1
  want=$(file_build_id "$path")
  # An ELF note: namesz, descsz, type (4 bytes each), "GNU\0", the ID.
  got=$(od -An -v -tx1 -j16 /sys/module/kweb/notes/.note.gnu.build-id |
    tr -d ' \n')
  echo "file $want, loaded $got"
  [[ -n $want && $want == "$got" ]]
}

# The first regular file of the docroot, served by kweb byte for byte.
serves_docroot() {
  local want=$1 f hdr=$RUN_DIR/headers.txt body=$RUN_DIR/body
  f=$(find "$DOCROOT" -maxdepth 1 -type f -name '*.html' -printf '%f\n' |
    sort | head -n 1)
  [[ -n $f ]] || { echo "no .html file in $DOCROOT"; return 1; }
  curl -sS --max-time 20 -D "$hdr" -o "$body" "http://127.0.0.1:$PORT/$f" ||
    return 1
  cat "$hdr"
  head -n 1 "$hdr" | grep -q '^HTTP/1.1 200' || return 1
  grep -qi '^server: kweb' "$hdr" || return 1
  cmp "$body" "$DOCROOT/$f" || return 1
  [[ -z $want ]] || grep -qi "^$want" "$hdr"
}

UNIT=/lib/systemd/system/kweb.service

# unit_run KEY: each KEY= line of kweb.service (ExecStart, ExecReload,
# ExecStop), run as systemd would, in order; output to stdout.
unit_run() {
  local key=$1 line argv n=0
  while IFS= read -r line; do
    read -ra argv <<<"$line"
    echo "+ ${argv[*]}"
    "${argv[@]}" || return 1
    n=$((n + 1))
  done < <(sed -n "s/^$key=//p" "$UNIT")
  ((n > 0)) || { echo "no $key= in $UNIT"; return 1; }
}

reload_changes_nothing() {
  local out
  out=$(unit_run ExecReload) || { echo "$out"; return 1; }
  echo "$out"
  [[ $out == *"nothing to change" ]]
}

stopped() {
  unit_run ExecStop || return 1
  ! module_loaded kweb || { echo "/sys/module/kweb still there"; return 1; }
  ! port_listening "$PORT" || { ss -ltn; return 1; }
}

main() {
  say "$TAG: DKMS's kweb on $KVER"
  kmsg_mark "dkms ($TAG) begin"
  if module_loaded kweb; then
    not_ok "$TAG dkms: kweb not loaded before modprobe"
    return 1
  fi
  check "$TAG dkms: modinfo finds DKMS's kweb.ko for $KVER" dkms_module_found ||
    return 1
  check "$TAG dkms: kweb.service's ExecStart: modprobe kweb, kwebctl apply /etc/kweb/kweb.conf" \
    unit_run ExecStart || return 1
  check "$TAG dkms: the module loaded is DKMS's (build ID)" loaded_is_dkms
  if wait_port "$PORT" 10; then
    ok "$TAG dkms: kweb listens on port $PORT"
  else
    not_ok "$TAG dkms: kweb listens on port $PORT"
  fi
  check "$TAG dkms: GET of a $DOCROOT file: 200 from kweb, its bytes, kweb.conf's Cache-Control" \
    serves_docroot "cache-control: no-cache"
  check "$TAG dkms: kweb.service's ExecReload: nothing to change" \
    reload_changes_nothing
  check "$TAG dkms: kweb.service's ExecStop unloads kweb" stopped
  kmsg_mark "dkms ($TAG) end"
}

main
# Whatever failed, the integration tests after this need kweb unloaded.
module_loaded kweb && modprobe -r kweb >>"$LOG" 2>&1
finish "$TAG dkms"
