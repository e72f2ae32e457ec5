#!/usr/bin/env bash
# Removes the test domain, its snapshots' metadata and overlay. --daemons also stops libvirtd and virtlogd.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
V=(virsh -q -c "$LIBVIRT_URI")
if "${V[@]}" dominfo "$DOM" >/dev/null 2>&1; then
  "${V[@]}" destroy "$DOM" >/dev/null 2>&1 || true
  "${V[@]}" undefine "$DOM" --snapshots-metadata >/dev/null
  log "domain $DOM removed"
else
  log "domain $DOM not defined"
fi
rm -f "$VM_DIR/run/$DOM.qcow2" "$VM_DIR/run/$DOM.image"
if [ "${1:-}" = --daemons ]; then
  for d in libvirtd virtlogd; do
    f=$VM_DIR/run/$d.pid
    if [ -f "$f" ] && pid=$(cat "$f") && kill "$pid" 2>/dev/null; then
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then log "$d ($pid) still running after 20 s"; else log "$d stopped"; fi
    fi
    rm -f "$f"
  done
fi
