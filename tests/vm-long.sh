#!/usr/bin/env bash
# The VM tests kept out of CI's hour (each is `#[ignore]` with this script named in its reason):
# the batch check's bisection and its kill -9 (e2e_batch, about 11 minutes under TCG); the
# reboot proof's blame of a fix that breaks health and of one that stops the boot (e2e_reboot);
# a rule escalated when its budget runs out (e2e_llm); kill -9 and resume on PostgreSQL, and an
# unavailable LLM pausing the run (e2e_resume); a plan step that fails on a guest that differs,
# bisected to and handed to the loop (e2e_plan, about 12 minutes); a derived fix of each family
# kept through the reboot proof, and each forced to fail and reverted to the state found before
# (e2e_derived, about 33 minutes); a rule no tier can fix escalated with the file the scanner
# found named in every report format and the web view (e2e_evidence); a stock run killed on
# PostgreSQL and resumed, with the dashboard's queries (e2e_journal); a hostile guest (an item
# swapped for a link to /etc/shadow, hostile names, a fix printing 1 GB, a hash in /etc/passwd)
# that gets nothing (e2e_hostile); a derived fix of each class that chooses (a range, a state to
# avoid with its second candidate kept when the first is rejected, a setting another file
# contradicts, through a cold reboot; e2e_choices); a plan step that makes a file world-writable,
# blamed at its batch check by the one walk (e2e_walk); two nightly runs of one job, the second
# applying the first's proven plan by default (e2e_nightly). Their logic runs in CI
# in-process (loop_stock, loop_plan_batch, loop_faults, loop_reboot, loop_llm, loop_derived), and
# e2e_fleet's workers test kills and resumes a run on PostgreSQL on the VMs; these prove the rest
# on the real VM. Needs the VM
# (`bash vm/up.sh`); the PostgreSQL test needs TEMPER_TEST_PG (`tests/pg/start.sh`). Prints each
# binary's time.
#   bash tests/vm-long.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TEMPER_TEST_PG=${TEMPER_TEST_PG:-$(bash tests/pg/start.sh)}
export TEMPER_TEST_PG
t0=$SECONDS
for t in e2e_batch e2e_reboot e2e_llm e2e_resume e2e_journal e2e_plan e2e_derived e2e_evidence e2e_hostile e2e_choices e2e_walk e2e_nightly; do
  s=$SECONDS
  cargo test -p temper --test "$t" -- --ignored --test-threads=1
  echo "suite temper/$t (ignored tests): $((SECONDS - s))s"
done
echo "vm-long: $((SECONDS - t0))s"
