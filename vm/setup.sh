#!/usr/bin/env bash
# From a fresh machine to a ready test VM: host packages, SSG content, the image (cached by the
# hash of its recipe), libvirt, the domain, the `baseline` snapshot, and `temper doctor`.
# Idempotent: a second run only checks.
source "$(dirname "$0")/lib.sh"
cd "$REPO_ROOT"
bash vm/host-deps.sh
bash vm/fetch-ssg.sh
bash vm/up.sh
# tests/run.sh builds temper in its own build, with the tests' features, and runs doctor after it
# (TEMPER_SETUP_BUILD=0): a `-p temper` build has other features and compiles 61 crates again.
if [ "${TEMPER_SETUP_BUILD:-1}" = 0 ]; then exit 0; fi
# TEMPER_CARGO_PROFILE=dev builds target/debug/temper instead of release.
profile=${TEMPER_CARGO_PROFILE:-release}
log "building temper ($profile)"
cargo build --profile "$profile" -q -p temper
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
"${CARGO_TARGET_DIR:-target}/$dir/temper" doctor   # where cargo built it
