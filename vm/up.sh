#!/usr/bin/env bash
# Brings the test VM up at its `baseline` memory snapshot: builds the image if needed, starts
# virtlogd/libvirtd (no systemd here), defines the TCG domain, boots, warms the session, checks
# the mission app and takes the snapshot. Idempotent: a running domain on the current image with
# a baseline snapshot is only checked over SSH.
#
#   vm/up.sh                 temper-test on 127.0.0.1:2222 (or TEMPER_DOMAIN, TEMPER_SSH_PORT)
#   vm/up.sh NAME PORT       another guest from the same image, SSH on 127.0.0.1:PORT
#   vm/up.sh --count N       temper-test, temper-test2 … temper-testN on ports 2222 … 2221+N
set -euo pipefail
if [ "${1:-}" = --count ]; then
  n=${2:-}
  [[ $n =~ ^[1-9][0-9]?$ ]] || { echo "vm/up.sh: --count takes a number of guests (1 to 99), not '$n'" >&2; exit 2; }
  for i in $(seq 1 "$n"); do
    name=temper-test; [ "$i" -eq 1 ] || name=temper-test$i
    bash "$0" "$name" $((2221 + i))
  done
  exit 0
fi
if [ $# -ge 1 ]; then
  [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || { echo "vm/up.sh: '$1' is not a domain name" >&2; exit 2; }
  [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "vm/up.sh: give $1 its SSH port too: vm/up.sh $1 PORT" >&2; exit 2; }
  export TEMPER_DOMAIN=$1 TEMPER_SSH_PORT=$2
fi
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/domain.sh"
V=(virsh -q -c "$LIBVIRT_URI")
KEY=$VM_DIR/keys/id_ed25519
OVERLAY=$VM_DIR/run/$DOM.qcow2
CONSOLE=$VM_DIR/run/$DOM-console.log
DS=/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml
ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { local d=$(( $(ms) - $1 )); printf '%d.%02d' $((d / 1000)) $((d % 1000 / 10)); }
# The guest's host key is pinned (`pin.sh`): recorded at the first contact with a domain just
# defined on the built image, checked at every other contact. A snapshot revert keeps the key.
source "$(dirname "$0")/pin.sh"
pin_guest "$DOM" "$PORT"
SSH=(ssh -i "$KEY" -p "$PORT" -o BatchMode=yes "${PIN_SSH_OPTS[@]}" -o ConnectTimeout=5 -o LogLevel=ERROR temper@127.0.0.1)
gssh() { "${SSH[@]}" "$@"; }
# wait_ssh SECONDS: true once `true` runs over SSH (the host key checked); stops on another key.
wait_ssh() {
  local end=$(( SECONDS + $1 )) err
  until err=$(timeout 15 "${SSH[@]}" true 2>&1 </dev/null); do
    key_refused "$err"
    [ $SECONDS -lt $end ] || return 1
    sleep 0.5
  done
}
T_ALL=$(ms)

IMG=$(bash "$REPO_ROOT/vm/build-image.sh")
HASH=$(basename "$IMG")

# No udev here, so /dev/kvm is root-only. libvirt then finds KVM "enabled when probing but
# not available now" (it checks as libvirt-qemu) and re-probes qemu on every call: 4 s each,
# 40 s per define, seconds per revert. Debian's udev rule gives it to group kvm; do the same.
# The domain still runs under TCG.
if [ -c /dev/kvm ] && getent group kvm >/dev/null && [ "$(stat -c %G /dev/kvm)" != kvm ]; then
  chgrp kvm /dev/kvm && chmod 0660 /dev/kvm && log "/dev/kvm: group kvm, mode 0660 (as udev would)"
fi
# libvirt without systemd: start the daemons by hand (NOT -l, it wants TLS certificates).
daemons() {
  pgrep -x virtlogd >/dev/null || virtlogd -d -p "$VM_DIR/run/virtlogd.pid"
  pgrep -x libvirtd >/dev/null || libvirtd -d -p "$VM_DIR/run/libvirtd.pid"
}
t=$(ms); end=$(( SECONDS + 60 ))
# Started again on each try: a daemon that was still shutting down a moment ago is gone now.
until daemons && "${V[@]}" uri >/dev/null 2>&1; do
  [ $SECONDS -lt $end ] || { log "libvirtd did not answer within 60 s"; exit 1; }
  sleep 0.3
done
log "libvirt ready in $(secs "$t") s"

exists() { "${V[@]}" dominfo "$DOM" >/dev/null 2>&1; }
state() { "${V[@]}" domstate "$DOM" 2>/dev/null | head -1; }
has_baseline() { "${V[@]}" snapshot-list "$DOM" --name 2>/dev/null | grep -qx baseline; }
cur_hash() { "${V[@]}" desc "$DOM" 2>/dev/null | sed -n 's/^temper image \([0-9a-f]*\)$/\1/p'; }

# The overlay and its snapshots are only valid on the very file they were made over.
IMG_ID="$HASH $(stat -c %i-%Y "$IMG/guest.qcow2") vcpus=$VCPUS"   # another count: defined again
ID_FILE=$VM_DIR/run/$DOM.image
if exists && [ "$(cur_hash)" = "$HASH" ] && [ "$(cat "$ID_FILE" 2>/dev/null)" = "$IMG_ID" ] && has_baseline; then
  if [ "$(state)" = running ] && { check_pin || true; } && wait_ssh 20; then
    log "domain $DOM already up on image $HASH (checked in $(secs "$T_ALL") s)"
    echo "VM ready: domain $DOM, ssh temper@127.0.0.1:$PORT, snapshot baseline"; exit 0
  fi
  log "domain $DOM not answering; reverting to baseline"
  t=$(ms)
  if "${V[@]}" snapshot-revert "$DOM" baseline --running && wait_ssh 60; then
    log "reverted to baseline, SSH in $(secs "$t") s"
    echo "VM ready: domain $DOM, ssh temper@127.0.0.1:$PORT, snapshot baseline"; exit 0
  fi
  log "revert did not bring SSH back; recreating the domain"
fi

if exists; then
  # A run's checkpoints live in this domain's overlay: recreating it deletes them, and
  # `temper resume` must then replay every kept fix from the baseline. Not without being asked.
  held=$("${V[@]}" snapshot-list "$DOM" --name 2>/dev/null | grep '^temper-r' || true)
  if [ -n "$held" ] && [ "$(cur_hash)" = "$HASH" ] && [ "${TEMPER_VM_RECREATE:-}" != 1 ]; then
    why="image $HASH as before; recorded '$(cat "$ID_FILE" 2>/dev/null)', now '$IMG_ID'; baseline $(has_baseline && echo present || echo missing)"
    log "domain $DOM holds $(wc -l <<<"$held") checkpoints of temper runs ($(head -1 <<<"$held") …), and would be recreated ($why)."
    log "That deletes them. Start it as it is (virsh -c $LIBVIRT_URI start $DOM) and run \`temper resume\`, or set TEMPER_VM_RECREATE=1."
    exit 1
  fi
  t=$(ms); old=$(cur_hash || true)
  "${V[@]}" destroy "$DOM" >/dev/null 2>&1 || true
  "${V[@]}" undefine "$DOM" --snapshots-metadata >/dev/null
  log "removed domain $DOM (image ${old:-?} -> $HASH) in $(secs "$t") s"
fi
if ss -Hltn "sport = :$PORT" | grep -q .; then log "port $PORT is in use: set TEMPER_SSH_PORT"; exit 1; fi

t=$(ms)
rm -f "$OVERLAY" "$CONSOLE" "$ID_FILE"
qemu-img create -q -f qcow2 -F qcow2 -b "$IMG/guest.qcow2" "$OVERLAY"   # holds the internal snapshots
XML=$VM_DIR/run/$DOM.xml
domain_xml "$DOM" "$PORT" "$OVERLAY" "$CONSOLE" "$IMG" "temper image $HASH" > "$XML"
"${V[@]}" define "$XML" >/dev/null
echo "$IMG_ID" > "$ID_FILE"
log "domain defined in $(secs "$t") s"
# Drop cached images that no defined domain uses any more.
used=$(for d in $("${V[@]}" list --all --name); do "${V[@]}" desc "$d" 2>/dev/null || true; echo; done)
for d in "$VM_DIR"/img/*; do
  h=$(basename "$d")
  if [[ $h =~ ^[0-9a-f]{16}$ ]] && ! grep -q "$h" <<<"$used"; then
    rm -rf "$d"; log "pruned image $h"
  fi
done

t=$(ms)
"${V[@]}" start "$DOM" >/dev/null
# First contact with the domain just built: its key recorded, in place of an earlier domain's.
first_contact 300 || { log "no SSH within 300 s; console: $CONSOLE"; tail -20 "$CONSOLE" >&2; exit 1; }
wait_ssh 300 || { log "no SSH within 300 s; console: $CONSOLE"; tail -20 "$CONSOLE" >&2; exit 1; }
log "boot to SSH: $(secs "$t") s"

# Warm what a revert should find ready: the login session, sudo, the datastream in page cache.
t=$(ms)
gssh 'sudo -n true' </dev/null
sys=$(gssh 'timeout 120 systemctl is-system-running --wait' </dev/null || true)
gssh "sudo -n cat $DS >/dev/null && sync" </dev/null
health=$(gssh /usr/local/bin/mission-healthcheck </dev/null || true)
[ "$health" = HEALTHY ] || { log "mission health check: $health"; exit 1; }
log "warm-up: $(secs "$t") s (system $sys, $health)"

t=$(ms)
"${V[@]}" snapshot-create-as "$DOM" baseline --description "temper baseline (image $HASH), memory included" --atomic >/dev/null
log "snapshot baseline: $(secs "$t") s; total $(secs "$T_ALL") s"
echo "VM ready: domain $DOM, ssh temper@127.0.0.1:$PORT, snapshot baseline"
