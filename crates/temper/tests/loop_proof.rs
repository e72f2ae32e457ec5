//! What proves a fix: its own rule read exactly `pass` right after it, before any other fix runs,
//! beside the guard. With regression checks batched, the batch's check then rescans the
//! regression set beside the guard again, and bisects whatever went wrong (a rule that passed and
//! no longer reads `pass`, the scan, the guard) to the first fix after which it does. A check
//! that cannot run is blamed, never a stop. No VM: see `sim/`.
mod sim;

use std::time::Instant;

use sim::*;
use temper_journal::Verdict;
use temper_journal::{AttemptState, EventKind, KeptState, RuleStatus, ScanResult};
use temper_scap::Outcome;

/// Stock fixes that take effect live (no reboot), in the recorded scan's failing rules.
const RULES: [&str; 6] = [
    "file_permissions_systemmap",
    "package_audit_installed",
    "package_cron_installed",
    "package_ntp_installed",
    "package_rsyslog_installed",
    "sshd_set_keepalive",
];

/// Rules that pass in the recorded scan: the regression set at the start.
const PASSING: [&str; 2] = ["file_owner_etc_passwd", "file_permissions_etc_passwd"];

async fn batched(name: &str) -> Sim {
    let mut sim = Sim::new(name).await;
    sim.settings.rules = RULES.map(String::from).to_vec();
    sim.settings.regression_every = Some(3);
    sim
}

/// The rules in the stock Architect's order: the first `n` it picks of `RULES`.
async fn stock_order(n: usize, name: &str) -> Vec<String> {
    let probe = batched(&format!("{name}-order")).await;
    let run = probe.new_run("stock").await;
    probe.stock(run).await.unwrap();
    let picks = probe.store.events(run, None).await.unwrap().into_iter().filter(|e| e.kind == EventKind::Pick);
    picks.filter_map(|e| e.rule_id).take(n).map(|r| temper_scap::short_rule_id(&r).to_string()).collect()
}

/// The named scans (not full ones) that name `rule`, with how many rules each named.
fn scans_naming(sim: &Sim, rule: &str) -> Vec<usize> {
    sim.guest.scanned().iter().filter(|s| s.contains(&full(rule))).map(Vec::len).collect()
}

fn kept_fixes(attempts: &[temper_journal::Attempt]) -> usize {
    attempts.iter().filter(|a| a.in_force()).count()
}

#[tokio::test]
async fn each_fix_is_proven_by_its_own_rescan_and_the_set_by_its_batchs_check() {
    let t = Instant::now();
    let sim = batched("proof-own").await;
    for r in PASSING {
        assert_eq!(sim.guest.result(r), Some(Outcome::Pass), "{r} passes at the baseline");
    }
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, RULES.map(String::from).to_vec(), "{summary:?}");
    for r in RULES {
        let a = sim.attempts(run, r).await;
        assert_eq!(a.len(), 1, "{r}: {a:?}");
        assert_eq!((a[0].kept, a[0].findings.rule_result), (Some(KeptState::Confirmed), Some(ScanResult::Pass)), "{r}: {a:?}");
        let reason = a[0].verdict_reason.as_deref().unwrap_or("");
        assert!(reason.contains("the rule passes"), "{r}: {reason}");
        // Its own rescan right after the fix: the rule, and at most the rule looked ahead to.
        assert!(scans_naming(&sim, r).iter().any(|n| *n <= 2), "{r}: {:?}", scans_naming(&sim, r));
    }
    let checks = sim.events(run, EventKind::RegressionCheck).await;
    assert_eq!(checks.len(), 2, "two checks of three fixes each: {checks:?}");
    assert!(checks.iter().all(|c| c["problem"].is_null()), "{checks:?}");
    took("each_fix_is_proven_by_its_own_rescan_and_the_set_by_its_batchs_check", t);
}

/// Only `pass` proves a rule: one whose fix leaves it `notapplicable`, one left `unknown`, one
/// that gives no result at all. None is recorded fixed, each is reverted, none is exported.
#[tokio::test]
async fn a_rule_that_reads_notapplicable_unknown_or_nothing_after_its_fix_is_not_fixed() {
    let t = Instant::now();
    let sim = batched("proof-not-pass").await;
    let (na, unknown, nothing) = ("package_audit_installed", "package_cron_installed", "package_ntp_installed");
    sim.guest.stock_fix(&stock_fix(na), vec![Effect::Reads(full(na), Outcome::NotApplicable)]);
    sim.guest.stock_fix(&stock_fix(unknown), vec![Effect::Reads(full(unknown), Outcome::Unknown)]);
    sim.guest.stock_fix(&stock_fix(nothing), vec![Effect::Vanishes(full(nothing))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    for (r, read) in [(na, Some(ScanResult::NotApplicable)), (unknown, Some(ScanResult::Unknown)), (nothing, None)] {
        let a = sim.attempts(run, r).await;
        assert!(!a.is_empty(), "{r} was tried");
        assert_eq!(kept_fixes(&a), 0, "{r}: no fix in force: {a:?}");
        assert!(a.iter().all(|a| a.verdict != Some(Verdict::Fixed)), "{r}: {a:?}");
        assert_ne!(sim.rule(run, r).await.status, RuleStatus::Fixed, "{r}: {summary:?}");
        assert_eq!(sim.guest.result(r), Some(Outcome::Fail), "{r}: reverted");
        if let Some(read) = read {
            assert_eq!(a[0].findings.rule_result, Some(read), "{r}: {a:?}");
        }
    }
    let plan = plan_of(&sim, run).await;
    for r in [na, unknown, nothing] {
        assert!(!plan.iter().any(|s| s == &full(r)), "{r} is no step of the plan: {plan:?}");
    }
    assert_eq!(summary.exit_code, 2, "rules remain: {summary:?}");
    took("a_rule_that_reads_notapplicable_unknown_or_nothing_after_its_fix_is_not_fixed", t);
}

/// A rule that passed, and reads `notapplicable` after a later fix: a regression, found by the
/// batch's check and bisected to that fix.
#[tokio::test]
async fn a_passing_rule_that_turns_notapplicable_is_a_regression_of_the_fix_after_which_it_does() {
    let t = Instant::now();
    let sim = batched("proof-regress-na").await;
    let (culprit, victim) = ("package_cron_installed", PASSING[0]);
    sim.guest.stock_fix(&stock_fix(culprit), vec![Effect::Pass(full(culprit)), Effect::Reads(full(victim), Outcome::NotApplicable)]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let a = sim.attempts(run, culprit).await;
    assert_eq!(a[0].verdict, Some(Verdict::Regression), "{a:?}");
    assert_eq!(a[0].kept, Some(KeptState::RolledBack), "{a:?}");
    assert!(a[0].verdict_reason.as_deref().unwrap_or("").contains(&format!("{} (notapplicable)", full(victim))), "{a:?}");
    let found = sim.events(run, EventKind::RegressionFound).await;
    assert!(found.iter().any(|f| f["culprit"] == full(culprit)), "{found:?}");
    assert_eq!(sim.guest.result(victim), Some(Outcome::Pass), "the regression was undone: {summary:?}");
    took("a_passing_rule_that_turns_notapplicable_is_a_regression_of_the_fix_after_which_it_does", t);
}

/// `first`'s stock fix does nothing; `second`'s fix passes both rules. In one batch, the
/// check after both would read `first` passing. It is not credited: its own rescan, right after
/// its fix, read it failing, so the fix was reverted; `first` is fixed by the other fix, with no
/// fix of its own tried again, kept or exported.
#[tokio::test]
async fn a_later_fix_that_makes_an_earlier_rule_pass_does_not_credit_the_earlier_fix() {
    let t = Instant::now();
    let order = stock_order(2, "proof-credit").await;
    let (first, second) = (order[0].as_str(), order[1].as_str());
    let sim = batched("proof-credit").await;
    sim.guest.stock_fix(&stock_fix(first), vec![]);
    sim.guest.stock_fix(&stock_fix(second), vec![Effect::Pass(full(second)), Effect::Pass(full(first))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let a = sim.attempts(run, first).await;
    assert_eq!(a.len(), 1, "tried once, not again once it passed: {a:?}");
    assert_eq!(a[0].verdict, Some(Verdict::StillFailing), "{a:?}");
    assert_eq!(a[0].findings.rule_result, Some(ScanResult::Fail), "its own rescan read it failing: {a:?}");
    assert_eq!(kept_fixes(&a), 0, "{a:?}");
    let rule = sim.rule(run, first).await;
    assert_eq!(rule.status, RuleStatus::Fixed, "{summary:?}");
    assert!(rule.reason.as_deref().unwrap_or("").contains("other rules' fixes"), "{rule:?}");
    assert_eq!(kept_fixes(&sim.attempts(run, second).await), 1);
    let plan = plan_of(&sim, run).await;
    assert!(plan.contains(&full(second)) && !plan.contains(&full(first)), "only the fix that did the work: {plan:?}");
    took("a_later_fix_that_makes_an_earlier_rule_pass_does_not_credit_the_earlier_fix", t);
}

/// A rule that other fixes made pass before its turn is never attempted: no fix of its own runs.
#[tokio::test]
async fn a_rule_read_passing_before_its_own_fix_is_fixed_with_no_fix_of_its_own() {
    let t = Instant::now();
    let order = stock_order(2, "proof-passes-already").await;
    let (first, second) = (order[0].as_str(), order[1].as_str());
    let sim = batched("proof-passes-already").await;
    sim.guest.stock_fix(&stock_fix(first), vec![Effect::Pass(full(first)), Effect::Pass(full(second))]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    assert!(sim.attempts(run, second).await.is_empty(), "no fix of its own was tried");
    assert!(!sim.guest.scripts().contains(&stock_fix(second)), "its stock fix never ran");
    let rule = sim.rule(run, second).await;
    assert_eq!(rule.status, RuleStatus::Fixed);
    assert!(rule.reason.as_deref().unwrap_or("").contains("before its own fix ran"), "{rule:?}");
    assert_eq!(sim.events(run, EventKind::RulePasses).await.len(), 1);
    assert!(!plan_of(&sim, run).await.contains(&full(second)));
    took("a_rule_read_passing_before_its_own_fix_is_fixed_with_no_fix_of_its_own", t);
}

/// A fix after which oscap cannot run at all: its own rescan fails, so it is `scan_broken` and
/// reverted, and the run goes on with the other rules.
#[tokio::test]
async fn a_fix_after_which_the_check_cannot_run_is_scan_broken_and_the_run_goes_on() {
    let t = Instant::now();
    let sim = batched("proof-scan-broken").await;
    let breaker = "package_cron_installed";
    sim.guest.stock_fix(&stock_fix(breaker), vec![Effect::Pass(full(breaker)), Effect::BreaksScan]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.expect("the run goes on past the fix");

    let a = sim.attempts(run, breaker).await;
    assert_eq!(a[0].verdict, Some(Verdict::ScanBroken), "{a:?}");
    assert_eq!(kept_fixes(&a), 0);
    let others: Vec<String> = RULES.iter().filter(|r| **r != breaker).map(|r| r.to_string()).collect();
    let fixed = sim.with_status(run, RuleStatus::Fixed).await;
    assert!(others.iter().all(|r| fixed.contains(r)), "{fixed:?}: {summary:?}");
    took("a_fix_after_which_the_check_cannot_run_is_scan_broken_and_the_run_goes_on", t);
}

/// A fix after which scans naming a rule of the regression set fail: its own rescan (its rule
/// and the next) works, the batch's check does not. The check is bisected like a rule that
/// fails: the fix is `scan_broken`, rolled back, the fixes after it replayed, and the run goes on.
#[tokio::test]
async fn a_fix_that_breaks_the_batchs_check_is_bisected_to_and_the_run_goes_on() {
    let t = Instant::now();
    let sim = batched("proof-check-broken").await;
    let breaker = "package_cron_installed";
    sim.guest.stock_fix(&stock_fix(breaker), vec![Effect::Pass(full(breaker)), Effect::BreaksScanOf(full(PASSING[0]))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.expect("the run goes on past the check");
    assert_blamed_for_the_scan(&sim, run, breaker, &summary).await;
    took("a_fix_that_breaks_the_batchs_check_is_bisected_to_and_the_run_goes_on", t);
}

async fn assert_blamed_for_the_scan(sim: &Sim, run: temper_journal::RunId, breaker: &str, summary: &temper_journal::RunSummary) {
    let a = sim.attempts(run, breaker).await;
    assert_eq!(a[0].verdict, Some(Verdict::ScanBroken), "{a:?}");
    assert!(a[0].verdict_reason.as_deref().unwrap_or("").contains("bisected to this fix"), "{a:?}");
    assert_eq!(kept_fixes(&a), 0, "{a:?}");
    let checks = sim.events(run, EventKind::RegressionCheck).await;
    assert!(checks.iter().any(|c| c["problem"].as_str().is_some_and(|p| p.contains("the scan could not run"))), "{checks:?}");
    let found = sim.events(run, EventKind::RegressionFound).await;
    assert_eq!(found.iter().filter(|f| f["culprit"] == full(breaker)).count(), 1, "{found:?}");
    let fixed = sim.with_status(run, RuleStatus::Fixed).await;
    assert!(RULES.iter().filter(|r| **r != breaker).all(|r| fixed.contains(&r.to_string())), "{fixed:?}: {summary:?}");
    assert_eq!(summary.healthy, Some(true));
}

/// As above, killed (as kill -9 would) while the fix after the breaker runs, with the breaker
/// pending its batch's check. The resumed run checks the batch, blames the breaker and goes on:
/// it does not stop at it.
#[tokio::test]
async fn killed_with_a_scan_breaking_fix_pending_the_resumed_run_blames_it_and_goes_on() {
    let t = Instant::now();
    let order = stock_order(2, "proof-check-broken-kill").await;
    let (breaker, after) = (order[0].as_str(), order[1].as_str());
    let sim = batched("proof-check-broken-kill").await;
    sim.guest.stock_fix(&stock_fix(breaker), vec![Effect::Pass(full(breaker)), Effect::BreaksScanOf(full(PASSING[0]))]);
    let run = sim.new_run("stock").await;
    sim.kill_during(run, &stock_fix(after)).await;
    let pending = sim.store.pending_fixes(run).await.unwrap();
    assert_eq!(pending.iter().map(|a| a.spec.rule_id.clone()).collect::<Vec<_>>(), [full(breaker)], "the breaker awaits its check");

    let summary = sim.stock(run).await.expect("the resumed run does not stop at the breaker");
    assert_blamed_for_the_scan(&sim, run, breaker, &summary).await;
    let interrupted = sim.attempts(run, after).await;
    assert_eq!(interrupted[0].state, AttemptState::Interrupted, "{interrupted:?}");
    took("killed_with_a_scan_breaking_fix_pending_the_resumed_run_blames_it_and_goes_on", t);
}

/// A kept fix whose damage shows after its own guard read the guest healthy (a service that
/// dies a while after its restart). The next fix's guard fails, and fails again once that fix is
/// undone: the damage is older, so that attempt does not count, and the kept fixes are bisected
/// for it. With checks batched, over the batch's snapshots; with every fix its own checkpoint,
/// by replays since the last booted checkpoint. The culprit is blamed; the other fix is kept.
#[tokio::test]
async fn damage_a_kept_fix_shows_late_is_blamed_on_it_not_on_the_next_fix() {
    let t = Instant::now();
    let order = stock_order(2, "proof-late").await;
    let (culprit, next) = (order[0].as_str(), order[1].as_str());
    for every in [3, 1] {
        let mut sim = batched(&format!("proof-late-{every}")).await;
        sim.settings.regression_every = Some(every);
        sim.guest.stock_fix(&stock_fix(culprit), vec![Effect::Pass(full(culprit)), Effect::Later(Box::new(Effect::Unhealthy))]);
        let run = sim.new_run("stock").await;
        let summary = sim.stock(run).await.unwrap();

        let a = sim.attempts(run, culprit).await;
        assert_eq!(a[0].verdict, Some(Verdict::HealthBroken), "every {every}: {a:?}");
        assert_eq!(a[0].kept, Some(KeptState::RolledBack), "every {every}: {a:?}");
        assert_eq!(kept_fixes(&a), 0, "every {every}: {a:?}");
        let b = sim.attempts(run, next).await;
        assert_eq!(b[0].state, AttemptState::Interrupted, "every {every}: its first try was set aside: {b:?}");
        assert!(b[0].verdict_reason.as_deref().unwrap_or("").contains("the damage came before it"), "{b:?}");
        assert_eq!(kept_fixes(&b), 1, "every {every}: {b:?}");
        let fixed = sim.with_status(run, RuleStatus::Fixed).await;
        assert!(RULES.iter().filter(|r| **r != culprit).all(|r| fixed.contains(&r.to_string())), "every {every}: {fixed:?}");
        assert_eq!(summary.healthy, Some(true), "every {every}: {summary:?}");
    }
    took("damage_a_kept_fix_shows_late_is_blamed_on_it_not_on_the_next_fix", t);
}

/// Killed (as kill -9 would) while the next fix ran, with a kept fix's late damage in the guest:
/// the resumed run finds the guard failing at its head with fixes kept since the booted
/// checkpoint, so it bisects them, blames the culprit and goes on; it does not stop there.
#[tokio::test]
async fn a_resume_that_finds_a_kept_fixs_damage_blames_it_and_goes_on() {
    let t = Instant::now();
    let order = stock_order(2, "proof-late-resume").await;
    let (culprit, next) = (order[0].as_str(), order[1].as_str());
    let sim = batched("proof-late-resume").await;
    sim.guest.stock_fix(&stock_fix(culprit), vec![Effect::Pass(full(culprit)), Effect::Later(Box::new(Effect::Unhealthy))]);
    let run = sim.new_run("stock").await;
    sim.kill_during(run, &stock_fix(next)).await;
    assert!(!sim.guest.boots_healthy(), "the culprit's damage is in the guest");

    let summary = sim.stock(run).await.expect("the resumed run does not stop at the damage");
    let a = sim.attempts(run, culprit).await;
    assert_eq!((a[0].verdict, a[0].kept), (Some(Verdict::HealthBroken), Some(KeptState::RolledBack)), "{a:?}");
    assert_eq!(kept_fixes(&sim.attempts(run, next).await), 1);
    assert_eq!(summary.healthy, Some(true), "{summary:?}");
    took("a_resume_that_finds_a_kept_fixs_damage_blames_it_and_goes_on", t);
}

/// Killed during the second fix of a batch: the first is pending with its own rule result. The
/// resumed run restores its snapshot, and the next check confirms it.
#[tokio::test]
async fn a_run_killed_with_fixes_pending_checks_them_on_resume() {
    let t = Instant::now();
    let order = stock_order(2, "proof-resume").await;
    let sim = batched("proof-resume").await;
    let run = sim.new_run("stock").await;
    sim.kill_during(run, &stock_fix(&order[1])).await;
    let pending = sim.store.pending_fixes(run).await.unwrap();
    assert_eq!(pending.iter().map(|a| a.spec.rule_id.clone()).collect::<Vec<_>>(), [full(&order[0])]);
    assert_eq!(pending[0].findings.rule_result, Some(ScanResult::Pass), "read right after its fix");

    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, &order[0]).await;
    assert_eq!(a.len(), 1, "kept through the kill: {a:?}");
    assert_eq!((a[0].kept, a[0].findings.rule_result), (Some(KeptState::Confirmed), Some(ScanResult::Pass)));
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, RULES.map(String::from).to_vec());
    took("a_run_killed_with_fixes_pending_checks_them_on_resume", t);
}

/// Stock fixes the content marks `reboot`: one whose rule passes live is `fixed`; one whose rule
/// passes only after a boot reads failing at its own rescan and is kept for the proof
/// (`needs_reboot`), which then proves it `fixed`.
#[tokio::test]
async fn fixes_that_take_effect_at_boot_are_kept_for_the_reboot_proof() {
    let t = Instant::now();
    let (live, boot) = ("sysctl_fs_suid_dumpable", "sysctl_kernel_randomize_va_space");
    for r in [live, boot] {
        assert!(content().rule(&full(r)).and_then(|c| c.fix.as_ref()).is_some_and(|f| f.reboot), "{r}: marked reboot");
    }
    let mut sim = batched("proof-reboot").await;
    sim.settings.rules = [live, boot, RULES[0], RULES[1]].map(String::from).to_vec();
    sim.guest.stock_fix(&stock_fix(boot), vec![Effect::AtBoot(Box::new(Effect::Pass(full(boot))))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    assert_eq!(sim.guest.reboots(), 1, "{summary:?}");
    assert!(sim.events(run, EventKind::RegressionFound).await.is_empty(), "nothing blamed");
    for r in [live, boot] {
        let a = sim.attempts(run, r).await;
        assert_eq!(a.len(), 1, "{r}: {a:?}");
        assert_eq!((a[0].verdict, a[0].kept), (Some(Verdict::Fixed), Some(KeptState::Confirmed)), "{r}: {a:?}");
        assert_eq!(sim.guest.result(r), Some(Outcome::Pass), "{r}");
    }
    let reason = sim.attempts(run, boot).await[0].verdict_reason.clone().unwrap_or_default();
    assert!(reason.contains("kept for the run's reboot proof") && reason.contains("passes after the reboot"), "{reason}");
    took("fixes_that_take_effect_at_boot_are_kept_for_the_reboot_proof", t);
}

/// The rules of the plan `temper plan export` would write for `run`.
async fn plan_of(sim: &Sim, run: temper_journal::RunId) -> Vec<String> {
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let plan = temper_journal::plan::build(data.records(), Some(content()), Some("sha256 of the sim's content".into())).unwrap();
    plan.steps.iter().map(|s| s.rule.clone()).collect()
}
