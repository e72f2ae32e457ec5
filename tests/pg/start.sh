#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: Debian's server (installed when missing), run as
# the unprivileged `postgres` user in a directory of its own, listening on 127.0.0.1 only.
# Idempotent: when it already runs, only prints the URL. Prints one line: the URL.
# Auth is `trust` for host connections from 127.0.0.1 only: a test cluster, never a real one.
set -euo pipefail
dir=${TEMPER_PG_DIR:-/var/tmp/temper-pg}
port=${TEMPER_PG_PORT:-5433}
url="postgres://temper@127.0.0.1:$port/temper"
log() { echo "[pg $(date +%H:%M:%S)] $*" >&2; }

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/postgres" ]; then
  log "installing postgresql"
  export DEBIAN_FRONTEND=noninteractive TMPDIR=${TMPDIR:-/var/tmp}
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends postgresql >&2
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --home-dir "$dir" --shell /usr/sbin/nologin postgres
fi

if [ ! -s "$dir/PG_VERSION" ]; then
  log "initdb in $dir"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  chmod 700 "$dir"
  as_pg "$bin/initdb" -D "$dir" -U postgres --auth-local=trust --auth-host=reject -E UTF8 >"$dir.initdb.log" 2>&1 \
    || { cat "$dir.initdb.log" >&2; exit 1; }
  cat >>"$dir/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = on
max_connections = 200
CONF
  # Loopback only; no other address may connect at all.
  cat >"$dir/pg_hba.conf" <<HBA
local all all trust
host all all 127.0.0.1/32 trust
HBA
fi

if ! as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
  log "starting on 127.0.0.1:$port"
  as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >&2 || { tail -20 "$dir/server.log" >&2; exit 1; }
fi
psql() { as_pg "$bin/psql" -h "$dir" -p "$port" -U postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
if [ "$(psql -c "SELECT 1 FROM pg_roles WHERE rolname = 'temper'")" != 1 ]; then
  psql -c "CREATE ROLE temper LOGIN CREATEDB" >&2
fi
if [ "$(psql -c "SELECT 1 FROM pg_database WHERE datname = 'temper'")" != 1 ]; then
  psql -c "CREATE DATABASE temper OWNER temper" >&2
fi
echo "$url"
