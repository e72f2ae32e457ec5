//! The fault matrix on the real VM (docs/reliability.md): each fault is injected for real, at a
//! chosen step of a real run, and the run must finish or stop resumable with a clear reason, lose
//! no attempt and apply none twice, keep its store consistent, and leave the guest healthy with
//! SSH and sudo working. Each test prints its row (`fault-row: ...`) with the time the run took to
//! recover after the fault.
//!
//! Not in CI (about 20 minutes under TCG): `bash tests/faults.sh`, which starts the PostgreSQL
//! cluster of its own that the restart row needs.
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::*;
use temper_journal::{AttemptState, Phase};
use temper_mockllm::{MockLlm, Scripted};

const MARKER: &str = "/root/temper-fault-marker";
/// A finished run's exit code here: its one rule in scope fixed (the rest are out of scope).
const ENDED: Option<i32> = Some(0);

/// A fix that marks the guest, waits `secs` (the window for the fault), then fixes SUID.
fn slow_fix(secs: u32) -> String {
    format!("touch {MARKER}\nsleep {secs}\nrm -f {MARKER}\n{SUID_FIX}")
}

fn virsh(args: &[&str]) -> String {
    let uri = std::env::var("TEMPER_LIBVIRT_URI").unwrap_or_else(|_| "qemu:///system".into());
    let dom = std::env::var("TEMPER_DOMAIN").unwrap_or_else(|_| "temper-test".into());
    let mut c = Command::new("virsh");
    c.args(["-q", "-c", &uri]);
    for a in args {
        c.arg(if *a == "DOM" { dom.as_str() } else { a });
    }
    let out = c.output().expect("virsh");
    assert!(out.status.success(), "virsh {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `temper run` on SUID with the scripted LLM, started in the background.
fn start(w: &World, llm: &MockLlm) -> tokio::process::Child {
    let url = llm.url();
    let args = ["run", "--agent", "llm", "--llm", &url, "--model", "scripted", "--profile", STANDARD, "--rules", SUID, "--quiet"];
    tokio::process::Command::from(w.temper()).args(args).spawn().unwrap()
}

/// Waits (at most 15 minutes) for the run to end; its exit code.
async fn finish(child: &mut tokio::process::Child) -> Option<i32> {
    let st = tokio::time::timeout(Duration::from_secs(900), child.wait()).await.expect("the run ended within 15 minutes");
    st.unwrap().code()
}

/// What every row checks once the run is over: the store's integrity, every attempt ended once
/// with a verdict, SUID fixed by exactly one kept attempt, the fault's leftovers gone, and the
/// guest healthy with a fresh SSH login and `sudo -n true` working.
async fn survived(w: &World) -> String {
    let store = w.store().await;
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(run.status.as_str(), "finished", "the run finished");
    let a = store.attempts(run.id).await.unwrap();
    let ns: Vec<i64> = a.iter().map(|a| a.n.get()).collect();
    assert_eq!(ns, (1..=a.len() as i64).collect::<Vec<_>>(), "attempts numbered once each: none lost or doubled");
    assert!(a.iter().all(|a| matches!(a.state, AttemptState::Done | AttemptState::Interrupted) && a.verdict.is_some()), "{a:?}");
    let kept: Vec<_> = a.iter().filter(|a| a.verdict.map(|v| v.as_str()) == Some("fixed")).collect();
    assert_eq!(kept.len(), 1, "one kept fix, applied once: {a:?}");
    assert_eq!(rescan(w, SUID).await, "pass");
    assert_ne!(sh(&format!("test -e {MARKER}")).await.0, Some(0), "the interrupted fix left nothing: the guest is at a checkpoint");
    assert!(healthy().await, "the mission app is healthy");
    assert_eq!(sh("sudo -n true && echo sudo-ok").await.1.trim(), "sudo-ok");
    let verdicts: Vec<&str> = a.iter().map(|a| a.verdict.map(|v| v.as_str()).unwrap_or("-")).collect();
    format!("attempts {}", verdicts.join(", "))
}

/// When the first attempt to end after `fault` ended (its verdict given, the guest back at a
/// checkpoint when it was reverted), as seconds after the fault; none when none ended after it.
async fn recovered(w: &World, fault: chrono::DateTime<chrono::Utc>) -> Option<f64> {
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let ended = store.attempts(run.id).await.unwrap().into_iter().filter_map(|a| a.ended_at);
    let after = ended.map(|e| chrono::DateTime::parse_from_rfc3339(&e).unwrap().with_timezone(&chrono::Utc) - fault);
    after.filter(|d| d.num_milliseconds() >= 0).min().map(|d| d.num_milliseconds() as f64 / 1000.0)
}

/// Waits until the slow fix runs in the guest (it made MARKER), at most 10 minutes.
async fn wait_for_fix(w: &World, child: &mut tokio::process::Child) {
    for _ in 0..1200 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Ok(Some(st)) = child.try_wait() {
            panic!("temper exited before the fault: {st}");
        }
        if !w.has_db() {
            continue;
        }
        let store = w.store().await;
        let Some(run) = store.latest_run().await.unwrap() else { continue };
        if store.attempts(run.id).await.unwrap().iter().any(|a| a.state == AttemptState::Started)
            && sh(&format!("test -e {MARKER}")).await.0 == Some(0)
        {
            return;
        }
    }
    panic!("the slow fix never started");
}

/// `temper run` with `llm`, started and waited on until its slow fix runs in the guest: the
/// child, and the moment the fault strikes.
async fn at_the_fix(w: &World, llm: &MockLlm) -> (tokio::process::Child, (Instant, chrono::DateTime<chrono::Utc>)) {
    let mut child = start(w, llm);
    wait_for_fix(w, &mut child).await;
    (child, now())
}

/// The run ends after the fault: on its own, or stopped resumable (exit 1) and then finished by
/// `temper resume`. Says which.
async fn ends(w: &World, child: &mut tokio::process::Child) -> String {
    let code = finish(child).await;
    if code == ENDED {
        return "finished on its own".into();
    }
    assert_eq!(code, Some(1), "stopped resumable");
    let out = w.run(&["resume", "--quiet"]).await;
    assert_eq!(out.status.code(), ENDED, "the resumed run finishes");
    format!("stopped with {code:?}, then `temper resume`")
}

/// After temper was killed (kill -9): `temper resume` finishes the run, every check passes, and
/// the row is printed.
async fn resumed_after_kill(w: &World, fault: &str, t: (Instant, chrono::DateTime<chrono::Utc>)) {
    let out = w.run(&["resume", "--quiet"]).await;
    assert_eq!(out.status.code(), ENDED, "the resumed run finishes");
    let checked = survived(w).await;
    row(w, fault, "kill -9, then `temper resume`", &checked, t).await;
}

/// The row: the fault, how it was injected, what was checked, when its attempt ended and when
/// the run did, both after the fault.
async fn row(w: &World, fault: &str, how: &str, checked: &str, at: (Instant, chrono::DateTime<chrono::Utc>)) {
    let attempt = recovered(w, at.1).await.map_or("no attempt after it".into(), |s| format!("attempt ended {s:.0} s"));
    println!("fault-row: {fault} | {how} | {checked} | {attempt}, run ended {:.0} s", at.0.elapsed().as_secs_f64());
}

fn now() -> (Instant, chrono::DateTime<chrono::Utc>) {
    (Instant::now(), chrono::Utc::now())
}

/// The LLM's replies: pick SUID, the slow fix; after a failed attempt, a lesson and the plain fix.
fn after_a_failure(slow: &str) -> Vec<Scripted> {
    vec![
        select(SUID, "persist it"),
        apply_fix(slow, &format!("rm -f {MARKER}\n{SUID_REVERT}"), "slow"),
        reflect("the fix was cut off", None, "retry the drop-in"),
        apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in"),
    ]
}

/// The LLM's replies when the fault may stop the run: pick SUID, the slow fix; a run resumed after
/// the stop goes back to the interrupted rule with no new pick and no lesson, for the plain fix.
fn stop_and_resume(slow: &str) -> Vec<Scripted> {
    vec![
        select(SUID, "persist it"),
        apply_fix(slow, &format!("rm -f {MARKER}\n{SUID_REVERT}"), "slow"),
        apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn guest_crash_mid_fix() {
    require_vm().await;
    let w = World::new();
    let llm = mock(after_a_failure(&slow_fix(300))).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    virsh(&["destroy", "DOM"]);
    assert_eq!(finish(&mut child).await, ENDED);
    let checked = survived(&w).await;
    row(&w, "guest crash mid-fix", "virsh destroy DOM", &checked, t).await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn guest_hang_mid_fix() {
    require_vm().await;
    let w = World::new();
    let llm = mock(after_a_failure(&slow_fix(300))).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    virsh(&["suspend", "DOM"]);
    // Longer than the SSH timeouts (keepalive 3 x 10 s, a fresh login's 120 s).
    tokio::time::sleep(Duration::from_secs(150)).await;
    virsh(&["resume", "DOM"]);
    assert_eq!(finish(&mut child).await, ENDED);
    let checked = survived(&w).await;
    row(&w, "guest hang", "virsh suspend DOM; 150 s; virsh resume DOM", &checked, t).await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn ssh_drop_mid_fix_is_not_a_lockout() {
    require_vm().await;
    let w = World::new();
    // The fix outlasts the cut: it finishes in the guest whether or not its session survives.
    let llm = mock(after_a_failure(&slow_fix(90))).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    // The NIC is qemu's own (`-netdev user`, see vm/domain.sh), which `virsh domif-setlink` cannot
    // name; this is the same QEMU `set_link` that domif-setlink sends.
    virsh(&["qemu-monitor-command", "DOM", "--hmp", "set_link slirp0 off"]);
    tokio::time::sleep(Duration::from_secs(60)).await;
    virsh(&["qemu-monitor-command", "DOM", "--hmp", "set_link slirp0 on"]);
    assert_eq!(finish(&mut child).await, ENDED);
    let checked = survived(&w).await;
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let a = store.attempts(run.id).await.unwrap();
    assert!(a.iter().all(|a| a.verdict.map(|v| v.as_str()) != Some("lockout")), "an unreachable guest is not a lockout: {a:?}");
    row(&w, "SSH drop mid-fix", "set_link slirp0 off; 60 s; on", &checked, t).await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn guest_disk_full_before_a_fix() {
    require_vm().await;
    let w = World::new();
    // The Architect's answer waits 40 s: the disk is filled while the run is at its pick. A full
    // disk either stops the run at its next scan (resumed, it goes back to the interrupted rule)
    // or fails the fix, which is reverted, reflected on and tried again: each role answers from
    // its own replies, whichever path the run takes.
    let fix = || apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in");
    let lesson = || reflect("the disk was full", None, "free space first");
    let again = || decide("CONTINUE", "try the drop-in again");
    let pick = || select(SUID, "persist it");
    let script = vec![Scripted::hang(40.0, Some(pick())), pick(), fix(), fix(), fix(), lesson(), lesson(), again(), again()];
    let llm = MockLlm::start_by_tool(script).await.unwrap();
    let mut child = start(&w, &llm);
    let deadline = Instant::now() + Duration::from_secs(600);
    while llm.requests().is_empty() {
        assert!(Instant::now() < deadline, "the run never reached its pick");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let t = now();
    let fill = format!(
        "touch {MARKER}; fallocate -l $(( $(df --output=avail -B1 / | tail -1) - 1048576 )) /var/tmp/temper-fill; \
         dd if=/dev/zero of=/var/tmp/temper-fill2 bs=64k status=none; sync; df --output=avail / | tail -1"
    );
    let (_, avail) = sh(&fill).await;
    assert_eq!(avail.trim(), "0", "the guest's disk is full");
    // A scan that cannot write its results stops the run (exit 1, resumable); resume restores
    // the checkpoint, which has the disk as it was.
    let resumed = ends(&w, &mut child).await;
    let checked = survived(&w).await;
    assert_ne!(sh("test -e /var/tmp/temper-fill").await.0, Some(0), "the checkpoint restored the disk");
    row(&w, "guest disk full before a fix", "fallocate, then dd as root until ENOSPC", &format!("{resumed}; {checked}"), t).await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn postgres_restart_mid_run() {
    require_vm().await;
    let dir = std::env::var("TEMPER_FAULT_PG_DIR").expect("TEMPER_FAULT_PG_DIR: the cluster tests/faults.sh starts");
    let w = World::postgres().await;
    let llm = mock(stop_and_resume(&slow_fix(30))).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    let bin = std::fs::read_dir("/usr/lib/postgresql").unwrap().map(|e| e.unwrap().path()).max().unwrap().join("bin/pg_ctl");
    // The restarted server must not hold the test's pipes: its output goes to a log of its own.
    let log = format!("{dir}/restart.log");
    let st = Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .arg(bin)
        .args(["restart", "-D", &dir, "-m", "fast", "-w", "-l", &log])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "pg_ctl restart: see {log}");
    let resumed = ends(&w, &mut child).await;
    let checked = survived(&w).await;
    row(&w, "PostgreSQL restart mid-run", "pg_ctl restart -m fast", &format!("{resumed}; {checked}"), t).await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn host_disk_full_under_the_sqlite_store() {
    require_vm().await;
    let mnt = tempfile::tempdir().unwrap();
    let st = Command::new("mount").args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"]).arg(mnt.path()).status().unwrap();
    assert!(st.success(), "mount a 4 MiB tmpfs");
    let mnt = mnt.path().to_path_buf();
    let w = World::sqlite_at(mnt.join("temper.db").to_str().unwrap());
    let llm = mock(stop_and_resume(&slow_fix(30))).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    let fill = mnt.join("fill");
    let _ = Command::new("dd").arg("if=/dev/zero").arg(format!("of={}", fill.display())).args(["bs=64k", "status=none"]).status();
    let code = finish(&mut child).await;
    std::fs::remove_file(&fill).unwrap();
    let resumed = if code == ENDED { "finished on its own".to_string() } else { format!("stopped with {code:?}, then `temper resume`") };
    if code != ENDED {
        assert_eq!(code, Some(1), "stopped resumable");
        let out = w.run(&["resume", "--quiet"]).await;
        assert_eq!(out.status.code(), ENDED, "the resumed run finishes");
    }
    let checked = survived(&w).await;
    row(&w, "host disk full under the SQLite store", "a 4 MiB tmpfs, filled with dd mid-fix", &format!("{resumed}; {checked}"), t).await;
    w.cleanup().await;
    let _ = Command::new("umount").arg(&mnt).status();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn a_worker_cut_off_from_postgres_stops_and_another_takes_over() {
    require_vm().await;
    let w = World::postgres().await;
    let (relayed, wire) = temper_store::testing::relay(w.db()).await.unwrap();
    // After the takeover the harness goes back to the interrupted rule: no new pick.
    let llm = mock(stop_and_resume(&slow_fix(300))).await;
    let url = llm.url();
    let args = ["run", "--agent", "llm", "--llm", &url, "--model", "scripted", "--profile", STANDARD, "--rules", SUID, "--quiet"];
    let mut a = tokio::process::Command::from(w.temper());
    let mut a = a.env("TEMPER_DB", &relayed).args(args).stderr(std::process::Stdio::piped()).spawn().unwrap();
    wait_for_fix(&w, &mut a).await;
    let t = now();
    wire.abort();
    // The cut-off worker's lease runs out (30 s); then another worker takes the run over.
    tokio::time::sleep(temper_core::lease::LEASE_FOR + Duration::from_secs(2)).await;
    let b = w.run(&["resume", "--quiet"]).await;
    assert_eq!(b.status.code(), ENDED, "the other worker finishes the run");
    let a = tokio::time::timeout(Duration::from_secs(120), a.wait_with_output()).await.expect("the cut-off worker stops").unwrap();
    let why = String::from_utf8_lossy(&a.stderr);
    assert!(!a.status.success(), "the cut-off worker fails: {why}");
    let checked = survived(&w).await;
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let taken: Vec<_> = store.events(run.id, None).await.unwrap().into_iter().filter(|e| e.kind.as_str() == "lease_taken").collect();
    assert_eq!(taken.len(), 2, "two workers drove the run, one after the other");
    let last = why.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let how = "its PostgreSQL connection through a TCP relay that the test shuts; `temper resume` after the lease";
    row(&w, "a worker cut off from PostgreSQL", how, &format!("{checked}; the cut-off worker exited {:?}: {last}", a.status.code()), t)
        .await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn a_second_temper_on_the_same_vm_is_refused() {
    require_vm().await;
    let w = World::new();
    let slow = slow_fix(60);
    let llm = mock(vec![select(SUID, "persist it"), apply_fix(&slow, &format!("rm -f {MARKER}\n{SUID_REVERT}"), "slow")]).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    let other = World::new();
    let out = other.run(&["run", "--agent", "stock", "--profile", STANDARD, "--rules", SUID, "--quiet"]).await;
    let why = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "refused: {why}");
    let first = w.store().await.latest_run().await.unwrap().unwrap().id;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let holder = format!("run {first} of store `sqlite {}`", w.db());
    assert!(why.contains(&holder) && why.contains(&format!("process {}:", host.trim())), "names the run and host: {why}");
    assert!(other.store().await.latest_run().await.unwrap().is_none(), "the refused run recorded nothing");
    assert_eq!(sh(&format!("test -e {MARKER}")).await.0, Some(0), "the VM was not touched: the first run's fix still runs");
    let refused = t.0.elapsed().as_secs_f64();
    assert_eq!(finish(&mut child).await, ENDED);
    let checked = survived(&w).await;
    let how = "a second `temper run` from another store while the first run's fix runs";
    let what = format!("refused in {refused:.1} s naming {holder}; the first run: {checked}");
    row(&w, "a second temper on the same VM", how, &what, t).await;
    w.cleanup().await;
}

/// Waits until the latest run's stored phase is `phase` (at most 10 minutes), then kills temper.
async fn kill_in_phase(w: &World, child: &mut tokio::process::Child, phase: Phase) {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        assert!(Instant::now() < deadline, "the run never reached {phase}");
        if let Ok(Some(st)) = child.try_wait() {
            panic!("temper exited before {phase}: {st}");
        }
        if w.has_db() {
            let store = w.store().await;
            if let Some(run) = store.latest_run().await.unwrap()
                && run.phase == phase
            {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

/// kill -9 while the run is at `phase`, then `temper resume`.
async fn kill_nine_at(phase: Phase) {
    require_vm().await;
    let w = World::new();
    let llm = mock(vec![
        select(SUID, "persist it"),
        apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in"),
        apply_fix(SUID_FIX, SUID_REVERT, "again"),
    ])
    .await;
    let mut child = start(&w, &llm);
    kill_in_phase(&w, &mut child, phase).await;
    resumed_after_kill(&w, &format!("temper killed in {phase}"), now()).await;
    w.cleanup().await;
}

/// kill -9 in the final scan, then every snapshot of the run deleted (as defining the domain
/// again does), then `temper resume`: the kept fix is replayed on the baseline, the checkpoint
/// taken again, and the run ends with the rule fixed by its one kept attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn kill_nine_then_checkpoints_lost_then_resume() {
    require_vm().await;
    let w = World::new();
    let llm = mock(vec![select(SUID, "persist it"), apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in")]).await;
    let mut child = start(&w, &llm);
    kill_in_phase(&w, &mut child, Phase::Finish).await;
    let t = now();
    let run = w.store().await.latest_run().await.unwrap().unwrap();
    let prefix = temper_core::ralph::checkpoint_prefix(run.id, &run.started_at);
    let lost: Vec<String> =
        virsh(&["snapshot-list", "DOM", "--name"]).lines().filter(|n| n.starts_with(&prefix)).map(String::from).collect();
    assert!(!lost.is_empty(), "the run had a checkpoint to lose");
    for name in &lost {
        virsh(&["snapshot-delete", "DOM", name]);
    }
    let out = w.run(&["resume", "--quiet"]).await;
    assert_eq!(out.status.code(), ENDED, "the resumed run finishes");
    let checked = survived(&w).await;
    let events = w.store().await.events(run.id, None).await.unwrap();
    let rebuilt = events.iter().find_map(|e| match &e.data {
        temper_journal::EventData::CheckpointLost { missing, from, replayed } => {
            Some(format!("{missing:?} lost, rebuilt from {from} by replaying {replayed}"))
        }
        _ => None,
    });
    let rebuilt = rebuilt.expect("a checkpoint_lost event");
    let how = format!("kill -9 in the final scan, `virsh snapshot-delete` of the run's {} snapshots, then `temper resume`", lost.len());
    row(&w, "checkpoints lost under a killed run", &how, &format!("{checked}; {rebuilt}"), t).await;
    w.cleanup().await;
}

/// kill -9 while the fix runs in the guest (it is slow: the kill cannot miss it), then `temper
/// resume`: the attempt is closed `interrupted`, the guest goes back to its checkpoint, and the
/// rule is fixed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn kill_nine_mid_fix_then_resume() {
    require_vm().await;
    let w = World::new();
    let llm = mock(stop_and_resume(&slow_fix(120))).await;
    let (mut child, t) = at_the_fix(&w, &llm).await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    resumed_after_kill(&w, "temper killed in fix", t).await;
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn kill_nine_in_evaluate_then_resume() {
    kill_nine_at(Phase::Evaluate).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the fault matrix: run by `bash tests/faults.sh` (about 20 min under TCG), not in CI"]
async fn kill_nine_in_the_final_scan_then_resume() {
    kill_nine_at(Phase::Finish).await;
}
