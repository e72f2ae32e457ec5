//! Two nightly-style runs of one job on the real VM, each from the baseline with the reboot proof:
//! the first runs the full loop; the second, given no `--plan`, applies the first's proven plan
//! (the proven plan by default) and fixes every rule with its steps. Prints both runs' times.
mod support;

use std::time::Instant;

use support::*;
use temper_journal::Verdict;
use temper_journal::{FixSource, RuleStatus, RunId, RunSummary};

const RULES: [&str; 3] = ["sysctl_fs_suid_dumpable", "file_permissions_systemmap", "sshd_disable_root_login"];

/// One nightly run: the same arguments each night. Returns the run, its wall time and options.
async fn night(w: &World) -> (RunId, f64, serde_json::Value) {
    let t = Instant::now();
    let out = w.run(&["run", "--agent", "stock", "--profile", STANDARD, "--rules", &RULES.join(","), "--quiet", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "every rule fixed");
    let run = w.store().await.latest_run().await.unwrap().unwrap();
    let summary: RunSummary = serde_json::from_str(run.summary_json.as_deref().unwrap()).unwrap();
    assert_eq!(summary.rebooted, Some(true), "the reboot proof passed: {summary:?}");
    (run.id, t.elapsed().as_secs_f64(), serde_json::from_str(&run.options_json).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "two runs with a cold reboot each, out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn the_second_night_applies_the_first_nights_proven_plan() {
    require_vm().await;
    let mut w = World::new();
    w.with_reboot_proof();
    let (first, first_secs, opts) = night(&w).await;
    assert_eq!(opts["no_plan"], serde_json::json!({"kind": "no_earlier_run"}), "{opts}");
    assert!(opts.get("plan").is_none(), "{opts}");

    let (second, second_secs, opts) = night(&w).await;
    assert_eq!((&opts["plan"]["origin"], &opts["plan"]["from_run"]), (&"last_proven".into(), &first.get().into()), "{opts}");
    let store = w.store().await;
    let attempts = store.attempts(second).await.unwrap();
    let how: Vec<(FixSource, Option<Verdict>)> = attempts.iter().map(|a| (a.spec.source, a.verdict)).collect();
    assert_eq!(how, [(FixSource::Plan, Some(Verdict::Fixed)); 3], "each rule fixed by its plan step, once");
    for r in RULES {
        assert_eq!(
            store.rule(second, &format!("xccdf_org.ssgproject.content_rule_{r}")).await.unwrap().unwrap().status,
            RuleStatus::Fixed,
            "{r}"
        );
    }
    let report = w.run(&["report", &second.to_string(), "--format", "md"]).await;
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(md.contains("## Plan (3 steps, exported from run"), "{md}");
    assert!(md.contains("applied by default"), "{md}");
    println!("nightly: first run {first} (full loop) {first_secs:.1} s; second run {second} (its plan) {second_secs:.1} s");
    assert!(healthy().await);
    w.cleanup().await;
}
