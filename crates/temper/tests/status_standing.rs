//! Where a run stands, mid-run, with a rule other fixes made applicable: `temper status` (text
//! and JSON), the web view's state and the loop's status show one [`Standing`], whose counts add
//! up. A real SQLite file filled through the store's API; no VM.
mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use support::*;
use temper_journal::Verdict;
use temper_journal::{
    AttemptSpec, Escalation, EscalationCause, Evaluation, Findings, FixSource, NewRule, NewRun, Phase, RuleStatus, RunId, ScanResult,
    Standing, driver_id, now_ms,
};

const KEEPALIVE: &str = "xccdf_org.ssgproject.content_rule_sshd_set_keepalive";
/// Not applicable at the first scan, failing since rsyslog's fix: open, being worked on.
const LOGROTATE: &str = "xccdf_org.ssgproject.content_rule_ensure_logrotate_activated";
const PERMISSIONS: &str = "xccdf_org.ssgproject.content_rule_rsyslog_files_permissions";
const OWNERSHIP: &str = "xccdf_org.ssgproject.content_rule_rsyslog_files_ownership";
const ELSEWHERE: &str = "xccdf_org.ssgproject.content_rule_sshd_disable_root_login";

/// A run driven now (this process holds its lease): SUID fixed, SYSTEMMAP escalated after an
/// attempt undone with its batch (no try) and one that failed, KEEPALIVE open; of the rules not
/// applicable at the first scan, LOGROTATE fails since (open, worked on now), PERMISSIONS
/// passes since, OWNERSHIP still does not apply; ELSEWHERE fails outside the run's scope.
async fn mid_run(w: &World) -> RunId {
    let s = w.store().await;
    let new = NewRun {
        skill: "debian12-anssi".into(),
        profile: STANDARD.into(),
        datastream: "ssg-debian12-ds.xml".into(),
        content_version: None,
        target: "test".into(),
        agent: "stock".into(),
        options_json: "{}".into(),
        baseline: "baseline".into(),
    };
    let run = s.create_run(&new).await.unwrap();
    assert!(s.claim_run(run, &driver_id(), None, now_ms(), now_ms() + 600_000).await.unwrap());
    let rules = [
        (SUID, ScanResult::Fail, RuleStatus::Pending),
        (SYSTEMMAP, ScanResult::Fail, RuleStatus::Pending),
        (KEEPALIVE, ScanResult::Fail, RuleStatus::Pending),
        (LOGROTATE, ScanResult::NotApplicable, RuleStatus::NotApplicable),
        (PERMISSIONS, ScanResult::NotApplicable, RuleStatus::NotApplicable),
        (OWNERSHIP, ScanResult::NotApplicable, RuleStatus::NotApplicable),
        (ELSEWHERE, ScanResult::Fail, RuleStatus::OutOfScope),
    ];
    for (id, initial_result, status) in rules {
        let rule = NewRule { rule_id: id.into(), title: id.into(), severity: "medium".into(), initial_result, status, reason: None };
        s.add_rule(run, &rule).await.unwrap();
    }
    let attempt = |rule: &str| AttemptSpec {
        rule_id: rule.into(),
        plan: "stock".into(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: "true".into(),
        revert_script: "true".into(),
        description: "d".into(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    };
    let (a, _) = s.start_attempt(run, &attempt(SUID)).await.unwrap();
    let passes = Evaluation::new(Verdict::Fixed, "").found(Findings { rule_result: Some(ScanResult::Pass), ..Findings::default() });
    s.record_fix(run, a, &passes, SUID, "temper-r1-a1").await.unwrap();
    let (undone, _) = s.start_attempt(run, &attempt(SYSTEMMAP)).await.unwrap();
    s.set_aside_attempts(run, &[undone], "undone with its batch").await.unwrap();
    let (b, _) = s.start_attempt(run, &attempt(SYSTEMMAP)).await.unwrap();
    s.finish_attempt(b, &Evaluation::new(Verdict::StillFailing, "")).await.unwrap();
    let e = Escalation { cause: EscalationCause::AttemptBudget, reason: "attempt budget spent".into() };
    s.escalate_rule(run, SYSTEMMAP, &e).await.unwrap();
    let why = "not applicable at the first scan; fails since other rules' fixes made it applicable";
    s.set_rule_status(run, LOGROTATE, RuleStatus::Pending, Some(why)).await.unwrap();
    s.set_rule_status(run, PERMISSIONS, RuleStatus::Passing, Some("passes since")).await.unwrap();
    s.set_phase(run, Phase::Fix, Some(LOGROTATE)).await.unwrap();
    run
}

/// The first `state` event of the web view's stream for `run`, served in-process on `w`'s store.
async fn web_state(w: &World, run: RunId) -> Value {
    let journal: Arc<dyn Journal> = Arc::new(w.store().await);
    let config = temper_web::WebConfig::new("127.0.0.1:0".parse().unwrap(), None, "/nonexistent".into());
    let server = temper_web::Server::bind(journal, config).await.unwrap();
    let base = format!("http://{}", server.local_addr().unwrap());
    let task = tokio::spawn(async move { server.run().await.unwrap() });
    let mut r = reqwest::get(format!("{base}/runs/{run}/events")).await.unwrap();
    let mut seen = String::new();
    let data = loop {
        if let Some(d) = seen.split("event: state\ndata: ").nth(1).and_then(|d| d.split_once('\n')).map(|(d, _)| d.to_string()) {
            break d;
        }
        let chunk = tokio::time::timeout(Duration::from_secs(10), r.chunk()).await.expect("a state in time").unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk.expect("the stream goes on")));
    };
    task.abort();
    serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {data}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_the_web_view_and_the_loop_show_one_standing_that_adds_up() {
    let w = World::new();
    let run = mid_run(&w).await;
    let s = w.store().await;
    let rules = s.rules(run).await.unwrap();
    assert_eq!(s.attempts(run).await.unwrap().len(), 3, "three attempts recorded, two of them tries");
    // What the loop's status holds at this phase (`ralph/status.rs` builds it so).
    let loop_status = Standing::of(Phase::Fix, Some(LOGROTATE), &rules);
    assert_eq!(loop_status, Standing::of_run(&s.run(run).await.unwrap(), &rules), "the loop's phase and rule are the row's");
    let t = loop_status.tally;
    assert_eq!(
        (t.failing_at_start, t.became_applicable, t.in_scope, t.out_of_scope),
        (3, 1, 4, 1),
        "LOGROTATE became applicable; PERMISSIONS passes, never failing: {t:?}"
    );
    assert_eq!((t.open, t.fixed, t.escalated, loop_status.attempts), (2, 1, 1, 2), "{t:?}");
    let states: usize = t.states().iter().map(|(_, n)| n).sum();
    assert_eq!((states, t.failing_at_start + t.became_applicable), (t.in_scope, t.in_scope), "the counts add up");

    let out = w.run(&["status", "--json"]).await;
    assert!(out.status.success(), "exit {:?}", out.status.code());
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let web = web_state(&w, run).await;
    let standing = serde_json::to_value(&loop_status).unwrap();
    for (key, want) in standing.as_object().unwrap() {
        assert_eq!((key, &cli[key], &web[key]), (key, want, want), "temper status --json, the web's state, the loop's status");
    }
    assert_eq!((cli["status"].as_str(), web["status"].as_str()), (Some("running"), Some("running")));
    assert_eq!(web["open_of"], "2 of 4 in scope (3 failing at baseline, 1 became applicable; 1 out of scope)");

    let out = w.run(&["status"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let want = format!(
        "run {run} running | phase fix | rule ensure_logrotate_activated | fixed 1 escalated 1 open 2 of 4 in scope (3 failing at \
         baseline, 1 became applicable; 1 out of scope) | 2 attempts | "
    );
    assert!(text.starts_with(&want), "{text}");
}
