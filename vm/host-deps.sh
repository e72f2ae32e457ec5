#!/usr/bin/env bash
# Installs what the host needs: libvirt, qemu (TCG), mmdebstrap, the libvirt headers for the `virt` crate,
# oscap with autotailor (tailoring tests), systemd-analyze (the schedule's unit checks), and
# libguestfs (`temper target enroll`) with a kernel for its appliance (this host may boot none), and
# bindfs (tests/walk/hostile.sh's FUSE mount).
# Idempotent: skips when everything is already there.
#   vm/host-deps.sh             all of it
#   vm/host-deps.sh --headers   only what the build needs (libvirt's headers, pkg-config): .ci/run
#                               starts its build after it, and the rest comes with vm/setup.sh
source "$(dirname "$0")/lib.sh"
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = --headers ]; then
  if pkg-config --exists libvirt 2>/dev/null; then log "libvirt's headers present"; exit 0; fi
  apt-get update -q
  apt-get install -y -q --no-install-recommends libvirt-dev pkg-config
  log "libvirt's headers installed"
  exit 0
fi
need=(libvirtd virsh qemu-system-x86_64 qemu-img qemu-io mmdebstrap pkg-config mkfs.ext4 oscap autotailor systemd-analyze
  guestfish virt-customize bindfs)
missing=0; for b in "${need[@]}"; do command -v "$b" >/dev/null || missing=1; done
pkg-config --exists libvirt 2>/dev/null || missing=1
compgen -G '/boot/vmlinuz-*' >/dev/null || missing=1
if [ $missing = 0 ]; then log "host deps present"; exit 0; fi
apt-get update -q
# bookworm's qemu-system-x86 (7.2) conflicts with a preinstalled qemu-utils 10.0 from backports, and apt
# will not remove it on its own (libguestfs needs qemu-utils): bookworm's qemu-utils (7.2) replaces it in
# the same transaction.
apt-get install -y -q --no-install-recommends --allow-downgrades \
  libvirt-daemon-system libvirt-clients libvirt-dev qemu-system-x86 qemu-utils/bookworm mmdebstrap pkg-config \
  e2fsprogs openscap-scanner openscap-utils systemd openssh-client ca-certificates \
  libguestfs-tools linux-image-amd64 bindfs
log "host deps installed"
