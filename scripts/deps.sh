#!/usr/bin/env bash
# Install what kweb's build and tests need, and nothing when all is there:
# Debian packages (checked one by one with dpkg -s; apt-get runs only if
# something is missing) and virtme-ng from PyPI (only if vng is missing).
# Safe to run any number of times; silent when there is nothing to do.
set -euo pipefail

# Keep in step with what the scripts use:
#  kernels + headers   the stock 6.1 (linux-*-amd64) and 6.12 targets
#  qemu, busybox-static  virtme-ng guests (vng builds an initramfs with
#                      busybox to load a stock kernel's virtio/9p modules)
#  nginx wrk httperf curl  reference server and load/HTTP clients
#  libnginx-mod-http-brotli-static  brotli_static for the reference nginx
#                      of tests/diff_test.py
#  sparse             make lint (C=2)
#  linux-source-6.12  debug kernel and checkpatch.pl
#  flex ... dwarves   kernel builds
#  (and the linter)  shellcheck, for the shell scripts
#  python3-matplotlib  make bench's chart (bench/report.py)
#  python3-yaml python3-jsonschema  the kernel's YNL generator and CLI
#                      (scripts/ynl-regen.sh, tests/ctl_test.py)
#  libmnl-dev pkg-config  userctl/kwebctl (and libssl-dev: userctl/kwebtlsd)
#  mandoc             make lint's man page check (scripts/man-check.py)
#  linux-perf         tests/trace_test.py's perf record -e 'kweb:*'
#  bpftrace           the kernel stacks docs/bench's profile.sh samples
#  xfsprogs btrfs-progs squashfs-tools nfs-kernel-server dosfstools
#  exfatprogs f2fs-tools ntfs-3g erofs-utils genisoimage bindfs
#                      the filesystem matrix
#                      (tests/guest/fsmatrix.sh; e2fsprogs for ext4)
#  acl                setfacl, for tests/http_test.py's ACL case of cached
#                      permissions
#  debhelper dh-dkms dkms lintian  make deb and its check on the host
#                      (scripts/deb.sh, scripts/deb-check.sh)
#  prometheus         promtool, which checks kwebctl stats --format
#                      prometheus (tests/ctl_test.py, tests/pure); its
#                      server is neither started nor enabled (TOOLS_ONLY)
readonly APT_PACKAGES=(
  linux-image-amd64 linux-headers-amd64
  linux-image-6.12-amd64 linux-headers-6.12-amd64
  qemu-system-x86 busybox-static
  nginx libnginx-mod-http-brotli-static wrk httperf curl sparse rsync e2fsprogs iproute2 kmod cpio python3
  build-essential flex bison bc libelf-dev libssl-dev dwarves xz-utils
  linux-source-6.12 shellcheck
  clang libclang-rt-14-dev
  python3-matplotlib
  python3-yaml python3-jsonschema
  libmnl-dev pkg-config mandoc
  linux-perf bpftrace
  xfsprogs btrfs-progs squashfs-tools nfs-kernel-server
  dosfstools exfatprogs f2fs-tools ntfs-3g erofs-utils genisoimage bindfs
  acl
  debhelper dh-dkms dkms lintian
  prometheus
)
# Packages installed for a tool alone, whose service must not run here:
# kept from starting by their install, then disabled.
readonly TOOLS_ONLY=(prometheus)
# The virtme-ng release the scripts were written against (exit status and
# --verbose console behaviour were checked with it).
readonly VNG_SPEC=${KWEB_VNG_SPEC:-virtme-ng==1.42}

say() { echo "deps: $*" >&2; }

as_root() {
  if ((EUID == 0)); then "$@"; else sudo "$@"; fi
}

install_apt() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  say "installing Debian packages: ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  deny_tool_services
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${missing[@]}" >&2
  allow_services
  disable_tool_services "${missing[@]}"
}

# invoke-rc.d and deb-systemd-invoke ask /usr/sbin/policy-rc.d before a
# package's scripts start a service, and 101 means "not allowed". Ours
# denies the TOOLS_ONLY services (their init script and systemd unit
# names) and allows the rest, as if it were not there, for one apt-get
# run. An administrator's own is left alone: disable_tool_services then
# stops what it let start.
readonly POLICY_RC=/usr/sbin/policy-rc.d
POLICY_OURS=0

deny_tool_services() {
  local names=() s
  [[ -e $POLICY_RC ]] && return 0
  for s in "${TOOLS_ONLY[@]}"; do names+=("$s" "$s.service"); done
  POLICY_OURS=1
  trap allow_services EXIT
  printf '%s\n' '#!/bin/sh' \
    "# kweb's scripts/deps.sh, for one apt-get run: no ${TOOLS_ONLY[*]} service." \
    "case \"\$1\" in" \
    "$(IFS='|'; echo "${names[*]}")) exit 101 ;;" \
    'esac' 'exit 0' | as_root tee "$POLICY_RC" >/dev/null
  as_root chmod 755 "$POLICY_RC"
}

allow_services() {
  ((POLICY_OURS)) || return 0
  as_root rm -f "$POLICY_RC"
  POLICY_OURS=0
}

# The TOOLS_ONLY packages among "$@", just installed: their install
# enabled their units. Disable them (systemctl does that with or without
# a running systemd) and stop them where systemd runs. Only on the run
# that installed them: an administrator may enable one later on purpose.
disable_tool_services() {
  local p s
  command -v systemctl >/dev/null || return 0
  for s in "${TOOLS_ONLY[@]}"; do
    for p in "$@"; do
      [[ $p == "$s" ]] || continue
      as_root systemctl disable -q "$s.service" >&2 || true
      if [[ -d /run/systemd/system ]]; then
        as_root systemctl stop "$s.service" >&2 || true
      fi
    done
  done
}

install_vng() {
  command -v vng >/dev/null && return 0
  say "installing $VNG_SPEC from PyPI"
  local py
  py=$(command -v python3)
  # A Debian-managed python refuses plain pip installs (PEP 668); a pyenv
  # or venv python does not know the flag's meaning but accepts it on pip
  # >= 23, so only fall back to it when the first try was refused.
  if ! "$py" -m pip install -q "$VNG_SPEC" >&2; then
    "$py" -m pip install -q --break-system-packages "$VNG_SPEC" >&2
  fi
  # pyenv needs its shims regenerated for a newly installed console script.
  if command -v pyenv >/dev/null; then pyenv rehash || true; fi
  hash -r
  command -v vng >/dev/null && return 0
  # pip --user or a system python may have put it where PATH does not look.
  local bindir
  bindir=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
  if [[ -x $bindir/vng ]]; then
    say "vng installed in $bindir, which is not on PATH: add it"
  fi
  say "vng still not found after installing $VNG_SPEC"
  return 1
}

install_apt
install_vng
