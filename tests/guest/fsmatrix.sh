#!/usr/bin/env bash
# kweb on each kind of filesystem it may serve from, run as root inside a
# virtme-ng guest (scripts/check.sh boots it through scripts/vm.sh):
#
#   fsmatrix.sh KWEB_KO RESULTS_DIR [TAG]
#
# For ext4, xfs, btrfs, f2fs, vfat, exfat and ntfs3 (loop images in a
# tmpfs), tmpfs, overlayfs (lower and upper on an ext4 image; one file
# read from the lower layer, one copied up), squashfs, erofs and iso9660
# (read-only images), NFS (the kernel's server over loopback, NFSv3),
# FUSE (bindfs over a tmpfs directory) and 9p (the guest's root, the
# host's disk, cache=none): make the filesystem, write tests/fs_test.py's
# files into it, load kweb with it as the docroot (no backend: nothing
# here is handed off), run tests/fs_test.py, unload. KWEB_FS="ext4
# tmpfs" runs a subset. One test line per step, TAP as lib.sh says; exit
# status 0 iff every line is "ok".
set -uo pipefail # no -e: a failing check is a test line, not the end

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/guest/lib.sh
. "$HERE/lib.sh"

guest_args fs "$@"

FS_TEST=$REPO/tests/fs_test.py
FILESYSTEMS=${KWEB_FS:-ext4 xfs btrfs f2fs vfat exfat ntfs3 tmpfs overlay squashfs erofs iso9660 nfs fuse 9p}
PORT=80
# Guest-private: images live in memory (sparse), mounts under MNT.
BASE=/run/kweb-fs
MNT=$BASE/mnt
# fs_test.py's files, made once (Python is slow to start in a TCG guest)
# and copied into each filesystem.
SRC=$BASE/src
# Beside the results, on the host's disk: the guest's 9p root.
NINEP=$RUN_DIR/fs-9p
# xfs wants at least 300 MiB; the images are sparse in the tmpfs.
IMG_SIZE=320M
LOG=$RUN_DIR/fsmatrix.log
: >"$LOG"
umask 022

run_log() { echo "+ $*" >>"$LOG"; "$@" >>"$LOG" 2>&1; }

# mkfs_loop TYPE MOUNTPOINT MKFS...: an image in BASE with TYPE's
# filesystem, mounted at MOUNTPOINT.
mkfs_loop() {
  local type=$1 at=$2 img=$BASE/$1.img
  shift 2
  rm -f "$img"
  run_log truncate -s "$IMG_SIZE" "$img" &&
    run_log "$@" "$img" &&
    mkdir -p "$at" &&
    run_log mount -t "$type" -o loop "$img" "$at"
}

NFS_PIDS=()
# NFSv3 from the kernel's server on 127.0.0.1: v3 because a v4 server
# refuses OPEN for its grace period (90 s) after it starts, and v3 reads
# need no lock manager (nolock). mountd answers nfsd's export upcalls.
# Its state (/var/lib/nfs, /etc/exports.d) is on the host's disk in this
# guest: tmpfs over both first.
nfs_up() {
  local export=$BASE/nfs-export
  mkdir -p "$export" && run_log cp -a "$SRC/." "$export/" || return 1
  local d
  for d in /var/lib/nfs /etc/exports.d; do
    mkdir -p "$d" 2>/dev/null
    run_log mount -t tmpfs -o mode=0755 nfsstate "$d" || return 1
  done
  mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery
  touch /var/lib/nfs/etab /var/lib/nfs/rmtab
  echo "$export 127.0.0.1(rw,sync,no_root_squash,no_subtree_check,insecure,fsid=77)" \
    >/etc/exports.d/kweb.exports
  run_log modprobe nfsd || return 1
  mountpoint -q /proc/fs/nfsd || run_log mount -t nfsd nfsd /proc/fs/nfsd ||
    return 1
  command -v rpcbind >/dev/null || { echo "no rpcbind" >>"$LOG"; return 1; }
  rpcbind -w -f >>"$LOG" 2>&1 &
  NFS_PIDS+=($!)
  # nfsd registers with rpcbind when it starts: wait for it to answer
  # (a fixed second was too short for a busy host).
  local n=100
  until rpcinfo -p 127.0.0.1 >/dev/null 2>&1; do
    ((n-- > 0)) || { echo "rpcbind did not answer in 20 s" >>"$LOG"; return 1; }
    nap 0.2
  done
  run_log exportfs -ra || return 1
  rpc.mountd -F --no-nfs-version 4 >>"$LOG" 2>&1 &
  NFS_PIDS+=($!)
  run_log rpc.nfsd -N 4 2 || return 1
  mkdir -p "$MNT"
  run_log bounded 60 mount -t nfs -o vers=3,nolock,proto=tcp \
    "127.0.0.1:$export" "$MNT"
}

nfs_down() {
  local p
  run_log rpc.nfsd 0
  run_log exportfs -ua
  for p in "${NFS_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  NFS_PIDS=()
  umount /var/lib/nfs /etc/exports.d 2>/dev/null
}

# setup FS: mount FS at MNT with the test files in it. Sets FS_ARGS.
FS_ARGS=()
setup() {
  local fs=$1
  FS_ARGS=()
  case $fs in
    ext4) mkfs_loop ext4 "$MNT" mkfs.ext4 -q -F ;;
    xfs) mkfs_loop xfs "$MNT" mkfs.xfs -q -f ;;
    btrfs) mkfs_loop btrfs "$MNT" mkfs.btrfs -q -f ;;
    f2fs) mkfs_loop f2fs "$MNT" mkfs.f2fs -q -f ;;
    vfat | exfat | ntfs3)
      # No symlinks copied, no modes: one for every file, from the mount.
      FS_ARGS=(--no-posix)
      case $fs in
        vfat) mkfs_loop vfat "$MNT" mkfs.vfat ;;
        exfat) mkfs_loop exfat "$MNT" mkfs.exfat ;;
        ntfs3) mkfs_loop ntfs3 "$MNT" mkfs.ntfs -q -F -Q ;;
      esac &&
        (cd "$SRC" && find . -type d ! -name . -exec mkdir -p "$MNT/{}" \; &&
          find . -type f -exec cp {} "$MNT/{}" \;) >>"$LOG" 2>&1
      return
      ;;
    fuse)
      # A FUSE server that passes every call through to a directory.
      FS_ARGS=(--server-dir "$BASE/fuse-src")
      mkdir -p "$BASE/fuse-src" "$MNT" &&
        run_log cp -a "$SRC/." "$BASE/fuse-src/" &&
        run_log bindfs "$BASE/fuse-src" "$MNT"
      return
      ;;
    tmpfs) mkdir -p "$MNT" && run_log mount -t tmpfs -o size=64m kwebfs "$MNT" ;;
    overlay)
      FS_ARGS=(--copied-up)
      mkfs_loop ext4 "$BASE/disk" mkfs.ext4 -q -F &&
        mkdir -p "$BASE/disk/lower" "$BASE/disk/upper" "$BASE/disk/work" &&
        run_log cp -a "$SRC/." "$BASE/disk/lower/" &&
        mkdir -p "$MNT" &&
        run_log mount -t overlay kwebovl -o \
          "lowerdir=$BASE/disk/lower,upperdir=$BASE/disk/upper,workdir=$BASE/disk/work" \
          "$MNT" &&
        printf 'copied up through overlayfs\n' >"$MNT/copied.txt" &&
        [[ -f $BASE/disk/upper/copied.txt ]] ||
        return 1
      return 0
      ;;
    squashfs)
      FS_ARGS=(--readonly)
      run_log mksquashfs "$SRC" "$BASE/squashfs.img" -noappend -quiet \
        -no-progress &&
        mkdir -p "$MNT" &&
        run_log mount -t squashfs -o loop,ro "$BASE/squashfs.img" "$MNT" ||
        return 1
      return 0
      ;;
    erofs | iso9660)
      # Read-only images made from the files (Rock Ridge keeps the
      # iso9660 one's modes and symlink).
      FS_ARGS=(--readonly)
      if [[ $fs == erofs ]]; then
        run_log mkfs.erofs "$BASE/erofs.img" "$SRC"
      else
        run_log genisoimage -quiet -R -o "$BASE/iso9660.img" "$SRC"
      fi &&
        mkdir -p "$MNT" &&
        run_log mount -t "$fs" -o loop,ro "$BASE/$fs.img" "$MNT"
      return
      ;;
    nfs) FS_ARGS=(--server-dir "$BASE/nfs-export"); nfs_up; return ;;
    9p)
      # The guest's root: the host's filesystem over virtio 9p.
      FS_ARGS=(--remote-clock --no-page-cache)
      rm -rf "$NINEP" && mkdir -p "$NINEP" "$MNT" &&
        run_log cp -a "$SRC/." "$NINEP/" &&
        run_log mount --bind "$NINEP" "$MNT"
      return
      ;;
    *) return 1 ;;
  esac || return 1
  run_log cp -a "$SRC/." "$MNT/"
}

teardown() {
  local fs=$1
  umount "$MNT" >>"$LOG" 2>&1
  case $fs in
    overlay) umount "$BASE/disk" >>"$LOG" 2>&1 ;;
    nfs) nfs_down ;;
    fuse) rm -rf "$BASE/fuse-src" ;;
    9p) rm -rf "$NINEP" ;;
  esac
  rm -f "$BASE"/*.img
}

# fs_client FS: tests/fs_test.py's lines, renumbered away and counted.
fs_client() {
  local fs=$1 out=$RUN_DIR/client-$1.txt rc=0 n
  timeout 600 "$PY" "$FS_TEST" run --port "$PORT" --docroot "$MNT" \
    --fs "$TAG $fs" "${FS_ARGS[@]}" >"$out" 2>&1 || rc=$?
  sed -nE -e 's/^(not ok|ok) [0-9]+ - (.*)$/\1 - \2/p' \
    -e '/^# [0-9]+ passed, [0-9]+ failed$/d' -e '/^#/p' "$out"
  PASSED=$((PASSED + $(grep -cE '^ok [0-9]+ ' "$out")))
  FAILED=$((FAILED + $(grep -cE '^not ok [0-9]+ ' "$out")))
  n=$(grep -cE '^(not )?ok [0-9]+ ' "$out")
  if ((rc != 0)) && ! grep -qE '^not ok [0-9]+ ' "$out"; then
    not_ok "$TAG $fs: fs_test.py completed (status $rc, $n tests)"
    tail -n 20 "$out" | diag 20
  elif ((n == 0)); then
    not_ok "$TAG $fs: fs_test.py ran tests"
  fi
}

one_fs() {
  local fs=$1 before logged
  before=$(kmsg_lines)
  logged=$(wc -l <"$LOG")
  kmsg_mark "fsmatrix $fs begin"
  if ! setup "$fs"; then
    not_ok "$TAG $fs: make and mount the filesystem"
    { tail -n +"$((logged + 1))" "$LOG"; kmsg_since "$before"; } | diag 20
    teardown "$fs"
    return
  fi
  ok "$TAG $fs: make and mount the filesystem ($(findmnt -no FSTYPE "$MNT"))"
  echo "+ insmod $KO docroot=$MNT port=$PORT" >>"$LOG"
  if bounded 60 insmod "$KO" "docroot=$MNT" "port=$PORT" >>"$LOG" 2>&1 &&
      wait_port "$PORT" 10; then
    ok "$TAG $fs: insmod kweb.ko docroot=$MNT"
    fs_client "$fs"
  else
    not_ok "$TAG $fs: insmod kweb.ko docroot=$MNT"
    kmsg_since "$before" | diag 20
  fi
  if module_loaded kweb; then
    echo "+ rmmod kweb" >>"$LOG"
    if bounded 60 rmmod kweb >>"$LOG" 2>&1; then
      ok "$TAG $fs: rmmod kweb"
    else
      not_ok "$TAG $fs: rmmod kweb"
    fi
  fi
  teardown "$fs"
}

main() {
  ensure_debugfs
  ip link set lo up 2>/dev/null || true
  kmemleak_baseline fsmatrix
  kmsg_mark "fsmatrix ($TAG) begin"
  say "$TAG: kernel $(uname -r), module $KO"
  mkdir -p "$BASE"
  mountpoint -q "$BASE" || mount -t tmpfs -o mode=0755,size=1g kwebfsimg "$BASE"
  run_log modprobe loop
  if ! { rm -rf "$SRC" && mkdir -p "$SRC" && run_log "$PY" "$FS_TEST" make "$SRC"; }; then
    not_ok "$TAG: make the test files"
    tail -n 10 "$LOG" | diag 10
    finish "$TAG fsmatrix"
    return
  fi
  local fs
  for fs in $FILESYSTEMS; do
    one_fs "$fs"
  done
  kmemleak_check "$TAG: no kmemleak reports" fsmatrix
  dmesg_check "$TAG: no kernel warnings in dmesg"
  save_dmesg fsmatrix
  finish "$TAG fsmatrix"
}

main
