"""Reads `cargo test --no-run --message-format=json` on stdin; prints one line per test or bench
binary: package, target, executable, package directory and kind (`test` or `bench`),
tab-separated, in build order. Benches are built (`--all-targets`: so they compile, and are
linted in CI's build); tests/run.sh runs the ones that need no VM (`kind=bench suite ...`)."""
import json
import os
import sys

for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    kind = "bench" if "bench" in m["target"]["kind"] else "test"
    if kind == "test" and not m["profile"]["test"]:
        continue
    pid = m["package_id"]  # path+file:///dir#0.1.0, or path+file:///dir#name@0.1.0
    dir = os.path.dirname(m["manifest_path"])
    tail = pid.rsplit("#", 1)[-1]
    package = tail.split("@")[0] if "@" in tail else os.path.basename(dir)
    print("\t".join([package, m["target"]["name"], m["executable"], dir, kind]))
