#!/usr/bin/env bash
# Run one command inside a throw-away QEMU guest (virtme-ng, TCG) and exit
# with that command's status.
#
#   vm.sh [--name TAG] [--memory 2G] [--cpus 2] [--kvm] [--timeout SEC]
#         [--net-forward HOSTPORT:GUESTPORT[,...]] [--root-cache MODE]
#         [--append KERNEL-ARG]... KERNEL_IMAGE -- COMMAND [ARG...]
#
# --net-forward gives the guest a NIC behind QEMU's user-mode network and
# forwards the host's 127.0.0.1:HOSTPORT to each GUESTPORT listed.
#
# --append adds an argument to the guest kernel's command line.
#
# --pin-vcpu0 gives the guest's vCPU 0 a host CPU of its own (host CPU 0)
# and puts every other thread of QEMU (vCPU 1, the main loop, its I/O
# threads) on host CPU 1: the benchmark's server runs on vCPU 0, and a
# vCPU thread the host preempts looks busy to the guest (TCG has no steal
# time). Needs 2 host CPUs.
#
# --thread-names has QEMU name its vCPU threads "CPU N/TCG" (-name
# debug-threads=on), for whoever reads their CPU time on the host
# (bench/hostcpu.py); --pin-vcpu0 implies it.
#
# --qemu-plugin SPEC loads a TCG plugin (QEMU's -plugin SPEC), such as
# the benchmark's instruction counter, bench/qemu/kwebicount.c.
#
# --root-cache MODE mounts the host's filesystem (the guest's 9p root) with
# cache=MODE instead of vng's cache=none: with loose, a slow guest (the
# debug kernel) stops paying a round trip to the host for every file access.
# Only for guests that do not need to see the host change files under them.
#
# The guest is emulated (QEMU TCG) unless --kvm is given, which uses KVM
# instead (it needs a writable /dev/kvm).
#
# The guest sees the host's filesystem read-write (vng --rw), so COMMAND can
# write its results under $KWEB_RUN_DIR, which is
#   ${KWEB_RESULTS:-$KWEB_CACHE/results/<timestamp>}/TAG
# on the host too. That directory also gets:
#   guest.log    COMMAND's stdout, written there by the guest and followed
#                from here onto our stdout as it grows
#   guest.err    COMMAND's stderr
#   console.log  the kernel console (vng --verbose)
#   status       COMMAND's exit status, written by the guest itself
#   cmd.sh       the wrapper the guest runs
# COMMAND's output goes through files rather than vng's virtio-serial ports
# because the guest finds those ports through udev, and a slow guest (the
# debug kernel under TCG) can time out waiting for udev: vng then falls back
# to the serial console, mixing the output into the kernel's and losing the
# exit status.
#
# Exit status: COMMAND's; 124 if the guest hit --timeout; 125 if the guest
# never reported a status (kernel panic, QEMU died). The guest runs in its own
# session under `timeout`, and its whole process group is killed on any exit
# or signal of ours, so no QEMU outlives us (holding a forwarded port, say).
# shellcheck disable=SC2317 # cleanup functions run from traps
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO
readonly KWEB_CACHE=${KWEB_CACHE:-$HOME/.cache/kweb}

name=guest
memory=2G
cpus=2
kvm=0
timeout_s=900
forward=
root_cache=
append=()
pin_vcpu0=0
thread_names=0
plugin=''

usage() {
  echo "usage: $0 [--name TAG] [--memory SIZE] [--cpus N] [--kvm]" \
    "[--timeout SEC] [--net-forward HOSTPORT:GUESTPORT[,...]] [--root-cache MODE]" \
    "[--append KERNEL-ARG]... [--pin-vcpu0] [--thread-names]" \
    "[--qemu-plugin SPEC] KERNEL_IMAGE --" \
    "COMMAND..." >&2
  exit 2
}

die() { echo "vm.sh: $*" >&2; exit 2; }

while (($#)); do
  case $1 in
    --name) name=${2:?}; shift 2 ;;
    --memory) memory=${2:?}; shift 2 ;;
    --cpus) cpus=${2:?}; shift 2 ;;
    --kvm) kvm=1; shift ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --root-cache) root_cache=${2:?}; shift 2 ;;
    --net-forward) forward=${2:?}; shift 2 ;;
    --append) append+=("${2:?}"); shift 2 ;;
    --pin-vcpu0) pin_vcpu0=1; thread_names=1; shift ;;
    --thread-names) thread_names=1; shift ;;
    --qemu-plugin) plugin=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    --) usage ;;
    -*) usage ;;
    *) break ;;
  esac
done
(($# >= 3)) || usage
image=$1
[[ $2 == -- ]] || usage
shift 2

[[ -r $image ]] || die "kernel image $image not readable"
[[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "bad --name $name"
[[ $timeout_s =~ ^[0-9]+$ ]] || die "bad --timeout $timeout_s"
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "bad --cpus $cpus"
if ((kvm)) && [[ ! -w /dev/kvm ]]; then
  die "--kvm: /dev/kvm is missing or not writable"
fi
if [[ -n $forward && ! $forward =~ ^[0-9]+:[0-9]+(,[0-9]+:[0-9]+)*$ ]]; then
  die "bad --net-forward $forward (want HOSTPORT:GUESTPORT[,...])"
fi
command -v vng >/dev/null || die "vng (virtme-ng) not found: run scripts/deps.sh"

results=${KWEB_RESULTS:-$KWEB_CACHE/results/$(date +%Y%m%d-%H%M%S)}
rundir=$results/$name
mkdir -p "$rundir"
rundir=$(cd "$rundir" && pwd)
rm -f "$rundir/status" "$rundir/guest.log" "$rundir/guest.err" \
  "$rundir/console.log" "$rundir/vng.log"

# vng hands --exec to a shell inside the guest as one string; a generated
# script avoids a second layer of quoting and records the status itself, so
# a lost status (panic, killed QEMU) is told apart from a failing command.
write_wrapper() {
  local wrapper=$rundir/cmd.sh
  {
    echo '#!/bin/bash'
    echo "# generated by scripts/vm.sh for guest '$name'"
    printf 'cd %q || exit 126\n' "$PWD"
    # Nothing here needs udev once the guest is up, and on the debug kernel
    # virtme's udevd never settles: it spins on a vCPU for the whole run.
    echo "pkill -KILL -x systemd-udevd; pkill -KILL -f '^\\(udev-worker\\)'"
    printf 'export PATH=%q\n' "$PATH"
    printf 'export HOME=%q\n' "$HOME"
    printf 'export KWEB_RUN_DIR=%q KWEB_GUEST_NAME=%q KWEB_REPO=%q\n' \
      "$rundir" "$name" "$REPO"
    # Pass through the caller's KWEB_* knobs (e.g. test-client overrides).
    local var
    while IFS= read -r var; do
      case $var in
        KWEB_RUN_DIR|KWEB_GUEST_NAME|KWEB_REPO) ;;
        *) printf 'export %s=%q\n' "$var" "${!var}" ;;
      esac
    done < <(compgen -e | grep '^KWEB_' || true)
    printf '%q ' "$@"
    printf '>%q 2>%q </dev/null\n' "$rundir/guest.log" "$rundir/guest.err"
    echo 'rc=$?'
    # shellcheck disable=SC2016 # $rc is the guest's, expanded there
    printf 'echo "$rc" > %q\nexit "$rc"\n' "$rundir/status"
  } >"$wrapper"
  chmod +x "$wrapper"
  echo "$wrapper"
}

vng_pid=
tail_pid=
pin_pid=
# Kill the guest's whole process group (setsid made vng its leader; QEMU is
# in it): first politely, then for sure.
kill_guest() {
  [[ -n $vng_pid ]] || return 0
  if kill -0 -- "-$vng_pid" 2>/dev/null; then
    kill -TERM -- "-$vng_pid" 2>/dev/null || true
    local n=5
    while ((n-- > 0)) && kill -0 -- "-$vng_pid" 2>/dev/null; do
      sleep 1
    done
    kill -KILL -- "-$vng_pid" 2>/dev/null || true
  fi
  vng_pid=
}
stop_follow() {
  [[ -n $tail_pid ]] || return 0
  kill "$tail_pid" 2>/dev/null || true
  wait "$tail_pid" 2>/dev/null || true
  tail_pid=
}
# Once QEMU has made its vCPU threads (MTTCG names them "CPU N/TCG"):
# vCPU 0 alone on host CPU 0, every other thread on host CPU 1. Threads
# QEMU makes later inherit their creator's CPU, host CPU 1.
pin_vcpus() {
  local n=0 qemu t comm pinned=0
  while ((n++ < 600)) && kill -0 "$vng_pid" 2>/dev/null; do
    for qemu in $(pgrep -g "$vng_pid" qemu-system 2>/dev/null); do
      [[ -e /proc/$qemu/task ]] || continue
      grep -qs '^CPU 1/' /proc/"$qemu"/task/*/comm || continue
      for t in /proc/"$qemu"/task/*; do
        comm=$(<"$t/comm") || continue
        if [[ $comm == "CPU 0/"* ]]; then
          taskset -p 1 "${t##*/}" >/dev/null
        else
          taskset -p 2 "${t##*/}" >/dev/null
        fi
      done
      pinned=1
    done
    ((pinned)) && break
    sleep 0.5
  done
  ((pinned)) && echo "vm.sh: vCPU 0 pinned to host CPU 0, the rest of QEMU to host CPU 1" >&2
  ((pinned)) || echo "vm.sh: warning: could not pin QEMU's vCPUs" >&2
}
stop_pin() {
  [[ -n $pin_pid ]] || return 0
  kill "$pin_pid" 2>/dev/null || true
  wait "$pin_pid" 2>/dev/null || true
  pin_pid=
}
cleanup() {
  kill_guest
  stop_follow
  stop_pin
}
on_signal() {
  echo "vm.sh: interrupted, stopping guest '$name'" >&2
  cleanup
  exit 130
}
trap cleanup EXIT
trap on_signal INT TERM HUP

wrapper=$(write_wrapper "$@")

vng_args=(--run "$image" --cpus "$cpus" --memory "$memory" --rw
  --verbose --name "kweb-$name" --exec "$wrapper")
((kvm)) || vng_args+=(--disable-kvm)
# No CMPXCHG16B under TCG. QEMU 7.2's helper for it (Debian 12's QEMU)
# computes the flags from a stale lazy-flags state, which leaves the
# last flag-setting operand in EFLAGS: SLUB's per-CPU fast path retries
# on a failed cmpxchg16b, and an interrupt taken at its retry label then
# pushed the freelist pointer as EFLAGS (TF set: a spurious #DB warning;
# DF and VM set: a double fault), twice in the benchmark's nginx load.
# Later QEMU generates cmpxchg16b inline. Without CX16 the kernel uses
# its pushf/cli/popf emulation (this_cpu_cmpxchg16b_emu). vng's own
# "-cpu max" comes first; QEMU takes the last -cpu.
((kvm)) || vng_args+=("--qemu-opts=-cpu max,cx16=off")
# 4-level paging, as on most hardware. With TCG's LA57, 6.12's
# identify_cpu() clears the capability words and sets them again at boot;
# an interrupt in between sees 4-level limits on 5-level addresses, which
# a KASAN kernel reports as a wild access (rcu_is_watching(), once in a
# debug soak): the kernel's race, not ours, and not hardware's usual case.
vng_args+=(--append no5lvl)
# Only warnings and worse on the serial console; the rest stays in dmesg,
# which the tests read and save. Under TCG a printk waits for its line to
# go out, byte by emulated byte: on the debug kernel (KASAN, lockdep) a
# line took 0.27 s, and KUnit's 1,200 lines of KTAP took five minutes.
vng_args+=(--append loglevel=5)
# vng's own root mount options plus the cache mode: the last rootflags=
# on the kernel command line wins, and vng puts ours after its own.
[[ -z $root_cache ]] ||
  vng_args+=(--append "rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=$root_cache")
for arg in "${append[@]}"; do
  vng_args+=(--append "$arg")
done
# QEMU names its vCPU threads ("CPU N/TCG") only when asked to.
((thread_names)) && vng_args+=("--qemu-opts=-name kweb-$name,debug-threads=on")
[[ -z $plugin ]] || vng_args+=("--qemu-opts=-plugin $plugin")
if [[ -n $forward ]]; then
  # Only the host's loopback is forwarded: nothing outside reaches the guest.
  fwds=''
  IFS=, read -ra pairs <<<"$forward"
  for pair in "${pairs[@]}"; do
    fwds+=",hostfwd=tcp:127.0.0.1:${pair%%:*}-:${pair##*:}"
  done
  vng_args+=("--qemu-opts=-netdev user,id=n0$fwds -device virtio-net-pci,netdev=n0")
fi

# The guest's root is ours, so virtme's init finds our systemd-udevd and
# runs it: a coldplug and `udevadm settle` of 30 s on a stock kernel and
# 200 s on the debug one, for device links nothing of ours uses (vm.sh
# reads files, not virtio ports). In a mount namespace of its own, vng (and
# the 9p or virtiofs server it starts) sees /usr/lib/systemd through an
# overlay that hides systemd-udevd, so the init skips udev; the host's
# mounts are untouched. Root only; otherwise the guest kills udevd once up.
no_udev=()
udevd=/usr/lib/systemd/systemd-udevd
if ((EUID == 0)) && [[ -e $udevd ]] && command -v unshare >/dev/null; then
  hide=$rundir/.no-udev
  mkdir -p "$hide"
  # shellcheck disable=SC2016 # expanded by the namespace's shell
  no_udev=(unshare --mount --propagation private sh -ec '
    mount -t tmpfs kweb-no-udev "$1"
    mkdir "$1/upper" "$1/work"
    mknod "$1/upper/${2##*/}" c 0 0
    mount -t overlay kweb-no-udev \
      -o "lowerdir=${2%/*},upperdir=$1/upper,workdir=$1/work" "${2%/*}"
    shift 2
    exec "$@"' sh "$hide" "$udevd")
fi

echo "vm.sh: booting $(basename "$image") as '$name' ($cpus vCPUs," \
  "$( ((kvm)) && echo KVM || echo TCG), timeout ${timeout_s}s," \
  "logs in $rundir)" >&2
# boot: one run of the guest; sets rc (vng's status) and elapsed.
boot() {
  rm -f "$rundir/status" "$rundir/guest.log" "$rundir/guest.err"
  start=$SECONDS
  # stdin from /dev/null: QEMU would otherwise put a terminal into raw mode
  # and swallow Ctrl-C; we catch the signal instead and kill the group.
  setsid timeout --kill-after=15 "$timeout_s" "${no_udev[@]}" \
    vng "${vng_args[@]}" </dev/null >"$rundir/vng.log" 2>"$rundir/console.log" &
  vng_pid=$!
  if ((pin_vcpu0)); then
    pin_vcpus &
    pin_pid=$!
  fi
  # Follow the guest's output file (it appears once the guest runs
  # COMMAND); tail ends by itself, after a last read, once vng's group
  # leader is gone.
  tail -n +1 -F --pid="$vng_pid" "$rundir/guest.log" 2>/dev/null &
  tail_pid=$!
  rc=0
  wait "$vng_pid" || rc=$?
  stop_pin
  # Anything left in the group (a QEMU that ignored vng's exit) goes too.
  kill_guest
  wait "$tail_pid" 2>/dev/null || true
  tail_pid=
  elapsed=$((SECONDS - start))
}

# A guest that dies before COMMAND starts (no guest.log yet) never ran
# anything of ours: under TCG the stock kernel now and then panics while
# patching its own text at boot. Such a boot is retried, twice at most;
# its console is kept as console-boot-N.log.
boot
tries=1
while ((rc != 124 && tries < 3)) && [[ ! -e $rundir/guest.log ]]; do
  mv "$rundir/console.log" "$rundir/console-boot-$tries.log"
  echo "vm.sh: guest '$name' died before its command started; booting" \
    "again (see $rundir/console-boot-$tries.log)" >&2
  tries=$((tries + 1))
  boot
done

if ((rc == 124)); then
  echo "vm.sh: guest '$name' timed out after ${timeout_s}s; end of" \
    "$rundir/console.log:" >&2
  tail -n 30 "$rundir/console.log" >&2 || true
  exit 124
fi
if [[ ! -s $rundir/status ]]; then
  echo "vm.sh: guest '$name' ended without a status (vng exit $rc," \
    "${elapsed}s); end of $rundir/console.log:" >&2
  tail -n 30 "$rundir/console.log" >&2 || true
  exit 125
fi
status=$(<"$rundir/status")
if [[ $status != "$rc" ]]; then
  echo "vm.sh: note: vng exited $rc but the guest command exited $status" >&2
fi
echo "vm.sh: guest '$name' finished in ${elapsed}s, status $status" >&2
exit "$status"
