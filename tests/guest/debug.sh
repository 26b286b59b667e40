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
# One kmemleak check for both, at the end (kunit.sh, integration.sh).
export KWEB_KMEMLEAK_LATER=1
"$HERE/kunit.sh" "$TEST_KO" "$RUN_DIR" "$TAG" || rc=1
# The network fuzz sends 150 mutated requests here: the first 150 of stock
# 6.1's 5,000 (the same seed). A connection costs the debug kernel
# (KASAN, lockdep, kmemleak) about ten times what it costs a stock one,
# nearly all of it TCP work in the sender's system calls and softirq:
# 1-16 cases a second, by host (1 on the slowest, beside the stock guests). The parser itself is fuzzed in user space
# under ASan (tests/fuzz); here the point is the socket paths under KASAN,
# and make check runs beside this guest, which must end within its budget.
# KWEB_NETFUZZ_TIME_LIMIT stops a guest slower than 1 in 2 s before it
# runs out of time, and the fuzz then fails with the count it reached.
# A FIN that the stock kernels send within 2 s of a closing response can
# take longer here: the HTTP clients wait up to KWEB_CLOSE_WAIT for it.
KWEB_LIGHT=1 KWEB_CLOSE_WAIT=${KWEB_CLOSE_WAIT:-6} \
  KWEB_NETFUZZ_COUNT=${KWEB_NETFUZZ_COUNT:-150} \
  KWEB_NETFUZZ_MIN_COUNT=${KWEB_NETFUZZ_MIN_COUNT:-150} \
  KWEB_NETFUZZ_TIME_LIMIT=${KWEB_NETFUZZ_TIME_LIMIT:-300} \
  "$HERE/integration.sh" "$KO" "$RUN_DIR" "$TAG" || rc=1
exit "$rc"
