#!/usr/bin/env bash
# From a fresh machine to a ready test VM: host packages, SSG content, the image (cached by the
# hash of its recipe), libvirt, the domain, the `baseline` snapshot, and `temper doctor`.
# Idempotent: a second run only checks.
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"
bash vm/host-deps.sh
bash vm/fetch-ssg.sh
bash vm/up.sh
# The tests build the dev profile (TEMPER_CARGO_PROFILE=dev) rather than compile everything twice.
profile=${TEMPER_CARGO_PROFILE:-release}
log "building temper ($profile)"
cargo build --profile "$profile" -q -p temper
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
"target/$dir/temper" doctor
