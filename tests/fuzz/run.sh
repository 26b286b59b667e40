#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run the libFuzzer targets in build/ (see the Makefile):
#
#   run.sh regress TARGET...   each target over corpus/TARGET/ and
#                              crashes/TARGET/ once; fails if any input fails
#   run.sh fuzz TARGET...      fuzz each for its share of $FUZZ_SECONDS
#                              (fuzz_request twice the others'), single
#                              process, on a scratch copy of the corpus
#
# Exit status 0 iff no target crashed; the reproducer's path is printed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${FUZZ_OUT:-$HERE/build}
mode=${1:-}
shift || true
(($#)) || { echo "usage: $0 regress|fuzz TARGET..." >&2; exit 2; }

# ASan's own exit status, and no leak check noise from a sanitizer-only run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The failure and the stack frames in our sources, as "# " lines.
summarize() {
  grep -E 'ERROR:|invariant failed|runtime error|SUMMARY|Running: |^ +#[0-9]+ .*/(kmod|tests/fuzz)/[^ ]*\.[ch]:[0-9]' "$1" |
    head -n 25 | sed -E 's/ \(BuildId: [0-9a-f]+\)//; s/^/# /'
}

weight() { [[ $1 == fuzz_request ]] && echo 2 || echo 1; }

regress() {
  local t rc=0 n dirs
  for t in "$@"; do
    dirs=()
    for d in "$HERE/corpus/$t" "$HERE/crashes/$t"; do
      [[ -d $d ]] && dirs+=("$d")
    done
    n=$(find "${dirs[@]}" -type f | wc -l)
    # -runs=0: load and execute every input, then stop
    if "$OUT/$t" -runs=0 -artifact_prefix="$OUT/$t.regress-" "${dirs[@]}" \
        >"$OUT/$t.regress.log" 2>&1; then
      echo "ok - fuzz regress: $t passes its $n saved inputs"
    else
      echo "not ok - fuzz regress: $t passes its $n saved inputs"
      summarize "$OUT/$t.regress.log"
      rc=1
    fi
  done
  return "$rc"
}

fuzz() {
  local t total=0 secs rc=0 w log work art crash
  for t in "$@"; do total=$((total + $(weight "$t"))); done
  for t in "$@"; do
    w=$(weight "$t")
    secs=$((FUZZ_SECONDS * w / total))
    ((secs > 0)) || secs=1
    work=$OUT/corpus/$t
    art=$OUT/crashes/$t
    log=$OUT/$t.fuzz.log
    mkdir -p "$work" "$art"
    # the repository's seeds into the scratch corpus, which keeps growing
    cp -n "$HERE/corpus/$t"/* "$work"/ 2>/dev/null || true
    echo "# $t: ${secs}s, corpus $(find "$work" -type f | wc -l) files"
    if "$OUT/$t" -max_total_time="$secs" -max_len="${MAX_LEN:-16384}" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -dict="$HERE/http.dict" -artifact_prefix="$art/" \
        "$work" >"$log" 2>&1; then
      echo "ok - fuzz: $t, ${secs} s without a crash ($(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" |
        grep -oE '[0-9]+$') runs, $(grep -m1 -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" |
        grep -oE '[0-9]+$') exec/s, $(grep -oE 'cov: [0-9]+' "$log" | tail -n1))"
      grep -E '^#[0-9]+ *DONE' "$log" | sed 's/^/# /'
    else
      rc=1
      crash=$(grep -oE 'Test unit written to [^ ]+' "$log" | tail -n1 |
        sed 's/Test unit written to //')
      echo "not ok - fuzz: $t, ${secs} s without a crash"
      echo "# reproducer: ${crash:-(none written; see $log)}"
      summarize "$log"
      grep -m1 '^Base64: ' "$log" | cut -c1-300 | sed 's/^/# input /'
      echo "# log: $log"
      echo "# reproduce: $OUT/$t ${crash:-}"
    fi
  done
  return "$rc"
}

case $mode in
  regress) regress "$@" ;;
  fuzz) fuzz "$@" ;;
  *) echo "usage: $0 regress|fuzz TARGET..." >&2; exit 2 ;;
esac
