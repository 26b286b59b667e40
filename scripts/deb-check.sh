#!/usr/bin/env bash
# The Debian packages on this host, in the phases make check runs them:
#
#   deb-check.sh install DEBDIR KVER...   install kweb-dkms and kweb-tools
#                                         from DEBDIR; DKMS builds kweb.ko
#                                         for each KVER, and again from the
#                                         kernel's postinst hook
#   deb-check.sh purge KVER...            purge both: nothing left behind
#
# Between the two, a guest of each KVER loads the DKMS-built module with
# "modprobe kweb" (tests/guest/dkms.sh, through tests/guest/integration.sh).
# One "ok - ..." or "not ok - ..." line per check, "# " lines after a
# failure. Exit status 0 iff every check passed.

# The checks are functions run through check(), which shellcheck cannot see.
# shellcheck disable=SC2317
set -uo pipefail # no -e: a failed check is a test line

readonly PKGS=(kweb-dkms kweb-tools)
readonly UNITS=(kweb.service kweb-log.service)
readonly CONFFILES=(/etc/kweb/kweb.conf /etc/modprobe.d/kweb.conf
  /etc/logrotate.d/kweb)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# ok, not_ok, diag and check NAME CMD... (test lines, output on failure).
# shellcheck source=tests/guest/lib.sh
. "$REPO/tests/guest/lib.sh"
LOG=${KWEB_DEB_LOG:-/dev/null}

apt_get() {
  env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
    -o Dpkg::Options::=--force-confnew "$@"
}

version() { dpkg-deb -f "$DEBDIR"/kweb-dkms_*_all.deb Version; }

# The DKMS-built module for $1, by name, as modprobe finds it.
module_path() { modinfo -k "$1" -n kweb 2>/dev/null; }

is_dkms_module() {
  local kver=$1 path
  path=$(module_path "$kver") || { echo "modinfo -k $kver finds no kweb"; return 1; }
  [[ $path == /lib/modules/$kver/updates/dkms/kweb.ko* ]] ||
    { echo "modinfo -k $kver -n kweb: $path"; return 1; }
  modinfo -F vermagic "$path" | grep -q "^$kver " ||
    { modinfo -F vermagic "$path"; return 1; }
  echo "$path"
}

dkms_installed() {
  local kver=$1 st
  st=$(dkms status -m kweb -v "$VER" -k "$kver" 2>&1)
  echo "$st"
  grep -q ': installed' <<<"$st"
}

# A kernel upgrade, as far as DKMS can tell: the module removed for
# $1, then the hook a linux-image package's postinst runs builds it again.
kernel_hook_rebuilds() {
  local kver=$1
  dkms remove -m kweb -v "$VER" -k "$kver" || return 1
  ! module_path "$kver" || { echo "still there after dkms remove"; return 1; }
  /etc/kernel/postinst.d/dkms "$kver" || return 1
  dkms_installed "$kver" && is_dkms_module "$kver"
}

units_not_enabled() {
  local u st rc=0
  for u in "${UNITS[@]}"; do
    [[ -r /lib/systemd/system/$u ]] || { echo "no /lib/systemd/system/$u"; rc=1; }
    # Offline, from the unit files and their symlinks: no systemd needed.
    st=$(systemctl is-enabled --root=/ "$u" 2>&1) || true
    [[ $st == disabled ]] || { echo "$u: is-enabled says $st"; rc=1; }
  done
  return "$rc"
}

conffiles_registered() {
  local f list rc=0
  list=$(dpkg-query -W -f='${Conffiles}\n' kweb-tools)
  for f in "${CONFFILES[@]}"; do
    grep -q "^ $f " <<<"$list" || { echo "$f is not a conffile"; rc=1; }
    [[ -r $f ]] || { echo "$f missing"; rc=1; }
  done
  return "$rc"
}

tools_installed() {
  /usr/sbin/kwebctl --help >/dev/null || return 1
  man -w kwebctl && man -w 4 kweb || return 1
  systemd-analyze verify "${UNITS[@]/#//lib/systemd/system/}"
}

# What a purge must leave: nothing of either package.
nothing_left() {
  local kver p rc=0 left
  for p in "${PKGS[@]}"; do
    if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
        grep -qv '^not-installed$'; then
      echo "$p: $(dpkg-query -W -f='${db:Status-Abbrev}' "$p")"
      rc=1
    fi
  done
  for kver in "$@"; do
    left=$(find "/lib/modules/$kver" -name 'kweb.ko*' 2>/dev/null)
    [[ -z $left ]] || { echo "left: $left"; rc=1; }
    ! module_path "$kver" >/dev/null || { echo "modinfo -k $kver still finds kweb"; rc=1; }
  done
  for p in /usr/src/kweb-* /var/lib/dkms/kweb /etc/kweb "${CONFFILES[@]}" \
      /usr/sbin/kwebctl /usr/share/doc/kweb-dkms /usr/share/doc/kweb-tools \
      "${UNITS[@]/#//lib/systemd/system/}" /etc/systemd/system/*/kweb*.service \
      /var/lib/systemd/deb-systemd-helper-enabled/*kweb*; do
    [[ -e $p || -L $p ]] && { echo "left: $p"; rc=1; }
  done
  return "$rc"
}

purge() {
  local p installed=()
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
      grep -qv '^not-installed$' && installed+=("$p")
  done
  ((${#installed[@]} == 0)) || apt_get purge "${installed[@]}"
}

phase=${1:-}
shift || true
case $phase in
  install)
    DEBDIR=$(realpath "${1:?usage: $0 install DEBDIR KVER...}")
    shift
    VER=$(version) || { not_ok "deb: packages found in $DEBDIR"; exit 1; }
    # A run that was stopped halfway may have left them installed.
    purge >>"$LOG" 2>&1
    check "deb: apt installs kweb-dkms and kweb-tools $VER (DKMS builds kweb.ko)" \
      apt_get install "$DEBDIR/kweb-dkms_${VER}_all.deb" \
      "$DEBDIR"/kweb-tools_"${VER}"_*.deb || exit 1
    for kver in "$@"; do
      check "deb: DKMS built and installed kweb $VER for $kver" dkms_installed "$kver"
      check "deb: modinfo -k $kver kweb: DKMS's module, for $kver" is_dkms_module "$kver"
    done
    [[ $# -gt 0 ]] &&
      check "deb: kernel postinst hook builds kweb again for ${*: -1}" \
        kernel_hook_rebuilds "${*: -1}"
    check "deb: kweb-tools: kwebctl, man pages, units verified" tools_installed
    check "deb: kweb-tools: /etc files are conffiles" conffiles_registered
    check "deb: kweb-tools: kweb.service and kweb-log.service installed, not enabled" \
      units_not_enabled
    ;;
  purge)
    check "deb: apt purges kweb-dkms and kweb-tools" purge
    check "deb: nothing of kweb-dkms or kweb-tools left" nothing_left "$@"
    ;;
  *)
    echo "usage: $0 install DEBDIR KVER... | purge KVER..." >&2
    exit 2
    ;;
esac
((FAILED == 0))
