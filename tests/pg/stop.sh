#!/usr/bin/env bash
# Stops the test cluster that start.sh started, if it runs.
set -euo pipefail
dir=${TEMPER_PG_DIR:-/var/tmp/temper-pg}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -n "$bin" ] && [ -s "$dir/PG_VERSION" ] || exit 0
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
  as_pg "$bin/pg_ctl" -D "$dir" -m fast -w stop >&2
fi
