#!/usr/bin/env bash
# HTTPS through kweb, in a guest, as root (scripts/vm.sh): kweb.ko with a
# TLS listener on 443 handing every connection to kwebtlsd on 8444, which
# runs as nobody (CAP_NET_ADMIN ambient, for sock-adopt) and gives each
# socket back with kTLS installed; kweb then serves files through kTLS.
#
#   tls_kweb.sh KWEB_KO RESULTS_DIR [TAG]
#
# Same output contract as tests/guest/lib.sh. Exit status 0 iff all ok.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

KO=${1:?kweb.ko}
RUN_DIR=${2:?results directory}
TAG=${3:-tls-kweb}
mkdir -p "$RUN_DIR"
TLSD=$REPO/userctl/kwebtlsd
KWEBCTL=$REPO/userctl/kwebctl
TLS_PORT=8444
BASE=/run/kweb-tlsk
DOCROOT=$BASE/www
LOG=$RUN_DIR/tls_kweb.log
: >"$LOG"

mkdir -p "$BASE"
mount -t tmpfs tmpfs "$BASE"
chmod 755 "$BASE"
mkdir -p "$DOCROOT"
echo "hello over kTLS" >"$DOCROOT/index.html"
# KWEB_LIGHT=1 (the debug kernel, where software AES under KASAN and TCG
# is slow): 256 KiB, still many records and four times the send buffer
# the slow reader's test caps.
BIG_KIB=1024
((${KWEB_LIGHT:-0})) && BIG_KIB=256
head -c $((BIG_KIB * 1024)) /dev/urandom >"$DOCROOT/big.bin"
head -c 100000 /dev/urandom >"$DOCROOT/mid.bin"
chmod -R a+rX "$DOCROOT"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$BASE/k.key" -out "$BASE/k.pem" -days 2 -subj /CN=kweb.test \
  2>>"$LOG"
chown nobody:nogroup "$BASE/k.key"
chmod 400 "$BASE/k.key"

modprobe tls || die "$TAG modprobe tls"
# The debug kernel's: what boot left is not ours.
ensure_debugfs
kmemleak_baseline tls_kweb
insmod "$KO" "docroot=$DOCROOT" port=80 || die "$TAG insmod"
id=$("$KWEBCTL" -j listener add port 443 docroot "$DOCROOT" \
  tls-port "$TLS_PORT" 2>>"$LOG" | sed -nE 's/.*"id": *([0-9]+).*/\1/p')
[[ -n $id ]] || die "$TAG listener add tls-port"
ok "$TAG listener add tls-port $TLS_PORT (id $id)"

cat >"$BASE/tls.conf" <<EOF
listen 127.0.0.1:$TLS_PORT
listen [::1]:$TLS_PORT
listener $id
cert $BASE/k.pem $BASE/k.key
handshake_timeout 5
EOF

tlsd_start --net-admin "$BASE/tls.conf"
want() { want_text "$@"; }
c() { curl -sSk --max-time 30 "$@"; }
want "curl tlsv1.3 index" "hello over kTLS" "$(c --tlsv1.3 https://127.0.0.1/ 2>&1)"
want "curl tlsv1.2 index" "hello over kTLS" \
  "$(c --tlsv1.2 --tls-max 1.2 https://127.0.0.1/ 2>&1)"
want "curl ipv6" "hello over kTLS" "$(c 'https://[::1]/' 2>&1)"
for v in "--tlsv1.3" "--tlsv1.2 --tls-max 1.2"; do
  # shellcheck disable=SC2086 # $v is two words on purpose
  sum=$(c $v https://127.0.0.1/big.bin 2>>"$LOG" | sha256sum)
  want "curl $v $BIG_KIB KiB body" "$(sha256sum <"$DOCROOT/big.bin")" "$sum"
done
# Keep-alive: three requests on one connection.
out=$(c --tlsv1.3 -w '%{num_connects}\n' https://127.0.0.1/ \
  https://127.0.0.1/mid.bin -o /dev/null -o /dev/null https://127.0.0.1/ 2>&1)
want "keep-alive, three requests, one connection" "hello over kTLS" "$out"
want "keep-alive connects once" "$(printf '1\n0\n')" "$out"
want "range over TLS" "206" \
  "$(c -o /dev/null -w '%{http_code}' -r 10-19 https://127.0.0.1/mid.bin 2>&1)"
want "404 over TLS" "404" \
  "$(c -o /dev/null -w '%{http_code}' https://127.0.0.1/none 2>&1)"

# Python: pipelining, and the request in the same segment as the Finished.
"$PY" - 127.0.0.1 443 >"$RUN_DIR/py.out" 2>&1 <<'PYEOF'
import socket, ssl, sys
h, p = sys.argv[1], int(sys.argv[2])
c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
c.check_hostname = False
c.verify_mode = ssl.CERT_NONE
with c.wrap_socket(socket.create_connection((h, p), timeout=20)) as s:
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 2 +
              b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    out = b""
    while True:
        try:
            d = s.recv(65536)
        except ssl.SSLEOFError:
            break
        if not d:
            break
        out += d
    print("pipelined", out.count(b"hello over kTLS"))
for v in (ssl.TLSVersion.TLSv1_3,):
    c.minimum_version = c.maximum_version = v
    sock = socket.create_connection((h, p), timeout=20)
    inc, outb = ssl.MemoryBIO(), ssl.MemoryBIO()
    o = c.wrap_bio(inc, outb)
    while True:
        try:
            o.do_handshake()
            break
        except ssl.SSLWantReadError:
            x = outb.read()
            if x:
                sock.sendall(x)
            inc.write(sock.recv(65536))
    o.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    sock.sendall(outb.read())
    body = b""
    while True:
        d = sock.recv(65536)
        if not d:
            break
        inc.write(d)
        try:
            while True:
                x = o.read(65536)
                if not x:
                    break
                body += x
        except ssl.SSLWantReadError:
            pass
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            break
    print("same-segment", b"hello over kTLS" in body)
PYEOF
want "pipelining, three responses" "pipelined 3" "$(cat "$RUN_DIR/py.out")"
want "tls1.3 request with the Finished" "same-segment True" \
  "$(cat "$RUN_DIR/py.out")"

# The last response outruns TCP: a reader with a small window, slow to
# start, leaves kTLS holding records when kweb has sent all of it; our
# close_notify and FIN must follow them, not overtake them. The send
# buffer is capped well below the body (loopback's would grow past 1 MiB
# and take it all), so TCP runs out of room in the middle of records.
wmem=$(sysctl -n net.ipv4.tcp_wmem)
sysctl -qw net.ipv4.tcp_wmem="4096 16384 65536"
"$PY" - 127.0.0.1 443 >"$RUN_DIR/py_slow.out" 2>&1 <<'PYEOF'
import hashlib, socket, ssl, sys, time
h, p = sys.argv[1], int(sys.argv[2])
c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
c.check_hostname = False
c.verify_mode = ssl.CERT_NONE
raw = socket.socket()
raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
raw.settimeout(30)
raw.connect((h, p))
# Not suppressed: an EOF without close_notify raises.
s = c.wrap_socket(raw, suppress_ragged_eofs=False)
s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
time.sleep(3)
out, end = b"", "?"
while True:
    try:
        d = s.recv(65536)
    except ssl.SSLEOFError:
        end = "no-close_notify"
        break
    except OSError as e:
        end = type(e).__name__
        break
    if not d:
        end = "close_notify"
        break
    out += d
body = out.partition(b"\r\n\r\n")[2]
print("slow", hashlib.sha256(body).hexdigest(), end)
print("body bytes", len(body))
PYEOF
sysctl -qw net.ipv4.tcp_wmem="$wmem"
want "$BIG_KIB KiB, Connection: close, slow reader: all of it, then close_notify" \
  "slow $(sha256sum <"$DOCROOT/big.bin" | cut -d' ' -f1) close_notify" \
  "$(cat "$RUN_DIR/py_slow.out")"

# A socket given to kweb leaves the daemon's epoll set: kweb holds the
# file, so close() alone would leave the item, naming freed memory.
rm -f "$BASE/held" "$BASE/release"
"$PY" - 127.0.0.1 443 "$BASE" >"$RUN_DIR/py_held.out" 2>&1 <<'PYEOF' &
import os, socket, ssl, sys, time
h, p, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
c.check_hostname = False
c.verify_mode = ssl.CERT_NONE
with c.wrap_socket(socket.create_connection((h, p), timeout=20)) as s:
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    out = b""
    while b"hello over kTLS" not in out:
        d = s.recv(65536)
        if not d:
            break
        out += d
    print("held", b"hello over kTLS" in out)
    open(base + "/held", "w").close()
    for _ in range(200):
        if os.path.exists(base + "/release"):
            break
        time.sleep(0.1)
PYEOF
PY_HELD=$!
for _ in $(seq 100); do
  [[ -e $BASE/held ]] && break
  sleep 0.2
done
epfd=$(find "/proc/$TLSD_PID/fd" -lname 'anon_inode:\[eventpoll\]' \
  -printf '%f\n' | head -n 1)
items=$(grep -c '^tfd:' "/proc/$TLSD_PID/fdinfo/$epfd" 2>&1)
touch "$BASE/release"
wait "$PY_HELD"
want "kept-alive connection served" "held True" "$(cat "$RUN_DIR/py_held.out")"
# Two listeners and the signalfd.
want "daemon's epoll: no item for a socket kweb holds" "items 3." \
  "items $items."

# A TLS connection kweb still serves when the module goes: held open
# here, looked at again after rmmod (below), which resets it.
rm -f "$BASE/held" "$BASE/release"
"$PY" - 127.0.0.1 443 "$BASE" >"$RUN_DIR/py_rmmod.out" 2>&1 <<'PYEOF' &
import os, socket, ssl, sys, time
h, p, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
c.check_hostname = False
c.verify_mode = ssl.CERT_NONE
s = c.wrap_socket(socket.create_connection((h, p), timeout=60))
s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
out = b""
while b"hello over kTLS" not in out:
    d = s.recv(65536)
    if not d:
        break
    out += d
print("held", b"hello over kTLS" in out)
# Python's ssl reads a reset as an EOF: look at the TCP socket itself.
raw = socket.socket(fileno=s.detach())
open(base + "/held", "w").close()
while not os.path.exists(base + "/release"):
    time.sleep(0.1)
try:
    d = raw.recv(65536)
    print("after rmmod", "data" if d else "eof")
except ConnectionResetError:
    print("after rmmod", "reset")
except Exception as e:
    print("after rmmod", type(e).__name__)
PYEOF
PY_RMMOD=$!
for _ in $(seq 100); do
  [[ -e $BASE/held ]] && break
  sleep 0.2
done

# Cleartext on 80 is unaffected.
want "cleartext listener" "hello over kTLS" "$(curl -s --max-time 20 http://127.0.0.1/)"
# The daemon gone: new TLS connections fail, cleartext still serves.
kill -USR1 "$TLSD_PID"
sleep 0.5
kill "$TLSD_PID"
wait "$TLSD_PID"
c --tlsv1.3 https://127.0.0.1/ >/dev/null 2>&1
result "$TAG no daemon: TLS refused" $((! $?))
want "no daemon: cleartext serves" "hello over kTLS" \
  "$(curl -s --max-time 20 http://127.0.0.1/)"
cat /proc/net/tls_stat >>"$LOG"
cat /proc/net/kweb >>"$LOG" 2>&1
diag 5 <"$RUN_DIR/kwebtlsd.err"
rmmod kweb
result "$TAG rmmod" $?
touch "$BASE/release"
wait "$PY_RMMOD"
want "rmmod resets a TLS connection kweb was serving" \
  "$(printf 'held True\nafter rmmod reset')" "$(cat "$RUN_DIR/py_rmmod.out")"
kmemleak_check "$TAG kmemleak clean" tls_kweb
dmesg_check "$TAG dmesg silent"
umount "$BASE"
echo "$TAG: $PASSED passed, $FAILED failed"
((FAILED == 0))
