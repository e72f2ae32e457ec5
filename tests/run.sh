#!/usr/bin/env bash
# The test suite: the VM (built once, cached), the real small LLM, the report consumers, then
# every crate's tests, including those against the real VM, and the real-model smoke test.
# Each phase's time, and the total (printed however the script ends), on lines of their own:
#   phase NAME: Ns             NAME: vm-setup report-setup postgres llm-server build crate-tests
#   phase NAME: Ns (failed)          temper-tests temper-test2-suites fleet smoke; last `phase total: Ns`
# and each of temper's test binaries' time, as `suite NAME: Ns`.
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
# temper's test binaries are built once, with the workspace's features, and run as built: a
# `cargo test -p temper` would build temper a second time with its own feature set.
phase build
SECOND=(e2e_reboot e2e_llm e2e_enroll e2e_plan)
uplog=$(mktemp)
bash vm/up.sh temper-test2 2223 >"$uplog" 2>&1 &   # boots while the tests build
up=$!
built=$(mktemp)
cargo test --workspace --no-run --message-format=json-render-diagnostics >"$built"
wait $up || { cat "$uplog"; exit 1; }
rm -f "$uplog"
# exe NAME: the path of temper's test binary NAME (`temper` for its unit tests).
exe() {
  python3 - "$built" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"] \
            and m["package_id"].split("#")[0].endswith("/temper") and t.get("name") == sys.argv[2]:
        print(m["executable"]); break
else:
    sys.exit(f"no test binary {sys.argv[2]} in the build")
PY
}
# suites NAME... [-- ARGS]: runs temper's test binaries NAME in turn from its crate directory, as
# `cargo test` would, each with ARGS (default one test at a time), and prints each one's time.
suites() {
  local names=() args=(--test-threads=1) rc=0 t s f
  while [ $# -gt 0 ] && [ "$1" != -- ]; do names+=("$1"); shift; done
  if [ $# -gt 0 ]; then shift; args=("$@"); fi
  for t in "${names[@]}"; do
    s=$SECONDS f=""
    echo "=== suite $t"
    (cd crates/temper && "$(exe "$t")" "${args[@]}") || rc=1 f=" (failed)"
    echo "suite $t: $((SECONDS - s))s$f"
  done
  return $rc
}
first=(temper)
for f in crates/temper/tests/*.rs; do
  t=$(basename "$f" .rs)
  [[ " ${SECOND[*]} " == *" $t "* ]] || first+=("$t")
done
phase crate-tests
log=$(mktemp)
# temper-test2's suites run beside crate-tests and temper-tests; their phase line ends their log.
(
  s=$SECONDS rc=0 f=""
  TEMPER_DOMAIN=temper-test2 TEMPER_SSH_PORT=2223 suites "${SECOND[@]}" >"$log" 2>&1 || rc=$? f=1
  phase_line temper-test2-suites $((SECONDS - s)) "$f" >>"$log"
  exit "$rc"
) &
pid=$!
status=0
cargo test --workspace --exclude temper --no-fail-fast -- --test-threads=1 || failed
phase temper-tests
suites "${first[@]}" || failed
phase
wait $pid || status=1
echo "=== on temper-test2: ${SECOND[*]}"; cat "$log"; rm -f "$log"
# The workers' takeover drives both guests, so it runs once both sides are done with them.
phase fleet
stops=(tests/sshd/stop.sh "${stops[@]}")
suites e2e_fleet -- --ignored --exact workers_share_the_queue_and_a_killed_workers_target_is_resumed_by_another || failed
phase smoke
TEMPER_LLM_SMOKE_URL=http://127.0.0.1:8089 cargo test -p temper-agents --features real-model --test real_model -- --nocapture --test-threads=1 || failed
phase
rm -f "$built"
exit $status
