#!/usr/bin/env bash
# `make deb`: the Debian packages kweb-dkms and kweb-tools (debian/), built
# with dpkg-buildpackage from a copy of the sources, so the tree itself is
# left as it was, then checked with lintian.
#
#   deb.sh [OUTDIR]    default build/deb: the .deb, .dsc, .tar.xz,
#                      .buildinfo and .changes files, and lintian.txt
#
# Needs debhelper, dh-dkms, libmnl-dev and lintian (scripts/deps.sh).
# Exit status 0 iff both packages were built and lintian (-I --pedantic)
# reports nothing beyond the overrides under debian/.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
OUT=$(realpath -m "${1:-$REPO/build/deb}")
readonly OUT

say() { echo "deb: $*" >&2; }

version=$(dpkg-parsechangelog -l "$REPO/debian/changelog" -S Version)
src=$OUT/kweb-$version
rm -rf "$OUT"
mkdir -p "$src"

# What git tracks (or, outside a git tree, everything but build output).
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$REPO" ls-files -z --cached --others --exclude-standard |
    (cd "$REPO" && rsync -a --from0 --ignore-missing-args --files-from=- ./ "$src/")
else
  rsync -a --exclude=/build --exclude=.git "$REPO/" "$src/"
fi

say "building kweb $version in $src"
(cd "$src" && dpkg-buildpackage -us -uc --build=full) >"$OUT/build.log" 2>&1 || {
  tail -n 30 "$OUT/build.log" >&2
  say "dpkg-buildpackage failed; log: $OUT/build.log"
  exit 1
}
rm -rf "$src"

changes=$OUT/kweb_${version}_$(dpkg --print-architecture).changes
lintian -I --pedantic --fail-on error,warning,info,pedantic "$changes" \
  >"$OUT/lintian.txt" 2>&1 || {
  cat "$OUT/lintian.txt" >&2
  say "lintian: not clean"
  exit 1
}
ls "$OUT"/*.deb
