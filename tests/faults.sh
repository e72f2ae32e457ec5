#!/usr/bin/env bash
# The fault matrix (docs/reliability.md) on the real VM: each fault injected for real into a real
# run (crates/temper/tests/faults.rs). Not part of tests/run.sh: about 20 minutes under TCG.
# Needs the VM (`bash vm/up.sh`); starts a PostgreSQL cluster of its own (port 5434), so that its
# restart row never touches the test suite's cluster, and stops it at the end.
#   bash tests/faults.sh [TEST_NAME_FILTER]
set -euo pipefail
cd "$(dirname "$0")/.."
export TEMPER_PG_DIR=/var/tmp/temper-pg-faults TEMPER_PG_PORT=5434
TEMPER_TEST_PG=$(bash tests/pg/start.sh)
export TEMPER_TEST_PG TEMPER_FAULT_PG_DIR=$TEMPER_PG_DIR
trap 'bash tests/pg/stop.sh' EXIT
t0=$SECONDS
cargo test -p temper --test faults -- --ignored --test-threads=1 --nocapture "$@" 2>&1 | tee /tmp/temper-faults.log
grep '^fault-row:' /tmp/temper-faults.log || true
echo "fault matrix: $((SECONDS - t0))s"
