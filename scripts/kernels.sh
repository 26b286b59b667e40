#!/usr/bin/env bash
# Print, as shell-sourceable lines, the newest installed stock Debian 6.1 and
# 6.12 kernels (amd64 flavour) and their header trees:
#
#   K61_IMAGE=/boot/vmlinuz-6.1.0-NN-amd64
#   K61_KDIR=/usr/src/linux-headers-6.1.0-NN-amd64
#   K612_IMAGE=/boot/vmlinuz-6.12.NNN+debNN-amd64
#   K612_KDIR=/usr/src/linux-headers-6.12.NNN+debNN-amd64
#
# Usage: eval "$(scripts/kernels.sh)". Exits 1 (saying what is missing) if
# either kernel has no image or no headers: scripts/deps.sh installs them.
set -euo pipefail

# Debian names: 6.1.0-<abi>-amd64 and 6.12.<patch>+deb<N>-amd64. A kernel
# counts only if its image, its modules (vng loads virtio/9p from them) and
# its headers (the build dir) are all there.
newest() {
  local series=$1 img ver best=
  for img in /boot/vmlinuz-"$series".*-amd64; do
    [[ -e $img ]] || continue
    ver=${img#/boot/vmlinuz-}
    # 6.1 must not match 6.12 and the like: the next part is a number.
    [[ $ver =~ ^${series//./\\.}\.[0-9] ]] || continue
    [[ -d /lib/modules/$ver/kernel && -e /lib/modules/$ver/build/Makefile ]] ||
      continue
    best=$(printf '%s\n%s\n' "$best" "$ver" | sed '/^$/d' | sort -V | tail -n 1)
  done
  echo "$best"
}

emit() {
  local prefix=$1 series=$2 ver kdir
  ver=$(newest "$series")
  if [[ -z $ver ]]; then
    echo "kernels.sh: no complete stock $series kernel (image in /boot," \
      "modules and headers); run scripts/deps.sh" >&2
    return 1
  fi
  # /lib/modules/<ver>/build is a symlink into /usr/src; print the real path
  # so build/<basename> under the repo is the same whichever way we got here.
  kdir=$(realpath "/lib/modules/$ver/build")
  echo "${prefix}_IMAGE=/boot/vmlinuz-$ver"
  echo "${prefix}_KDIR=$kdir"
}

rc=0
emit K61 6.1 || rc=1
emit K612 6.12 || rc=1
exit "$rc"
