//! The stock agent (no LLM) on the Debian 12 `standard` profile fixes real failing rules; each
//! fix is verified by an independent rescan, and the VM stays healthy.
mod support;

use support::*;

const RULES: [&str; 4] =
    ["sysctl_fs_suid_dumpable", "sysctl_kernel_randomize_va_space", "file_permissions_systemmap", "sshd_disable_root_login"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_agent_fixes_real_rules_on_the_standard_profile() {
    require_vm().await;
    let w = World::new();
    let rules = RULES.join(",");
    let out = w.run(&["run", "--agent", "stock", "--profile", STANDARD, "--rules", &rules, "--quiet", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "every rule in scope fixed (the rest are out of scope)");
    let store = w.store().await;
    let run = store.latest_run().await.unwrap().unwrap();
    let fixed: Vec<String> =
        store.rules(run.id).await.unwrap().into_iter().filter(|r| r.status.as_str() == "fixed").map(|r| r.rule_id).collect();
    let short: Vec<&str> = fixed.iter().map(|r| temper_scap::short_rule_id(r)).collect();
    assert_eq!(short.iter().copied().collect::<std::collections::BTreeSet<_>>(), RULES.into(), "every rule fixed");
    let attempts = store.attempts(run.id).await.unwrap();
    let kept: Vec<&str> = attempts.iter().map(|a| a.verdict.map_or("-", |v| v.as_str())).collect();
    assert_eq!(kept, ["fixed"; 4], "one attempt per rule, each kept");
    for a in &attempts {
        // The datastream's own fix first; where it fails, the one derived from the check.
        let first = attempts.iter().find(|b| b.rule_id == a.rule_id).is_some_and(|b| b.id == a.id);
        assert_eq!(a.source.as_str(), if first { "stock" } else { "derived" }, "{}", a.rule_id);
        assert!(!a.fix_script.trim().is_empty(), "a fix was submitted");
        // Each rule failed before its fix: what the scanner found is recorded, for the rule.
        let before = a.evidence_before.as_ref().unwrap_or_else(|| panic!("{}: no evidence before the fix", a.rule_id));
        assert_eq!(before.rule, a.rule_id);
    }
    // After the first fix, the evidence before each fix came from the previous fix's rescan.
    let looked: Vec<bool> = store
        .events(run.id, 0)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind.as_str() == "attempt")
        .map(|e| e.json().contains(r#""evidence_looked_ahead":true"#))
        .collect();
    assert_eq!(looked.len(), attempts.len());
    assert!(!looked[0] && looked[1..].iter().any(|l| *l), "looked ahead: {looked:?}");
    // Every rule temper calls fixed passes an independent rescan.
    assert_eq!(rescan_all(&w, &fixed).await, vec!["pass"; fixed.len()], "{fixed:?}");
    assert!(healthy().await);
    // The rules it was not asked to touch are left as they were, out of the run's scope.
    let r = store.rule(run.id, "xccdf_org.ssgproject.content_rule_sshd_set_keepalive").await.unwrap().unwrap();
    assert_eq!(r.status.as_str(), "out_of_scope");
    assert_eq!(r.attempts, 0);
    // The morning-after report of a real stock run: every fix, and a replay script in fix order.
    let md = report(&w, "md", "stock-run.md").await;
    let html = report(&w, "html", "stock-run.html").await;
    for r in &fixed {
        let short = r.trim_start_matches("xccdf_org.ssgproject.content_rule_");
        assert!(md.contains(short) && html.contains(short), "{short} in the report");
    }
    assert!(md.contains("#!/usr/bin/env bash") || md.contains("#!/bin/bash"), "replay script in the report");
    let ckl = report(&w, "ckl", "stock-run.ckl").await;
    assert!(ckl.contains("NotAFinding"), "fixed rules are NotAFinding in the checklist");
    w.cleanup().await;
}

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
    let events = store.events(run.id, 0).await.unwrap();
    let reopened: Vec<_> =
        events.iter().filter(|e| e.kind.as_str() == "rule_applicable").map(|e| e.rule_id.clone().unwrap_or_default()).collect();
    assert!(reopened.contains(&LOGROTATE.to_string()), "reopened: {reopened:?}");
    // The rules not applicable so far ride in each rescan: rsyslog's own found it, so one final scan.
    let finals = events.iter().filter(|e| e.kind.as_str() == "scan" && e.json().contains(r#""kind":"final""#)).count();
    assert_eq!(finals, 1, "reopened before any final scan");
    let order: Vec<String> = store.attempts(run.id).await.unwrap().into_iter().map(|a| a.rule_id).collect();
    assert_eq!(order.last().map(String::as_str), Some(LOGROTATE), "worked on after rsyslog's fix: {order:?}");
    assert_eq!(rescan(&w, LOGROTATE).await, "pass", "an independent rescan agrees");
    assert!(healthy().await);
    w.cleanup().await;
}
