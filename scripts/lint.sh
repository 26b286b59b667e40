#!/usr/bin/env bash
# `make lint`: static checks, one test line each ("ok - lint: ..." or
# "not ok - lint: ..." with "# " diagnostics):
#   - checkpatch.pl --no-tree -f on every kmod/, kunit/, uapi/linux/,
#     bench/floor/, bench/qemu/ and userctl/ source
#   - userctl/kwebctl and bench/qemu/kwebicount.so build with -Wall -Wextra
#     and no warning
#   - a W=1 C=2 (sparse on every file) build of kweb.ko and of the
#     benchmark's kwebfloor.ko against each stock kernel, which
#     must print no "warning:" / "error:" line at all
#   - shellcheck on the project's shell scripts (if shellcheck is installed)
#   - the generated netlink code is what uapi/kweb.yaml makes today
#   - the man pages (man/) are clean under mandoc -T lint -W warning and
#     in step with kwebctl's --help, its key tables and the module
#     parameters (scripts/man-check.py)
#   - systemd-analyze verify on the unit files of systemd/ (if
#     systemd-analyze is installed)
# Logs go to $KWEB_RESULTS/lint/ (default under $KWEB_CACHE/results).
# Exit status 0 iff all passed.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}
readonly TARBALL=/usr/src/linux-source-6.12.tar.xz
readonly RESULTS=${KWEB_RESULTS:-$KWEB_CACHE/results/lint-$(date +%Y%m%d-%H%M%S)}
readonly LOGDIR=$RESULTS/lint

PASSED=0
FAILED=0
ok() { echo "ok - lint: $*"; PASSED=$((PASSED + 1)); }
not_ok() { echo "not ok - lint: $*"; FAILED=$((FAILED + 1)); }
diag() { head -n "${1:-30}" | sed 's/^/# /'; }

# checkpatch.pl and the data files it reads from its own directory
# (spelling.txt, const_structs.checkpatch). In order: an explicit
# $KWEB_CHECKPATCH, an unpacked 6.12 source tree (a developer's, or the one
# scripts/debug-kernel.sh builds in), else just those three files taken out
# of Debian's linux-source-6.12 tarball once and cached.
find_checkpatch() {
  local tree cand
  if [[ -n ${KWEB_CHECKPATCH:-} ]]; then
    echo "$KWEB_CHECKPATCH"
    return 0
  fi
  for tree in /root/src/linux-source-6.12 /usr/src/linux-source-6.12; do
    cand=$tree/scripts/checkpatch.pl
    [[ -r $cand ]] && { echo "$cand"; return 0; }
  done
  tree=$("$REPO/scripts/debug-kernel.sh" --print 2>/dev/null |
    sed -n 's/^KDIR=//p') || true
  if [[ -n $tree && -r $tree/scripts/checkpatch.pl ]]; then
    echo "$tree/scripts/checkpatch.pl"
    return 0
  fi
  extract_checkpatch
}

extract_checkpatch() {
  local dir=$KWEB_CACHE/checkpatch top=linux-source-6.12
  if [[ ! -r $dir/scripts/checkpatch.pl ]]; then
    [[ -r $TARBALL ]] || return 1
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    tar -C "$dir.tmp" -xJf "$TARBALL" --strip-components=1 \
      "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
      "$top/scripts/const_structs.checkpatch" >&2 || return 1
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir/scripts/checkpatch.pl"
}

lint_checkpatch() {
  local cp files=() f out
  shopt -s nullglob
  files=("$REPO"/kmod/*.[ch] "$REPO"/kunit/*.[ch] "$REPO"/uapi/linux/*.h
    "$REPO"/bench/floor/*.[ch] "$REPO"/bench/qemu/*.[ch]
    "$REPO"/userctl/*.[ch])
  shopt -u nullglob
  if ! cp=$(find_checkpatch); then
    not_ok "checkpatch.pl found"
    echo "no kernel source tree and no $TARBALL (apt-get install linux-source-6.12)" | diag
    return
  fi
  echo "checkpatch: $cp" >>"$LOGDIR/checkpatch.log"
  for f in "${files[@]}"; do
    out=$LOGDIR/checkpatch-$(basename "$(dirname "$f")")-$(basename "$f").txt
    if perl "$cp" --no-tree --no-summary --terse --show-types -f "$f" \
        >"$out" 2>&1; then
      ok "checkpatch ${f#"$REPO"/}"
    else
      not_ok "checkpatch ${f#"$REPO"/}"
      diag 30 <"$out"
    fi
  done
}

# W=1 C=2 build of kweb.ko (or with DIR bench/floor, the benchmark's
# kwebfloor.ko) for one kernel, in its own build dir so the plain build
# (whose objects are not sparse-checked) is not disturbed.
lint_build() {
  local tag=$1 kdir=$2 dir=${3:-} name log bad what=kweb.ko
  name=$(basename "$kdir")
  log=$LOGDIR/build-$tag${dir:+-floor}.log
  [[ -n $dir ]] && what=kwebfloor.ko
  if ! make -C "$REPO/$dir" modules KDIR="$kdir" W=1 C=2 \
      BUILD="$REPO/build/lint${dir:+-floor}-$name" >"$log" 2>&1; then
    not_ok "W=1 C=2 build of $what for $tag ($name)"
    grep -E 'error|warning' "$log" | diag 30
    return
  fi
  # Compiler warnings and sparse's complaints (file:line:col: warning/error).
  bad=$(grep -E 'warning:|error:|: sparse:' "$log" || true)
  if [[ -n $bad ]]; then
    not_ok "W=1 C=2 build of $what for $tag ($name) without warnings"
    echo "$bad" | diag 30
  else
    ok "W=1 C=2 build of $what for $tag ($name) without warnings"
  fi
}

# One line per script, so a failure names its file.
lint_shell() {
  command -v shellcheck >/dev/null || return 0
  local f rel out
  shopt -s nullglob
  for f in "$REPO"/scripts/*.sh "$REPO"/tests/guest/*.sh "$REPO"/tests/fuzz/*.sh \
      "$REPO"/.ci/run; do
    rel=${f#"$REPO"/}
    out=$LOGDIR/shellcheck-$(basename "$f").txt
    # -x follows "source" lines (tests/guest/lib.sh), paths from the root.
    if (cd "$REPO" && shellcheck -x "$rel") >"$out" 2>&1; then
      ok "shellcheck $rel"
    else
      not_ok "shellcheck $rel"
      diag 30 <"$out"
    fi
  done
  shopt -u nullglob
}

lint_userctl() {
  local log=$LOGDIR/userctl.log bad
  if ! make -C "$REPO/userctl" -B >"$log" 2>&1; then
    not_ok "userctl/kwebctl builds"
    grep -E 'error|warning' "$log" | diag 30
    return
  fi
  bad=$(grep -E 'warning:|error:' "$log" || true)
  if [[ -n $bad ]]; then
    not_ok "userctl/kwebctl builds without warnings"
    echo "$bad" | diag 30
  else
    ok "userctl/kwebctl builds without warnings"
  fi
}

# The benchmark's instruction counter, a QEMU plugin (scripts/bench.sh
# builds it the same way).
lint_icount() {
  local out
  if out=$(cc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
      -o "$LOGDIR/kwebicount.so" "$REPO/bench/qemu/kwebicount.c" 2>&1); then
    ok "bench/qemu/kwebicount.so builds without warnings"
  else
    not_ok "bench/qemu/kwebicount.so builds without warnings"
    echo "$out" | diag 30
  fi
}

# Generated files are never edited by hand: regenerating changes nothing.
lint_ynl() {
  local out=$LOGDIR/ynl-regen.txt
  if "$REPO/scripts/ynl-regen.sh" --check >"$out" 2>&1; then
    ok "generated netlink code matches uapi/kweb.yaml"
  else
    not_ok "generated netlink code matches uapi/kweb.yaml (make ynl-regen)"
    diag 30 <"$out"
  fi
}

# Every command, key and option of kwebctl, every module parameter and
# /proc/net/kweb field, documented; mandoc finds nothing to warn about.
lint_man() {
  local out=$LOGDIR/man-check.txt
  if python3 "$REPO/scripts/man-check.py" >"$out" 2>&1; then
    ok "man pages in step with kwebctl --help and the module parameters"
  else
    not_ok "man pages in step with kwebctl --help and the module parameters"
    diag 30 <"$out"
  fi
}

# The units name /usr/sbin/kwebctl and /usr/sbin/kwebtlsd, which verify
# wants to find: checked here with those just built in their place
# (lint_userctl).
lint_systemd() {
  command -v systemd-analyze >/dev/null || return 0
  local out=$LOGDIR/systemd-verify.txt dir=$LOGDIR/systemd f
  rm -rf "$dir"
  mkdir -p "$dir"
  for f in "$REPO"/systemd/*.service; do
    sed -e "s#/usr/sbin/kwebctl#$REPO/userctl/kwebctl#g" \
      -e "s#/usr/sbin/kwebtlsd#$REPO/userctl/kwebtlsd#g" "$f" \
      >"$dir/$(basename "$f")"
  done
  if (cd "$dir" && systemd-analyze verify --man=no ./*.service) >"$out" 2>&1 &&
      [[ ! -s $out ]]; then
    ok "systemd-analyze verify systemd/*.service"
  else
    not_ok "systemd-analyze verify systemd/*.service"
    diag 30 <"$out"
  fi
}

main() {
  mkdir -p "$LOGDIR"
  local kernels
  if ! kernels=$("$REPO/scripts/kernels.sh" 2>"$LOGDIR/kernels.err"); then
    not_ok "stock kernels installed"
    diag <"$LOGDIR/kernels.err"
  else
    eval "$kernels"
  fi
  lint_checkpatch
  lint_ynl
  lint_userctl
  lint_icount
  lint_man
  lint_systemd
  local d
  for d in '' bench/floor; do
    if [[ -n ${K61_KDIR:-} ]]; then lint_build stock61 "$K61_KDIR" "$d"; fi
    if [[ -n ${K612_KDIR:-} ]]; then lint_build stock612 "$K612_KDIR" "$d"; fi
  done
  lint_shell
  echo "# lint: passed $PASSED, failed $FAILED"
  ((FAILED == 0))
}

main "$@"
