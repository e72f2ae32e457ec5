#!/usr/bin/env bash
# The test suite: the VM (built once, cached), the real small LLM, the report consumers, then
# every crate's tests, including those against the real VM, and the real-model smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."
TEMPER_CARGO_PROFILE=dev bash vm/setup.sh
bash tests/report/setup.sh
# PostgreSQL for the store's second backend: Debian's server, an unprivileged cluster of its own.
TEMPER_TEST_PG=$(bash tests/pg/start.sh)
export TEMPER_TEST_PG
trap 'bash tests/pg/stop.sh || true' EXIT
bash tests/llm/serve-qwen.sh            # starts llama.cpp's server with Qwen2.5-Coder-0.5B on 127.0.0.1:8089
trap 'bash tests/llm/stop-qwen.sh || true; bash tests/pg/stop.sh || true' EXIT
# The VM suites run on two guests side by side: two TCG guests on two cores do about 1.65 times
# the work of one (`cargo bench -p temper --bench lanes`). SECOND's suites use temper-test2, every
# other test temper-test; inside each binary one test at a time (its tests share the guest).
SECOND=(e2e_reboot e2e_llm e2e_enroll)
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
log=$(mktemp)
(TEMPER_DOMAIN=temper-test2 TEMPER_SSH_PORT=2223 cargo test -p temper "${second[@]}" --no-fail-fast -- --test-threads=1 >"$log" 2>&1) &
pid=$!
status=0
cargo test --workspace --exclude temper --no-fail-fast -- --test-threads=1 || status=1
cargo test -p temper --bins "${first[@]}" --no-fail-fast -- --test-threads=1 || status=1
wait $pid || status=1
echo "=== on temper-test2: ${SECOND[*]}"; cat "$log"; rm -f "$log"
TEMPER_LLM_SMOKE_URL=http://127.0.0.1:8089 cargo test -p temper-agents --features real-model --test real_model -- --nocapture --test-threads=1 || status=1
exit $status
