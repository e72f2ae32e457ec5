//! A kill -9 in the middle of an attempt, then `temper resume`: the VM is back at the last
//! checkpoint, no attempt is lost or run twice, and the database is consistent. The run starts
//! from a configured baseline (`baseline = "other"`, a snapshot with a marker the usual one lacks),
//! so the resume is seen to go back to the run's own starting point.
mod support;

use support::*;
use temper_core::ports::{Guest, Hypervisor};

const OTHER_MARKER: &str = "/root/temper-other-marker";

/// A snapshot of the baseline plus a marker file, as another baseline; the guest is left at the
/// usual baseline, which has no marker.
async fn other_baseline() -> String {
    let hv = hypervisor();
    let other = format!("temper-e2e-other-{}", std::process::id());
    hv.snapshot_revert("baseline").await.unwrap();
    guest().reconnect(std::time::Duration::from_secs(120)).await.unwrap();
    assert_eq!(sh(&format!("echo other > {OTHER_MARKER}")).await.0, Some(0));
    hv.snapshot_create(&other, "temper e2e: another baseline").await.unwrap();
    hv.snapshot_revert("baseline").await.unwrap();
    assert_ne!(sh(&format!("test -e {OTHER_MARKER}")).await.0, Some(0), "the usual baseline has no marker");
    other
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nine_mid_attempt_then_resume_on_sqlite() {
    kill_nine_mid_attempt_then_resume(World::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it (the loop's side is in-process in CI)"]
async fn kill_nine_mid_attempt_then_resume_on_postgres() {
    kill_nine_mid_attempt_then_resume(World::postgres().await).await;
}

async fn kill_nine_mid_attempt_then_resume(mut w: World) {
    require_vm().await;
    let other = other_baseline().await;
    w.env.push(("TEMPER_BASELINE".into(), other.clone()));
    let slow = "touch /root/temper-kill-marker\nsleep 300\n";
    // Exits 1 without the other baseline's marker: kept only on the run's own baseline.
    let fix = format!("test -e {OTHER_MARKER} || exit 1\n{SUID_FIX}");
    let llm = mock(vec![
        select(SUID, "first try"),
        apply_fix(slow, "rm -f /root/temper-kill-marker\n", "slow"),
        // After the resume the harness goes back to the interrupted rule (no new pick) and the
        // Worker tries again.
        apply_fix(&fix, SUID_REVERT, "sysctl drop-in, on other"),
    ])
    .await;
    let url = llm.url();
    let mut child = tokio::process::Command::from(w.temper())
        .args(["run", "--agent", "llm", "--llm", &url, "--profile", STANDARD, "--rules", SUID, "--quiet"])
        .spawn()
        .unwrap();
    kill_during_fix(&w, &mut child, "/root/temper-kill-marker").await;

    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(run.status.as_str(), "running", "a killed run is left as it was in the database");
    assert_eq!(run.baseline, other, "the run records the snapshot it started from");
    // ...but `temper status` knows its process is gone.
    let status = w.run(&["status", "--json"]).await;
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!((v["status"].as_str(), v["driver_gone"].as_bool()), (Some("interrupted"), Some(true)), "{v}");
    assert_eq!(v["next"], format!("temper resume {}", run.id));

    let out = w.run(&["resume", "--quiet"]).await;
    assert_eq!(out.status.code(), Some(0), "resume finishes the run, its one rule fixed");
    let run = store.run(run.id).await.unwrap();
    assert_eq!(run.status.as_str(), "finished");
    assert_eq!(store.integrity_check().await.unwrap(), "ok");
    let a = store.attempts(run.id).await.unwrap();
    assert_eq!(
        a.iter().map(|a| (a.n.get(), a.state.as_str(), a.verdict.map(|v| v.as_str()))).collect::<Vec<_>>(),
        [(1, "interrupted", Some("interrupted")), (2, "done", Some("fixed")),]
    );
    assert_eq!(store.rule(run.id, SUID).await.unwrap().unwrap().attempts, 1, "the interrupted attempt is not a try; none lost or doubled");
    assert_eq!(a.iter().map(|a| a.spec.checkpoint.as_str()).collect::<Vec<_>>(), [other.as_str(); 2], "each from the other baseline");
    let events = store.events(run.id, None).await.unwrap();
    assert!(events.iter().any(|e| e.kind.as_str() == "attempt_interrupted"));
    assert!(events.iter().any(|e| e.kind.as_str() == "resume"));
    assert_eq!(events.iter().filter(|e| e.kind.as_str() == "lease_taken").count(), 2, "two processes drove it, one after the other");
    // The report tells its reader the run was stopped and taken up again, and what was cut short.
    let report = w.run(&["report", "latest", "--format", "json"]).await;
    let doc: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let stops = doc["interruptions"].as_array().unwrap_or_else(|| panic!("no interruptions in the report: {doc}"));
    assert_eq!(stops.len(), 1, "{stops:?}");
    assert_eq!((stops[0]["phase"].as_str(), stops[0]["cut_short"][0]["rule_id"].as_str()), (Some("fix"), Some(SUID)), "{stops:?}");
    assert_eq!((stops[0]["cut_short"][0]["attempt"].as_i64(), stops[0]["rebuilt"].is_null()), (Some(1), true), "{stops:?}");
    // The VM went back to the checkpoint before continuing: the interrupted fix left nothing,
    // and the run's own baseline is what it went back to.
    assert_ne!(sh("test -e /root/temper-kill-marker").await.0, Some(0));
    assert_eq!(sh(&format!("test -e {OTHER_MARKER}")).await.0, Some(0), "back at the other baseline");
    assert_eq!(rescan(&w, SUID).await, "pass");
    assert!(healthy().await);
    w.cleanup().await;
    hypervisor().snapshot_delete(&other).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG, out of CI's hour: `bash tests/vm-long.sh` runs it (the loop's side is in-process in CI)"]
async fn an_unavailable_llm_pauses_the_run_and_resume_finishes_it() {
    require_vm().await;
    let mut w = World::new();
    w.env.push(("TEMPER_LLM_MAX_RETRIES".into(), "2".into()));
    let down = temper_mockllm::Scripted::status(503);
    let llm = mock(vec![
        select(SUID, "persist it"),
        down.clone(),
        down.clone(),
        down,
        // After the resume: pick again, then a working Worker.
        select(SUID, "persist it"),
        apply_fix(SUID_FIX, SUID_REVERT, "sysctl drop-in"),
    ])
    .await;
    let out = llm_run(&w, &llm, SUID, &[]).await;
    assert_eq!(out.status.code(), Some(75), "paused, not failed");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    assert_eq!(run.status.as_str(), "paused");
    assert!(store.attempts(run.id).await.unwrap().is_empty(), "retries never count as attempts");
    let worker = store.turns(run.id).await.unwrap().into_iter().find(|t| t.role.as_str() == "worker").unwrap();
    assert_eq!(worker.retries, 2);

    let out = w.run(&["resume", "--quiet"]).await;
    assert_eq!(out.status.code(), Some(0), "the one rule in scope fixed");
    let run = store.run(run.id).await.unwrap();
    assert_eq!(run.status.as_str(), "finished");
    let a = store.attempts(run.id).await.unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].verdict.map(|v| v.as_str()), Some("fixed"));
    w.cleanup().await;
}
