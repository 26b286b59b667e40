#!/usr/bin/env bash
# Everything for the debug kernel in one boot (a boot under TCG with KASAN
# and lockdep costs minutes): KUnit first, then the integration tests (their
# IPv4 half: the stock kernels run both families).
#
#   debug.sh KWEB_KO KWEB_TEST_KO RESULTS_DIR [TAG]
#
# Exit status 0 iff both passed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KO=${1:?usage: debug.sh KWEB_KO KWEB_TEST_KO RESULTS_DIR [TAG]}
TEST_KO=${2:?}
RUN_DIR=${3:?}
TAG=${4:-debug}

rc=0
"$HERE/kunit.sh" "$TEST_KO" "$RUN_DIR" "$TAG" || rc=1
# The network fuzz sends 2,000 mutated requests here: the first 2,000 of
# the stock kernels' 10,000 (same seed). A connection costs the debug
# kernel (KASAN, lockdep, kmemleak) about ten times what it costs a stock
# one, nearly all of it TCP work in the sender's system calls and softirq:
# 13-16 cases a second on an idle host, 4-12 on a slower one, so all
# 10,000 took 13 of the 75 minutes `make check` may take, and 5,000 took
# 7 on a host that ran everything a fifth slower (65 minutes in all,
# before the debug kernel's first build). 3,000 took 13 on a host at 3.8
# a second, where the whole debug guest outran its hour: 2,000 keep the
# margin now that make check also builds and installs the packages.
# KWEB_NETFUZZ_TIME_LIMIT stops a guest slower than 3.3 a second before it
# runs out of time, and the fuzz then fails with the count it reached.
# A FIN that the stock kernels send within 2 s of a closing response can
# take longer here: the HTTP clients wait up to KWEB_CLOSE_WAIT for it.
KWEB_LIGHT=1 KWEB_CLOSE_WAIT=${KWEB_CLOSE_WAIT:-6} \
  KWEB_NETFUZZ_COUNT=${KWEB_NETFUZZ_COUNT:-2000} \
  KWEB_NETFUZZ_MIN_COUNT=${KWEB_NETFUZZ_MIN_COUNT:-2000} \
  KWEB_NETFUZZ_TIME_LIMIT=${KWEB_NETFUZZ_TIME_LIMIT:-1500} \
  "$HERE/integration.sh" "$KO" "$RUN_DIR" "$TAG" || rc=1
exit "$rc"
