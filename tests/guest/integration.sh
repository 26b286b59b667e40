#!/usr/bin/env bash
# Integration tests of kweb.ko, run as root inside a virtme-ng guest (see
# scripts/check.sh, which boots it through scripts/vm.sh):
#
#   integration.sh [KWEB_KO [RESULTS_DIR [TAG]]]
#
# or the same from $KWEB_KO, $KWEB_RUN_DIR, $KWEB_TAG. TAG (stock61,
# stock612, debug) prefixes every test name. Loads the module on a tmpfs
# docroot made by tests/make_docroot.py, with nginx (tests/guest/nginx.sh)
# as the backend on port 8080; runs tests/http_test.py over IPv4 and IPv6,
# the fast-path tests, tests/handoff_test.py over both families (with a
# mixed wrk load), then unloads kweb while handed-off connections are open,
# then the limits, hardening, control-plane and tracepoint suites, hostile
# TCP clients (tests/tcp_hostile_test.py; zero-window clients across a
# namespace's exit, a listener's deletion and rmmod), a namespace deleted
# under load that must be freed once its orphans are done, and the HTTP and
# handoff suites again with every connection made by a SYN cookie and
# under a SYN flood (tests/synflood.py); checks that bad parameters make
# insmod fail, then (debug kernel) looks for leaks and finally for kernel
# splats in dmesg.
# Exit status 0 iff every test line is "ok".
set -uo pipefail # no -e: a failing check is a test line, not the end

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

guest_args guest "$@"

PORT=80
BUSY_PORT=81
# A guest-private tmpfs: the guest's / is the host's disk, and serving from
# 9p is slow. make_docroot.py also writes next to the docroot (outside/).
BASE=/run/kweb-it
DOCROOT=$BASE/www
HTTP_TEST=${KWEB_HTTP_TEST:-$REPO/tests/http_test.py}
DIFF_TEST=${KWEB_DIFF_TEST:-$REPO/tests/diff_test.py}
# Optional second client (same interface): the fast-path counters, file
# freshness and a short wrk load (10 s); run over
# IPv4 when present.
FASTPATH_TEST=${KWEB_FASTPATH_TEST:-$REPO/tests/fastpath_test.py}
WRK_SECONDS=${KWEB_WRK_SECONDS:-10}
MAKE_DOCROOT=${KWEB_MAKE_DOCROOT:-$REPO/tests/make_docroot.py}
HANDOFF_TEST=${KWEB_HANDOFF_TEST:-$REPO/tests/handoff_test.py}
LIMITS_TEST=${KWEB_LIMITS_TEST:-$REPO/tests/limits_test.py}
HARDENING_TEST=${KWEB_HARDENING_TEST:-$REPO/tests/hardening_test.py}
NETFUZZ_TEST=${KWEB_NETFUZZ_TEST:-$REPO/tests/netfuzz.py}
HOSTILE_TEST=${KWEB_HOSTILE_TEST:-$REPO/tests/tcp_hostile_test.py}
SYNFLOOD=${KWEB_SYNFLOOD:-$REPO/tests/synflood.py}
# The control plane: run only where tests/ctl_test.py exists.
CTL_TEST=${KWEB_CTL_TEST:-$REPO/tests/ctl_test.py}
# The tracepoints (kweb:*): run only where tests/trace_test.py exists.
TRACE_TEST=${KWEB_TRACE_TEST:-$REPO/tests/trace_test.py}
KWEBCTL=${KWEB_KWEBCTL:-$REPO/userctl/kwebctl}
NGINX_BASE=$BASE/nginx
# What the handoff tests expect kweb to send to the backend by path.
ROUTES=("dynamic_prefixes=/api/,/dyn/" "dynamic_extensions=.php")
# Per http_test.py run (199 tests, 10 s deadline each: a server that stops
# answering would take over half an hour); the guest has its own timeout.
# A run takes 60-110 s on a stock kernel, beside the debug guest.
HTTP_TIMEOUT=${KWEB_HTTP_TIMEOUT:-450}
# KWEB_LIGHT=1 (the debug kernel, several times slower under TCG): the HTTP
# and handoff suites over IPv4 only, without the repeats their clients
# mark not_light; the stock kernels run both families, everything.
LIGHT=${KWEB_LIGHT:-0}
# 1: the Prometheus text is saved as metrics.prom for the host's promtool.
PROMTOOL_ON_HOST=${KWEB_PROMTOOL_ON_HOST:-0}
# KWEB_USER_SIDE=0 (and the debug kernel): leave out the tests whose time
# goes to user space rather than to kernel paths other tests do not
# reach: kwebctl's own batch and Prometheus logic, the ynl CLI and perf.
# make check runs them on stock 6.12 only.
USER_SIDE=${KWEB_USER_SIDE:-$( ((LIGHT)) && echo 0 || echo 1)}
# Seconds per test for http_test.py and handoff_test.py (heavy tests get a
# multiple): a deadline only a failing test waits out, so the slow debug
# kernel gets three times the stock kernels' 10 s.
CLIENT_TIMEOUT=${KWEB_CLIENT_TIMEOUT:-$( ((LIGHT)) && echo 30 || echo 10)}
# Connections per httperf process in the fast-path churn test (two run).
CHURN_CONNS=${KWEB_CHURN_CONNS:-$( ((LIGHT)) && echo 300 || echo 4000)}
# Mutated requests per netfuzz run, from KWEB_NETFUZZ_SEED's sequence
# (make check gives each stock kernel a seed of its own: 10,000 different
# cases in all); a slow guest stops sending after NETFUZZ_TIME_LIMIT s
# and fails unless NETFUZZ_MIN_COUNT were sent. 5,000 take 75 s on an
# idle host and 180 s beside the debug guest on a slow one.
NETFUZZ_SEED=${KWEB_NETFUZZ_SEED:-1}
NETFUZZ_COUNT=${KWEB_NETFUZZ_COUNT:-5000}
NETFUZZ_MIN_COUNT=${KWEB_NETFUZZ_MIN_COUNT:-$NETFUZZ_COUNT}
NETFUZZ_TIME_LIMIT=${KWEB_NETFUZZ_TIME_LIMIT:-420}

LOG=$RUN_DIR/integration.log
: >"$LOG"
umask 022

setup() {
  ensure_debugfs
  ip link set lo up 2>/dev/null || true
  kmemleak_baseline integration
  kmsg_mark "integration ($TAG) begin"
  say "$TAG: kernel $(uname -r), module $KO"
}

make_docroot() {
  local err=$RUN_DIR/make_docroot.err rc=0
  {
    mount_tmpfs "$BASE" && "$PY" "$MAKE_DOCROOT" "$DOCROOT" &&
      chmod 0755 "$DOCROOT"
  } >"$err" 2>&1 || rc=$?
  result "$TAG: make docroot on tmpfs" "$rc" "$err"
  return "$rc"
}

# insmod with a timeout (a module init that never returns must not eat the
# guest's whole budget); output to $LOG.
insmod_kweb() {
  echo "+ insmod $KO $*" >>"$LOG"
  bounded 60 insmod "$KO" "$@" >>"$LOG" 2>&1
}

rmmod_kweb() {
  echo "+ rmmod kweb" >>"$LOG"
  bounded 60 rmmod kweb >>"$LOG" 2>&1
}

load() {
  local before rc=0 diagf=$RUN_DIR/load.diag
  before=$(kmsg_lines)
  insmod_kweb "docroot=$DOCROOT" "port=$PORT" "${ROUTES[@]}" || rc=$?
  if ((rc == 0)) && module_loaded kweb; then
    ok "$TAG: insmod kweb.ko docroot=$DOCROOT port=$PORT ${ROUTES[*]}"
  else
    not_ok "$TAG: insmod kweb.ko docroot=$DOCROOT port=$PORT ${ROUTES[*]} (status $rc)"
    { tail -n 5 "$LOG"; kmsg_since "$before"; } | diag 30
    return 1
  fi
  if wait_port "$PORT" 10; then
    ok "$TAG: kweb listens on port $PORT"
  else
    not_ok "$TAG: kweb listens on port $PORT"
    { ss -ltnp; kmsg_since "$before"; } >"$diagf" 2>&1
    diag 30 <"$diagf"
    return 1
  fi
}

# The lines of a kernel death, shown when kernel_died (lib.sh) says one
# happened (not every splat: a KASAN report or a WARNING leaves the
# kernel running, and dmesg_check fails the run for those anyway).
readonly OOPS_RE='Oops|general protection fault|Kernel panic|BUG: unable to handle'

# Run the client in the background and stop it as soon as the kernel oopses:
# after that every test would only wait out its deadline. Sets HTTP_OOPSED.
#   run_http_client OUT CLIENT ARGS...
run_http_client() {
  local out=$1 client=$2 died pid rc=0
  shift 2
  kernel_died && died=1 || died=0
  HTTP_OOPSED=0
  timeout "$HTTP_TIMEOUT" "$PY" "$client" "$@" >"$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if ((!died)) && kernel_died; then
      HTTP_OOPSED=1
      kill "$pid" 2>/dev/null
      break
    fi
    nap 2
  done
  wait "$pid" || rc=$?
  return "$rc"
}

# Run one test client (http_test.py interface); its TAP lines become ours,
# renamed "TAG LABEL: name" so the runs stay apart.
#   client_tests CLIENT LABEL HOST [EXTRA-ARGS...]
client_tests() {
  local client=$1 label=$2 host=$3 out=$RUN_DIR/client-$2.txt rc=0 n
  local cname
  cname=$(basename "$client")
  shift 3
  if kernel_died; then
    not_ok "$TAG $label: $cname (not run: the kernel oopsed)"
    return
  fi
  say "$TAG: $cname --host $host --port $PORT $*"
  run_http_client "$out" "$client" --host "$host" --port "$PORT" \
    --docroot "$DOCROOT" "$@" || rc=$?
  # Keep the client's numbering out (check.sh counts), keep diagnostics.
  sed -nE \
    -e "s/^(not ok|ok) [0-9]+ - (.*)$/\1 - $TAG $label: \2/p" \
    -e '/^# [0-9]+ passed, [0-9]+ failed$/d' \
    -e '/^#/p' "$out"
  PASSED=$((PASSED + $(grep -cE '^ok [0-9]+ ' "$out")))
  FAILED=$((FAILED + $(grep -cE '^not ok [0-9]+ ' "$out")))
  n=$(grep -cE '^(not )?ok [0-9]+ ' "$out")
  # A client that dies, hangs or runs no test is a failure of its own.
  if ((HTTP_OOPSED)); then
    not_ok "$TAG $label: $cname completed (stopped after $n tests: the kernel oopsed)"
    kmsg | grep -E -A12 "$OOPS_RE" | head -n 25 | diag 25
  elif ((rc == 124)); then
    not_ok "$TAG $label: $cname completed within ${HTTP_TIMEOUT}s ($n tests done)"
  elif ((rc != 0)) && ! grep -qE '^not ok [0-9]+ ' "$out"; then
    not_ok "$TAG $label: $cname completed (status $rc, $n tests)"
    grep -vE '^(not )?ok [0-9]+ ' "$out" | tail -n 20 | diag 20
  elif ((n == 0)); then
    not_ok "$TAG $label: $cname ran tests"
    tail -n 20 "$out" | diag 20
  fi
}

# After kweb went (by rmmod at BEFORE, a dmesg line count): every page the
# file cache pinned is released, and the listening sockets are gone.
unloaded_checks() {
  local before=$1
  if kmsg_since "$before" | grep -q ' 0 bytes still pinned'; then
    ok "$TAG: no page-cache pages pinned after rmmod"
  else
    not_ok "$TAG: no page-cache pages pinned after rmmod"
    kmsg_since "$before" | grep 'kweb:' | diag 5
  fi
  if port_listening "$PORT"; then
    not_ok "$TAG: port $PORT free after rmmod"
    ss -ltnp 2>&1 | diag 10
  else
    ok "$TAG: port $PORT free after rmmod"
  fi
}

unload() {
  local before rc=0
  # After an oops, rmmod would most likely hang on the dead worker.
  if kernel_died; then
    not_ok "$TAG: rmmod kweb (not run: the kernel oopsed)"
    return 1
  fi
  before=$(kmsg_lines)
  rmmod_kweb || rc=$?
  if ((rc == 0)) && ! module_loaded kweb; then
    ok "$TAG: rmmod kweb"
  else
    not_ok "$TAG: rmmod kweb (status $rc)"
    { tail -n 5 "$LOG"; kmsg_since "$before"; } | diag 30
    return 1
  fi
  unloaded_checks "$before"
}

# The handoff client unloads kweb itself, with handed-off connections open
# in nginx, and checks that they go on working.
unload_with_handoffs() {
  local before
  if kernel_died; then
    not_ok "$TAG: rmmod kweb with handed-off connections (not run: the kernel oopsed)"
    return 1
  fi
  before=$(kmsg_lines)
  client_tests "$HANDOFF_TEST" rmmod 127.0.0.1 --client-addr 127.0.0.2 \
    --rmmod-cmd "timeout 60 rmmod kweb"
  if module_loaded kweb; then
    not_ok "$TAG: kweb unloaded by the handoff client"
    unload
    return 1
  fi
  unloaded_checks "$before"
}

# Mutated requests with kweb (routes loaded) in front of nginx: every
# answer starts with HTTP/1. and /small.txt is still served afterwards;
# dmesg_check catches splats.
netfuzz() {
  # After the limit: the cases in flight, the final GET, on a slow guest.
  HTTP_TIMEOUT=$((NETFUZZ_TIME_LIMIT + 180)) \
    client_tests "$NETFUZZ_TEST" netfuzz-ipv4 127.0.0.1 --seed "$NETFUZZ_SEED" \
    --count "$NETFUZZ_COUNT" --min-count "$NETFUZZ_MIN_COUNT" \
    --time-limit "$NETFUZZ_TIME_LIMIT"
  # nginx keeps the body file of every request it proxies.
  find "$NGINX_BASE/client_body_temp" -type f -delete 2>/dev/null
}

# A second load with small limits: max_connections and max_requests.
limits() {
  load_with max_connections=8 max_requests=3 || return
  client_tests "$LIMITS_TEST" limits 127.0.0.1 --max-connections 8 \
    --max-requests 3
  unload
}

# Load kweb with ARGS... (after docroot and port); one test line.
load_with() {
  local name="insmod kweb.ko docroot=$DOCROOT port=$PORT $*"
  if module_loaded kweb || kernel_died; then
    not_ok "$TAG: $name (not run: kweb still loaded or oopsed)"
    return 1
  fi
  if ! insmod_kweb "docroot=$DOCROOT" "port=$PORT" "$@" ||
      ! wait_port "$PORT" 10; then
    not_ok "$TAG: $name"
    tail -n 5 "$LOG" | diag 10
    return 1
  fi
  ok "$TAG: $name"
}

# The identity files are opened as: user=1000 group=1000, loaded by root
# with a supplementary group (4242) the identity must not get; the
# identity tests of http_test.py then expect uid 1000's and gid 1000's
# files served, nobody's refused.
identity() {
  local args=("docroot=$DOCROOT" "port=$PORT" user=1000 group=1000)
  local name="insmod kweb.ko ${args[*]} (by root with supplementary group 4242)"
  if module_loaded kweb || kernel_died; then
    not_ok "$TAG: $name (not run: kweb still loaded or oopsed)"
    return 1
  fi
  echo "+ setpriv --groups 4242 insmod $KO ${args[*]}" >>"$LOG"
  if ! bounded 60 setpriv --groups 4242 insmod "$KO" "${args[@]}" \
      >>"$LOG" 2>&1 || ! wait_port "$PORT" 10; then
    not_ok "$TAG: $name"
    tail -n 5 "$LOG" | diag 10
    return 1
  fi
  ok "$TAG: $name"
  client_tests "$HTTP_TEST" identity 127.0.0.1 --only '^identity ' \
    --identity 1000:1000 --timeout "$CLIENT_TIMEOUT"
  unload
}

# Hostile clients and file churn with a short header timeout, then rmmod
# in the middle of a 256-connection wrk run, and a reload.
hardening() {
  local t0 t1 rc=0 wrk_pid before light=()
  # 300 trickling connections took the debug kernel 73 s of Python
  # send() calls: 100 there cross the same timer and close paths.
  ((LIGHT)) && light=(--slow 100 --light)
  load_with header_timeout=5 || return
  client_tests "$HARDENING_TEST" hardening 127.0.0.1 --header-timeout 5 \
    "${light[@]}"
  if kernel_died; then
    return
  fi
  wrk -t2 -c256 -d30s "http://127.0.0.1:$PORT/small.txt" \
    >"$RUN_DIR/wrk-rmmod.txt" 2>&1 &
  wrk_pid=$!
  nap 5
  before=$(kmsg_lines)
  t0=$(date +%s.%N)
  rmmod_kweb || rc=$?
  t1=$(date +%s.%N)
  if ((rc == 0)) && ! module_loaded kweb; then
    ok "$TAG: rmmod kweb during a 256-connection wrk run"
  else
    not_ok "$TAG: rmmod kweb during a 256-connection wrk run (status $rc)"
    kmsg_since "$before" | diag 20
  fi
  say "rmmod under load took $(awk -v a="$t0" -v b="$t1" \
    'BEGIN { printf "%.2f", b - a }') s"
  kill "$wrk_pid" 2>/dev/null
  wait "$wrk_pid" 2>/dev/null
  unloaded_checks "$before"
  # And it comes back.
  load_with "${ROUTES[@]}" || return
  if curl -sf -m 20 "http://127.0.0.1:$PORT/small.txt" |
      cmp -s - "$DOCROOT/small.txt"; then
    ok "$TAG: reloaded kweb serves /small.txt"
  else
    not_ok "$TAG: reloaded kweb serves /small.txt"
  fi
  unload
}

# --- hostile TCP ----------------------------------------------------------

# sysctl_set NAME VALUE: remembered, so that sysctl_restore puts it back.
declare -A SYSCTL_SAVED=()
sysctl_set() {
  [[ -v "SYSCTL_SAVED[$1]" ]] || SYSCTL_SAVED[$1]=$(sysctl -n "$1")
  sysctl -qw "$1=$2"
}
sysctl_restore() {
  local k
  for k in "${!SYSCTL_SAVED[@]}"; do
    sysctl -qw "$k=${SYSCTL_SAVED[$k]}"
  done
  SYSCTL_SAVED=()
}

# GET /small.txt from HOST:PORT (default 127.0.0.1:$PORT): exact bytes.
small_ok() {
  local name=$1 url="http://${2:-127.0.0.1}:${3:-$PORT}/small.txt"
  if curl -sf -m 20 "$url" | cmp -s - "$DOCROOT/small.txt"; then
    ok "$name"
  else
    not_ok "$name"
    curl -sS -i -m 20 "$url" 2>&1 | diag 10
  fi
}

# Zero-window clients (tcp_hostile_test.py --hold): HOLD_CONNS connections
# to HOST:PORT ask for big.bin and never read. Waits for them to have
# their response heads; sets HOLD_PID. start_holders OUT HOST PORT
HOLD_CONNS=${KWEB_HOLD_CONNS:-8}
holders_ready() {
  local l
  [[ -r $1 ]] || return 1 # not yet opened by the clients' shell
  while IFS= read -r l; do
    [[ $l == ready* ]] && return 0
  done <"$1"
  return 1
}
start_holders() {
  local out=$1 n=$(((LIGHT ? 180 : 60) * 5))
  "$PY" "$HOSTILE_TEST" --host "$2" --port "$3" --docroot "$DOCROOT" \
    --hold "$HOLD_CONNS" --hold-seconds 900 >"$out" 2>&1 &
  HOLD_PID=$!
  while ((n-- > 0)); do
    holders_ready "$out" && return 0
    kill -0 "$HOLD_PID" 2>/dev/null || break
    nap 0.2
  done
  diag 10 <"$out"
  return 1
}
stop_holders() {
  kill "$HOLD_PID" 2>/dev/null
  wait "$HOLD_PID" 2>/dev/null
}

# rmmod, a listener's deletion and its namespace's exit, each with
# zero-window clients hanging on it: prompt, and a clean kernel after.
zero_window_rmmod() {
  local before rc=0
  load_with "${ROUTES[@]}" || return
  if ! start_holders "$RUN_DIR/hold-rmmod.txt" 127.0.0.1 "$PORT"; then
    not_ok "$TAG: $HOLD_CONNS zero-window clients of kweb (rmmod)"
    stop_holders
    unload
    return
  fi
  nap 2
  before=$(kmsg_lines)
  echo "+ rmmod kweb (zero-window clients)" >>"$LOG"
  bounded 30 rmmod kweb >>"$LOG" 2>&1 || rc=$?
  if ((rc == 0)) && ! module_loaded kweb; then
    ok "$TAG: rmmod kweb with $HOLD_CONNS zero-window clients, within 30 s"
  else
    not_ok "$TAG: rmmod kweb with $HOLD_CONNS zero-window clients, within 30 s (status $rc)"
    kmsg_since "$before" | diag 20
  fi
  stop_holders
  module_loaded kweb && return
  unloaded_checks "$before"
  kmsg_clean_since "$TAG: no kernel report after rmmod with zero-window clients" "$before"
  load_with "${ROUTES[@]}" || return
  small_ok "$TAG: reloaded kweb serves /small.txt after the zero-window rmmod"
  unload
}

zero_window_listener_del() {
  local port2=$((PORT + 10)) id before rc=0
  [[ -x $KWEBCTL ]] || { not_ok "$TAG: listener del with zero-window clients (no $KWEBCTL)"; return; }
  id=$("$KWEBCTL" -j listener add port "$port2" docroot "$DOCROOT" 2>>"$LOG" |
    sed -nE 's/.*"id": *([0-9]+).*/\1/p')
  if [[ -z $id ]] || ! start_holders "$RUN_DIR/hold-del.txt" 127.0.0.1 "$port2"; then
    not_ok "$TAG: $HOLD_CONNS zero-window clients of listener ${id:-?} on port $port2"
    stop_holders
    [[ -n $id ]] && "$KWEBCTL" listener del "$id" >>"$LOG" 2>&1
    return
  fi
  nap 2
  before=$(kmsg_lines)
  bounded 30 "$KWEBCTL" listener del "$id" >>"$LOG" 2>&1 || rc=$?
  if ((rc == 0)) && ! port_listening "$port2"; then
    ok "$TAG: kwebctl listener del with $HOLD_CONNS zero-window clients, within 30 s"
  else
    not_ok "$TAG: kwebctl listener del with $HOLD_CONNS zero-window clients, within 30 s (status $rc)"
    { ss -ltn; kmsg_since "$before"; } | diag 20
  fi
  stop_holders
  small_ok "$TAG: kweb serves /small.txt after the zero-window listener del"
  kmsg_clean_since "$TAG: no kernel report after listener del with zero-window clients" "$before"
}

# A listener in a namespace reached over a veth pair, its clients outside
# with zero windows; the namespace is deleted under them. Its connections
# must go (a RST) with it, not stay on timers that outlive the namespace
# (a use-after-free of the namespace when they fire).
#   zero_window_netns [closed]
# closed: send_timeout 2 s first, so that kweb has cut them (a RST: a
# FIN behind unsent data would leave orphans probing the zero windows,
# holding the namespace) before it goes.
NETNS_WAIT=${KWEB_NETNS_WAIT:-20}
# The kernel's TCP orphans, all namespaces, into ORPHANS: builtins only,
# no fork, which costs a good part of a second on the debug kernel.
tcp_orphans() {
  local tag
  while read -r tag _ _ _ ORPHANS _; do
    [[ $tag == TCP: ]] && return
  done </proc/net/sockstat
  ORPHANS=0
}
# kweb's connections open in this namespace into OPEN, builtins only.
kweb_open() {
  local key value
  OPEN=0
  while read -r key value _; do
    [[ $key == connections_open ]] && { OPEN=$value; return; }
  done </proc/net/kweb
}
# The orphan count is every namespace's: a connection of the suite before
# that kweb closes now, its client gone quiet, is an orphan of this one
# in FIN_WAIT2 for a minute. Start from none left open (60 s at most),
# and show this namespace's sockets where one was counted.
root_quiet() {
  local end=$((SECONDS + 60))
  kweb_open
  while ((OPEN && SECONDS < end)); do
    nap 0.5
    kweb_open
  done
  if ((OPEN)); then
    echo "root namespace: $OPEN connections of kweb still open" | diag
  fi
}
root_sockets() {
  kweb_open
  echo "root namespace: kweb's connections_open $OPEN"
  # States an orphan can be in: FIN_WAIT1, FIN_WAIT2, LAST_ACK, CLOSING.
  awk '$4 ~ /^(04|05|09|0B)$/' /proc/net/tcp /proc/net/tcp6
}
zero_window_netns() {
  local ns=kweb-hostile before rc=0 out orphans n max end mode=${1:-open}
  local orphans0 what="zero-window clients"
  [[ $mode == closed ]] && what="zero-window clients kweb reset (send timeout)"
  [[ -x $KWEBCTL ]] || { not_ok "$TAG: netns exit with zero-window clients (no $KWEBCTL)"; return; }
  ip netns del "$ns" 2>/dev/null
  modprobe veth 2>/dev/null
  out=$RUN_DIR/netns-setup.txt
  if ! { ip netns add "$ns" &&
      ip link add kwh0 type veth peer name kwh1 netns "$ns" &&
      ip addr add 10.203.0.1/24 dev kwh0 && ip link set kwh0 up &&
      ip -n "$ns" addr add 10.203.0.2/24 dev kwh1 &&
      ip -n "$ns" link set kwh1 up && ip -n "$ns" link set lo up &&
      ip netns exec "$ns" "$KWEBCTL" listener add port "$PORT" \
        docroot "$DOCROOT"; } >"$out" 2>&1; then
    not_ok "$TAG: a kweb listener in a namespace behind a veth pair"
    diag 10 <"$out"
    ip netns del "$ns" 2>/dev/null
    return
  fi
  root_quiet
  tcp_orphans
  orphans0=$ORPHANS
  # The namespace's own setting: settings are per network namespace.
  [[ $mode == closed ]] &&
    ip netns exec "$ns" "$KWEBCTL" config set send-timeout 2 >>"$LOG" 2>&1
  if ! start_holders "$RUN_DIR/hold-netns-$mode.txt" 10.203.0.2 "$PORT"; then
    not_ok "$TAG: $HOLD_CONNS zero-window clients of the namespace's listener ($mode)"
    stop_holders
    ip netns del "$ns"
    return
  fi
  # Windows shut long enough for the probe timers to back off.
  nap 8
  ip netns exec "$ns" ss -tn >>"$LOG" 2>&1
  before=$(kmsg_lines)
  tcp_orphans
  orphans=$ORPHANS
  if [[ $mode == closed ]]; then
    n=$(ip netns exec "$ns" cat /proc/net/kweb |
      awk '$1 == "connections_open" { print $2 }')
    if [[ $n == 0 ]] && ((orphans <= orphans0)); then
      ok "$TAG: kweb reset its zero-window connections at send_timeout (open: $n, orphans: $orphans0 -> $orphans)"
    else
      not_ok "$TAG: kweb reset its zero-window connections at send_timeout (open: $n, orphans: $orphans0 -> $orphans)"
    fi
    orphans=$orphans0
  fi
  bounded 30 ip netns del "$ns" >>"$LOG" 2>&1 || rc=$?
  result "$TAG: ip netns del with $HOLD_CONNS $what" "$rc"
  # The orphan count is the kernel's, across namespaces: one the exit
  # left (a connection closed with a FIN behind its unsent data, not
  # reset) would probe on into a namespace that is gone. Watch for them
  # for 10 s (a deadline: a fork here costs what the sample is worth).
  max=$orphans
  end=$((SECONDS + 10))
  while ((SECONDS < end)); do
    tcp_orphans
    ((ORPHANS > max)) && max=$ORPHANS
    nap 0.1
  done
  # The namespace's exit runs in a work item: give it its time. An orphan
  # it left behind probes for minutes, so one still there 10 s on is
  # kweb's; one gone by then was another socket's passing close (seen on
  # the debug kernel, gone before the diagnostics below could list it).
  end=$((SECONDS + 10))
  tcp_orphans
  while ((ORPHANS > orphans && SECONDS < end)); do
    nap 0.1
    tcp_orphans
  done
  max=$ORPHANS
  if ((max <= orphans)); then
    ok "$TAG: the namespace's exit leaves no orphaned connection of kweb behind ($mode)"
  else
    not_ok "$TAG: the namespace's exit leaves no orphaned connection of kweb behind ($mode)"
    { echo "TCP orphans: $orphans expected at most, up to $max after"
      root_sockets; } | diag
  fi
  # Past the first probe and retransmission timers (KASAN).
  nap "$NETNS_WAIT"
  stop_holders
  kmsg_clean_since "$TAG: no kernel report ${NETNS_WAIT}s after the namespace's exit under $what" "$before"
  small_ok "$TAG: kweb serves /small.txt after the namespace's exit ($mode)"
  # The exit (cleanup_net()) holds pernet_ops_rwsem, which rmmod and
  # insmod wait for, and kweb_ctl_mutex for a while: it must end, and
  # before the next test, which it would otherwise slow.
  end=$((SECONDS + 120))
  while netns_exit_running && ((SECONDS < end)); do
    nap 0.5
  done
  if netns_exit_running; then
    not_ok "$TAG: the namespace's exit ends within 120 s ($mode)"
    blocked_stacks | diag 40
  else
    ok "$TAG: the namespace's exit ends within 120 s ($mode)"
  fi
  ip link del kwh0 2>/dev/null
}

# Hostile TCP clients (tests/tcp_hostile_test.py), then zero-window
# clients across a namespace's exit, a listener's deletion and rmmod.
hostile() {
  # Fast Open for every listener (0x400) without a cookie (0x200), and
  # for clients (0x1): set before kweb's listener is made.
  sysctl_set net.ipv4.tcp_fastopen 0x603
  load_with "${ROUTES[@]}" || { sysctl_restore; return; }
  local light=() HTTP_TIMEOUT=$HTTP_TIMEOUT
  # The debug kernel: 24 of its tests took the 900 s of one suite on a
  # slow host.
  ((LIGHT)) && light=(--light --close-wait 60) &&
    HTTP_TIMEOUT=$((HTTP_TIMEOUT * 2))
  client_tests "$HOSTILE_TEST" hostile-ipv4 127.0.0.1 --kwebctl "$KWEBCTL" \
    --timeout "$CLIENT_TIMEOUT" "${light[@]}"
  if ! kernel_died; then
    zero_window_netns
    # send_timeout's reset is the same on every kernel: the debug kernel
    # has the namespace's exit with connections open, the case for KASAN.
    ((LIGHT)) || zero_window_netns closed
    zero_window_listener_del
    unload
    zero_window_rmmod
  fi
  sysctl_restore
}

# --- a namespace's exit under load ----------------------------------------

# A listener in a namespace reached over a veth pair (netem, 20 ms each
# way, where the kernel has sch_netem: the debug kernel has not), load
# across `ip netns del` (tcp_hostile_test.py --exit-load: keep-alive
# clients idle past a 1 s keep-alive timeout, a connection per request,
# the client's FIN first, resets mid-body, clients that never close),
# and zero-window clients whose orphans hold the deleted namespace until
# the load is over and they read. Then nothing may hold it: the
# namespace's cleanup must run, which destroys the veth pair (the host's
# end goes) and drops its nsid in the host (`ip netns list-id`). Kernel
# sockets hold no reference: a kweb that kept one on a closed socket
# (a FIN in flight at its close) kept the namespace until rmmod. The
# zero-window orphans probe for up to 15 backoffs (the namespace's
# tcp_orphan_retries), not 8: on the debug kernel's slow RTTs, 8 ended
# one of them before its client read.
NETNS_EXIT_LOAD=${KWEB_NETNS_EXIT_LOAD:-8}
NETNS_EXIT_BOUND=30
# The host's nsids into NSIDS: one fork.
netns_ids() {
  local lines
  mapfile -t lines < <(ip netns list-id 2>/dev/null)
  NSIDS=${#lines[@]}
}
netns_exit() {
  local ns=kweb-exit dev=kwx0 out=$RUN_DIR/netns-exit.txt pid n rc=0
  local ids0 ids1 before t0 delay="none (no sch_netem)"
  [[ -x $KWEBCTL ]] || { not_ok "$TAG: namespace exit under load (no $KWEBCTL)"; return; }
  load_with || return
  ip netns del "$ns" 2>/dev/null
  ip link del "$dev" 2>/dev/null
  modprobe veth 2>/dev/null
  modprobe sch_netem 2>/dev/null
  netns_ids
  ids0=$NSIDS
  if ! { ip netns add "$ns" &&
      ip link add "$dev" type veth peer name kwx1 netns "$ns" &&
      ip addr add 10.204.0.1/24 dev "$dev" && ip link set "$dev" up &&
      ip -n "$ns" addr add 10.204.0.2/24 dev kwx1 &&
      ip -n "$ns" link set kwx1 up && ip -n "$ns" link set lo up &&
      ip netns exec "$ns" "$KWEBCTL" listener add port "$PORT" \
        docroot "$DOCROOT" &&
      ip netns exec "$ns" "$KWEBCTL" config set keepalive-timeout 1 &&
      ip netns exec "$ns" sysctl -qw net.ipv4.tcp_orphan_retries=15; } \
      >"$out" 2>&1; then
    not_ok "$TAG: a kweb listener in a namespace behind a veth pair (exit)"
    diag 10 <"$out"
    ip netns del "$ns" 2>/dev/null
    unload
    return
  fi
  if tc qdisc add dev "$dev" root netem delay 20ms >>"$LOG" 2>&1 &&
      tc -n "$ns" qdisc add dev kwx1 root netem delay 20ms >>"$LOG" 2>&1; then
    delay="20 ms each way (netem)"
  fi
  netns_ids
  ids1=$NSIDS
  say "namespace exit: veth delay $delay; the host's nsids $ids0 -> $ids1"
  before=$(kmsg_lines)
  "$PY" "$HOSTILE_TEST" --host 10.204.0.2 --port "$PORT" \
    --docroot "$DOCROOT" --timeout "$CLIENT_TIMEOUT" \
    --close-wait $((LIGHT ? 60 : 15)) --netns "$ns" --keepalive 1 \
    --settle $((LIGHT ? 10 : 3)) \
    --exit-load "$NETNS_EXIT_LOAD" >"$out" 2>&1 &
  pid=$!
  n=$(((LIGHT ? 180 : 60) * 5))
  while ((n-- > 0)) && ! holders_ready "$out" && kill -0 "$pid" 2>/dev/null; do
    nap 0.2
  done
  if holders_ready "$out"; then
    # Into the load, and while it runs.
    nap $((NETNS_EXIT_LOAD / 3))
    ip netns del "$ns" >>"$LOG" 2>&1 || rc=$?
    kill -USR1 "$pid" 2>/dev/null
    result "$TAG: ip netns del under load, with zero-window orphans" "$rc"
  fi
  n=$(((NETNS_EXIT_LOAD + 10 * CLIENT_TIMEOUT) * 5))
  while ((n-- > 0)) && kill -0 "$pid" 2>/dev/null; do
    nap 0.2
  done
  kill -KILL "$pid" 2>/dev/null
  rc=0
  wait "$pid" || rc=$?
  cat "$out" >>"$LOG"
  result "$TAG: load across the namespace's deletion: every response exact, the orphans finish theirs" "$rc" "$out"
  # The namespace's cleanup runs in a work item once the last reference
  # goes: wait for it, within a bound.
  t0=$SECONDS
  while [[ -e /sys/class/net/$dev ]] && ((SECONDS - t0 < NETNS_EXIT_BOUND)); do
    nap 0.2
  done
  netns_ids
  if [[ ! -e /sys/class/net/$dev ]] && ((NSIDS == ids0)); then
    ok "$TAG: the deleted namespace is freed once its connections are done (veth gone after $((SECONDS - t0)) s, the host's nsids $ids1 -> $NSIDS)"
  else
    not_ok "$TAG: the deleted namespace is freed once its connections are done (after ${NETNS_EXIT_BOUND} s: veth ${dev} $([[ -e /sys/class/net/$dev ]] && echo still there || echo gone), the host's nsids $ids0 -> $ids1 -> $NSIDS)"
    { grep -E '^(TCP|sockets):' /proc/net/sockstat
      ss -tanH '( dst 10.204.0.2 )'; } 2>&1 | diag 20
    ip link del "$dev" 2>/dev/null
  fi
  kmsg_clean_since "$TAG: no kernel report after the namespace's exit under load" "$before"
  small_ok "$TAG: kweb serves /small.txt after the namespace's exit under load"
  unload
}

# A TcpExt counter of /proc/net/netstat.
nstat_value() {
  awk -v k="${1#TcpExt}" '
    $1 == "TcpExt:" && !h { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
    $1 == "TcpExt:" { for (i = 2; i <= NF; i++) if (n[i] == k) print $i }' \
    /proc/net/netstat
}

# cookies_used LABEL BEFORE AFTER (TcpExtSyncookiesRecv): one test line.
cookies_used() {
  if (($3 > $2)); then
    ok "$TAG $1: client connections made by SYN cookies (TcpExtSyncookiesRecv +$(($3 - $2)))"
  else
    not_ok "$TAG $1: client connections made by SYN cookies (TcpExtSyncookiesRecv +0)"
  fi
}

# The HTTP and handoff suites over IPv4 (the debug kernel: the handoff
# suite only) on the loaded kweb.
syn_clients() {
  local only=()
  # The debug kernel: handoffs of cookie connections, without the one
  # test that first sends the 10 MiB file (90 s there; the plain handoff
  # suite has it).
  ((LIGHT)) && only=(--only '^(?!keep-alive: POST arrives while kweb still sends)')
  ((LIGHT)) ||
    client_tests "$HTTP_TEST" "$1-ipv4" 127.0.0.1 --timeout "$CLIENT_TIMEOUT"
  client_tests "$HANDOFF_TEST" "$1-handoff-ipv4" 127.0.0.1 \
    --client-addr 127.0.0.2 --timeout "$CLIENT_TIMEOUT" "${only[@]}"
}

# The first SYN cookie of a boot, of each family, makes the kernel patch
# its own text: cookie_hash() turns off the static key of its
# net_get_random_once(), from a work item. Once, on stock 6.12 under TCG,
# a vCPU still running cookie_hash() in the SYN flood took that patch's
# int3 as an oops (QEMU's cross-modifying code; kweb was not on the
# stack). Make those cookies here, one connection each on a listener of
# our own, before any load; the patch then has the guest to itself.
cookies_warm() {
  ((COOKIES_WARM)) && return
  COOKIES_WARM=1
  sysctl_set net.ipv4.tcp_syncookies 2
  "$PY" - <<'PYEOF' >>"$LOG" 2>&1
import socket
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        with socket.socket(fam) as lsk:
            lsk.bind((addr, 0))
            lsk.listen()
            socket.create_connection((addr, lsk.getsockname()[1]), 10).close()
    except OSError as e:
        print("cookies_warm: %s: %s" % (addr, e))
PYEOF
  # The key's work item runs on the next tick or so.
  nap 1
  sysctl_restore
}
COOKIES_WARM=0

# The HTTP and handoff suites, and the limits suite's connection limit
# (its handoff of a whole connection), with every connection made by a
# SYN cookie (tcp_syncookies=2).
syncookies() {
  local before
  cookies_warm
  sysctl_set net.ipv4.tcp_syncookies 2
  before=$(nstat_value TcpExtSyncookiesRecv)
  if load_with "${ROUTES[@]}"; then
    syn_clients syncookies
    cookies_used syncookies "$before" "$(nstat_value TcpExtSyncookiesRecv)"
    unload
  fi
  if ! kernel_died && load_with max_connections=8 max_requests=3; then
    client_tests "$LIMITS_TEST" syncookies-limits 127.0.0.1 \
      --max-connections 8 --max-requests 3
    unload
  fi
  sysctl_restore
}

# The same suites while spoofed SYNs keep kweb's SYN queue full, so that
# the kernel falls back to cookies (tcp_syncookies=1): kweb's listen
# backlog (SOMAXCONN) requests in the queue. The spoofed sources are
# routed to a dummy interface, where the SYN-ACKs vanish. Cookies must
# have been sent, and clients' connections made by them.
SYNFLOOD_RATE=${KWEB_SYNFLOOD_RATE:-$( ((LIGHT)) && echo 300 || echo 1000)}
synflood() {
  local flood_pid sent0 recv0 out=$RUN_DIR/synflood.txt n
  cookies_warm
  modprobe dummy 2>/dev/null
  ip link del kwebflood 2>/dev/null
  if ! { ip link add kwebflood type dummy &&
      ip addr add 198.18.0.1/15 dev kwebflood &&
      ip link set kwebflood up; } >>"$LOG" 2>&1; then
    not_ok "$TAG synflood: a dummy interface for the spoofed sources"
    return
  fi
  sysctl_set net.ipv4.tcp_syncookies 1
  # A request lives through its SYN-ACK retransmissions; the kernel
  # prunes a full queue to three fewer than this: 10 keeps it full.
  sysctl_set net.ipv4.tcp_synack_retries 10
  if load_with "${ROUTES[@]}"; then
    sent0=$(nstat_value TcpExtSyncookiesSent)
    recv0=$(nstat_value TcpExtSyncookiesRecv)
    "$PY" "$SYNFLOOD" --dst 198.18.0.1 --port "$PORT" --src 198.18.0.0/15 \
      --rate "$SYNFLOOD_RATE" --seconds $((HTTP_TIMEOUT * 3)) >"$out" 2>&1 &
    flood_pid=$!
    # The queue is full once cookies go out.
    n=$((LIGHT ? 240 : 120))
    while ((n-- > 0)) &&
        (($(nstat_value TcpExtSyncookiesSent) == sent0)); do
      nap 0.5
    done
    if (($(nstat_value TcpExtSyncookiesSent) > sent0)); then
      ok "$TAG synflood: the flood fills kweb's SYN queue (cookies sent)"
      syn_clients synflood
    else
      not_ok "$TAG synflood: the flood fills kweb's SYN queue (no cookie sent)"
      { ss -ltn; tail -n 5 "$out"; } | diag 20
    fi
    kill "$flood_pid" 2>/dev/null
    wait "$flood_pid" 2>/dev/null
    say "synflood: $(tail -n 1 "$out"); TcpExtSyncookiesSent +$(($(nstat_value TcpExtSyncookiesSent) - sent0))"
    cookies_used synflood "$recv0" "$(nstat_value TcpExtSyncookiesRecv)"
    unload
  fi
  sysctl_restore
  ip link del kwebflood 2>/dev/null
}

# The kernel's generic netlink CLI, from a linux-source-6.12 tree: the
# one scripts/ynl-regen.sh unpacks, or any other; empty if none.
find_ynl_cli() {
  local cache=${KWEB_CACHE:-$HOME/.cache/kweb} c
  for c in "${KWEB_YNL_CLI:-}" "$cache/ynl/tools/net/ynl/cli.py" \
      /root/src/linux-source-6.12/tools/net/ynl/cli.py \
      /usr/src/linux-source-6.12/tools/net/ynl/cli.py \
      "$cache"/debug-kernel/*/linux-source-6.12/tools/net/ynl/cli.py; do
    [[ -n $c && -r $c ]] && { echo "$c"; return; }
  done
}

# kwebctl and the netlink family (tests/ctl_test.py) on a load of their
# own: listeners come and go, settings change and are put back.
ctl() {
  local cli
  [[ -r $CTL_TEST ]] || return 0
  if [[ ! -x $KWEBCTL ]]; then
    not_ok "$TAG: ctl tests (no $KWEBCTL: make -C userctl)"
    return
  fi
  load_with "${ROUTES[@]}" || return
  # Three runs of the ynl CLI, each parsing the spec in Python: minutes on
  # the debug kernel under TCG, for netlink calls kwebctl makes too.
  ((USER_SIDE)) && cli=$(find_ynl_cli)
  local cli_timeout=60
  ((LIGHT)) && cli_timeout=240
  # The log rotation under load: 2,000 requests, 250 on the debug kernel
  # (where 500 took 160 s beside the stock guests).
  local log_requests=2000
  ((LIGHT)) && log_requests=250
  local HTTP_TIMEOUT=$((HTTP_TIMEOUT + 3 * cli_timeout))
  local light=() metrics=()
  ((USER_SIDE)) || light=(--light)
  # make check runs promtool on the host over what the test saves
  # (scripts/check.sh promtool_check): in a guest it starts slowly.
  ((PROMTOOL_ON_HOST)) && metrics=(--metrics-file "$RUN_DIR/metrics.prom")
  client_tests "$CTL_TEST" ctl 127.0.0.1 --kwebctl "$KWEBCTL" \
    --base "$BASE" --cli-timeout "$cli_timeout" ${cli:+--ynl-cli "$cli"} \
    --log-requests "$log_requests" "${metrics[@]}" "${light[@]}"
  unload
}

# Memory cgroups (tests/memcg_test.py): a listener added from a cgroup
# of its own pays for its connections, and a handoff moves them into the
# backend's. Where the kernel has the memory controller (all three).
MEMCG_TEST=${KWEB_MEMCG_TEST:-$REPO/tests/memcg_test.py}
memcg() {
  local cg=$BASE/cgroup
  [[ -r $MEMCG_TEST ]] || return 0
  if [[ ! -x $KWEBCTL ]]; then
    not_ok "$TAG: memory cgroup tests (no $KWEBCTL: make -C userctl)"
    return
  fi
  mkdir -p "$cg"
  mountpoint -q "$cg" || mount -t cgroup2 none "$cg" 2>>"$LOG"
  if ! echo +memory 2>>"$LOG" >"$cg/cgroup.subtree_control"; then
    not_ok "$TAG: memory cgroup tests (no memory controller)"
    return
  fi
  load_with || return
  client_tests "$MEMCG_TEST" memcg 127.0.0.1 --kwebctl "$KWEBCTL" \
    --cgroup "$cg"
  unload
}

# A tenant's docroot that never answers (tests/stall_test.py): its FUSE
# daemon stopped under a listener of its namespace holds nothing of
# another listener's or namespace's, and everything ends once it runs.
# Then an unload under such a stall waits for it alone.
STALL_TEST=${KWEB_STALL_TEST:-$REPO/tests/stall_test.py}
stall() {
  [[ -r $STALL_TEST ]] || return 0
  if [[ ! -x $KWEBCTL ]] || ! command -v bindfs >/dev/null; then
    not_ok "$TAG: stalled docroot tests (no $KWEBCTL or no bindfs)"
    return
  fi
  load_with || return
  local before
  before=$(kmsg_lines)
  # It unloads kweb last, with runs still waiting on the daemon.
  client_tests "$STALL_TEST" stall 127.0.0.1 --kwebctl "$KWEBCTL" \
    --base "$BASE" --rmmod-cmd "rmmod kweb"
  if module_loaded kweb; then
    not_ok "$TAG: kweb unloaded by the stall client"
    unload
    return 1
  fi
  unloaded_checks "$before"
}

# The tracepoints through tracefs (and perf, if one works) on a load of
# their own, whose keep-alive timeout is short enough to wait for and
# whose cache (1 MiB) two files can fill.
TRACE_KEEPALIVE=2
tracepoints() {
  [[ -r $TRACE_TEST ]] || return 0
  load_with "${ROUTES[@]}" keepalive_timeout=$TRACE_KEEPALIVE cache_size=1 ||
    return
  local light=()
  ((USER_SIDE)) || light=(--light)
  client_tests "$TRACE_TEST" trace 127.0.0.1 --kwebctl "$KWEBCTL" \
    --keepalive-timeout "$TRACE_KEEPALIVE" --timeout "$CLIENT_TIMEOUT" \
    "${light[@]}"
  unload
}

nginx_up() {
  local err=$RUN_DIR/nginx-start.err rc=0
  "$REPO/tests/guest/nginx.sh" start "$DOCROOT" "$NGINX_BASE" >"$err" 2>&1 ||
    rc=$?
  result "$TAG: nginx backend on port 8080 (IPv4 and IPv6)" "$rc" "$err"
  return "$rc"
}

nginx_down() {
  "$REPO/tests/guest/nginx.sh" stop "$NGINX_BASE" >>"$LOG" 2>&1
  cp "$NGINX_BASE/error.log" "$RUN_DIR/nginx-error.log" 2>/dev/null
}

# load_must_fail NAME ARGS...: insmod must fail and say why in dmesg.
load_must_fail() {
  local name=$1 before rc=0 new
  shift
  before=$(kmsg_lines)
  insmod_kweb "$@" || rc=$?
  # The kernel's own notes about loading an unsigned module name it too.
  new=$(kmsg_since "$before" | grep -vE 'module verification failed|out-of-tree module taints' || true)
  if module_loaded kweb; then
    not_ok "$TAG: insmod $name fails"
    echo "insmod $* succeeded" | diag
    rmmod_kweb || true
  elif ((rc == 0)); then
    not_ok "$TAG: insmod $name fails"
    echo "insmod $* exited 0" | diag
  elif ! grep -q 'kweb:' <<<"$new"; then
    not_ok "$TAG: insmod $name fails with a kweb: message"
    { echo "insmod $* exited $rc; no 'kweb:' line in dmesg; new lines:"
      echo "$new"; } | diag 20
  else
    ok "$TAG: insmod $name fails with a kweb: message"
    grep 'kweb:' <<<"$new" >>"$LOG"
  fi
}

# Something else owns BUSY_PORT on both families (a v6 socket that also
# takes v4), whichever way kweb binds.
start_busy_listener() {
  "$PY" - "$BUSY_PORT" <<'EOF' >>"$LOG" 2>&1 &
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.listen()
time.sleep(300)
EOF
  BUSY_PID=$!
  wait_port "$BUSY_PORT" 20
}

load_errors() {
  if module_loaded kweb; then
    not_ok "$TAG: insmod error checks (not run: kweb could not be unloaded)"
    return
  fi
  load_must_fail "with a relative docroot" "docroot=www" "port=$PORT"
  load_must_fail "with a missing docroot" "docroot=$BASE/no-such-dir" \
    "port=$PORT"
  load_must_fail "without docroot" "port=$PORT"
  load_must_fail "with user=-1" "docroot=$DOCROOT" "port=$PORT" user=-1
  load_must_fail "with an unmapped user (4294967295)" "docroot=$DOCROOT" \
    "port=$PORT" user=4294967295
  load_must_fail "with an unmapped group (4294967295)" "docroot=$DOCROOT" \
    "port=$PORT" group=4294967295
  if start_busy_listener; then
    load_must_fail "on a port in use" "docroot=$DOCROOT" "port=$BUSY_PORT"
  else
    not_ok "$TAG: insmod on a port in use fails (could not occupy port" \
      "$BUSY_PORT)"
  fi
  kill "$BUSY_PID" 2>/dev/null
  wait "$BUSY_PID" 2>/dev/null
}

# KWEB_ONLY="netfuzz ctl" (a developer's loop): only the suites named,
# from dkms (only with KWEB_DKMS=1) http diff fastpath handoff netfuzz
# unload identity limits hardening ctl trace hostile netns tls
# syncookies synflood.
# KWEB_SKIP="synflood" (make check, per kernel): all but the suites named.
ONLY=${KWEB_ONLY:-}
SKIP=${KWEB_SKIP:-}
# A suite wanted starts its clock and reports the one before it: what
# make check's minutes go to.
LAP_NAME='' LAP_T=0
lap() {
  [[ -n $LAP_NAME ]] && say "$TAG: suite $LAP_NAME took $((SECONDS - LAP_T))s"
  LAP_NAME=$1 LAP_T=$SECONDS
}
want() {
  [[ -z $ONLY || " $ONLY " == *" $1 "* ]] && [[ " $SKIP " != *" $1 "* ]] &&
    lap "$1"
}

# The Debian package's module, loaded by modprobe (tests/guest/dkms.sh),
# when scripts/check.sh installed the packages (KWEB_DKMS=1): before
# anything else, with port 80 free and no kweb loaded.
dkms() {
  local out
  out=$("$HERE/dkms.sh" "$RUN_DIR/dkms" "$TAG")
  echo "$out"
  PASSED=$((PASSED + $(grep -c '^ok ' <<<"$out")))
  FAILED=$((FAILED + $(grep -c '^not ok ' <<<"$out")))
}

# HTTPS (docs/tls.md), each script loading what it needs: kwebtlsd alone
# (handshakes, kTLS both ways, SNI, ALPN, resumption, reload: user space
# and the kernel's kTLS, so once, with the user-side tests), then kweb
# serving through kTLS behind it, then a namespace with HTTPS in it
# deleted while clients hold kweb's connections. Needs tls.ko (CONFIG_TLS).
tls_suites() {
  local out s suites=(tls_kweb tls_netns)
  ((USER_SIDE)) && suites=(tls tls_kweb tls_netns)
  if ! modprobe tls 2>>"$LOG"; then
    not_ok "$TAG: https (not run: no kTLS, modprobe tls failed)"
    return
  fi
  for s in "${suites[@]}"; do
    case $s in
      tls) out=$("$HERE/tls.sh" "$RUN_DIR/tls" "$TAG: https") ;;
      tls_kweb) out=$("$HERE/tls_kweb.sh" "$KO" "$RUN_DIR/tls-kweb" \
        "$TAG: https kweb") ;;
      tls_netns) out=$("$HERE/tls_netns.sh" "$KO" "$RUN_DIR/tls-netns" \
        "$TAG: https netns exit") ;;
    esac
    grep -E '^(ok|not ok) |^#' <<<"$out"
    PASSED=$((PASSED + $(grep -c '^ok ' <<<"$out")))
    FAILED=$((FAILED + $(grep -c '^not ok ' <<<"$out")))
  done
}

main() {
  setup
  [[ ${KWEB_DKMS:-0} == 1 ]] && want dkms && dkms
  if make_docroot && nginx_up && load; then
    if want http; then
      local light=()
      ((LIGHT)) && light=(--light)
      client_tests "$HTTP_TEST" ipv4 127.0.0.1 --timeout "$CLIENT_TIMEOUT" \
        "${light[@]}"
      ((LIGHT)) ||
        client_tests "$HTTP_TEST" ipv6 ::1 --timeout "$CLIENT_TIMEOUT"
    fi
    # kweb against nginx configured alike (stock kernels: a thousand
    # requests, twice).
    if want diff && ((!LIGHT)); then
      client_tests "$DIFF_TEST" diff-ipv4 127.0.0.1 --timeout "$CLIENT_TIMEOUT" \
        --kwebctl "$KWEBCTL"
    fi
    if want fastpath && [[ -r $FASTPATH_TEST ]]; then
      client_tests "$FASTPATH_TEST" fastpath 127.0.0.1 --wrk "$WRK_SECONDS" \
        --churn "$CHURN_CONNS"
    fi
    if want handoff; then
      client_tests "$HANDOFF_TEST" handoff-ipv4 127.0.0.1 \
        --client-addr 127.0.0.2 --wrk "$WRK_SECONDS" --timeout "$CLIENT_TIMEOUT"
      ((LIGHT)) ||
        client_tests "$HANDOFF_TEST" handoff-ipv6 ::1 --client-addr ::1 \
          --timeout "$CLIENT_TIMEOUT"
    fi
    want netfuzz && netfuzz
    if want unload; then
      unload_with_handoffs
    else
      unload # the later suites load kweb their own way
    fi
    want identity && identity
    want limits && limits
    want hardening && hardening
    want ctl && ctl
    want memcg && memcg
    want stall && stall
    want trace && tracepoints
    want hostile && hostile
    want netns && netns_exit
    want tls && tls_suites
    # Last: before the fix of a SYN cookie's handoff, these oops.
    want syncookies && syncookies
    want synflood && synflood
  elif module_loaded kweb && ! kernel_died; then
    rmmod_kweb || true
  fi
  lap ''
  nginx_down
  load_errors
  local after="integration tests"
  # debug.sh: KUnit's run, earlier in this boot, left its check to this one.
  [[ ${KWEB_KMEMLEAK_LATER:-0} == 1 ]] && after="KUnit and $after"
  kmemleak_check "$TAG: kmemleak clean after $after" integration
  kmsg_mark "integration ($TAG) end"
  dmesg_check "$TAG: dmesg clean (integration)"
  save_dmesg integration
  umount -l "$BASE" 2>/dev/null
  finish "$TAG integration"
}

main
