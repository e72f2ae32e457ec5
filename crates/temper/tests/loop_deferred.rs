//! Stock fixes whose rescans wait for the batch's regression check: judged on their exit and
//! the guard, kept pending, and their rules scanned with the set; one whose rule still fails is
//! bisected to and blamed there; a run killed with deferred fixes pending resumes and checks
//! them. No VM: see `sim/`.
mod sim;

use std::time::Instant;

use sim::*;
use temper_core::journal::{EventKind, KeptState, RuleStatus, ScanResult};
use temper_core::verdict::Verdict;
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

async fn batched(name: &str) -> Sim {
    let mut sim = Sim::new(name).await;
    sim.settings.rules = RULES.map(String::from).to_vec();
    sim.settings.regression_every = Some(3);
    sim
}

/// The named scans (not full ones) that name any of `rules`, with how many rules each named.
fn scans_naming(sim: &Sim, rules: &[&str]) -> Vec<usize> {
    let named = |s: &Vec<String>| rules.iter().any(|r| s.contains(&full(r)));
    sim.guest.scanned().iter().filter(|s| !s.is_empty() && named(s)).map(Vec::len).collect()
}

#[tokio::test]
async fn stock_fixes_are_scanned_with_their_batchs_check_not_each_alone() {
    let t = Instant::now();
    let sim = batched("deferred").await;
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let want = RULES.map(String::from).to_vec();
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, want, "{summary:?}");
    for r in RULES {
        let a = sim.attempts(run, r).await;
        assert_eq!(a.len(), 1, "{r}: {a:?}");
        assert!(
            a[0].verdict_reason.as_deref().unwrap_or("").contains("the rule and the regression set are checked with the batch"),
            "{a:?}"
        );
        assert_eq!((a[0].kept, a[0].findings.rule_result), (Some(KeptState::Confirmed), Some(ScanResult::Pass)), "{r}: {a:?}");
        assert_eq!(sim.guest.result(r), Some(Outcome::Pass));
    }
    // Before, each fix had a rescan of its rule alone: six scans naming one rule each.
    let sizes = scans_naming(&sim, &RULES);
    assert!(sizes.iter().all(|n| *n > 2), "every scan that named a fixed rule was a batch's check: {sizes:?}");
    assert_eq!(sim.events(run, EventKind::RegressionCheck).await.len(), 2, "two checks of three fixes each");
    took("stock_fixes_are_scanned_with_their_batchs_check_not_each_alone", t);
}

/// A stock fix that exits 0 and changes nothing: kept pending on its exit and the guard, then the
/// check finds its rule failing, bisects to it, and gives it `still_failing` with the rule's
/// result; the fixes kept after it are replayed, and the rule goes on as any failed stock fix.
#[tokio::test]
async fn a_deferred_fix_whose_rule_still_fails_is_blamed_at_its_check() {
    let t = Instant::now();
    let sim = batched("deferred-blame").await;
    let dud = "package_ntp_installed";
    sim.guest.stock_fix(&stock_fix(dud), vec![]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    // Its first try, and the stock fixes' second pass at the end: each blamed at its check.
    let a = sim.attempts(run, dud).await;
    assert_eq!(a.len(), 2, "{a:?}");
    for a in &a {
        assert_eq!(a.verdict, Some(Verdict::StillFailing), "{a:?}");
        assert_eq!((a.kept, a.findings.rule_result), (Some(KeptState::RolledBack), Some(ScanResult::Fail)), "{a:?}");
        let reason = a.verdict_reason.as_deref().unwrap_or("");
        assert!(reason.contains("the rule's result after the fix is fail (found by the batch's regression check)"), "{reason}");
    }
    let found = sim.events(run, EventKind::RegressionFound).await;
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|f| f["culprit"] == full(dud)), "{found:?}");
    assert_eq!(sim.rule(run, dud).await.status, RuleStatus::Escalated, "no derived fix without evidence: {summary:?}");
    assert_eq!(sim.guest.result(dud), Some(Outcome::Fail));
    let replayed: Vec<String> = found[0]["replay"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
    for r in RULES.iter().filter(|r| **r != dud) {
        let attempts = sim.attempts(run, r).await;
        let last = attempts.last().unwrap();
        assert_eq!((last.verdict, last.kept), (Some(Verdict::Fixed), Some(KeptState::Confirmed)), "{r}: {attempts:?}");
        assert_eq!(attempts.len(), 1 + usize::from(replayed.contains(&full(r))), "{r}: replayed once if it came after the dud");
        assert_eq!(sim.guest.result(r), Some(Outcome::Pass), "{r}");
    }
    took("a_deferred_fix_whose_rule_still_fails_is_blamed_at_its_check", t);
}

/// Killed during the second fix of a batch: the first, deferred, is pending with no rule result.
/// The resumed run restores its snapshot, and the next check confirms it; nothing scans it alone.
#[tokio::test]
async fn a_run_killed_with_deferred_fixes_pending_checks_them_on_resume() {
    let t = Instant::now();
    let sim = batched("deferred-resume").await;
    let run = sim.new_run("stock").await;
    let first_two: Vec<String> = {
        // The stock Architect's order: the first two candidates.
        let probe = batched("deferred-order").await;
        let probe_run = probe.new_run("stock").await;
        probe.stock(probe_run).await.unwrap();
        let mut picks = probe.store.events(probe_run, 0).await.unwrap().into_iter().filter(|e| e.kind == EventKind::Pick);
        [picks.next(), picks.next()].map(|e| e.and_then(|e| e.rule_id).unwrap()).to_vec()
    };
    sim.kill_during(run, &stock_fix(&first_two[1])).await;
    let pending = sim.store.pending_fixes(run).await.unwrap();
    assert_eq!(pending.iter().map(|a| a.spec.rule_id.clone()).collect::<Vec<_>>(), [first_two[0].clone()]);
    assert_eq!(pending[0].findings.rule_result, None, "deferred: its rule not scanned yet");

    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, &first_two[0]).await;
    assert_eq!(a.len(), 1, "kept through the kill: {a:?}");
    assert_eq!((a[0].kept, a[0].findings.rule_result), (Some(KeptState::Confirmed), Some(ScanResult::Pass)));
    assert!(scans_naming(&sim, &[first_two[0].as_str()]).iter().all(|n| *n > 2));
    let want = RULES.map(String::from).to_vec();
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, want);
    took("a_run_killed_with_deferred_fixes_pending_checks_them_on_resume", t);
}

/// With the OVAL engine each attempt starts from evidence: with deferred rescans it comes from
/// the first scan (or the first attempt's rescan, which looks ahead), carried past the batch's
/// earlier fixes, then from each check, which looks ahead to the next batch's stock fixes.
#[tokio::test]
async fn deferred_fixes_take_their_evidence_from_the_first_scan_and_each_check() {
    let t = Instant::now();
    let mut sim = batched("deferred-evidence").await;
    sim.with_oval();
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let fixed = sim.with_status(run, RuleStatus::Fixed).await;
    assert_eq!(fixed, RULES.map(String::from).to_vec(), "{summary:?}");
    let attempts = sim.events(run, EventKind::Attempt).await;
    assert_eq!(attempts.len(), RULES.len());
    // The sim's first scan gives no evidence: the first attempt's rescan looks ahead for the rest.
    let ahead: Vec<bool> = attempts.iter().map(|a| a["evidence_looked_ahead"] == true).collect();
    assert_eq!(ahead, [false, true, true, true, true, true], "{attempts:?}");
    let alone = scans_naming(&sim, &RULES);
    assert!(alone.iter().all(|n| *n > 2), "no rescan of one or two rules: {alone:?}");
    took("deferred_fixes_take_their_evidence_from_the_first_scan_and_each_check", t);
}

/// Stock fixes the content marks `reboot` defer too when the run has its reboot proof. One whose
/// rule passes live is confirmed `fixed` at the check; one whose rule passes only after a boot
/// is read failing there and kept for the proof (`needs_reboot`), not blamed; the proof's reboot
/// then proves it `fixed`.
#[tokio::test]
async fn deferred_fixes_that_take_effect_at_boot_are_kept_for_the_reboot_proof() {
    let t = Instant::now();
    let (live, boot) = ("sysctl_fs_suid_dumpable", "sysctl_kernel_randomize_va_space");
    for r in [live, boot] {
        assert!(content().rule(&full(r)).and_then(|c| c.fix.as_ref()).is_some_and(|f| f.reboot), "{r}: marked reboot");
    }
    let mut sim = batched("deferred-reboot").await;
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
    assert!(reason.contains("reads fail at the batch's check until then: kept for the run's reboot proof"), "{reason}");
    let verdicts = sim.events(run, EventKind::Verdict).await;
    assert!(verdicts.iter().any(|v| v["verdict"] == "needs_reboot"), "{verdicts:?}");
    let live_reason = sim.attempts(run, live).await[0].verdict_reason.clone().unwrap_or_default();
    assert!(live_reason.contains("the rule and the regression set are checked with the batch"), "{live_reason}");
    let sizes = scans_naming(&sim, &[live, boot]);
    assert!(sizes.iter().all(|n| *n > 2), "both were scanned only with a check: {sizes:?}");
    took("deferred_fixes_that_take_effect_at_boot_are_kept_for_the_reboot_proof", t);
}
