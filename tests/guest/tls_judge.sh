#!/usr/bin/env bash
# Guest side of scripts/tls-judge.sh: the example site (examples/www)
# over HTTPS twice, with the same certificate and TLS settings, for
# outside judges on the host (testssl.sh, Chromium) to compare:
#   port 443  kweb's TLS listener, the handshake in kwebtlsd
#   port 8443 nginx with ssl and kTLS (ssl_conf_command Options KTLS)
# The host reaches them through vm.sh --net-forward. Once both serve,
# RESULTS_DIR/ready appears; the guest then waits for RESULTS_DIR/done
# (written by the host) before it stops both and checks dmesg.
#
#   tls_judge.sh KWEB_KO RESULTS_DIR CERT_DIR [TAG]
#
# CERT_DIR holds server.pem (the chain) and server.key. Test lines as
# tests/guest/lib.sh says; exit status 0 iff all passed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

KO=${1:?usage: tls_judge.sh KWEB_KO RESULTS_DIR CERT_DIR [TAG]}
RUN_DIR=${2:?}
CERTS=${3:?}
TAG=${4:-judge}
TLSD=$REPO/userctl/kwebtlsd
KWEBCTL=$REPO/userctl/kwebctl
BASE=/run/kweb-judge
DOCROOT=$BASE/www
LOG=$RUN_DIR/tls_judge.log
WAIT=${KWEB_JUDGE_WAIT:-3600}
mkdir -p "$RUN_DIR"
: >"$LOG"
rm -f "$RUN_DIR/ready" "$RUN_DIR/done"

user_net_up || die "$TAG: no NIC (vm.sh --net-forward)"
mkdir -p "$BASE"
mount -t tmpfs -o mode=0755 tmpfs "$BASE"
cp -r "$REPO/examples/www" "$DOCROOT"
chmod -R u+rwX,go+rX,go-w "$DOCROOT"
cp "$CERTS/server.pem" "$CERTS/server.key" "$BASE/"
chown nobody:nogroup "$BASE/server.key"
chmod 400 "$BASE/server.key"

modprobe tls || die "$TAG: modprobe tls"
insmod "$KO" "docroot=$DOCROOT" port=80 || die "$TAG: insmod"
# HSTS on both: what a site served over HTTPS sends.
id=$("$KWEBCTL" -j listener add port 443 docroot "$DOCROOT" tls-port 8444 \
  hsts 31536000 2>>"$LOG" | sed -nE 's/.*"id": *([0-9]+).*/\1/p')
[[ -n $id ]] || die "$TAG: listener add port 443 tls-port 8444"
cat >"$BASE/tls.conf" <<EOF
listen 127.0.0.1:8444
listener $id
cert $BASE/server.pem $BASE/server.key
EOF
tlsd_start --net-admin "$BASE/tls.conf"

# kwebtlsd's settings (userctl/tlsd_conf.c) in nginx's words: TLS 1.2
# and 1.3, its cipher lists and order, stateless tickets, no cache.
NGX=$BASE/nginx
mkdir -p "$NGX"
cat >"$NGX/nginx.conf" <<EOF
daemon on;
worker_processes 1;
user nobody nogroup;
pid $NGX/nginx.pid;
error_log $NGX/error.log;
events { worker_connections 256; }
http {
    include /etc/nginx/mime.types;
    access_log off;
$(nginx_temp_paths "$NGX")
    sendfile on;
    server_tokens off;
    server {
        listen 8443 ssl;
        root $DOCROOT;
        ssl_certificate $BASE/server.pem;
        ssl_certificate_key $BASE/server.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE+AESGCM:ECDHE+CHACHA20;
        ssl_prefer_server_ciphers on;
        ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256;
        ssl_conf_command Options KTLS;
        ssl_session_cache off;
        ssl_session_tickets on;
        add_header Strict-Transport-Security "max-age=31536000" always;
    }
}
EOF
check "$TAG nginx with ssl and kTLS on 8443" nginx -c "$NGX/nginx.conf"

served() {
  # The first handshake pays for loading the daemon's pages from 9p.
  curl -sk --max-time 90 -o /dev/null -w '%{http_code}' "https://127.0.0.1:$1/"
}
want_text "kweb serves the site over TLS on 443" 200 "$(served 443)"
want_text "nginx serves the site over TLS on 8443" 200 "$(served 8443)"

touch "$RUN_DIR/ready"
say "ready: waiting up to ${WAIT}s for the host's judges"
for ((i = 0; i < WAIT; i++)); do
  [[ -e $RUN_DIR/done ]] && break
  sleep 1
done
check "$TAG the host's judges finished" test -e "$RUN_DIR/done"

nginx -c "$NGX/nginx.conf" -s quit 2>>"$LOG"
kill "$TLSD_PID" 2>/dev/null
wait "$TLSD_PID" 2>/dev/null
"$KWEBCTL" stats >"$RUN_DIR/kweb-stats.txt" 2>&1
cat /proc/net/tls_stat >"$RUN_DIR/tls_stat.txt" 2>&1
check "$TAG rmmod" rmmod kweb
dmesg_check "$TAG dmesg silent"
save_dmesg judge
finish "$TAG"
