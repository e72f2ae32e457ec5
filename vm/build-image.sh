#!/usr/bin/env bash
# Builds the Debian 12 test guest (TCG, direct kernel boot) and caches it by recipe hash at
# $VM_DIR/img/<hash>/{guest.qcow2,vmlinuz,initrd.img}. Prints that directory on stdout; logs go to stderr.
# Skips the build when the cached image exists. The same build also writes plain.qcow2: the
# guest without the temper user, its key or its sudo rule (any user's VM, for `temper target
# enroll`); `--plain` prints that file's path instead.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
HERE=$REPO_ROOT/vm
KEY=$VM_DIR/keys/id_ed25519
DEBS=$VM_DIR/img/debs
shopt -s nullglob
ssg=("$DEBS"/ssg-debian_${SSG_VERSION}-*_all.deb "$DEBS"/ssg-base_${SSG_VERSION}-*_all.deb)
[ ${#ssg[@]} = 2 ] || { log "ssg $SSG_VERSION debs missing in $DEBS: run bash vm/fetch-ssg.sh"; exit 1; }
if [ ! -f "$KEY" ]; then
  ssh-keygen -q -t ed25519 -N '' -C temper -f "$KEY"   # never printed
  chmod 600 "$KEY"
fi

# The recipe: this script, lib.sh, the guest files, the ssg deb names, the public key.
HASH=$( { cat "$HERE/build-image.sh" "$HERE/lib.sh" "$HERE"/guest/*; basename -a "${ssg[@]}"; cat "$KEY.pub"; } \
  | sha256sum | cut -c1-16)
OUTD=$VM_DIR/img/$HASH
out() { if [ "${1:-}" = --plain ]; then echo "$OUTD/plain.qcow2"; else echo "$OUTD"; fi; }
if [ -f "$OUTD/guest.qcow2" ] && [ -f "$OUTD/plain.qcow2" ] && [ -f "$OUTD/vmlinuz" ] && [ -f "$OUTD/initrd.img" ]; then
  log "image $HASH cached"; out "$@"; exit 0
fi

T0=$SECONDS
B=$VM_DIR/img/.build-$HASH
rm -rf "$B"; mkdir -p "$B"
trap 'rm -rf "$B"' EXIT
M=$(mirror); S=$(security_mirror)
log "building image $HASH from $M"
# Trimmed initrd: only the modules a virtio guest needs to mount its root.
mmdebstrap --mode=root --variant=minbase --skip=cleanup/apt/lists \
  --include=linux-image-amd64,systemd-sysv,udev,dbus,libpam-systemd,openssh-server,sudo,iproute2,netbase,procps,openscap-scanner,nginx,curl,ca-certificates \
  --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" && printf "MODULES=list\n" > "$1/etc/initramfs-tools/conf.d/zz-small.conf" && printf "virtio_pci\nvirtio_blk\nvirtio_net\next4\n" > "$1/etc/initramfs-tools/modules"' \
  --customize-hook="bash '$HERE/guest/customize.sh' \"\$1\" '$DEBS' '$KEY.pub'" \
  bookworm "$B/rootfs" \
  "deb $M bookworm main" "deb $M bookworm-updates main" "deb $S bookworm-security main" >&2
cp -L "$B"/rootfs/boot/vmlinuz-* "$B/vmlinuz"
cp -L "$B"/rootfs/boot/initrd.img-* "$B/initrd.img"
# image NAME: the rootfs as it is now, an ext4 filesystem filled from the directory (no loop mount).
image() {
  rm -f "$B/guest.raw"; truncate -s 4G "$B/guest.raw"
  mkfs.ext4 -q -F -L root -d "$B/rootfs" "$B/guest.raw"
  qemu-img convert -f raw -O qcow2 "$B/guest.raw" "$B/$1"
}
image guest.qcow2
# The plain variant: no temper user, key or sudo rule.
chroot "$B/rootfs" userdel -r temper 2>/dev/null || true   # it warns: no mail spool
rm -rf "$B/rootfs/etc/sudoers.d/temper" "$B/rootfs/home/temper"
! grep -q '^temper:' "$B/rootfs/etc/passwd" || { log "plain image: the temper user is still there"; exit 1; }
image plain.qcow2
mkdir -p "$OUTD.tmp"
mv "$B/guest.qcow2" "$B/plain.qcow2" "$B/vmlinuz" "$B/initrd.img" "$OUTD.tmp/"
rm -rf "$OUTD"; mv "$OUTD.tmp" "$OUTD"
rm -rf "$B"
log "image $HASH built in $((SECONDS - T0)) s: $(du -sh "$OUTD/guest.qcow2" | cut -f1) qcow2, initrd $(du -sh "$OUTD/initrd.img" | cut -f1)"
out "$@"
