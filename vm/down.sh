#!/usr/bin/env bash
# Removes a test domain, its snapshots' metadata and overlay. --daemons also stops libvirtd and virtlogd.
#
#   vm/down.sh [--daemons]         temper-test (or TEMPER_DOMAIN), as vm/up.sh with no name
#   vm/down.sh NAME [--daemons]    exactly NAME, as vm/up.sh NAME PORT brought it up
#
# Refuses (exit 2, nothing removed) a NAME that is not a defined libvirt domain, and a NAME that
# differs from TEMPER_DOMAIN when both are given: it once removed temper-test, snapshots and all,
# when asked for temper-test2.
set -euo pipefail
usage() { echo "usage: vm/down.sh [NAME] [--daemons]${1:+: $1}" >&2; exit 2; }
name="" daemons=0
for a in "$@"; do
  case $a in
    --daemons) daemons=1 ;;
    -*) usage "unknown option '$a'" ;;
    *) [ -z "$name" ] || usage "one domain at a time"; name=$a ;;
  esac
done
if [ -n "$name" ]; then
  [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9_.-]*$ ]] || { echo "vm/down.sh: '$name' is not a domain name" >&2; exit 2; }
  if [ -n "${TEMPER_DOMAIN:-}" ] && [ "$TEMPER_DOMAIN" != "$name" ]; then
    echo "vm/down.sh: asked for '$name' but TEMPER_DOMAIN is '$TEMPER_DOMAIN': refusing, nothing removed" >&2
    exit 2
  fi
  export TEMPER_DOMAIN=$name
fi
source "$(dirname "$0")/lib.sh"
V=(virsh -q -c "$LIBVIRT_URI")
if [ -n "$name" ] && ! "${V[@]}" dominfo "$DOM" >/dev/null 2>&1; then
  echo "vm/down.sh: '$DOM' is not a defined libvirt domain on $LIBVIRT_URI (or libvirt does not answer): nothing removed" >&2
  exit 2
fi
if "${V[@]}" dominfo "$DOM" >/dev/null 2>&1; then
  "${V[@]}" destroy "$DOM" >/dev/null 2>&1 || true
  "${V[@]}" undefine "$DOM" --snapshots-metadata >/dev/null
  log "domain $DOM removed"
else
  log "domain $DOM not defined"
fi
rm -f "$VM_DIR/run/$DOM.qcow2" "$VM_DIR/run/$DOM.image"
if [ $daemons = 1 ]; then
  for d in libvirtd virtlogd; do
    f=$VM_DIR/run/$d.pid
    if [ -f "$f" ] && pid=$(cat "$f") && kill "$pid" 2>/dev/null; then
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then log "$d ($pid) still running after 20 s"; else log "$d stopped"; fi
    fi
    rm -f "$f"
  done
fi
