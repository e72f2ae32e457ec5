//! The stock agent (no LLM) on the Debian 12 `standard` profile: a rule that another fix makes
//! applicable is reopened and fixed in the same run, verified by an independent rescan, and the VM
//! stays healthy. Its run over four rules, with its reports, is `e2e_plan`'s, whose exported plan
//! then replays it.
mod support;

use support::*;

/// Not applicable at baseline, applicable (and failing) once rsyslog is installed: the logrotate
/// package comes with it.
const LOGROTATE: &str = "xccdf_org.ssgproject.content_rule_ensure_logrotate_activated";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_another_fix_makes_applicable_is_reopened_and_fixed_in_the_same_run() {
    require_vm().await;
    let w = World::new();
    let out = w
        .run(&[
            "run",
            "--agent",
            "stock",
            "--profile",
            STANDARD,
            "--rules",
            "package_rsyslog_installed,ensure_logrotate_activated",
            "--quiet",
            "--json",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "every rule in scope fixed (the rest are out of scope)");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let r = store.rule(run.id, LOGROTATE).await.unwrap().unwrap();
    assert_eq!(r.initial_result.as_str(), "notapplicable", "the first scan found it not applicable");
    assert_eq!(r.status.as_str(), "fixed", "{r:?}");
    assert_eq!(r.final_result.map(|v| v.as_str()), Some("pass"));
    let events = store.events(run.id, None).await.unwrap();
    let reopened: Vec<_> =
        events.iter().filter(|e| e.kind.as_str() == "rule_applicable").map(|e| e.rule_id.clone().unwrap_or_default()).collect();
    assert!(reopened.contains(&LOGROTATE.to_string()), "reopened: {reopened:?}");
    // The rules not applicable so far ride in each rescan: rsyslog's own found it, so one final scan.
    let finals = events.iter().filter(|e| e.kind.as_str() == "scan" && e.json().contains(r#""kind":"final""#)).count();
    assert_eq!(finals, 1, "reopened before any final scan");
    let order: Vec<String> = store.attempts(run.id).await.unwrap().into_iter().map(|a| a.spec.rule_id).collect();
    assert_eq!(order.last().map(String::as_str), Some(LOGROTATE), "worked on after rsyslog's fix: {order:?}");
    assert_eq!(rescan(&w, LOGROTATE).await, "pass", "an independent rescan agrees");
    assert!(healthy().await);
    w.cleanup().await;
}
