#!/usr/bin/env bash
# `make tls-judge`: outside judges of kweb's HTTPS, side by side with
# nginx's, on the stock 6.12 kernel. A guest (tests/guest/tls_judge.sh)
# serves examples/www with the same certificate and TLS settings through
# kweb and kwebtlsd (guest port 443) and through nginx with kTLS (8443);
# the host reaches them on 127.0.0.1:$KWEB_JUDGE_PORT and the port after.
# On the host, natively (under TCG, testssl.sh's hundreds of handshakes
# would take an hour):
#   - testssl.sh against both: kweb must have no finding above INFO that
#     nginx does not have too, at the same severity;
#   - headless Chromium, trusting a test CA put in its NSS database with
#     certutil (no --ignore-certificate-errors), loads the site from both:
#     the page's title must be in kweb's DOM and the two screenshots must
#     be the same picture.
# Results: $KWEB_RESULTS (default ~/.cache/kweb/results/judge-<time>):
# testssl-{kweb,nginx}.json and .log, {kweb,nginx}.png, judge.md.
# Exit status 0 iff every check passed. Not part of `make check`: the
# scans take minutes of a machine that the check needs whole.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}
readonly PORT=${KWEB_JUDGE_PORT:-18443}
export KWEB_CACHE
KWEB_RESULTS=${KWEB_RESULTS:-$KWEB_CACHE/results/judge-$(date +%Y%m%d-%H%M%S)}
export KWEB_RESULTS
readonly RES=$KWEB_RESULTS
readonly HOSTNAME_TEST=kweb.test
PY=/usr/bin/python3

say() { echo "tls-judge: $*" >&2; }
die() { echo "tls-judge: $*" >&2; exit 1; }
FAILED=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; FAILED=$((FAILED + 1)); }

deps() {
  local need=()
  command -v testssl >/dev/null || need+=(testssl.sh)
  command -v chromium >/dev/null || need+=(chromium)
  command -v certutil >/dev/null || need+=(libnss3-tools)
  "$PY" -c 'import PIL' 2>/dev/null || need+=(python3-pil)
  ((${#need[@]} == 0)) && return 0
  say "installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2
}

# A test CA and a server certificate for kweb.test (and 127.0.0.1)
# signed by it: ECDSA P-256, as a site would have from Let's Encrypt.
make_certs() {
  local d=$RES/certs
  mkdir -p "$d"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$d/ca.key" -out "$d/ca.pem" -days 7 \
    -subj "/CN=kweb test CA" -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$d/server.key" -out "$d/server.csr" \
    -subj "/CN=$HOSTNAME_TEST" 2>/dev/null
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
    -CAcreateserial -days 7 -out "$d/leaf.pem" \
    -extfile <(printf '%s\n' "subjectAltName=DNS:$HOSTNAME_TEST,IP:127.0.0.1" \
      "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature") \
    2>/dev/null
  cat "$d/leaf.pem" "$d/ca.pem" >"$d/server.pem"
  chmod 644 "$d/server.key"
}

boot_guest() {
  local kernels ko
  kernels=$("$REPO/scripts/kernels.sh") || die "no stock kernels"
  eval "$kernels"
  make -C "$REPO" modules KDIR="$K612_KDIR" >"$RES/build.log" 2>&1 ||
    die "build failed: $RES/build.log"
  make -C "$REPO/userctl" >>"$RES/build.log" 2>&1 ||
    die "userctl build failed: $RES/build.log"
  ko=$REPO/build/$(basename "$K612_KDIR")/kweb.ko
  setsid "$REPO/scripts/vm.sh" --name judge --memory 2G --timeout 5400 \
    --net-forward "$PORT:443,$((PORT + 1)):8443" "$K612_IMAGE" -- \
    "$REPO/tests/guest/tls_judge.sh" "$ko" "$RES/judge" "$RES/certs" \
    >"$RES/vm.log" 2>&1 &
  VM_PID=$!
  local i
  for ((i = 0; i < 600; i++)); do
    [[ -e $RES/judge/ready ]] && return 0
    kill -0 "$VM_PID" 2>/dev/null || break
    sleep 1
  done
  cat "$RES/judge/guest.log" >&2 2>/dev/null || true
  die "the guest did not get ready (log: $RES/vm.log)"
}

stop_guest() {
  [[ -n ${VM_PID:-} ]] || return 0
  touch "$RES/judge/done" 2>/dev/null || true
  wait "$VM_PID" 2>/dev/null || true
  VM_PID=
}

# testssl.sh against one side: its findings as JSON.
scan() {
  local side=$1 port=$2
  say "testssl.sh against $side (127.0.0.1:$port)"
  testssl --quiet --color 0 --warnings batch --ip 127.0.0.1 \
    --jsonfile "$RES/testssl-$side.json" \
    "https://$HOSTNAME_TEST:$port/" >"$RES/testssl-$side.log" 2>&1 || true
  [[ -s $RES/testssl-$side.json ]]
}

# Chromium trusting the test CA through its NSS database, as a user's
# browser would once the CA is installed: a screenshot and the DOM.
browse() {
  local side=$1 port=$2 home=$RES/chromium-home
  local url="https://$HOSTNAME_TEST:$port/"
  local args=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars
    --no-first-run --disable-extensions "--window-size=1280,1000"
    "--host-resolver-rules=MAP $HOSTNAME_TEST 127.0.0.1"
    --virtual-time-budget=5000)
  if [[ ! -d $home/.pki/nssdb ]]; then
    mkdir -p "$home/.pki/nssdb"
    certutil -N -d "sql:$home/.pki/nssdb" --empty-password
    certutil -A -d "sql:$home/.pki/nssdb" -t "C,," -n "kweb test CA" \
      -i "$RES/certs/ca.pem"
  fi
  HOME=$home timeout 120 chromium "${args[@]}" --screenshot="$RES/$side.png" \
    "$url" >"$RES/chromium-$side.log" 2>&1 || true
  HOME=$home timeout 120 chromium "${args[@]}" --dump-dom "$url" \
    >"$RES/$side.dom.html" 2>>"$RES/chromium-$side.log" || true
}

main() {
  mkdir -p "$RES"
  say "results in $RES"
  deps
  make_certs
  trap stop_guest EXIT
  boot_guest
  local side port=$PORT
  for side in kweb nginx; do
    if scan "$side" "$port"; then
      ok "testssl.sh scanned $side"
    else
      not_ok "testssl.sh scanned $side (see $RES/testssl-$side.log)"
    fi
    port=$((port + 1))
  done
  browse kweb "$PORT"
  browse nginx "$((PORT + 1))"
  stop_guest
  grep -h '^\(not \)\?ok - ' "$RES/judge/guest.log" || not_ok "the guest's log"
  grep -q '^not ok - ' "$RES/judge/guest.log" && FAILED=$((FAILED + 1))
  "$PY" "$REPO/scripts/tls_judge_report.py" "$RES" || FAILED=$((FAILED + 1))
  say "report: $RES/judge.md"
  ((FAILED == 0))
}

main "$@"
