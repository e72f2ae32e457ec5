//! Waivers in the loop: an active one keeps its rule from being worked on and the checklist
//! carries its justification; the same waiver expired no longer applies and the report flags
//! it. In-process: see `sim/`.
mod sim;

use std::time::Instant;

use chrono::{Days, NaiveDate};
use sim::*;
use temper_journal::RuleStatus;
use temper_journal::RunId;
use temper_journal::controls::RunControls;
use temper_journal::waiver::Waiver;
use temper_report::{Format, load, render};

const WAIVED: &str = "sshd_set_keepalive";
const OTHER: &str = "file_permissions_systemmap";

fn waiver(expires: NaiveDate) -> Waiver {
    Waiver {
        rule: WAIVED.into(),
        reason: "kiosk sessions <must> stay open & idle".into(),
        approved_by: "ISSO J. Doe".into(),
        expires,
        source: "site-waivers.toml".into(),
        harness: false,
    }
}

/// Runs both rules with `w` as the run's only waiver; returns the sim and the run.
async fn run_with(name: &str, w: Waiver) -> (Sim, RunId) {
    let mut sim = Sim::new(name).await;
    sim.settings.rules = vec![WAIVED.into(), OTHER.into()];
    let today = chrono::Local::now().date_naive();
    sim.skill = sim.skill.clone().with_waivers(vec![w.clone()], today);
    let controls = RunControls { tailoring: None, waivers: vec![w] };
    let run = sim.new_run_with("stock", &serde_json::json!({ "controls": controls }).to_string()).await;
    sim.stock(run).await.unwrap();
    (sim, run)
}

#[tokio::test]
async fn an_active_waiver_keeps_its_rule_from_being_worked_on_and_the_ckl_carries_it() {
    let t = Instant::now();
    let today = chrono::Local::now().date_naive();
    let (sim, run) = run_with("waiver-active", waiver(today)).await;
    let rule = sim.rule(run, WAIVED).await;
    assert_eq!(rule.status, RuleStatus::Waived);
    assert!(rule.reason.as_deref().unwrap_or("").contains("approved by ISSO J. Doe"), "{:?}", rule.reason);
    assert!(sim.attempts(run, WAIVED).await.is_empty(), "a waived rule is not worked on");
    assert_eq!(sim.rule(run, OTHER).await.status, RuleStatus::Fixed, "the other rule is");
    let data = load(sim.store.as_ref(), run).await.unwrap();
    let ckl = render(&data, Some(content()), Format::Ckl).unwrap();
    let vuln = ckl.split("<VULN>").find(|v| v.contains(&format!("<ATTRIBUTE_DATA>{WAIVED}</ATTRIBUTE_DATA>"))).expect("the rule's VULN");
    assert!(vuln.contains("<STATUS>Open</STATUS>"), "the status stays what the scan found");
    let comments = vuln.split("<COMMENTS>").nth(1).unwrap().split("</COMMENTS>").next().unwrap();
    assert!(comments.contains("waived") && comments.contains("ISSO J. Doe") && comments.contains(&today.to_string()), "{comments}");
    assert!(comments.contains("&lt;must&gt; stay open &amp; idle"), "escaped: {comments}");
    let md = sim.report(run).await;
    assert!(md.contains("## Tailoring and waivers") && md.contains("| active |"), "{md}");
    assert!(!md.contains("EXPIRED"));
    took("an_active_waiver_keeps_its_rule_from_being_worked_on_and_the_ckl_carries_it", t);
}

#[tokio::test]
async fn the_same_waiver_expired_no_longer_applies_and_the_report_flags_it() {
    let t = Instant::now();
    let yesterday = chrono::Local::now().date_naive().checked_sub_days(Days::new(1)).unwrap();
    let (sim, run) = run_with("waiver-expired", waiver(yesterday)).await;
    assert_eq!(sim.rule(run, WAIVED).await.status, RuleStatus::Fixed, "worked on, and its stock fix fixed it");
    assert_eq!(sim.attempts(run, WAIVED).await.len(), 1);
    let md = sim.report(run).await;
    assert!(md.contains("1 waiver(s) EXPIRED") && md.contains("| **EXPIRED** |"), "{md}");
    assert!(
        md.contains(&format!("{} (fixed)", WAIVED.replace('_', "\\_"))),
        "the flagged waiver names its rule and what became of it:\n{md}"
    );
    let data = load(sim.store.as_ref(), run).await.unwrap();
    let html = render(&data, Some(content()), Format::Html).unwrap();
    assert!(html.contains("waiver-expired") && html.contains("&lt;must&gt;"), "the HTML flags it, escaped");
    took("the_same_waiver_expired_no_longer_applies_and_the_report_flags_it", t);
}
