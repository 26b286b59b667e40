#!/usr/bin/env bash
# Build (once) and cache a debug Linux 6.12 for KUnit and the vng test runs:
# KASAN, lockdep, kmemleak and friends, from Debian's linux-source-6.12.
#
#   scripts/debug-kernel.sh          build if needed, then print
#   scripts/debug-kernel.sh --print  print if cached, else exit 1
#
# Prints exactly two lines on stdout:
#   KERNEL=<bzImage for vng --run>
#   KDIR=<build tree for make -C ... M=...>
# Everything else goes to stderr or to build.log in the cache directory.
set -euo pipefail

readonly PKG=linux-source-6.12
readonly TARBALL=/usr/src/linux-source-6.12.tar.xz
readonly DEPS=(build-essential flex bison bc libelf-dev libssl-dev dwarves
               cpio kmod rsync xz-utils sparse "$PKG")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
readonly FRAGMENT=$HERE/debug-kernel.config
readonly CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}/debug-kernel

# Keep stdout for the two result lines; all chatter goes to stderr.
exec 3>&1 1>&2

die() { echo "debug-kernel: $*" >&2; exit 1; }
say() { echo "debug-kernel: $*" >&2; }

mode=build
case ${1:-} in
  '') ;;
  --print) mode=print ;;
  *) die "usage: $0 [--print]" ;;
esac

install_deps() {
  local missing=() p
  for p in "${DEPS[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  say "installing ${missing[*]}"
  local sudo=; ((EUID == 0)) || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# The base-config recipe. Its source text is part of the cache key, so
# editing it starts a new tree. Runs inside the kernel tree.
configure_tree() {
  # virtme-ng's minimal bootable config: x86_64 defconfig plus virtio,
  # 9p/virtiofs, serial console (and ~/.config/virtme-ng/kernel.config if
  # the user has one, which is why that file is hashed into the key too).
  vng --kconfig
  scripts/kconfig/merge_config.sh -m .config "$FRAGMENT"
  make olddefconfig
}

# Every line of the fragment must survive olddefconfig: a dependency we
# missed silently drops an option (e.g. KASAN without its prerequisites).
verify_config() {
  local line sym want got bad=0
  while IFS= read -r line; do
    if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
      sym=${BASH_REMATCH[1]} want=$line
      [[ ${BASH_REMATCH[2]} == n ]] && want=
    elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
      sym=${BASH_REMATCH[1]} want=
    else
      continue
    fi
    got=$(grep -E "^$sym=" .config || true)
    if [[ $got != "$want" ]]; then
      say "config: $sym: wanted '${want:-not set}', got '${got:-not set}'"
      bad=1
    fi
  done <"$FRAGMENT"
  ((!bad)) || die "fragment options lost in olddefconfig (see above)"
}

build_tree() {
  local targets=(bzImage modules_prepare)
  # "modules" also writes Module.symvers, which M= builds read to resolve
  # symbols; with no =m in the config it only runs modpost.
  targets+=(modules)
  make -j"$(nproc)" "${targets[@]}"
  [[ -s Module.symvers ]] || { echo "no Module.symvers after build"; return 1; }
}

# Cache key: package version + fragment + the recipe above (+ the user's
# vng kernel.config, which vng --kconfig would silently merge).
pkg_version() { dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null; }
cache_key() {
  {
    pkg_version
    cat "$FRAGMENT"
    declare -f configure_tree build_tree
    cat "$HOME/.config/virtme-ng/kernel.config" 2>/dev/null || true
  } | sha256sum | cut -c1-12
}

print_result() {
  echo "KERNEL=$TREE/arch/x86/boot/bzImage" >&3
  echo "KDIR=$TREE" >&3
}

[[ -r $FRAGMENT ]] || die "missing $FRAGMENT"
if [[ $mode == print ]]; then
  pkg_version >/dev/null || exit 1
else
  install_deps
fi

KEY=$(cache_key)
DIR=$CACHE/$KEY
TREE=$DIR/linux-source-6.12
LOG=$DIR/build.log

if [[ -e $DIR/.complete ]]; then
  print_result
  exit 0
fi
[[ $mode == print ]] && exit 1

mkdir -p "$DIR"
# One builder per key; a second caller waits, then finds .complete.
exec 9>"$DIR/.lock"
flock 9
if [[ -e $DIR/.complete ]]; then
  print_result
  exit 0
fi

say "building debug kernel $KEY in $DIR (log: $LOG)"
start=$SECONDS
: >"$LOG"
# set -e exits from inside functions without running an ERR trap: use EXIT.
trap 'rc=$?; if ((rc)); then say "FAILED; end of $LOG:"; tail -n 40 "$LOG" >&2; fi' EXIT

# Extract to a temporary name first so an interrupted tar is never taken
# for a tree; an interrupted make simply resumes on the next run.
if [[ ! -d $TREE ]]; then
  say "extracting $TARBALL"
  rm -rf "$DIR/extract.tmp"
  mkdir "$DIR/extract.tmp"
  tar -C "$DIR/extract.tmp" -xf "$TARBALL" >>"$LOG" 2>&1
  mv "$DIR/extract.tmp/linux-source-6.12" "$TREE"
  rmdir "$DIR/extract.tmp"
fi

cd "$TREE"
say "configuring"
configure_tree >>"$LOG" 2>&1
verify_config
say "compiling with $(nproc) jobs"
build_tree >>"$LOG" 2>&1
trap - EXIT

touch "$DIR/.complete"
say "done in $((SECONDS - start))s"
print_result
