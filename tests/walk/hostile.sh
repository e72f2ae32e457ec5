#!/usr/bin/env bash
# Hostile trees for the one walk (docs/scan-engines.md, "One walk"), made under ROOT as root:
#   bash tests/walk/hostile.sh clean ROOT   trees the walk must read as oscap does, item for item:
#       bind/  a bind mount of .bind-src (the same file system)
#       tmpfs/ another local file system (a tmpfs)
#       ext4/  another local file system (an ext4 image, loop-mounted)
#   bash tests/walk/hostile.sh deep ROOT    deep/: a tree 1,900 and more levels deep whose paths
#       stay under 4096 bytes, read as oscap reads it (a set of its own: each object that walks
#       it costs oscap's probe about 10 s here, so only the objects about depth reach it)
#   bash tests/walk/hostile.sh gaps ROOT    trees the walk cannot complete, so oscap walks them:
#       fuse/   a user's FUSE mount (bindfs, run by nobody, without allow_other): root may not
#               even look at it
#       locked/ a directory of mode 000, unreadable to any user but root
#       proc/   a proc (of a process namespace of its own, its processes only: none, so it is
#               small), a file system the walk lists but does not enter
#       deeper/ a tree whose paths pass 4096 bytes (PATH_MAX), where oscap's probe stops
#   bash tests/walk/hostile.sh churn ROOT   churn/: files created and removed all the time by a
#       process of its own (its pid in ROOT/.churn.pid), so they vanish while the walk lists them
#   bash tests/walk/hostile.sh down ROOT    stops the churn, unmounts everything under ROOT,
#                                           removes the deep trees
# Each tree holds a file owned by uid 4242 and a world-writable one, so the checks that look
# there find something. On this host the tests run it in a mount namespace of their own
# (`unshare -m`), so no other process sees the mounts; in the test VM the engines bench's
# hostile state runs it in the guest.
set -euo pipefail
set_of=${1:?clean, deep, gaps, churn or down}
root=${2:?ROOT}
mkdir -p "$root"
root=$(cd "$root" && pwd -P)

# seed DIR: a few files, one unowned, one world-writable.
seed() {
  mkdir -p "$1/sub"
  : >"$1/plain"
  : >"$1/sub/nested"
  : >"$1/unowned" && chown 4242:4242 "$1/unowned"
  : >"$1/open" && chmod 0666 "$1/open"
}

# deep DIR MAXLEN: directories named d under DIR down to paths of about MAXLEN bytes, built
# a hundred levels at a time from inside (mkdir refuses a whole path over PATH_MAX).
deep() {
  local dir=$1 max=$2
  mkdir -p "$dir"
  (
    cd "$dir"
    local len=${#dir} hundred
    hundred=$(printf 'd/%.0s' $(seq 100))
    while [ $((len + 200)) -lt "$max" ]; do
      mkdir -p "$hundred" && cd "$hundred"
      len=$((len + 200))
    done
    while [ $((len + 2)) -lt "$max" ]; do
      mkdir d && cd d
      len=$((len + 2))
    done
    : >leaf
    chown 4242 leaf
  )
}

case $set_of in
clean)
  seed "$root/.bind-src"
  mkdir -p "$root/bind" && mount --bind "$root/.bind-src" "$root/bind"
  mkdir -p "$root/tmpfs" && mount -t tmpfs -o size=4m temper-walk "$root/tmpfs" && seed "$root/tmpfs"
  img=$root/.ext4.img
  rm -f "$img"
  truncate -s 8M "$img"
  mkfs.ext4 -q -F "$img"
  mkdir -p "$root/ext4" && mount -o loop "$img" "$root/ext4" && seed "$root/ext4"
  echo "clean trees under $root: $(find "$root" | wc -l) entries"
  ;;
deep)
  deep "$root/deep" 4000
  echo "deep tree under $root: $(find "$root/deep" | wc -l) entries"
  ;;
gaps)
  seed "$root/.fuse-src"
  chown -R 65534:65534 "$root/.fuse-src"
  mkdir -p "$root/fuse" && chown 65534:65534 "$root/fuse"
  setpriv --reuid=65534 --regid=65534 --clear-groups bindfs --no-allow-other "$root/.fuse-src" "$root/fuse"
  seed "$root/locked" && chmod 000 "$root/locked"
  mkdir -p "$root/proc" && unshare --pid --fork mount -t proc -o subset=pid temper-walk "$root/proc"
  deep "$root/deeper" 4400
  echo "gap trees under $root: fuse, locked, proc, deeper"
  ;;
churn)
  mkdir -p "$root/churn" && seed "$root/churn"
  # The churn: 2,000 files made and removed in turn, for as long as it runs (setsid: a
  # session of its own, so the caller's shell does not wait for it).
  setsid sh -c 'cd "$1" && while :; do i=0; while [ $i -lt 2000 ]; do : >"f$i"; i=$((i + 1)); done; rm -f f*; done' \
    churn "$root/churn" </dev/null >/dev/null 2>&1 &
  echo $! >"$root/.churn.pid"
  echo "churn under $root (pid $!)"
  ;;
down)
  if [ -f "$root/.churn.pid" ]; then kill "$(cat "$root/.churn.pid")" 2>/dev/null || true; rm -f "$root/.churn.pid"; fi
  fusermount -u "$root/fuse" 2>/dev/null || true
  # The deepest mounts first.
  grep -F " $root/" /proc/self/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" || true; done
  [ -d "$root/locked" ] && chmod 755 "$root/locked"
  # The deep trees, which a remover that recurses may not take down (one descriptor a level).
  rm -rf "$root/deep" "$root/deeper"
  echo "down: $root"
  ;;
*)
  echo "hostile.sh: clean, deep, gaps, churn or down, not $set_of" >&2
  exit 2
  ;;
esac
