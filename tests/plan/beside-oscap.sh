#!/usr/bin/env bash
# The proven plan's first speed goal (issue 31; docs/benchmarks.md, "The ANSSI plan"): the whole
# plan, `temper run --plan DIR`, on temper-test2, beside `oscap xccdf eval --remediate` run to its
# fixed point on temper-test, both from their baseline, their timed parts started together
# (TEMPER_BENCH_SYNC), so that both run under the same load. Each side prints its own table.
#
#   bash vm/up.sh --count 2
#   bash tests/plan/beside-oscap.sh [PLAN_DIR|PLAN.tgz] [LOG_DIR]
#
# The plan defaults to tests/plan/anssi-bp28-high.tgz: the full ANSSI loop's plan of 2026-11-29
# (146 steps, reboot proof passed; SSG 0.1.76, as vm/fetch-ssg.sh installs), so that the bench
# needs no full loop first. An archive is unpacked under target/bench/.
#
# oscap's scope is that of the last full loop in target/bench/<profile>-baseline (the folder of
# `TEMPER_BENCH_TEMPER_ONLY=1 cargo bench -p temper --bench versus_remediate`), or, with none there,
# its own baseline scan and the skill's skips, waivers and deferrals. Under TCG on ANSSI high this
# takes one to two and a half hours. Environment: TEMPER_BENCH_PROFILE, TEMPER_BENCH_SKILL, as the bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
plan=${1:-tests/plan/anssi-bp28-high.tgz}
logs=${2:-target/bench/beside-oscap}
if [[ $plan == *.tgz ]]; then
  into=target/bench/$(basename "$plan" .tgz)
  rm -rf "$into" && mkdir -p "$into"
  tar xzf "$plan" -C "$into" --strip-components=1
  plan=$into
fi
plan=$(realpath "$plan")
[ -f "$plan/plan.json" ] || { echo "beside-oscap: no plan.json in $plan" >&2; exit 2; }
# The committed plan is unsigned (it is test data, not a release): applied with --unsigned, said here.
seal=""
if [ ! -f "$plan/SHA256SUMS.sig" ]; then
  seal=--unsigned
  echo "beside-oscap: $plan has no SHA256SUMS.sig: applied with --unsigned"
fi
mkdir -p "$logs"
sync=$(mktemp -d)
trap 'rm -rf "$sync"' EXIT
# Built once, before either side starts: two builds at once would race in target/.
cargo bench -p temper --bench versus_remediate --profile dev --no-run 2>"$logs/build.log" ||
  { cat "$logs/build.log" >&2; exit 1; }
bench=$(cargo bench -p temper --bench versus_remediate --profile dev --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "versus_remediate" and m.get("executable"):
        print(m["executable"])')
export TEMPER_BENCH_SYNC=$sync TEMPER_BENCH_SYNC_SIDES=2
# Two guests of two vCPUs on this host's two cores: one oscap at a time in temper's scans, as
# docs/scan-engines.md advises where vCPUs have no cores of their own (2026-11-29, full scans
# whole 340 and 471 s in goal1-c, split 460 and 560 s in goal1-b). Set TEMPER_SCAN_LANES to override.
export TEMPER_SCAN_LANES=${TEMPER_SCAN_LANES:-1}
echo "beside-oscap: plan $plan on temper-test2 (scan_lanes $TEMPER_SCAN_LANES), oscap on temper-test; logs in $logs"
TEMPER_DOMAIN=temper-test2 TEMPER_SSH_PORT=2223 TEMPER_BENCH_TEMPER_ONLY=1 TEMPER_BENCH_ARGS="--plan $plan $seal" \
  "$bench" --bench >"$logs/plan-side.log" 2>&1 &
plan_pid=$!
TEMPER_DOMAIN=temper-test TEMPER_SSH_PORT=2222 TEMPER_BENCH_OSCAP_ONLY=1 \
  "$bench" --bench >"$logs/oscap-side.log" 2>&1 &
oscap_pid=$!
rc=0
wait $plan_pid || rc=$?
echo "beside-oscap: the plan's side ended (exit $rc)"
wait $oscap_pid || rc=$?
echo "beside-oscap: oscap's side ended (exit $rc)"
grep -h -E '^(temper run|oscap --remediate|started with| *settings)' "$logs/plan-side.log" "$logs/oscap-side.log" || true
exit $rc
