//! The one walk on the real VM (issue 59): with `scan_walk` on, a tree walker that passes at the
//! baseline is in the plan's batch checks, so a step that makes a file world-writable is blamed at
//! its own batch check, not at the final scan. The plan is a real run's export, with one step's
//! script changed by hand (its sha256 with it) and applied `--unsigned`, as an operator could.
mod support;

use std::time::Instant;

use support::*;
use temper_journal::Verdict;
use temper_journal::plan::{Plan, sha256_hex};
use temper_journal::{EventKind, FixSource, RuleStatus};

const ANSSI: &str = "xccdf_org.ssgproject.content_profile_anssi_bp28_high";
/// Failing at the baseline, each with a stock fix.
const RULES: [&str; 3] = ["sysctl_fs_suid_dumpable", "sysctl_kernel_kptr_restrict", "file_permissions_systemmap"];
/// Passing at the baseline; it walks every local file system.
const WALKER: &str = "file_permissions_unauthorized_world_writable";
const LEAK: &str = "/usr/local/share/temper-e2e-world-writable";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long under TCG (two runs, each check with a walk of /), out of CI's hour: `bash tests/vm-long.sh` runs it"]
async fn a_step_that_makes_a_file_world_writable_is_blamed_at_its_batch_check() {
    require_vm().await;
    let mut w = World::new();
    w.env.push(("TEMPER_SCAN_WALK".into(), "true".into()));
    let keep: Vec<String> = RULES.iter().chain([&WALKER]).map(|r| full(r)).collect();
    let t = cut_profile(w.dir.path(), ANSSI, "walk", &keep);
    let extra = ["--profile", ANSSI, "--tailoring-file", t.as_str()];
    w.cleanup().await;
    assert_eq!(rescan_all_with(&w, &keep, &extra).await, ["fail", "fail", "fail", "pass"], "the baseline");
    let rules = RULES.map(full).join(",");
    let args = ["run", "--agent", "stock", "--engine", "oval", "--profile", ANSSI, "--tailoring-file", &t, "--rules", &rules, "--quiet"];

    let t0 = Instant::now();
    let out = w.run(&args).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let first = t0.elapsed().as_secs_f64();
    let dir = w.dir.path().join("plan");
    let out = w.run(&["plan", "export", "latest", "-o", dir.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Step 2 also leaves a world-writable file; its revert removes it.
    let plan = Plan::load(&dir).unwrap();
    assert_eq!(plan.steps.len(), 3, "one step a rule");
    let step = &plan.steps[1];
    let fix = format!("{}\ninstall -m 0666 /dev/null {LEAK}\n", step.fix.text);
    let revert = format!("rm -f {LEAK}\n{}", step.revert.text);
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap();
    for (key, script, text) in [("fix", &step.fix, &fix), ("revert", &step.revert, &revert)] {
        std::fs::write(dir.join(&script.file), text).unwrap();
        // This step's own: another step's script may have the same sha256 (an empty revert).
        json["steps"][1][key]["sha256"] = sha256_hex(text.as_bytes()).into();
    }
    std::fs::write(dir.join("plan.json"), serde_json::to_vec_pretty(&json).unwrap()).unwrap();
    let breaker = step.rule.clone();

    w.cleanup().await;
    let t1 = Instant::now();
    let out = w.run(&[&args[..], &["--plan", dir.to_str().unwrap(), "--unsigned"]].concat()).await;
    let second = t1.elapsed().as_secs_f64();
    assert_eq!(out.status.code(), Some(0), "the step's rule fixed by its stock fix: {}", String::from_utf8_lossy(&out.stderr));
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap().id;
    let events = store.events(run, None).await.unwrap();
    let bisected: Vec<serde_json::Value> = events.iter().filter(|e| e.kind == EventKind::PlanBisected).map(|e| e.data.fields()).collect();
    let at: Vec<_> = bisected.iter().map(|f| (f["step"].clone(), f["verdict"].clone())).collect();
    assert_eq!(at, [(serde_json::json!(2), serde_json::json!("regression"))], "blamed at its batch check: {bisected:?}");
    assert!(bisected[0]["reason"].as_str().unwrap_or("").contains(WALKER), "{bisected:?}");
    assert!(
        !events.iter().any(|e| matches!(e.kind, EventKind::RegressionFound | EventKind::RebootBlamed)),
        "nothing left for a later check to find"
    );
    let attempts = store.attempts(run).await.unwrap();
    let planned = attempts.iter().find(|a| a.spec.rule_id == breaker && a.spec.source == FixSource::Plan);
    let planned = planned.unwrap_or_else(|| panic!("step 2's attempt: {attempts:?}"));
    assert_eq!(planned.verdict, Some(Verdict::Regression), "{planned:?}");
    assert!(!planned.verdict_reason.as_deref().unwrap_or("").contains("final scan"), "{planned:?}");
    for r in RULES {
        assert_eq!(store.rule(run, &full(r)).await.unwrap().unwrap().status, RuleStatus::Fixed, "{r}");
    }
    // oscap, independent of temper and its walk, after the run.
    assert_eq!(rescan_all_with(&w, &keep, &extra).await, ["pass"; 4], "every rule and the walker pass");
    let (code, said) = sh(&format!("test ! -e {LEAK}")).await;
    assert_eq!(code, Some(0), "the step's file is gone: {said}");
    println!("e2e_walk: the run {first:.0} s; its plan with step 2 changed {second:.0} s");
    w.cleanup().await;
}
