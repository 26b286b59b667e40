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
# A connection costs the debug kernel (KASAN, lockdep, kmemleak) about 14
# times what it costs a stock one: the network fuzz gets 4-10 cases a
# second here under TCG, depending on the host. The stock guests send
# 10,000; this one up to 2,500 in 180 s (4-6 a second), and at least 300.
# A FIN that the stock kernels send within 2 s of a closing response can
# take longer here: the HTTP clients wait up to KWEB_CLOSE_WAIT for it.
KWEB_LIGHT=1 KWEB_CLOSE_WAIT=${KWEB_CLOSE_WAIT:-6} \
  KWEB_NETFUZZ_COUNT=${KWEB_NETFUZZ_COUNT:-2500} \
  KWEB_NETFUZZ_MIN_COUNT=${KWEB_NETFUZZ_MIN_COUNT:-300} \
  KWEB_NETFUZZ_TIME_LIMIT=${KWEB_NETFUZZ_TIME_LIMIT:-180} \
  "$HERE/integration.sh" "$KO" "$RUN_DIR" "$TAG" || rc=1
exit "$rc"
