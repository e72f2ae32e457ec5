#!/usr/bin/env bash
# Stop the server started by serve-qwen.sh, by its pid file.
set -euo pipefail
dir=${TEMPER_LLM_DIR:-/var/cache/temper/llm}
pidfile=$dir/server.pid
if [[ -f $pidfile ]]; then
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$pidfile"
  echo "stopped $pid"
else
  echo "not running"
fi
