//! The checks judge a fix, not its exit code; and failed stock fixes get a second pass once
//! other fixes have changed the system. In-process: see `sim/`.
mod sim;

use std::time::Instant;

use sim::*;
use temper_journal::Verdict;
use temper_journal::{AttemptState, EventKind, FixSource, RuleStatus};
use temper_scap::Outcome;

/// A stock fix that does its job and exits 1 (a `find` over a home that does not exist) is kept:
/// the rule passes, the health check and access work, nothing regressed. The exit code and
/// stderr stay on the attempt as a warning.
#[tokio::test]
async fn a_fix_that_exits_non_zero_but_passes_every_check_is_kept_with_a_warning() {
    let t = Instant::now();
    let mut sim = Sim::new("exit1").await;
    let rule = "file_permissions_systemmap";
    sim.settings.rules = vec![rule.into()];
    sim.guest.stock_fix(&stock_fix(rule), vec![Effect::Pass(full(rule)), Effect::Exit(1)]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, rule).await;
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].verdict, Some(Verdict::Fixed), "{:?}", a[0].verdict_reason);
    assert_eq!(a[0].findings.fix_exit_code, Some(1));
    assert!(a[0].verdict_reason.as_deref().unwrap_or("").contains("warning: the fix exited 1"), "{:?}", a[0].verdict_reason);
    assert_eq!(sim.rule(run, rule).await.status, RuleStatus::Fixed);
    assert_eq!(sim.guest.result(rule), Some(Outcome::Pass), "kept: not reverted");
    let report = sim.report(run).await;
    assert!(report.contains("**Warning**: the fix exited 1"), "the report shows the warning on the rule:\n{report}");
    took("a_fix_that_exits_non_zero_but_passes_every_check_is_kept_with_a_warning", t);
}

/// A non-zero exit with a check failing stays `apply_failed`, and is reverted.
#[tokio::test]
async fn a_fix_that_exits_non_zero_and_fails_a_check_is_apply_failed_and_reverted() {
    let t = Instant::now();
    let mut sim = Sim::new("exit1-broken").await;
    let rule = "file_permissions_systemmap";
    sim.settings.rules = vec![rule.into()];
    sim.guest.stock_fix(&stock_fix(rule), vec![Effect::Pass(full(rule)), Effect::Unhealthy, Effect::Exit(1)]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, rule).await;
    assert_eq!(a.iter().map(|a| a.verdict).collect::<Vec<_>>(), [Some(Verdict::ApplyFailed)]);
    assert!(a[0].verdict_reason.as_deref().unwrap_or("").contains("health check"), "{:?}", a[0].verdict_reason);
    assert_eq!(sim.guest.result(rule), Some(Outcome::Fail), "reverted to the checkpoint");
    assert_eq!(sim.rule(run, rule).await.status, RuleStatus::Escalated);
    took("a_fix_that_exits_non_zero_and_fails_a_check_is_apply_failed_and_reverted", t);
}

/// `first` only passes once `later`'s fix is in (the side effect oscap's one pass adds up). Its
/// stock fix fails in the first pass; `later` is fixed; the second pass tries it again and it
/// is fixed. Without a later kept fix, there is no second try.
#[tokio::test]
async fn a_stock_fix_that_needed_another_fix_is_fixed_in_the_second_pass() {
    let t = Instant::now();
    let (first, later) = ("file_permissions_systemmap", "sshd_set_keepalive");
    let mut sim = Sim::new("second-pass").await;
    sim.settings.rules = vec![first.into(), later.into()];
    sim.guest.stock_fix(&stock_fix(first), vec![Effect::PassIf { rule: full(first), needs: full(later) }]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, first).await;
    assert_eq!(a.iter().map(|a| a.verdict).collect::<Vec<_>>(), [Some(Verdict::StillFailing), Some(Verdict::Fixed)]);
    assert!(a.iter().all(|a| a.spec.source == FixSource::Stock && !a.spec.replayed && a.state == AttemptState::Done));
    assert!(a[1].spec.plan.starts_with("second pass"), "{}", a[1].spec.plan);
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, [first, later]);
    let events = sim.store.events(run, None).await.unwrap();
    let second: Vec<_> = events.iter().filter(|e| e.kind == EventKind::Pick && e.json().contains("\"second_pass\":true")).collect();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].rule_id.as_deref(), Some(full(first).as_str()));
    let report = sim.report(run).await;
    assert!(report.contains("| stock (second pass) |"), "the report names the second pass:\n{report}");
    took("a_stock_fix_that_needed_another_fix_is_fixed_in_the_second_pass", t);
}

#[tokio::test]
async fn without_a_fix_kept_since_there_is_no_second_try() {
    let t = Instant::now();
    let (first, later) = ("file_permissions_systemmap", "sshd_set_keepalive");
    let mut sim = Sim::new("no-second-pass").await;
    sim.settings.rules = vec![first.into(), later.into()];
    // `later` is tried after `first` and fails too: nothing changed the system since.
    sim.guest.stock_fix(&stock_fix(first), vec![Effect::PassIf { rule: full(first), needs: full(later) }]);
    sim.guest.stock_fix(&stock_fix(later), vec![]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    for r in [first, later] {
        assert_eq!(sim.attempts(run, r).await.len(), 1, "{r}: one try");
        assert_eq!(sim.rule(run, r).await.status, RuleStatus::Escalated);
    }
    let events = sim.store.events(run, None).await.unwrap();
    assert!(!events.iter().any(|e| e.json().contains("second_pass")));
    took("without_a_fix_kept_since_there_is_no_second_try", t);
}
