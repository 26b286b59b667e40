#!/usr/bin/env bash
# HTTPS across a network namespace's deletion, in a guest, as root
# (scripts/vm.sh): kweb's TLS listener and kwebtlsd in a namespace behind
# a veth pair, clients in the root namespace holding the connections kweb
# adopted, idle between keep-alive requests or with kweb sending into a
# full window. Once the namespace's processes are gone and it is deleted,
# kweb's connections must not keep it: it is a tenant's, and a tenant's
# clients would otherwise hold it (and kweb's server in it) for as long
# as they keep a connection open. Its exit must run, which the host's end
# of the veth pair going shows, and kweb's server goes with it.
#
#   tls_netns.sh KWEB_KO RESULTS_DIR [TAG]
#
# Same output contract as tests/guest/lib.sh. Exit status 0 iff all ok.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

KO=${1:?kweb.ko}
RUN_DIR=${2:?results directory}
TAG=${3:-tls-netns}
mkdir -p "$RUN_DIR"
TLSD=$REPO/userctl/kwebtlsd
KWEBCTL=$REPO/userctl/kwebctl
CLIENT=$REPO/tests/tls_netns_client.py
PY=${PY:-python3}
NS=kweb-tlsx
DEV=kwt0
TLS_PORT=8444
BASE=/run/kweb-tlsn
DOCROOT=$BASE/www
LOG=$RUN_DIR/tls_netns.log
LIGHT=${KWEB_LIGHT:-0}
# The namespace's cleanup runs in a work item once its last reference
# goes; the debug kernel's takes longer.
BOUND=$((LIGHT ? 60 : 20))
IDLE=4
SLOW=2
: >"$LOG"

mkdir -p "$BASE"
mount -t tmpfs tmpfs "$BASE"
chmod 755 "$BASE"
mkdir -p "$DOCROOT"
echo "hello over kTLS" >"$DOCROOT/index.html"
# More than any socket buffer between kweb and the slow clients.
head -c $((8 << 20)) /dev/zero >"$DOCROOT/big.bin"
chmod -R a+rX "$DOCROOT"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$BASE/k.key" -out "$BASE/k.pem" -days 2 -subj /CN=kweb.test \
  2>>"$LOG"
chown nobody:nogroup "$BASE/k.key"
chmod 400 "$BASE/k.key"

modprobe tls || die "$TAG modprobe tls"
modprobe veth 2>/dev/null
ensure_debugfs
kmemleak_baseline tls_netns
insmod "$KO" "docroot=$DOCROOT" port=80 || die "$TAG insmod"
ip netns del "$NS" 2>/dev/null
ip link del "$DEV" 2>/dev/null
if ! { ip netns add "$NS" &&
    ip link add "$DEV" type veth peer name kwt1 netns "$NS" &&
    ip addr add 10.205.0.1/24 dev "$DEV" && ip link set "$DEV" up &&
    ip -n "$NS" addr add 10.205.0.2/24 dev kwt1 &&
    ip -n "$NS" link set kwt1 up && ip -n "$NS" link set lo up; } \
    >>"$LOG" 2>&1; then
  die "$TAG a namespace behind a veth pair"
fi
id=$(ip netns exec "$NS" "$KWEBCTL" -j listener add port 443 \
  docroot "$DOCROOT" tls-port "$TLS_PORT" 2>>"$LOG" |
  sed -nE 's/.*"id": *([0-9]+).*/\1/p')
[[ -n $id ]] || die "$TAG listener add tls-port in the namespace"
# Longer than the test: only the namespace's exit may end the idle ones.
ip netns exec "$NS" "$KWEBCTL" config set keepalive-timeout 600 \
  >>"$LOG" 2>&1
ip netns exec "$NS" "$KWEBCTL" config set send-timeout 600 >>"$LOG" 2>&1
ok "$TAG a TLS listener (id $id) in namespace $NS"

cat >"$BASE/tls.conf" <<EOF
listen 127.0.0.1:$TLS_PORT
listener $id
cert $BASE/k.pem $BASE/k.key
handshake_timeout 5
EOF
tlsd_start --net-admin --netns "$NS" "$BASE/tls.conf"

"$PY" "$CLIENT" --host 10.205.0.2 --port 443 --idle "$IDLE" --slow "$SLOW" \
  --wait $((BOUND + 10)) >"$RUN_DIR/client.out" 2>&1 &
CLIENT_PID=$!
for _ in $(seq $((LIGHT ? 600 : 150))); do
  grep -q '^ready' "$RUN_DIR/client.out" && break
  kill -0 "$CLIENT_PID" 2>/dev/null || break
  sleep 0.2
done
want_text "clients hold $((IDLE + SLOW)) connections" \
  "ready $((IDLE + SLOW))" "$(cat "$RUN_DIR/client.out")"
adopted=$(ip netns exec "$NS" cat /proc/net/kweb 2>>"$LOG" |
  awk '$1 == "tls_connections" { print $2 }')
open=$(ip netns exec "$NS" cat /proc/net/kweb 2>>"$LOG" |
  awk '$1 == "connections_open" { print $2 }')
if [[ $adopted == $((IDLE + SLOW)) && $open == $((IDLE + SLOW)) ]]; then
  ok "$TAG kweb serves them, adopted (tls_connections $adopted, open $open)"
else
  not_ok "$TAG kweb serves them, adopted (tls_connections $adopted, open $open)"
fi
ip netns exec "$NS" ss -tnie >>"$LOG" 2>&1

# The tenant goes: its processes, then its name. Nothing else holds it.
before=$(kmsg_lines)
kill "$TLSD_PID"
wait "$TLSD_PID"
ip netns del "$NS"
result "$TAG ip netns del with kweb's TLS connections open" $?
kill -USR1 "$CLIENT_PID" 2>/dev/null
t0=$SECONDS
while [[ -e /sys/class/net/$DEV ]] && ((SECONDS - t0 < BOUND)); do
  nap 0.2
done
if [[ ! -e /sys/class/net/$DEV ]]; then
  ok "$TAG the namespace is freed with its clients still connected (veth gone after $((SECONDS - t0)) s)"
else
  not_ok "$TAG the namespace is freed with its clients still connected (veth $DEV still there after $BOUND s)"
  { grep -E '^(TCP|sockets):' /proc/net/sockstat
    ss -tanH '( dst 10.205.0.2 )'; } 2>&1 | diag 20
  ip link del "$DEV" 2>/dev/null
fi
wait "$CLIENT_PID"
cat "$RUN_DIR/client.out" >>"$LOG"
diag 3 < <(grep '^ended' "$RUN_DIR/client.out")
kmsg_clean_since "$TAG no kernel report after the namespace's exit" "$before"
# Its server went with it: the module has nothing left there.
rmmod kweb
result "$TAG rmmod" $?
kmemleak_check "$TAG kmemleak clean" tls_netns
dmesg_check "$TAG dmesg silent"
umount "$BASE"
echo "$TAG: $PASSED passed, $FAILED failed"
((FAILED == 0))
