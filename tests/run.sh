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
# VM tests share one guest: one test at a time inside each binary (cargo runs binaries in turn).
cargo test --workspace --no-fail-fast -- --test-threads=1
TEMPER_LLM_SMOKE_URL=http://127.0.0.1:8089 cargo test -p temper-agents --features real-model --test real_model -- --nocapture --test-threads=1
