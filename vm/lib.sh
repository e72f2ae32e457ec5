# Shared settings for the vm/ scripts. Source it; do not run it.
# TEMPER_VM_DIR holds the cached image, keys, overlay and daemon pid files.
set -euo pipefail
VM_DIR=${TEMPER_VM_DIR:-/var/cache/temper/vm}
DOM=${TEMPER_DOMAIN:-temper-test}
PORT=${TEMPER_SSH_PORT:-2222}
MEM=${TEMPER_VM_MEM_MIB:-1536}
LIBVIRT_URI=${TEMPER_LIBVIRT_URI:-qemu:///system}
SSG_VERSION=0.1.76
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$VM_DIR"/{tmp,img,keys,run}
export TMPDIR=$VM_DIR/tmp   # apt's temp dir under the shared /tmp vanished once mid-install
# The mirror this machine's apt already uses; never hard-code a host.
mirror() {
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -f $f ]; then awk '/^URIs:/{print $2}' $f | grep -v security | head -1
  else awk '/^deb /{print $2; exit}' /etc/apt/sources.list; fi
}
security_mirror() {
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -f $f ]; then awk '/^URIs:/{print $2}' $f | grep security | head -1
  else awk '/^deb .*security/{print $2; exit}' /etc/apt/sources.list; fi
}
log() { printf '[vm %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
