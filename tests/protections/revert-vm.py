#!/usr/bin/env python3
# Issue 56's check of the revert on another target, on the VM (`bash vm/up.sh`): each protection
# removed by hand, one at a time, and `e2e_hostile`'s a_plans_revert_on_another_guest_leaves_it_as_it_was
# run against it (V1, V2 must fail; V0, nothing removed, must pass). The source is put back
# after each; each run's output goes to target/protections/NAME.log. From the repository root:
#   python3 tests/protections/revert-vm.py [V0 V1 V2]
import os, subprocess, sys, time, shutil
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BAK = os.path.join(ROOT, 'target', 'protection.bak')
LOGS = os.path.join(ROOT, 'target', 'protections')
os.makedirs(LOGS, exist_ok=True)
os.chdir(ROOT)
T="a_plans_revert_on_another_guest_leaves_it_as_it_was"
X=[
 ("V1 the derived revert sets the values recorded on the source target (no record on the target)", "crates/temper-derive/src/script/mod.rs",
  "restore: restore::file(&p, rec), step }",
  "restore: format!(\"chown -h {}:{} -- {p}\\nchmod {:04o} -- {p}\\n\", x.was.uid, x.was.gid, x.was.mode), step }"),
 ("V2 the fix does not compare before it sets (temper_meta a no-op)", "crates/temper-derive/src/script/guard.rs",
  'if [ "$now" != "$2" ] && [ "$now" != "$3" ]; then temper_stop "$1 is $now now, not $2 as the scan found it"; fi',
  ': "$now"'),
 ("V0 control: nothing removed", None, None, None),
]
only=sys.argv[1:]
for name,f,old,new in X:
    if only and name.split()[0] not in only: continue
    if f:
        src=open(f).read(); assert old in src,(name,old)
        shutil.copy(f,BAK); open(f,'w').write(src.replace(old,new))
    t=time.time()
    b=subprocess.run("nice cargo test -p temper --test e2e_hostile --no-run 2>&1 | tail -3",shell=True,capture_output=True,text=True,cwd=ROOT)
    built=time.time()-t; t=time.time()
    r=subprocess.run(f"cargo test -p temper --test e2e_hostile -- --ignored --exact {T} 2>&1",shell=True,capture_output=True,text=True,cwd=ROOT)
    ran=time.time()-t
    if f: shutil.copy(BAK,f)
    out=r.stdout
    open(os.path.join(LOGS, name.split()[0] + ".log"), "w").write(out)
    res="PASSED" if "test result: ok. 1 passed" in out else ("FAILED" if "1 failed" in out else "BUILD/OTHER")
    why=[l for l in out.splitlines() if "panicked at" in l or "assertion" in l or l.startswith("  left") or l.startswith(" right")][:6]
    print(f"{name}: {res} (build {built:.0f} s, test {ran:.1f} s)", flush=True)
    for l in why: print("   ", l[:400], flush=True)
    if res=="BUILD/OTHER": print(b.stdout[-1500:], out[-2500:], flush=True)
