#!/usr/bin/env bash
# The test suite: the VM (built once, cached), the real small LLM, the report consumers, then
# every crate's tests, including those against the real VM, and the real-model smoke test.
# Each phase's time, and the total (printed however the script ends), on lines of their own:
#   phase NAME: Ns             NAME: vm-setup report-setup postgres llm-server build crate-tests
#   phase NAME: Ns (failed)          temper-tests temper-test2-suites smoke; last `phase total: Ns`
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS ph="" ph_t0=0 ph_failed=""
# phase_line NAME SECONDS [failed]: the one line format.
phase_line() { echo "phase $1: $2s${3:+ (failed)}"; }
# phase [NAME]: ends the phase under way, if any, and starts NAME, if given.
phase() {
  if [ -n "$ph" ]; then phase_line "$ph" $((SECONDS - ph_t0)) "$ph_failed"; fi
  ph=${1:-} ph_t0=$SECONDS ph_failed=""
}
# failed: a test phase failed; the suite goes on and exits 1 at the end.
failed() { status=1 ph_failed=1; }
# On exit: stop what was started (last first), end a phase cut short, print the total.
stops=()
# shellcheck disable=SC2317  # run by the EXIT trap
on_exit() {
  local rc=$?
  for s in "${stops[@]}"; do bash "$s" || true; done
  if [ -n "$ph" ] && [ "$rc" != 0 ]; then ph_failed=1; fi
  phase || true
  phase_line total $((SECONDS - t0)) || true
}
trap on_exit EXIT
phase vm-setup
TEMPER_CARGO_PROFILE=dev bash vm/setup.sh
phase report-setup
bash tests/report/setup.sh
bash tests/plan/setup.sh
# PostgreSQL for the store's second backend: Debian's server, an unprivileged cluster of its own.
phase postgres
TEMPER_TEST_PG=$(bash tests/pg/start.sh)
export TEMPER_TEST_PG
stops=(tests/pg/stop.sh)
phase llm-server
bash tests/llm/serve-qwen.sh            # starts llama.cpp's server with Qwen2.5-Coder-0.5B on 127.0.0.1:8089
stops=(tests/llm/stop-qwen.sh tests/pg/stop.sh)
# The VM suites run on two guests side by side: two TCG guests on two cores do about 1.65 times
# the work of one (`cargo bench -p temper --bench lanes`). SECOND's suites use temper-test2, every
# other test temper-test; inside each binary one test at a time (its tests share the guest).
phase build
SECOND=(e2e_reboot e2e_llm e2e_enroll e2e_plan)
uplog=$(mktemp)
bash vm/up.sh temper-test2 2223 >"$uplog" 2>&1 &   # boots while the tests build
up=$!
cargo test --workspace --no-run
wait $up || { cat "$uplog"; exit 1; }
rm -f "$uplog"
second=(); first=()
for t in "${SECOND[@]}"; do second+=(--test "$t"); done
for f in crates/temper/tests/*.rs; do
  t=$(basename "$f" .rs)
  [[ " ${SECOND[*]} " == *" $t "* ]] || first+=(--test "$t")
done
phase crate-tests
log=$(mktemp)
# temper-test2's suites run beside crate-tests and temper-tests; their phase line ends their log.
(
  s=$SECONDS rc=0 f=""
  TEMPER_DOMAIN=temper-test2 TEMPER_SSH_PORT=2223 cargo test -p temper "${second[@]}" --no-fail-fast -- --test-threads=1 >"$log" 2>&1 || rc=$? f=1
  phase_line temper-test2-suites $((SECONDS - s)) "$f" >>"$log"
  exit "$rc"
) &
pid=$!
status=0
cargo test --workspace --exclude temper --no-fail-fast -- --test-threads=1 || failed
phase temper-tests
cargo test -p temper --bins "${first[@]}" --no-fail-fast -- --test-threads=1 || failed
phase
wait $pid || status=1
echo "=== on temper-test2: ${SECOND[*]}"; cat "$log"; rm -f "$log"
phase smoke
TEMPER_LLM_SMOKE_URL=http://127.0.0.1:8089 cargo test -p temper-agents --features real-model --test real_model -- --nocapture --test-threads=1 || failed
phase
exit $status
