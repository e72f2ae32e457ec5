#!/usr/bin/env bash
# Boots an exported image (`temper image export`) as a throwaway, transient domain with SSH on
# 127.0.0.1:PORT, over a copy-on-write overlay so the image itself is never written. The test
# image has no bootloader of its own: it boots the cached image's kernel, as the test VM does.
#
#   vm/boot-image.sh NAME PORT IMAGE            boot it as temper with the test key (an image
#                                               exported with --keep-harness); prints the ssh line
#   vm/boot-image.sh --as USER NAME PORT IMAGE  a one-time key for USER (`admin` in the test
#                                               image), put into the overlay alone (virt-customize)
#   vm/boot-image.sh --down NAME                power it off (a transient domain then vanishes)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/domain.sh"
V=(virsh -q -c "$LIBVIRT_URI")
if [ "${1:-}" = --down ]; then
  name=${2:?vm/boot-image.sh --down NAME}
  "${V[@]}" destroy "$name" >/dev/null 2>&1 || true
  rm -f "$VM_DIR/run/$name-overlay.qcow2" "$VM_DIR/run/$name-console.log" "$VM_DIR/run/$name.xml" \
    "$VM_DIR/run/$name-key" "$VM_DIR/run/$name-key.pub"
  exit 0
fi
user=temper
if [ "${1:-}" = --as ]; then
  user=${2:-}
  [[ $user =~ ^[a-z_][a-z0-9_-]*$ ]] || { echo "vm/boot-image.sh: '$user' is not a user name" >&2; exit 2; }
  shift 2
fi
[ $# -eq 3 ] || { echo "usage: vm/boot-image.sh [--as USER] NAME PORT IMAGE | --down NAME" >&2; exit 2; }
name=$1 port=$2 image=$(realpath "$3")
[[ $name =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || { echo "vm/boot-image.sh: '$name' is not a domain name" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ ]] || { echo "vm/boot-image.sh: '$port' is not a port" >&2; exit 2; }
[ -f "$image" ] || { echo "vm/boot-image.sh: no image at $image" >&2; exit 2; }
if ss -Hltn "sport = :$port" | grep -q .; then echo "vm/boot-image.sh: port $port is in use" >&2; exit 1; fi
kernel_dir=$(dirname "$(bash "$REPO_ROOT/vm/build-image.sh")/guest.qcow2")
overlay=$VM_DIR/run/$name-overlay.qcow2 console=$VM_DIR/run/$name-console.log
rm -f "$overlay" "$console"
qemu-img create -q -f qcow2 -F qcow2 -b "$image" "$overlay"
key=$VM_DIR/keys/id_ed25519
if [ "$user" != temper ]; then
  # A one-time key, into the overlay alone: the image stays as it is.
  key=$VM_DIR/run/$name-key
  rm -f "$key" "$key.pub" && ssh-keygen -q -t ed25519 -N '' -C boot-image -f "$key"
  LIBGUESTFS_BACKEND=direct LIBGUESTFS_BACKEND_SETTINGS=force_tcg \
    virt-customize -q -a "$overlay" --format qcow2 --no-logfile --ssh-inject "$user:file:$key.pub" >&2
fi
chown libvirt-qemu: "$overlay" 2>/dev/null || true
start=$SECONDS
domain_xml "$name" "$port" "$overlay" "$console" "$kernel_dir" "temper export $(basename "$image")" >"$VM_DIR/run/$name.xml"
"${V[@]}" create "$VM_DIR/run/$name.xml" >/dev/null
# The export's host key is pinned at the first contact with the domain just made (`pin.sh`).
source "$(dirname "$0")/pin.sh"
pin_guest "$name" "$port"
first_contact 300 || { log "$name: no SSH within 300 s; console: $console"; tail -20 "$console" >&2; exit 1; }
SSH=(ssh -i "$key" -p "$port" -o BatchMode=yes "${PIN_SSH_OPTS[@]}" -o ConnectTimeout=5 -o LogLevel=ERROR "$user@127.0.0.1")
until err=$(timeout 15 "${SSH[@]}" true 2>&1 </dev/null); do
  key_refused "$err"
  if [ $((SECONDS - start)) -gt 300 ]; then
    log "$name: no SSH within 300 s; console: $console"; tail -20 "$console" >&2; exit 1
  fi
  sleep 1
done
log "$name: boot to SSH in $((SECONDS - start)) s"
echo "image up: domain $name, ssh -i $key -p $port $user@127.0.0.1"
