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
# The TLS listener's own backend port (nginx, plaintext over kTLS), and
# integration.sh's echo server behind it (tests/guest/nginx.sh).
BACKEND_PORT=8445
APP_PORT=${KWEB_APP_PORT:-8081}
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
LIGHT=${KWEB_LIGHT:-0}
((LIGHT)) && BIG_KIB=256
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
  tls-port "$TLS_PORT" backend-port "$BACKEND_PORT" \
  hsts 31536000 hsts-subdomains yes 2>>"$LOG" | sed -nE 's/.*"id": *([0-9]+).*/\1/p')
[[ -n $id ]] || die "$TAG listener add tls-port"
ok "$TAG listener add tls-port $TLS_PORT (id $id)"

cat >"$BASE/tls.conf" <<EOF
listen 127.0.0.1:$TLS_PORT
listen [::1]:$TLS_PORT
listener $id
cert $BASE/k.pem $BASE/k.key
handshake_timeout 5
EOF

# kwebtlsd and the backend each in a memory cgroup of their own, as
# systemd runs them: a socket the daemon accepted and kweb hands to the
# backend must leave nothing charged to the daemon's (below).
# A kernel without memory cgroups (CONFIG_MEMCG) only places them.
CG=$BASE/cgroup
mkdir -p "$CG"
mount -t cgroup2 none "$CG" 2>>"$LOG"
MEMCG=0
echo +memory 2>>"$LOG" >"$CG/cgroup.subtree_control" && MEMCG=1
mkdir -p "$CG/kwebtlsd" "$CG/nginx"
echo $$ >"$CG/kwebtlsd/cgroup.procs"
tlsd_start --net-admin "$BASE/tls.conf"
echo $$ >"$CG/cgroup.procs"
check "$TAG kwebtlsd in a memory cgroup" grep -qx "0::/kwebtlsd" \
  "/proc/$TLSD_PID/cgroup"

NGX=$BASE/nginx
mkdir -p "$NGX"
chown nobody:nogroup "$NGX"
cat >"$NGX/nginx.conf" <<EOF
daemon on;
worker_processes 1;
user nobody nogroup;
pid $NGX/nginx.pid;
error_log $NGX/error.log info;
events { worker_connections 256; }
http {
    access_log $NGX/access.log;
$(nginx_temp_paths "$NGX")
    sendfile on;
    # What kweb hands over from its TLS listener: the connection is
    # HTTPS, though nginx reads and writes plaintext (kTLS does the rest).
    server {
        listen 127.0.0.1:$BACKEND_PORT deferred;
        listen [::1]:$BACKEND_PORT deferred;
        root $DOCROOT;
        client_max_body_size 16m;
        # nginx trusts FIONREAD, which counts TCP's queue and not what
        # kTLS decrypted: a body larger than this buffer can stall
        # (docs/tls.md, "Request bodies").
        client_body_buffer_size 16m;
        location = /scheme {
            return 200 "scheme https port \$server_port\n";
        }
        location /api/ {
            client_body_in_file_only on;
            proxy_set_header X-Forwarded-Proto https;
            proxy_set_header X-Kweb-Method \$request_method;
            proxy_set_header X-Kweb-Uri \$request_uri;
            proxy_set_header X-Kweb-Addr \$remote_addr;
            proxy_set_header X-Kweb-Body-File \$request_body_file;
            proxy_pass http://127.0.0.1:$APP_PORT;
        }
    }
}
EOF
(echo "$BASHPID" >"$CG/nginx/cgroup.procs" && exec nginx -c "$NGX/nginx.conf") \
  2>>"$LOG"
result "$TAG nginx on the TLS backend port $BACKEND_PORT" $?
want() { want_text "$@"; }
c() { curl -sSk --max-time 30 "$@"; }
want "curl tlsv1.3 index" "hello over kTLS" "$(c --tlsv1.3 https://127.0.0.1/ 2>&1)"
want "curl tlsv1.2 index" "hello over kTLS" \
  "$(c --tlsv1.2 --tls-max 1.2 https://127.0.0.1/ 2>&1)"
# LIGHT: a curl costs the debug kernel seconds (its start under KASAN,
# TCG); the cases below that differ from another only in what pure code
# makes of them (kmod/http_redirect.c, KUnit's) run on the stock kernels.
((LIGHT)) && echo "# debug kernel: the IPv6 index, HSTS on a 404 and three redirect variants left to the stock kernels"
((LIGHT)) ||
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
HSTS='Strict-Transport-Security: max-age=31536000; includeSubDomains'
want "HSTS on a TLS listener's 200" "$HSTS" \
  "$(c -sI https://127.0.0.1/ 2>&1 | tr -d '\r')"
((LIGHT)) || want "HSTS on its 404 too" "$HSTS" \
  "$(c -sI https://127.0.0.1/none 2>&1 | tr -d '\r')"
out=$(curl -sI --max-time 20 http://127.0.0.1/ 2>&1)
result "$TAG no HSTS over cleartext" \
  "$([[ $out == *"HTTP/1.1 200"* && $out != *Strict-Transport* ]]; echo $?)"

# The cleartext listener (insmod's, id 1) sends everything to https but
# ACME's challenges, as nginx's "return 301 https://$host$request_uri".
"$KWEBCTL" listener set 1 https-redirect 443 >>"$LOG" 2>&1
result "$TAG listener set 1 https-redirect 443" $?
mkdir -p "$DOCROOT/.well-known/acme-challenge"
echo "token-body" >"$DOCROOT/.well-known/acme-challenge/tok1"
chmod -R a+rX "$DOCROOT/.well-known"
r() { curl -s --max-time 20 -o /dev/null -w '%{http_code} %{redirect_url}' "$@"; }
want "redirect: 301 to the same path and query" \
  "301 https://127.0.0.1/a/b.html?x=1&y=2" \
  "$(r 'http://127.0.0.1/a/b.html?x=1&y=2')"
if ((!LIGHT)); then
  want "redirect: Host lowercased, without its port" \
    "301 https://example.com/p" "$(r -H 'Host: Example.COM:80' http://127.0.0.1/p)"
  want "redirect: IPv6" "301 https://[::1]/" "$(r 'http://[::1]/')"
fi
want "redirect: POST too" "301 https://127.0.0.1/api/x" \
  "$(r --data-binary x http://127.0.0.1/api/x)"
out=$(exec 3<>/dev/tcp/127.0.0.1/80 && printf 'GET /old HTTP/1.0\r\n\r\n' >&3 &&
  timeout 10 cat <&3 | tr -d '\r')
want "redirect: HTTP/1.0 without Host, to the address reached" \
  "Location: https://127.0.0.1/old" "$out"
want "redirect: ACME's challenge served as a file" "token-body" \
  "$(curl -s --max-time 20 http://127.0.0.1/.well-known/acme-challenge/tok1)"
"$KWEBCTL" listener set 1 https-redirect 8443 >>"$LOG" 2>&1
((LIGHT)) || want "redirect: to another port" "301 https://127.0.0.1:8443/x" \
  "$(r http://127.0.0.1/x)"
want "listener show: https-redirect" "https-redirect 8443" \
  "$("$KWEBCTL" listener show 1 2>&1)"
"$KWEBCTL" listener set 1 https-redirect 0 >>"$LOG" 2>&1
want "https-redirect 0: served again" "200 " "$(r http://127.0.0.1/)"

# Handoff over TLS: what kweb does not serve goes, unread, to the TLS
# listener's own backend port; nginx reads the request and writes its
# response through kTLS.
want "handoff: query string to the TLS backend port" \
  "scheme https port $BACKEND_PORT" "$(c 'https://127.0.0.1/scheme?x=1' 2>&1)"
want "handoff over IPv6" "scheme https port $BACKEND_PORT" \
  "$(c 'https://[::1]/scheme?x=1' 2>&1)"
want "handoff over TLS 1.2" "scheme https port $BACKEND_PORT" \
  "$(c --tlsv1.2 --tls-max 1.2 'https://127.0.0.1/scheme?x=1' 2>&1)"
head -c 300000 /dev/urandom >"$BASE/post.bin"
post_sum=$(sha256sum <"$BASE/post.bin" | cut -d' ' -f1)
for v in "--tlsv1.3" "--tlsv1.2 --tls-max 1.2"; do
  # shellcheck disable=SC2086 # $v is two words on purpose
  sum=$(c $v 'https://127.0.0.1/mid.bin?sendfile' 2>>"$LOG" | sha256sum)
  want "handoff $v: nginx's sendfile through kTLS, 100000 bytes" \
    "$(sha256sum <"$DOCROOT/mid.bin")" "$sum"
  # shellcheck disable=SC2086
  out=$(c $v --data-binary @"$BASE/post.bin" \
    -H 'Content-Type: application/octet-stream' \
    -w 'status=%{http_code}\n' --trace-ascii "$RUN_DIR/post.trace" \
    https://127.0.0.1/api/post 2>&1)
  grep -E '^(<=|=>) (Send|Recv) header|^[0-9a-f]{4}: (HTTP|Expect|Content-Length)' \
    "$RUN_DIR/post.trace" >>"$LOG"
  f=$(sed -n 's/^body_file=//p' <<<"$out")
  got=$(grep -E '^(method|length)=' <<<"$out" | tr '\n' ' ')
  [[ -n $f && -f $f ]] && got+=$(sha256sum <"$f" | cut -d' ' -f1)
  want "handoff $v: a POST body, as the backend read it" \
    "method=POST length=300000 $post_sum" "$got
$out"
  [[ -n $f ]] && rm -f "$f"
done
# Served by kweb, then handed over on the same connection.
out=$(c --tlsv1.3 -w '%{num_connects}\n' https://127.0.0.1/ \
  'https://127.0.0.1/scheme?y' 2>&1)
want "keep-alive: kweb's response, then the backend's, one connection" \
  "$(printf 'hello over kTLS\n1\nscheme https port %s\n0' "$BACKEND_PORT")" \
  "$out"
want "HEAD handed over" "200" \
  "$(c -I -o /dev/null -w '%{http_code}' 'https://127.0.0.1/mid.bin?h' 2>&1)"
# With every TLS connection closed, the daemon's cgroup holds no socket
# memory (memory.stat is exact after its periodic flush, 2 s).
if ((MEMCG)); then
  for _ in $(seq 30); do
    sock=$(sed -n 's/^sock //p' "$CG/kwebtlsd/memory.stat")
    [[ $sock == 0 ]] && break
    sleep 0.5
  done
  want "kwebtlsd's cgroup: no socket memory left after handoffs" "sock 0." \
    "sock $sock.$(ss -tnm 2>&1)"
else
  echo "# not run here, without memory cgroups: the daemon's socket memory after handoffs"
fi

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

# Hostile records: each after a real handshake (tests/tls_hostile_test.py).
light=()
((LIGHT)) && light=(--light)
"$PY" "$REPO/tests/tls_hostile_test.py" --host 127.0.0.1 --port 443 \
  --docroot "$DOCROOT" "${light[@]}" >"$RUN_DIR/hostile.out" 2>&1
sed -nE -e "s/^(not ok|ok) [0-9]+ - (.*)$/\1 - $TAG \2/p" \
  -e '/^# [0-9]+ passed, [0-9]+ failed$/d' -e '/^#/p' "$RUN_DIR/hostile.out"
PASSED=$((PASSED + $(grep -cE '^ok [0-9]+ ' "$RUN_DIR/hostile.out")))
FAILED=$((FAILED + $(grep -cE '^not ok [0-9]+ ' "$RUN_DIR/hostile.out")))
check "$TAG tls_hostile_test.py completed" grep -qE '^# [0-9]+ passed, 0 failed' \
  "$RUN_DIR/hostile.out"
# A KeyUpdate, which kTLS RX cannot follow: kweb says close_notify and
# closes, and the request after it is never answered. s_client quits at
# the end of its stdin: held open until kweb's close_notify is in its
# output (it flushes each message), or 20 s, not for a time that a slow
# or loaded guest can overrun.
ku_out=$RUN_DIR/keyupdate.out
: >"$ku_out"
# The renegotiation's below: stdin held open long enough for the answer
# (the debug kernel is slow).
hold=2
((LIGHT)) && hold=6
# shellcheck disable=SC2094 # its output is what says when to stop
(sleep 1; echo k; sleep 1; printf 'GET / HTTP/1.0\r\n\r\n'
  for _ in $(seq 100); do
    grep -q '<<< .*Alert.*close_notify' "$ku_out" && break
    sleep 0.2
  done) |
  timeout 30 openssl s_client -connect 127.0.0.1:443 -tls1_3 -msg \
    >"$ku_out" 2>&1
out=$(cat "$ku_out")
ku=no
grep -q 'KeyUpdate' <<<"$out" &&
  grep -q '<<< .*Alert.*close_notify' <<<"$out" && ku=yes
grep -q 'hello over kTLS' <<<"$out" && ku=answered
want "a KeyUpdate: close_notify, nothing answered" "ku yes" "ku $ku
$(grep -E 'KeyUpdate|Alert|close|DONE|errno' <<<"$out" | head -n 12)"
# A TLS 1.2 client asking to renegotiate (s_client's R): refused as
# OpenSSL refuses it (nginx's answer), a no_renegotiation warning, which
# ends the client's attempt; left unanswered it would wait.
out=$( (sleep 1; echo R; sleep "$hold") |
  timeout 20 openssl s_client -connect 127.0.0.1:443 -tls1_2 -msg 2>&1)
want "a renegotiation: s_client asked (R)" "RENEGOTIATING" "$out"
# Only what kweb sent: the client's own alerts are ">>>" lines.
got=$(grep -E '<<< .*Alert' <<<"$out")
want "a renegotiation: refused with a no_renegotiation warning" \
  "no_renegotiation" "${got:-no alert from kweb; s_client said:
$(grep -E 'RENEG|Alert|errno|error' <<<"$out" | head -n 12)}"

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
# The counters: sockets adopted, bytes kTLS encrypted (at least the two
# large bodies and the slow reader's).
kstat() {
  awk -v k="$1" '$1 == k { s += $2 } END { print s + 0 }' /proc/net/kweb
}
n=$(kstat tls_connections)
bytes=$(kstat tls_bytes)
result "$TAG tls_connections counts adopted sockets ($n)" \
  "$( ((n >= 20)); echo $?)"
result "$TAG tls_bytes counts what went through kTLS ($bytes)" \
  "$( ((bytes >= 3 * BIG_KIB * 1024)); echo $?)"

# The backend gone: kweb answers 502 over TLS.
kill "$(cat "$NGX/nginx.pid")"
for _ in $(seq 50); do
  [[ -e $NGX/nginx.pid ]] || break
  sleep 0.1
done
want "no backend: 502 over TLS" "502" \
  "$(c -o /dev/null -w '%{http_code}' 'https://127.0.0.1/scheme?z' 2>&1)"
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
rmdir "$CG/kwebtlsd" "$CG/nginx" 2>>"$LOG"
umount "$CG"
umount "$BASE"
echo "$TAG: $PASSED passed, $FAILED failed"
((FAILED == 0))
