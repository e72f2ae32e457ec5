//! Regression checks in batches (`--regression-every`), end to end on the real VM: a fix that
//! passes its own rescan but breaks another kept fix is found by the batch check, isolated by
//! bisecting the batch's kept states, reflected on and redone; the fix kept after it is replayed.
mod support;

use serde_json::Value;
use support::*;

/// Passes its own rule, but undoes the suid_dumpable fix kept before it.
const SYSTEMMAP_BREAKS_SUID: &str =
    "chmod 0600 /boot/System.map*\nrm -f /etc/sysctl.d/60-temper-suid.conf\nsysctl -q -w fs.suid_dumpable=2\n";
const SYSTEMMAP_FIX: &str = "chmod 0600 /boot/System.map*\n";
const SYSTEMMAP_REVERT: &str = "chmod 0644 /boot/System.map*\n";

fn three_rules() -> String {
    [SUID, SYSTEMMAP, ASLR].join(",")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it (the loop's side is in-process in CI)"]
async fn a_regression_in_a_batch_is_bisected_blamed_and_the_later_fix_replayed() {
    require_vm().await;
    let w = World::new();
    let llm = mock(vec![
        select(SUID, "persist fs.suid_dumpable=0"),
        apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in"),
        select(SYSTEMMAP, "tighten System.map"),
        apply_fix(SYSTEMMAP_BREAKS_SUID, SYSTEMMAP_REVERT, "System.map, and a stray sysctl"),
        select(ASLR, "persist ASLR"),
        apply_fix(ASLR_FIX, ASLR_REVERT, "sysctl drop-in"),
        // The batch of 3 is checked: suid_dumpable regressed. Bisecting blames the System.map fix.
        reflect(
            "the System.map fix also removed the suid_dumpable drop-in",
            Some(r"rm -f /etc/sysctl\.d/60-temper-suid"),
            "touch only System.map",
        ),
        // The ASLR fix is replayed without the LLM; then the Architect picks System.map again.
        select(SYSTEMMAP, "tighten System.map only"),
        apply_fix(SYSTEMMAP_FIX, SYSTEMMAP_REVERT, "System.map only"),
    ])
    .await;
    let out = llm_run(&w, &llm, &three_rules(), &["--regression-every", "3"]).await;
    assert_eq!(out.status.code(), Some(0), "every rule in scope fixed (the rest are out of scope)");
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["statuses"]["fixed"], 3, "{s}");
    assert_eq!(llm.remaining(), 0, "every scripted reply was used");

    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(run.regression_every, Some(3));
    let a = store.attempts(run.id).await.unwrap();
    let seen: Vec<_> = a
        .iter()
        .map(|a| {
            let source = if a.spec.replayed { "llm, replayed" } else { a.spec.source.as_str() };
            assert!(!a.spec.replayed || a.spec.source.as_str() == "llm", "a replay keeps its source");
            (temper_scap::short_rule_id(&a.spec.rule_id), source, a.verdict.map(|v| v.as_str()).unwrap(), a.kept.map(|v| v.as_str()))
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("sysctl_fs_suid_dumpable", "llm", "fixed", Some("confirmed")),
            ("file_permissions_systemmap", "llm", "regression", Some("rolled_back")),
            ("sysctl_kernel_randomize_va_space", "llm", "fixed", Some("rolled_back")),
            // A replay keeps its source, marked replayed.
            ("sysctl_kernel_randomize_va_space", "llm, replayed", "fixed", Some("confirmed")),
            ("file_permissions_systemmap", "llm", "fixed", Some("confirmed")),
        ]
    );
    assert_eq!(a[1].findings.regressions, [SUID], "the culprit is blamed for what it broke");
    assert_eq!(a[1].revert_method.map(|v| v.as_str()), Some("snapshot"));
    assert_eq!(a[3].spec.fix_script, ASLR_FIX, "the replay runs the same script");
    // The Reflector saw the regression, and its ban is in force.
    assert!(store.bans(Recall::all()).await.unwrap().iter().any(|b| b.pattern.contains("60-temper-suid")));
    let events = store.events(run.id, None).await.unwrap();
    let kinds = |k: &str| events.iter().filter(|e| e.kind.as_str() == k).count();
    assert_eq!(kinds("regression_check"), 2, "one failed batch check, one clean one");
    assert_eq!(kinds("regression_found"), 1);
    // One snapshot is left for the run: the checkpoint, taken after the clean check.
    let hv = hypervisor();
    use temper_core::ports::Hypervisor;
    let prefix = temper_core::ralph::checkpoint_prefix(run.id, &run.started_at);
    let left: Vec<String> = hv.snapshot_list().await.unwrap().into_iter().filter(|s| s.starts_with(&prefix)).collect();
    assert_eq!(left, std::slice::from_ref(&run.checkpoint));
    // Independent: every rule passes and the mission app is healthy.
    assert_eq!(rescan_all(&w, [SUID, SYSTEMMAP, ASLR]).await, ["pass"; 3]);
    assert!(healthy().await);
    w.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it (the loop's side is in-process in CI)"]
async fn kill_nine_with_a_pending_batch_resumes_from_the_newest_kept_snapshot() {
    require_vm().await;
    let w = World::new();
    let slow = "touch /root/temper-kill-marker\nsleep 300\n";
    let llm = mock(vec![
        select(SUID, "persist fs.suid_dumpable=0"),
        apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in"),
        select(ASLR, "first try"),
        apply_fix(slow, "rm -f /root/temper-kill-marker\n", "slow"),
        // After the resume the harness picks the interrupted rule again itself: no Architect call.
        apply_fix(ASLR_FIX, ASLR_REVERT, "sysctl drop-in"),
    ])
    .await;
    let url = llm.url();
    let rules = [SUID, ASLR].join(",");
    let mut child = tokio::process::Command::from(w.temper())
        .args(["run", "--agent", "llm", "--llm", &url, "--profile", STANDARD, "--rules", &rules, "--regression-every", "3", "--quiet"])
        .spawn()
        .unwrap();
    kill_during_fix(&w, &mut child, "/root/temper-kill-marker").await;
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(store.pending_fixes(run.id).await.unwrap().len(), 1, "the suid fix awaits its batch check");
    assert_eq!(run.checkpoint, "baseline");

    let out = w.run(&["resume", "--quiet"]).await;
    assert_eq!(out.status.code(), Some(0), "every rule in scope fixed (the rest are out of scope)");
    let run = store.run(run.id).await.unwrap();
    assert_eq!(run.status.as_str(), "finished");
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
    let a = store.attempts(run.id).await.unwrap();
    let seen: Vec<_> =
        a.iter().map(|a| (a.n.get(), a.state.as_str(), a.verdict.map(|v| v.as_str()).unwrap(), a.kept.map(|v| v.as_str()))).collect();
    assert_eq!(
        seen,
        [(1, "done", "fixed", Some("confirmed")), (1, "interrupted", "interrupted", None), (2, "done", "fixed", Some("confirmed"))]
    );
    assert_eq!(store.rule(run.id, SUID).await.unwrap().unwrap().attempts, 1, "the pending fix was kept, not redone");
    // The VM went back to the suid fix's state (its snapshot, or the baseline with it replayed):
    // the killed fix left nothing, the kept one stayed.
    assert_ne!(sh("test -e /root/temper-kill-marker").await.0, Some(0));
    assert_eq!(rescan_all(&w, [SUID, ASLR]).await, ["pass"; 2]);
    assert!(healthy().await);
    w.cleanup().await;
}
