#!/usr/bin/env bash
# Stops the tests' sshd (tests/sshd/start.sh).
dir=${TEMPER_SSHD_DIR:-/var/tmp/temper-sshd}
[ -s "$dir/sshd.pid" ] && kill "$(cat "$dir/sshd.pid")" 2>/dev/null || true
rm -f "$dir/sshd.pid"
