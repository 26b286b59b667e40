#!/usr/bin/env bash
# The soak (`make soak`, scripts/soak.sh), as root inside a virtme-ng guest:
#
#   soak.sh KWEB_KO RESULTS_DIR [TAG]
#
# Loads kweb on a tmpfs docroot (tests/make_docroot.py) with nginx behind
# it (tests/guest/nginx.sh) and the routes of the integration tests, then
# runs all of these at once for $KWEB_SOAK_SECONDS (600):
#
#   wrk        keep-alive GETs of six files (tests/wrk/soak.lua), every
#              response compared byte for byte
#   handoff    tests/handoff_test.py's exchanges in a loop (POST bodies,
#              queries, prefixes, extensions, upgrades...): exact bodies
#   churn      files rewritten in place, resized, renamed over, unlinked
#              and recreated while clients GET them: every body one of
#              the versions that existed (tests/soak.py churn)
#   ctl        kwebctl config set (flipping five settings), cache flush
#              and stats, every second
#   slowloris  tests/hardening_test.py's slowloris rounds, one after
#              another: every trickling connection cut at header_timeout
#
# then a test line per component, kweb's counters (nothing handed off
# lost, every connection closed), rmmod (no page pinned), kmemleak and
# dmesg. Results in RESULTS_DIR: soak.json (the summary scripts/soak.sh
# reports from), each client's log and JSON, wrk.txt, proc-*.txt.
# Exit status 0 iff every test line is "ok".
set -uo pipefail # no -e: a failing check is a test line, not the end

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

guest_args soak "$@"

SECS=${KWEB_SOAK_SECONDS:-600}
# Per request (up to 4 times that for handoff_test.py's heavy exchanges,
# a 10 MiB answer among them): only a request that is lost waits it out,
# but one that is merely slow must not, with every client sharing two
# emulated CPUs. The debug kernel is several times slower.
CLIENT_TIMEOUT=${KWEB_SOAK_CLIENT_TIMEOUT:-30}
WRK_CONNS=${KWEB_SOAK_WRK_CONNS:-32}
SLOW=${KWEB_SOAK_SLOW:-300}
HEADER_TIMEOUT=${KWEB_SOAK_HEADER_TIMEOUT:-5}
# Seconds past header_timeout a slow connection may take to be closed.
MARGIN=${KWEB_SOAK_MARGIN:-5}
# After SECS, for the clients' last exchanges and slowloris's last round.
GRACE=$((HEADER_TIMEOUT + MARGIN + 4 * CLIENT_TIMEOUT + 120))
PORT=80
BASE=/run/kweb-soak
DOCROOT=$BASE/www
NGINX_BASE=$BASE/nginx
SOAK=$REPO/tests/soak.py
KWEBCTL=${KWEB_KWEBCTL:-$REPO/userctl/kwebctl}
ROUTES=("dynamic_prefixes=/api/,/dyn/" "dynamic_extensions=.php")
LOG=$RUN_DIR/soak.log
TAP=$RUN_DIR/tap.txt
: >"$LOG"
: >"$TAP"
umask 022

# lib.sh's, plus a copy of every test line for the summary.
ok() { echo "ok - $*"; echo "ok - $*" >>"$TAP"; PASSED=$((PASSED + 1)); }
not_ok() {
  echo "not ok - $*"; echo "not ok - $*" >>"$TAP"; FAILED=$((FAILED + 1))
}

readonly OOPS_RE='Oops|general protection fault|Kernel panic|BUG: unable to handle'
oops_count() { kmsg | grep -cE "$OOPS_RE"; }

setup() {
  ensure_debugfs
  ip link set lo up 2>/dev/null || true
  kmemleak_baseline soak
  kmsg_mark "soak ($TAG) begin"
  say "$TAG: kernel $(uname -r), module $KO, $SECS s"
}

prepare() {
  local err=$RUN_DIR/prepare.err rc=0
  {
    mount_tmpfs "$BASE" && "$PY" "$REPO/tests/make_docroot.py" "$DOCROOT" &&
      chmod 0755 "$DOCROOT" &&
      "$PY" "$SOAK" make-files --docroot "$DOCROOT" --list "$BASE/wrk.list" &&
      cp "$KWEBCTL" "$BASE/kwebctl"
  } >"$err" 2>&1 || rc=$?
  result "$TAG: docroot on tmpfs" "$rc" "$err"
  ((rc == 0)) || return 1
  rc=0
  "$REPO/tests/guest/nginx.sh" start "$DOCROOT" "$NGINX_BASE" >"$err" 2>&1 ||
    rc=$?
  result "$TAG: nginx backend on port 8080" "$rc" "$err"
  ((rc == 0)) || return 1
  local args=("docroot=$DOCROOT" "port=$PORT" "${ROUTES[@]}"
    "header_timeout=$HEADER_TIMEOUT")
  echo "+ insmod $KO ${args[*]}" >>"$LOG"
  if bounded 60 insmod "$KO" "${args[@]}" >>"$LOG" 2>&1 &&
      wait_port "$PORT" 10; then
    ok "$TAG: insmod kweb.ko ${args[*]}"
  else
    not_ok "$TAG: insmod kweb.ko ${args[*]}"
    { tail -n 5 "$LOG"; kmsg | tail -n 20; } | diag 25
    return 1
  fi
}

proc_snapshot() { cat /proc/net/kweb >"$RUN_DIR/proc-$1.txt" 2>&1; }
proc_value() { awk -v k="$1" '$1 == k { print $2; exit }' /proc/net/kweb; }

# The components, in the background; PIDS[name] = pid.
declare -A PIDS=()
start_clients() {
  local common=(--docroot "$DOCROOT" --port "$PORT" --seconds "$SECS"
    --timeout "$CLIENT_TIMEOUT")
  wrk -t2 -c"$WRK_CONNS" -d"${SECS}s" --timeout 60s -s "$REPO/tests/wrk/soak.lua" \
    "http://127.0.0.1:$PORT/" -- "$BASE/wrk.list" "$DOCROOT" \
    >"$RUN_DIR/wrk.txt" 2>&1 &
  PIDS[wrk]=$!
  "$PY" "$SOAK" handoff "${common[@]}" --client-addr 127.0.0.2 \
    --out "$RUN_DIR/soak-handoff.json" >"$RUN_DIR/soak-handoff.log" 2>&1 &
  PIDS[handoff]=$!
  "$PY" "$SOAK" churn "${common[@]}" \
    --out "$RUN_DIR/soak-churn.json" >"$RUN_DIR/soak-churn.log" 2>&1 &
  PIDS[churn]=$!
  # From the tmpfs: an exec from the host's disk is a 9p round trip each.
  "$PY" "$SOAK" ctl "${common[@]}" --kwebctl "$BASE/kwebctl" \
    --out "$RUN_DIR/soak-ctl.json" >"$RUN_DIR/soak-ctl.log" 2>&1 &
  PIDS[ctl]=$!
  "$PY" "$SOAK" slowloris "${common[@]}" --header-timeout "$HEADER_TIMEOUT" \
    --margin "$MARGIN" --slow "$SLOW" \
    --out "$RUN_DIR/soak-slowloris.json" >"$RUN_DIR/soak-slowloris.log" 2>&1 &
  PIDS[slowloris]=$!
}

any_running() {
  local p
  for p in "${PIDS[@]}"; do
    kill -0 "$p" 2>/dev/null && return 0
  done
  return 1
}

# Until every client ends (or SECS + GRACE pass, or the kernel oopses):
# a progress line a minute, with kweb's counters.
watch_clients() {
  local t0=$SECONDS oopses next=60 name
  oopses=$(oops_count)
  while any_running; do
    if (($(oops_count) > oopses)); then
      not_ok "$TAG: no oops during the soak"
      kmsg | grep -E -A12 "$OOPS_RE" | head -n 25 | diag 25
      break
    fi
    if ((SECONDS - t0 > SECS + GRACE)); then
      for name in "${!PIDS[@]}"; do
        kill -0 "${PIDS[$name]}" 2>/dev/null &&
          not_ok "$TAG: $name ended within $((SECS + GRACE)) s"
      done
      break
    fi
    if ((SECONDS - t0 >= next)); then
      say "$((SECONDS - t0)) s: $(awk '$1 ~ /^(connections_open|requests_softirq|requests_worker|cache_bytes|pinned_bytes)$/ { printf "%s %s ", $1, $2 }' /proc/net/kweb)"
      next=$((next + 60))
    fi
    sleep 2
  done
  for name in "${!PIDS[@]}"; do
    kill "${PIDS[$name]}" 2>/dev/null
    wait "${PIDS[$name]}" 2>/dev/null
  done
}

# One test line per component (tests/soak.py summary).
verdicts() {
  local verdict text
  while IFS=$'\t' read -r verdict text; do
    if [[ $verdict == ok ]]; then
      ok "$TAG: $text"
    else
      not_ok "$TAG: $text"
    fi
  done < <("$PY" "$SOAK" summary --dir "$RUN_DIR" 2>>"$LOG")
}

# Nothing lost at the handoff, and every connection closed once the
# clients are gone (kweb's own timeouts close what a client left).
counters() {
  local name v bad=() n=60 open
  for name in handoff_failed_no_backend handoff_failed_queue_full \
      handoff_failed; do
    v=$(proc_value "$name")
    [[ $v == 0 ]] || bad+=("$name ${v:-missing}")
  done
  if ((${#bad[@]} == 0)); then
    ok "$TAG: no handoff failed (kweb's handoff_failed* counters 0)"
  else
    not_ok "$TAG: no handoff failed (kweb's handoff_failed* counters 0)"
    printf '%s\n' "${bad[@]}" | diag
  fi
  while open=$(proc_value connections_open) && [[ $open != 0 ]] &&
      ((n-- > 0)); do
    sleep 1
  done
  if [[ $open == 0 ]]; then
    ok "$TAG: every connection closed after the soak (connections_open 0)"
  else
    not_ok "$TAG: every connection closed after the soak (connections_open ${open:-missing} after 60 s)"
    ss -tn state established "( sport = :$PORT )" 2>&1 | head -n 10 | diag 10
  fi
}

unload() {
  local before rc=0
  if (($(oops_count) > 0)); then
    not_ok "$TAG: rmmod kweb (not run: the kernel oopsed)"
    return
  fi
  before=$(kmsg_lines)
  echo "+ rmmod kweb" >>"$LOG"
  bounded 60 rmmod kweb >>"$LOG" 2>&1 || rc=$?
  if ((rc == 0)) && ! module_loaded kweb; then
    ok "$TAG: rmmod kweb"
  else
    not_ok "$TAG: rmmod kweb (status $rc)"
    { tail -n 5 "$LOG"; kmsg_since "$before"; } | diag 30
    return
  fi
  if kmsg_since "$before" | grep -q ' 0 bytes still pinned'; then
    ok "$TAG: no page-cache pages pinned after rmmod"
  else
    not_ok "$TAG: no page-cache pages pinned after rmmod"
    kmsg_since "$before" | grep 'kweb:' | diag 5
  fi
  kmsg_since "$before" | grep 'kweb:' >"$RUN_DIR/rmmod.txt"
}

main() {
  local started ended
  setup
  if prepare; then
    proc_snapshot start
    started=$(date -u +%FT%TZ)
    kmsg_mark "soak ($TAG): clients start"
    start_clients
    watch_clients
    ended=$(date -u +%FT%TZ)
    kmsg_mark "soak ($TAG): clients done"
    proc_snapshot end
    verdicts
    counters
    proc_snapshot closed
    unload
  elif module_loaded kweb && (($(oops_count) == 0)); then
    bounded 60 rmmod kweb >>"$LOG" 2>&1
  fi
  "$REPO/tests/guest/nginx.sh" stop "$NGINX_BASE" >>"$LOG" 2>&1
  cp "$NGINX_BASE/error.log" "$RUN_DIR/nginx-error.log" 2>/dev/null
  kmemleak_check "$TAG: kmemleak clean after the soak" soak
  kmsg_mark "soak ($TAG) end"
  dmesg_check "$TAG: dmesg clean (soak)"
  save_dmesg soak
  umount -l "$BASE" 2>/dev/null
  "$PY" "$SOAK" assemble --dir "$RUN_DIR" --tag "$TAG" --seconds "$SECS" \
    --kernel "$(uname -r)" --started "${started:-}" --ended "${ended:-}" \
    --kmemleak "$(have_kmemleak && echo yes || echo no)" 2>>"$LOG" ||
    not_ok "$TAG: soak.json written"
  finish "$TAG soak"
}

main
