#!/usr/bin/env bash
# The user-space backend of the handoff tests: nginx from
# tests/nginx/backend.conf.in, and tests/ws_echo.py behind it.
#
#   nginx.sh start DOCROOT BASE     (re)start both; wait until they listen
#   nginx.sh stop BASE              stop both (nothing running is fine)
#
# or sourced, as nginx_backend_start DOCROOT BASE / nginx_backend_stop BASE
# (status 0 on success; errors on stderr, with the logs' last lines).
#
# BASE is a run directory of its own: the rendered nginx.conf, nginx.pid,
# ws_echo.pid, error.log, access.log, ws_echo.log and nginx's temp
# directories (client_body_temp holds the request bodies the tests read).
# nginx listens on 127.0.0.1 and [::1] port $KWEB_BACKEND_PORT (8080); its
# echo server on 127.0.0.1:$KWEB_APP_PORT (8081) and ws_echo.py on
# 127.0.0.1:$KWEB_WS_PORT (8082). Workers run as $KWEB_NGINX_USER, by
# default "nobody nogroup", or root when nobody cannot read DOCROOT or
# reach BASE (a docroot under /root). Both starting and stopping are
# idempotent: start stops what BASE's pid files name first.

NGINX_SH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NGINX_SH_REPO=$(cd "$NGINX_SH_DIR/../.." && pwd)
# tcp_listening, nap
# shellcheck source=tests/guest/lib.sh
. "$NGINX_SH_DIR/lib.sh"
NGINX_BIN=${KWEB_NGINX:-/usr/sbin/nginx}
NGINX_PY=${KWEB_PYTHON:-/usr/bin/python3}
NGINX_BACKEND_PORT=${KWEB_BACKEND_PORT:-8080}
NGINX_APP_PORT=${KWEB_APP_PORT:-8081}
NGINX_WS_PORT=${KWEB_WS_PORT:-8082}
NGINX_REF_PORT=${KWEB_REF_PORT:-8083}
NGINX_VHOST_PORT=${KWEB_VHOST_PORT:-8084}
NGINX_START_WAIT=${KWEB_NGINX_START_WAIT:-20}

_nginx_err() { echo "nginx.sh: $*" >&2; }

# The pid in FILE if that process is alive and its command line holds WORD.
_nginx_pid_of() {
  local file=$1 word=$2 pid
  [[ -r $file ]] || return 1
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$word" || return 1
  echo "$pid"
}

# PID is alive and not a zombie: kill -0 succeeds on a zombie, and the
# daemons' parent is the guest's init, which does not reap them.
_nginx_alive() {
  local stat
  read -r stat <"/proc/$1/stat" 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# Stop the process FILE names (if it is one with WORD in its command
# line): TERM, up to 10 s, then KILL it and its children.
_nginx_kill() {
  local file=$1 word=$2 pid n=50 kids
  pid=$(_nginx_pid_of "$file" "$word") || { rm -f "$file"; return 0; }
  kids=$(ps -o pid= --ppid "$pid" 2>/dev/null)
  kill -TERM "$pid" 2>/dev/null
  while _nginx_alive "$pid" && ((n-- > 0)); do
    nap 0.2
  done
  if _nginx_alive "$pid"; then
    _nginx_err "pid $pid ($word) ignored TERM; killing it"
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL "$pid" $kids 2>/dev/null
  fi
  rm -f "$file"
  return 0
}

nginx_backend_stop() {
  local base=${1:?usage: nginx_backend_stop BASE}
  _nginx_kill "$base/nginx.pid" nginx
  _nginx_kill "$base/ws_echo.pid" ws_echo.py
}

# The worker's "user group" for nginx's user directive.
_nginx_user() {
  local docroot=$1 base=$2 group
  if [[ -n ${KWEB_NGINX_USER:-} ]]; then
    echo "$KWEB_NGINX_USER"
    return
  fi
  group=nogroup
  getent group nogroup >/dev/null 2>&1 || group=$(id -gn nobody 2>/dev/null || echo nobody)
  if ((EUID == 0)) && command -v runuser >/dev/null 2>&1 &&
    ! runuser -u nobody -- test -r "$docroot/." -a -x "$docroot/." -a -x "$base/." 2>/dev/null; then
    echo "root root"
  else
    echo "nobody $group"
  fi
}

_nginx_logs() {
  local base=$1 f
  for f in "$base/error.log" "$base/ws_echo.log" "$base/start.log"; do
    [[ -s $f ]] || continue
    echo "--- $f (last lines)" >&2
    tail -n 15 "$f" >&2
  done
}

nginx_backend_start() {
  local docroot=${1:?usage: nginx_backend_start DOCROOT BASE}
  local base=${2:?usage: nginx_backend_start DOCROOT BASE}
  local tmpl=$NGINX_SH_REPO/tests/nginx/backend.conf.in conf t user n
  local ws=$NGINX_SH_REPO/tests/ws_echo.py
  [[ $docroot == /* && $base == /* ]] || { _nginx_err "DOCROOT and BASE must be absolute"; return 1; }
  [[ -d $docroot ]] || { _nginx_err "no docroot $docroot"; return 1; }
  [[ -x $NGINX_BIN ]] || { _nginx_err "no nginx at $NGINX_BIN"; return 1; }
  nginx_backend_stop "$base"
  mkdir -p "$base" && chmod 0755 "$base" || return 1
  rm -f "$base/start.log" "$base/error.log" "$base/ws_echo.log"
  user=$(_nginx_user "$docroot" "$base")
  conf=$base/nginx.conf
  t=$(<"$tmpl") || return 1
  t=${t//@BASE@/"$base"}
  t=${t//@DOCROOT@/"$docroot"}
  t=${t//@USER@/"$user"}
  t=${t//@PORT@/"$NGINX_BACKEND_PORT"}
  t=${t//@APP_PORT@/"$NGINX_APP_PORT"}
  t=${t//@WS_PORT@/"$NGINX_WS_PORT"}
  t=${t//@REF_PORT@/"$NGINX_REF_PORT"}
  t=${t//@VHOST_PORT@/"$NGINX_VHOST_PORT"}
  printf '%s\n' "$t" >"$conf" || return 1

  "$NGINX_PY" "$ws" --host 127.0.0.1 --port "$NGINX_WS_PORT" \
    </dev/null >>"$base/ws_echo.log" 2>&1 &
  echo $! >"$base/ws_echo.pid"

  if ! "$NGINX_BIN" -p "$base" -c "$conf" -e "$base/error.log" -t -q \
    </dev/null >>"$base/start.log" 2>&1 ||
    ! "$NGINX_BIN" -p "$base" -c "$conf" -e "$base/error.log" \
      </dev/null >>"$base/start.log" 2>&1; then
    _nginx_err "nginx did not start (config $conf)"
    _nginx_logs "$base"
    nginx_backend_stop "$base"
    return 1
  fi

  n=$((NGINX_START_WAIT * 5))
  until tcp_listening "127.0.0.1:$NGINX_BACKEND_PORT" \
    "[::1]:$NGINX_BACKEND_PORT" "127.0.0.1:$NGINX_APP_PORT" \
    "127.0.0.1:$NGINX_WS_PORT"; do
    if ((n-- <= 0)); then
      _nginx_err "not listening within ${NGINX_START_WAIT}s on 127.0.0.1 and [::1]" \
        "port $NGINX_BACKEND_PORT, 127.0.0.1 ports $NGINX_APP_PORT and $NGINX_WS_PORT"
      command -v ss >/dev/null 2>&1 && ss -ltnp >&2
      _nginx_logs "$base"
      nginx_backend_stop "$base"
      return 1
    fi
    nap 0.2
  done
  return 0
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  case ${1:-} in
  start)
    (($# == 3)) || { echo "usage: $0 start DOCROOT BASE" >&2; exit 2; }
    nginx_backend_start "$2" "$3"
    ;;
  stop)
    (($# == 2)) || { echo "usage: $0 stop BASE" >&2; exit 2; }
    nginx_backend_stop "$2"
    ;;
  *)
    echo "usage: $0 start DOCROOT BASE | stop BASE" >&2
    exit 2
    ;;
  esac
fi
