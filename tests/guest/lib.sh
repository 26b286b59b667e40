#!/usr/bin/env bash
# Helpers shared by the guest-side test scripts (sourced, never run). They
# run as root inside a throw-away virtme-ng guest whose / is the host's
# filesystem, read-write: write only to $RUN_DIR (results, on purpose) and
# to tmpfs mounts made here.
#
# Output contract (read by scripts/check.sh): one line per test,
#   ok - NAME          or      not ok - NAME
# optionally followed by "# " diagnostic lines. Nothing else on stdout
# starts with "ok" or "not ok".

PASSED=0
FAILED=0
# Debian's python, not a pyenv shim from the host's PATH: shims are shell
# scripts that are painfully slow under TCG, and the test client needs only
# the standard library.
# shellcheck disable=SC2034 # used by the scripts that source this
PY=${KWEB_PYTHON:-/usr/bin/python3}

# A guest script's arguments, KWEB_KO [RESULTS_DIR [TAG]] (or the same
# from $KWEB_KO, $KWEB_RUN_DIR, $KWEB_TAG): sets KO, RUN_DIR and TAG, the
# latter DEFAULT_TAG if none is given.
#   guest_args DEFAULT_TAG "$@"
guest_args() {
  local default_tag=$1
  shift
  # shellcheck disable=SC2034 # used by the scripts that source this
  KO=${1:-${KWEB_KO:-}}
  RUN_DIR=${2:-${KWEB_RUN_DIR:-}}
  TAG=${3:-${KWEB_TAG:-$default_tag}}
  [[ -n $KO && -r $KO ]] || die "$TAG: kweb.ko given and readable (${KO:-unset})"
  [[ -n $RUN_DIR ]] || die "$TAG: results directory given"
  mkdir -p "$RUN_DIR"
}

ok() { echo "ok - $*"; PASSED=$((PASSED + 1)); }
not_ok() { echo "not ok - $*"; FAILED=$((FAILED + 1)); }
# Diagnostics from stdin, at most $1 lines (default 40).
diag() { head -n "${1:-40}" | sed 's/^/# /'; }
# ok/not ok from a status: result NAME STATUS [DIAG-FILE]
result() {
  local name=$1 rc=$2 file=${3:-}
  if ((rc == 0)); then
    ok "$name"
  else
    not_ok "$name"
    [[ -n $file && -s $file ]] && diag 40 <"$file"
  fi
  return 0
}

# A test line from a command's status, its output as diagnostics on a
# failure, both in $LOG (a file, or /dev/null): check NAME CMD...
check() {
  local name=$1 out rc=0
  shift
  out=$("$@" 2>&1) || rc=$?
  printf '+ %s\n%s\n' "$*" "$out" >>"${LOG:-/dev/null}"
  if ((rc == 0)); then
    ok "$name"
  else
    not_ok "$name (status $rc)"
    diag 20 <<<"$out"
  fi
  return "$rc"
}

say() { echo "# $*"; }
die() { echo "not ok - $*"; exit 1; }

# The guest's dmesg without timestamps, one record a line.
kmsg() { dmesg --notime 2>/dev/null || dmesg; }
kmsg_lines() { kmsg | wc -l; }
# dmesg lines after line number $1.
kmsg_since() { kmsg | tail -n +"$(($1 + 1))"; }
# Mark a point in dmesg so a reader of the saved log can find it.
kmsg_mark() { echo "kweb-test: $*" >/dev/kmsg 2>/dev/null || true; }

ensure_debugfs() {
  mountpoint -q /sys/kernel/debug ||
    mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
}

# A fresh tmpfs at $1, private to the guest (the guest's / is the host's).
mount_tmpfs() {
  local dir=$1
  mkdir -p "$dir"
  mountpoint -q "$dir" && umount -l "$dir"
  mount -t tmpfs -o mode=0755,size=256m kwebtest "$dir"
}

# nap SECS: sleep(1) without the fork. On the debug kernel under TCG a
# fork and exec costs over a second of CPU, so polling loops that ran
# sleep every 0.2 s kept a vCPU busy with it. This reads a pipe nobody
# writes to (opened read-write, so it never sees EOF) until the timeout.
exec {NAP_FD}<> <(:)
nap() { read -r -t "$1" -u "$NAP_FD" _ || true; }

# Has the kernel oopsed since boot (taint flag D)? For polling loops: one
# read, where grepping dmesg costs three forks.
kernel_died() {
  local t
  read -r t </proc/sys/kernel/tainted 2>/dev/null || return 1
  ((t & 128))
}

# Where every task in D state waits (the kernel's stacks), for a report.
# The state follows the last ')' of stat: a command name may hold spaces.
blocked_stacks() {
  local d line st level
  for d in /proc/[0-9]*; do
    read -r line <"$d/stat" 2>/dev/null || continue
    st=${line##*) }
    [[ ${st%% *} == D ]] || continue
    echo "blocked: ${line%%) *})"
    sed 's/^/  /' "$d/stack" 2>/dev/null
  done
  # The debug kernel's lockdep: every lock held, into dmesg (saved whole),
  # not to the serial console, whose every line stalls a CPU.
  if [[ -e /proc/lockdep ]]; then
    read -r level _ </proc/sys/kernel/printk
    echo 1 >/proc/sys/kernel/printk
    echo d >/proc/sysrq-trigger 2>/dev/null
    echo "$level" >/proc/sys/kernel/printk
  fi
  return 0
}

# Whether a network namespace's exit runs (a task in cleanup_net()).
# Looked at twice: a task on a CPU may show no stack.
netns_exit_running() {
  local f l i
  for i in 1 2; do
    ((i == 2)) && nap 0.2
    for f in /proc/[0-9]*/stack; do
      while read -r l; do
        [[ $l == *cleanup_net* ]] && return 0
      done <"$f" 2>/dev/null
    done
  done
  return 1
}

# bounded SECS CMD...: run CMD, give up after SECS with status 124. Unlike
# timeout(1) this never waits for a CMD stuck in the kernel (an rmmod
# blocked in D state cannot be killed): it is left behind.
bounded() {
  local secs=$1 pid n
  shift
  "$@" &
  pid=$!
  n=$((secs * 5))
  while kill -0 "$pid" 2>/dev/null; do
    if ((n-- <= 0)); then
      echo "gave up after ${secs}s: $*" >&2
      blocked_stacks >&2
      kill -KILL "$pid" 2>/dev/null
      return 124
    fi
    nap 0.2
  done
  wait "$pid"
}

module_loaded() { [[ -d /sys/module/$1 ]]; }

# Is every one of ADDR:PORT... listened on (TCP)? ADDR is 127.0.0.1,
# [::1] or * (any). Read from /proc/net/tcp and tcp6 without a fork: on
# the debug kernel under TCG a fork and exec cost over a second, and the
# waits below poll.
tcp_listening() {
  local f addr st seen=' ' w hex
  for f in /proc/net/tcp /proc/net/tcp6; do
    [[ -r $f ]] || continue
    while read -r _ addr _ st _; do
      [[ $st == 0A ]] && seen+="$addr "
    done <"$f"
  done
  for w; do
    printf -v hex ':%04X ' "${w##*:}"
    case ${w%:*} in
      127.0.0.1) hex=" 0100007F$hex" ;;
      '[::1]') hex=" 00000000000000000000000001000000$hex" ;;
      '*') ;;
      *) return 2 ;;
    esac
    [[ $seen == *"$hex"* ]] || return 1
  done
}

# Is anything listening on TCP port $1 (IPv4 or IPv6)?
port_listening() { tcp_listening "*:$1"; }

# Wait up to $2 seconds (default 10) for port $1 to be listened on.
wait_port() {
  local port=$1 n=$((${2:-10} * 5))
  while ((n-- > 0)); do
    port_listening "$port" && return 0
    nap 0.2
  done
  return 1
}

# --- kmemleak -------------------------------------------------------------
# kmemleak reports only objects older than ~5 s at scan time, so a check is
# scan, wait, scan. A baseline (scan + clear) before the first script of a
# boot drops what boot itself left (not ours to report); each check clears
# what it reported, so the next script starts clean without a baseline of
# its own (a scan costs tens of seconds on the debug kernel under TCG).

KMEMLEAK=/sys/kernel/debug/kmemleak
readonly KMEMLEAK_BASELINE_DONE=/run/kweb-kmemleak-baseline

have_kmemleak() { [[ -w $KMEMLEAK ]]; }

kmemleak_baseline() {
  have_kmemleak || return 0
  [[ -e $KMEMLEAK_BASELINE_DONE ]] && return 0
  touch "$KMEMLEAK_BASELINE_DONE"
  kmsg_mark "kmemleak baseline begin"
  # Only the checks' own scans: the automatic one, every 10 minutes, takes
  # a vCPU for tens of seconds at a random point of a timed test.
  echo scan=off >"$KMEMLEAK" 2>/dev/null || true
  echo scan >"$KMEMLEAK" 2>/dev/null || true
  cat "$KMEMLEAK" >"$RUN_DIR/kmemleak-baseline-$1.txt" 2>/dev/null || true
  echo clear >"$KMEMLEAK" 2>/dev/null || true
  kmsg_mark "kmemleak baseline end"
}

# One test line: kmemleak_check NAME
kmemleak_check() {
  local name=$1 out=$RUN_DIR/kmemleak-$2.txt
  have_kmemleak || return 0
  echo scan >"$KMEMLEAK" 2>/dev/null || true
  nap 6
  echo scan >"$KMEMLEAK" 2>/dev/null || true
  cat "$KMEMLEAK" >"$out" 2>/dev/null || true
  if [[ -s $out ]]; then
    not_ok "$name"
    diag 60 <"$out"
  else
    ok "$name"
  fi
  # Reported once is enough: a later script starts from a clean list.
  echo clear >"$KMEMLEAK" 2>/dev/null || true
}

# --- nginx -----------------------------------------------------------------
# nginx_temp_paths DIR: the http block's temporary directories under DIR,
# for an nginx.conf of a test's own (a user's nginx may not write to
# the compiled-in ones).
nginx_temp_paths() {
  local t
  for t in client_body proxy fastcgi uwsgi scgi; do
    printf '    %s_temp_path %s/%s;\n' "$t" "$1" "${t#client_}"
  done
}

# --- QEMU's user-mode network (scripts/vm.sh --net-forward) ---------------
# The guest is 10.0.2.15 behind a NAT that lets in only the forwarded
# ports; vng's own network setup is not used, so the NIC is set up here.
# Sets NET_DEV; status 1 if the guest has no NIC.
user_net_up() {
  local n=50
  modprobe virtio_net 2>/dev/null || true
  ip link set lo up
  NET_DEV=''
  while ((n-- > 0)); do
    NET_DEV=$(ip -o link show | awk -F': ' '$2 != "lo" { sub(/@.*/, "", $2); print $2; exit }')
    [[ -n $NET_DEV ]] && break
    sleep 0.2
  done
  [[ -n $NET_DEV ]] || return 1
  ip addr add 10.0.2.15/24 dev "$NET_DEV" 2>/dev/null || true
  ip link set "$NET_DEV" up
  ip route add default via 10.0.2.2 dev "$NET_DEV" 2>/dev/null || true
}

# --- kwebtlsd --------------------------------------------------------------
# tlsd_start [--net-admin] [--netns NS] CONF [ARG...]: $TLSD (kwebtlsd) as
# nobody (with CAP_NET_ADMIN, which giving sockets to kweb needs, if
# asked; in network namespace NS if given), its stderr in
# $RUN_DIR/kwebtlsd.err, its pid in TLSD_PID; one test line, once it says
# it is ready (within 10 s).
tlsd_start() {
  local caps=() netns=() where=''
  while :; do
    case $1 in
      --net-admin) caps=(--inh-caps +net_admin --ambient-caps +net_admin) ;;
      --netns) netns=(ip netns exec "$2"); where=" in namespace $2"; shift ;;
      *) break ;;
    esac
    shift
  done
  "${netns[@]}" setpriv --reuid nobody --regid nogroup --clear-groups \
    "${caps[@]}" "${TLSD:?}" -c "$@" 2>"$RUN_DIR/kwebtlsd.err" &
  # shellcheck disable=SC2034 # the caller's, to signal and wait for
  TLSD_PID=$!
  for _ in $(seq 50); do
    grep -q ready "$RUN_DIR/kwebtlsd.err" 2>/dev/null && break
    sleep 0.2
  done
  check "$TAG kwebtlsd starts as nobody$where" \
    grep -q ready "$RUN_DIR/kwebtlsd.err"
}

# want NAME NEEDLE TEXT: ok if TEXT has NEEDLE, else TEXT as diagnostics.
want_text() {
  if [[ $3 == *"$2"* ]]; then ok "$TAG $1"; else
    not_ok "$TAG $1"; diag 15 <<<"$3"; fi
}

# --- dmesg ----------------------------------------------------------------
# Any of these in the kernel log fails the run.
readonly DMESG_BAD='BUG:|WARNING:|KASAN|possible circular locking|inconsistent lock state|sleeping function called from invalid context|kmemleak|Oops|refcount_t:|UBSAN|general protection|Kernel panic|hung_task|soft lockup|hard LOCKUP|rcu_sched detected stall|rcu_preempt detected stall|list_add corruption|list_del corruption|ODEBUG'

# Lines that match the above but report no problem.
readonly DMESG_BENIGN='kmemleak: Kernel memory leak detector initialized|kmemleak: Automatic memory scanning thread started'

# Each script checks the lines that no earlier script in this boot checked,
# so a report is counted once; the offset lives in the guest-private /run.
readonly DMESG_OFFSET_FILE=/run/kweb-dmesg-checked

# One test line: dmesg_check NAME
# Skips kmemleak's own summary line from a baseline scan (between the
# markers kmemleak_baseline writes): those leaks are not ours.
dmesg_check() {
  local name=$1 from=0 all bad
  [[ -r $DMESG_OFFSET_FILE ]] && from=$(<"$DMESG_OFFSET_FILE")
  all=$(kmsg)
  echo "$all" | wc -l >"$DMESG_OFFSET_FILE"
  bad=$(echo "$all" | tail -n +"$((from + 1))" |
    awk -v re="$DMESG_BAD" -v benign="$DMESG_BENIGN" '
      /kweb-test: kmemleak baseline begin/ { base = 1; next }
      /kweb-test: kmemleak baseline end/ { base = 0; next }
      base && /kmemleak/ { next }
      $0 ~ benign { next }
      $0 ~ re { print }')
  if [[ -z $bad ]]; then
    ok "$name"
  else
    not_ok "$name"
    echo "$bad" | diag 40
  fi
}

# No kernel report in dmesg after line BEFORE: one test line.
kmsg_clean_since() {
  local name=$1 before=$2 bad
  bad=$(kmsg_since "$before" | grep -E "$DMESG_BAD")
  if [[ -z $bad ]]; then
    ok "$name"
  else
    not_ok "$name"
    kmsg_since "$before" | grep -E -B2 -A20 "$DMESG_BAD" | diag 40
  fi
}

save_dmesg() { kmsg >"$RUN_DIR/dmesg-$1.txt" 2>&1 || true; }

# Final line for the log; not "N passed, N failed" alone on a line, which
# only check.sh's summary may print.
finish() {
  say "$1: passed $PASSED, failed $FAILED"
  ((FAILED == 0))
}
