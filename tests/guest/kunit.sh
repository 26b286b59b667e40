#!/usr/bin/env bash
# KUnit suites of kweb_test.ko, run as root inside a guest booted on a kernel
# with CONFIG_KUNIT (the debug kernel; see scripts/check.sh):
#
#   kunit.sh [KWEB_TEST_KO [RESULTS_DIR [TAG]]]
#
# or the same from $KWEB_TEST_KO, $KWEB_RUN_DIR, $KWEB_TAG. Inserting the
# module runs its suites; their KTAP output is taken from dmesg, saved as
# kunit.ktap, and each test case becomes one line "ok - TAG kunit:
# suite.case" (a parameterized case counts once, failing if any of its
# parameters failed). Then rmmod, kmemleak and dmesg checks.
set -uo pipefail # no -e: a failing check is a test line, not the end

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

KO=${1:-${KWEB_TEST_KO:-}}
RUN_DIR=${2:-${KWEB_RUN_DIR:-}}
TAG=${3:-${KWEB_TAG:-debug}}
[[ -n $KO && -r $KO ]] || die "$TAG kunit: kweb_test.ko given and readable (${KO:-unset})"
[[ -n $RUN_DIR ]] || die "$TAG kunit: results directory given"
mkdir -p "$RUN_DIR"
LOG=$RUN_DIR/kunit.log
: >"$LOG"

# KTAP (as KUnit prints it on module load) to test lines. Indentation is
# the nesting: 0 = suite results, 4 = test cases, 8+ = parameters (ignored,
# the case's own result line already folds them in). Case results carry the
# "# " lines logged above them at deeper indentation as diagnostics. A
# suite that fails with no failing case (init failed, cases missing) gets a
# line of its own, as does output with no suite at all.
ktap_to_tests() {
  awk -v tag="$TAG" '
    function indent(s) { match(s, /^ */); return RLENGTH }
    function flush_suite_check(   name) {
      if (suite != "" && planned > 0 && seen < planned) {
        printf "not ok - %s kunit: %s reported all %d cases\n", tag, suite, planned
        printf "# only %d results\n", seen
      }
    }
    {
      sub(/^\[[ 0-9.]+\] /, "")          # a timestamp, if dmesg printed one
      sub(/\r$/, "")
    }
    /^    # Subtest: / {
      flush_suite_check()
      suite = $0; sub(/^    # Subtest: /, "", suite)
      planned = 0; seen = 0; nd = 0; suites++
      next
    }
    /^    1\.\.[0-9]+$/ { p = $0; sub(/^ *1\.\./, "", p); planned = p + 0; next }
    /^ *(not ok|ok) [0-9]+ / {
      d = indent($0); line = substr($0, d + 1)
      failed = (line ~ /^not ok/)
      name = line; sub(/^(not ok|ok) [0-9]+ /, "", name)
      directive = ""
      if (match(name, / # (SKIP|skip|TODO|todo).*$/)) {
        directive = substr(name, RSTART); name = substr(name, 1, RSTART - 1)
      }
      if (d >= 8 && failed && suite != "") {
        if (nd < 30) diagl[++nd] = "parameter " line
        next
      }
      if (d == 4 && suite != "") {
        seen++
        printf "%s - %s kunit: %s.%s%s\n", failed ? "not ok" : "ok", tag, suite, name, directive
        if (failed) for (i = 1; i <= nd; i++) print "# " diagl[i]
        nd = 0
        if (failed) case_failed[suite]++
      } else if (d == 0 && name == suite) {
        flush_suite_check()
        if (failed && !case_failed[suite] && seen >= planned) {
          printf "not ok - %s kunit: suite %s\n", tag, suite
          print "# the suite failed with no failing case (suite init or exit?)"
        }
        suite = ""
      }
      next
    }
    # Diagnostics of the case being run (deeper than the case line), less
    # the nested KTAP framing of parameterized cases.
    suite != "" && indent($0) >= 8 && !/KTAP version|# Subtest:|^ *1\.\.[0-9]/ {
      l = $0; sub(/^ +(# ?)?/, "", l)
      if (nd < 30) diagl[++nd] = l
      next
    }
    END {
      flush_suite_check()
      if (suites == 0) {
        printf "not ok - %s kunit: KTAP output found\n", tag
        print "# no \"# Subtest:\" line after inserting the module"
      }
    }'
}

run_suites() {
  local before rc=0 ktap=$RUN_DIR/kunit.ktap
  before=$(kmsg_lines)
  echo "+ insmod $KO" >>"$LOG"
  bounded 600 insmod "$KO" >>"$LOG" 2>&1 || rc=$?
  kmsg_since "$before" >"$ktap"
  if ((rc != 0)); then
    not_ok "$TAG kunit: insmod kweb_test.ko (status $rc)"
    { tail -n 5 "$LOG"; tail -n 20 "$ktap"; } | diag 25
  fi
  # kunit.ktap holds every suite's log: copies of debugfs's per-suite
  # results took the debug guest 90 s, a file on the 9p root each.
  local lines
  lines=$(ktap_to_tests <"$ktap")
  echo "$lines"
  PASSED=$((PASSED + $(grep -c '^ok - ' <<<"$lines")))
  FAILED=$((FAILED + $(grep -c '^not ok - ' <<<"$lines")))
}

unload() {
  local rc=0
  module_loaded kweb_test || return 0
  echo "+ rmmod kweb_test" >>"$LOG"
  bounded 60 rmmod kweb_test >>"$LOG" 2>&1 || rc=$?
  result "$TAG kunit: rmmod kweb_test" "$rc" "$LOG"
}

main() {
  ensure_debugfs
  kmemleak_baseline kunit
  kmsg_mark "kunit ($TAG) begin"
  run_suites
  unload
  # KWEB_KMEMLEAK_LATER=1 (debug.sh): the integration tests' check, in
  # the same boot, reports what KUnit leaked too (nothing clears between):
  # a check is two scans, over a minute on the debug kernel.
  if [[ ${KWEB_KMEMLEAK_LATER:-0} == 1 ]]; then
    say "kmemleak: checked after the integration tests of this boot"
  else
    kmemleak_check "$TAG kunit: kmemleak clean after KUnit" kunit
  fi
  kmsg_mark "kunit ($TAG) end"
  dmesg_check "$TAG: dmesg clean (kunit)"
  save_dmesg kunit
  finish "$TAG kunit"
}

main
