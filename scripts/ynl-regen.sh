#!/usr/bin/env bash
# Regenerate the netlink code from its YNL spec, uapi/kweb.yaml, with the
# kernel's own generator (tools/net/ynl/ynl-gen-c.py of linux-source-6.12):
#   uapi/linux/kweb.h   the uAPI header (--mode uapi)
#   kmod/nl_gen.[ch]    the policies and the ops table (--mode kernel)
#
#   scripts/ynl-regen.sh          rewrite the three files
#   scripts/ynl-regen.sh --check  exit 1 (and show a diff) if they are stale
#
# The generator wants the spec inside a kernel-like tree (it looks up for
# MAINTAINERS, and for the schema two directories above the spec), so it
# runs on a copy in a temporary directory; it writes nothing else. Needs
# python3-yaml and python3-jsonschema (scripts/deps.sh).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}
readonly TARBALL=/usr/src/linux-source-6.12.tar.xz
readonly SPEC=uapi/kweb.yaml
# The spec's protocol: its schema file is Documentation/netlink/<proto>.yaml.
readonly SCHEMA=genetlink-legacy.yaml
# output  mode  kind
readonly OUTPUTS=(
  "uapi/linux/kweb.h uapi --header"
  "kmod/nl_gen.h kernel --header"
  "kmod/nl_gen.c kernel --source"
)

die() { echo "ynl-regen: $*" >&2; exit 1; }

# A 6.12 tree with tools/net/ynl and Documentation/netlink: $KWEB_LINUX_SRC,
# an unpacked linux-source-6.12, the debug kernel's tree, or just those two
# directories taken out of Debian's tarball once and cached.
find_tree() {
  local tree dir=$KWEB_CACHE/ynl top=linux-source-6.12
  for tree in ${KWEB_LINUX_SRC:-} /root/src/linux-source-6.12 \
      /usr/src/linux-source-6.12; do
    [[ -r $tree/tools/net/ynl/ynl-gen-c.py ]] && { echo "$tree"; return; }
  done
  tree=$("$REPO/scripts/debug-kernel.sh" --print 2>/dev/null |
    sed -n 's/^KDIR=//p') || true
  if [[ -n $tree && -r $tree/tools/net/ynl/ynl-gen-c.py ]]; then
    echo "$tree"
    return
  fi
  if [[ ! -r $dir/tools/net/ynl/ynl-gen-c.py ]]; then
    [[ -r $TARBALL ]] ||
      die "no linux-source-6.12 tree (apt-get install linux-source-6.12)"
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp"
    tar -C "$dir.tmp" -xJf "$TARBALL" --strip-components=1 \
      "$top/tools/net/ynl" "$top/Documentation/netlink" >&2
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

TMP=$(mktemp -d)
readonly TMP
trap 'rm -rf "$TMP"' EXIT

# Generate every output into $1/<output>.
generate() {
  local out=$1 tree work=$TMP/work line f mode kind
  tree=$(find_tree)
  mkdir -p "$work/uapi"
  touch "$work/MAINTAINERS"
  cp "$tree/Documentation/netlink/$SCHEMA" "$work/"
  cp "$REPO/$SPEC" "$work/uapi/"
  for line in "${OUTPUTS[@]}"; do
    read -r f mode kind <<<"$line"
    mkdir -p "$(dirname "$out/$f")"
    PYTHONDONTWRITEBYTECODE=1 python3 "$tree/tools/net/ynl/ynl-gen-c.py" \
      --mode "$mode" "$kind" --spec "$work/$SPEC" \
      -o "$work/$(basename "$f")" >&2 ||
      die "ynl-gen-c.py --mode $mode $kind failed"
    # The generator names the spec; say how to run it again, too. (It
    # derives nl_gen.c's #include "nl_gen.h" from the output's name.)
    sed '\|^/\* YNL-GEN .* \*/$|a\
/* Regenerate with scripts/ynl-regen.sh (make ynl-regen). */' \
      "$work/$(basename "$f")" >"$out/$f"
  done
}

main() {
  local out=$TMP/check rc=0 line f
  case ${1:-} in
    '')
      generate "$REPO"
      ;;
    --check)
      generate "$out"
      for line in "${OUTPUTS[@]}"; do
        f=${line%% *}
        diff -u "$REPO/$f" "$out/$f" || rc=1
      done
      return "$rc"
      ;;
    *) die "usage: $0 [--check]" ;;
  esac
}

main "$@"
