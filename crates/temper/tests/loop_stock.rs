//! The loop in-process with the stock agent: a whole run, bisect and replay, reopen, and resume
//! after a kill. No VM: see `sim/`.
mod sim;

use std::time::{Duration, Instant};

use sim::*;
use temper_core::ralph::Settings;
use temper_journal::Verdict;
use temper_journal::{
    AttemptState, EventData, EventKind, FixSource, Outlook, ReplayWhy, Replayed, RuleStatus, ScanResult, Tally, open_ids, predict_end,
};
use temper_scap::Outcome;

/// The failing rules of the recorded scan that the stock agent can fix here: not skipped by the
/// skill, with a stock fix.
const FIXABLE: &[&str] = &[
    "file_permissions_systemmap",
    "package_audit_installed",
    "package_cron_installed",
    "package_ntp_installed",
    "package_rsyslog_installed",
    "sshd_allow_only_protocol2",
    "sshd_disable_empty_passwords",
    "sshd_disable_root_login",
    "sshd_set_idle_timeout",
    "sshd_set_keepalive",
    "sysctl_fs_suid_dumpable",
    "sysctl_kernel_randomize_va_space",
];

#[tokio::test]
async fn a_stock_run_fixes_every_rule_its_fixes_fix() {
    let t = Instant::now();
    let sim = Sim::new("whole").await;
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    let fixed = sim.with_status(run, RuleStatus::Fixed).await;
    let mut want: Vec<String> = FIXABLE.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(fixed, want, "summary: {summary:?}");
    // SSG has no Debian remediation for these two: escalated, saying so.
    assert_eq!(sim.with_status(run, RuleStatus::Escalated).await, ["service_cron_enabled", "service_rsyslog_enabled"]);
    let cron = sim.rule(run, "service_cron_enabled").await;
    // Without the OVAL engine's evidence no fix is derived either, and the reason says both.
    let reason = cron.reason.as_deref().unwrap_or("");
    assert!(
        reason.contains("no stock fix in the content") && reason.contains("no derived fix (no evidence to derive from): no OVAL evidence"),
        "{reason}"
    );
    assert_eq!(sim.attempts(run, "service_cron_enabled").await.len(), 0);
    for r in FIXABLE {
        assert_eq!(sim.guest.result(r), Some(Outcome::Pass), "{r} passes in the guest at the end");
    }
    assert_eq!(summary.exit_code, 2, "escalated rules make exit code 2");
    took("a_stock_run_fixes_every_rule_its_fixes_fix", t);
}

/// `--rules` with two rules: the other failing rules are `out_of_scope` from the first scan on,
/// never picked, and counted in no status count, ETA, summary or exit code. The whole run above
/// ends 2 (escalated rules); this one ends 0, both its rules fixed, killed and resumed once.
#[tokio::test]
async fn a_rules_run_counts_only_its_scope() {
    let t = Instant::now();
    let mut sim = Sim::new("scope").await;
    let scope = ["sshd_set_keepalive", "file_permissions_systemmap"];
    sim.settings.rules = scope.map(String::from).to_vec();
    let run = sim.new_run("stock").await;
    // Mid-run, as `temper status` reads it: the rest is out of scope already, open counts the scope.
    sim.kill_during(run, &stock_fix(scope[0])).await;
    let mid = Tally::of(&sim.rules(run).await);
    assert_eq!((mid.open + mid.fixed, mid.escalated, mid.still_failing), (2, 0, 0), "{mid:?}");
    assert!(mid.out_of_scope > 5, "{mid:?}");
    let summary = sim.stock(run).await.unwrap();
    let rules = sim.rules(run).await;
    let failing: Vec<_> = rules.iter().filter(|r| r.initial_result == ScanResult::Fail && !r.status.dispositioned()).collect();
    assert!(failing.len() > scope.len() + 5, "the recorded scan fails many more rules: {}", failing.len());
    for r in &failing {
        let short = temper_scap::short_rule_id(&r.rule_id);
        if scope.contains(&short) {
            assert_eq!(r.status, RuleStatus::Fixed, "{short}");
        } else {
            assert_eq!(r.status, RuleStatus::OutOfScope, "{short}");
            assert!(r.reason.as_deref().unwrap_or("").contains("--rules"), "{short}: {:?}", r.reason);
            assert_eq!(r.attempts, 0, "{short} was never worked on");
        }
    }
    let out = failing.len() - scope.len();
    assert_eq!(summary.statuses.get("out_of_scope"), Some(&out), "{summary:?}");
    for none in ["pending", "still_failing", "escalated"] {
        assert_eq!(summary.statuses.get(none), None, "no rule is {none}: {summary:?}");
    }
    assert!(summary.failing_after.is_empty(), "{:?}", summary.failing_after);
    assert_eq!(summary.exit_code, 0, "every rule in scope is fixed");
    // What `temper status` and the web view count.
    let tally = Tally::of(&rules);
    let set_aside = rules.iter().filter(|r| r.initial_result == ScanResult::Fail && r.status.dispositioned()).count();
    assert_eq!(
        (tally.failing_at_start, tally.fixed, tally.open, tally.out_of_scope),
        (2 + set_aside, 2, 0, out),
        "the skill's skips count"
    );
    let open = open_ids(&rules);
    let events = sim.store.events(run, None).await.unwrap();
    assert_eq!(predict_end(&Outlook::new(&events, &open), chrono::Utc::now().fixed_offset()), None, "nothing left to estimate");
    let md = sim.report(run).await;
    assert!(md.contains(&format!("Scope: {out} failing rules were outside this run's scope")), "{md}");
    took("a_rules_run_counts_only_its_scope", t);
}

/// Passing rules the scenarios' fixes break.
const P1: &str = "file_permissions_etc_shadow";
const P2: &str = "file_owner_etc_passwd";

/// Two culprits in a row: B breaks P1, so the fixes kept after it are replayed; Y, replayed
/// first, breaks P2, so X is dropped again and replayed a second time. X is a sysctl fix that the
/// content marks `reboot`, and from its third run on it no longer takes effect. A replay keeps
/// its source: X's last attempt is still a stock fix, so its verdict is `needs_reboot` (before
/// the fix a replay of a replay came back as an LLM fix, `still_failing`). The same with a
/// snapshot after every kept fix, and with the default replay budget, where the quick fixes
/// pending go without and each probe rebuilds its state by replays (`state/kept.rs`).
#[tokio::test]
async fn bisect_finds_each_culprit_and_replays_keep_their_stock_source() {
    let t = Instant::now();
    for budget in [Duration::ZERO, Settings::default().replay_budget] {
        let replays = bisect_finds_each_culprit(budget).await;
        assert_eq!(replays > 0, !budget.is_zero(), "budget {budget:?}: {replays} states rebuilt by replays");
    }
    took("bisect_finds_each_culprit_and_replays_keep_their_stock_source", t);
}

/// The case above with `budget`; the replays made for states with no snapshot of their own.
async fn bisect_finds_each_culprit(budget: Duration) -> usize {
    let (b, y, x) = ("package_cron_installed", "file_permissions_systemmap", "sysctl_kernel_randomize_va_space");
    let mut sim = Sim::new(&format!("bisect-{}", budget.as_secs())).await;
    sim.settings.replay_budget = budget;
    sim.settings.rules = [b, y, x, "sshd_set_keepalive", "sshd_disable_root_login"].map(String::from).to_vec();
    sim.settings.regression_every = Some(3);
    // Without the reboot proof, so that X's last fix is judged live (`needs_reboot`, reverted).
    sim.settings.reboot = None;
    sim.guest.stock_fix(&stock_fix(b), vec![Effect::Pass(full(b)), Effect::Fail(P1.into())]);
    sim.guest.stock_fix(&stock_fix(y), vec![Effect::Pass(full(y)), Effect::Fail(P2.into())]);
    sim.guest.stock_fix_from_run(&stock_fix(x), 3, vec![]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    for culprit in [b, y] {
        let last = sim.attempts(run, culprit).await.pop().unwrap();
        assert_eq!(last.verdict, Some(Verdict::Regression), "{culprit}: {last:?}");
    }
    // The bisection probes what failed at the head: at B's snapshot only P1 fails (P2 still
    // passes there), so B is blamed for P1 alone; Y's replay breaks P2 again, and the next check
    // blames Y for it.
    assert_eq!(sim.attempts(run, b).await[0].findings.regressions, [full(P1)], "B broke P1, not P2");
    assert_eq!(sim.attempts(run, y).await.pop().unwrap().findings.regressions, [full(P2)], "Y broke P2");
    let xs = sim.attempts(run, x).await;
    assert_eq!(
        xs.iter().map(|a| (a.spec.source, a.spec.replayed)).collect::<Vec<_>>(),
        [(FixSource::Stock, false), (FixSource::Stock, true), (FixSource::Stock, true)]
    );
    assert_eq!(xs[2].verdict, Some(Verdict::NeedsReboot), "the stock fix asks for a reboot: {:?}", xs[2]);
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, ["sshd_disable_root_login", "sshd_set_keepalive"]);
    for p in [P1, P2] {
        assert_eq!(sim.guest.result(p), Some(Outcome::Pass), "{p} passes again");
        assert_eq!(sim.rule(run, p).await.status, RuleStatus::Passing);
    }
    let events = sim.store.events(run, None).await.unwrap();
    assert_eq!(events.iter().filter(|e| e.kind == EventKind::RegressionFound).count(), 2);
    events.iter().filter(|e| matches!(e.data, EventData::Replay(Replayed::Onto { why: ReplayWhy::NoSnapshot, .. }))).count()
}

/// rsyslog's install makes rules applicable that were not. The regression set rides in each
/// rescan here (a small profile), and so do the rules not applicable so far: the fix's own
/// rescan reopens them, and the loop fixes them. A rule that a unit makes applicable (and
/// failing) at every boot is left to the final scan, which reopens it after the reboot; its fix
/// does not survive the next one.
#[tokio::test]
async fn rules_made_applicable_by_a_fix_reopen_and_are_fixed() {
    let t = Instant::now();
    let mut sim = Sim::new("reopen").await;
    let rsyslog = "package_rsyslog_installed";
    let opened = ["ensure_logrotate_activated", "rsyslog_files_permissions"];
    let at_boot = "rsyslog_files_ownership";
    sim.settings.rules = [rsyslog, opened[0], opened[1], at_boot].map(String::from).to_vec();
    let effects = vec![
        Effect::Pass(full(rsyslog)),
        Effect::Fail(full(opened[0])),
        Effect::Fail(full(opened[1])),
        Effect::AtBoot(Box::new(Effect::Fail(full(at_boot)))),
    ];
    sim.guest.stock_fix(&stock_fix(rsyslog), effects);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    assert_eq!(
        sim.with_status(run, RuleStatus::Fixed).await,
        ["ensure_logrotate_activated", "package_rsyslog_installed", "rsyslog_files_permissions"],
        "{summary:?}"
    );
    for r in [opened[0], opened[1], at_boot] {
        assert_eq!(sim.rule(run, r).await.initial_result, temper_journal::ScanResult::NotApplicable);
    }
    for r in opened {
        assert_eq!(sim.guest.result(r), Some(Outcome::Pass));
    }
    let boot_fix = sim.attempts(run, at_boot).await;
    assert_eq!(boot_fix.first().and_then(|a| a.verdict), Some(Verdict::NotPersistent), "{boot_fix:?}");
    let events = sim.store.events(run, None).await.unwrap();
    let first_final = events.iter().position(|e| e.kind == EventKind::Scan && e.json().contains("final")).unwrap();
    let reopened = |range: &[temper_journal::Event]| {
        range.iter().filter(|e| e.kind == EventKind::RuleApplicable).map(|e| e.rule_id.clone().unwrap_or_default()).collect::<Vec<_>>()
    };
    assert_eq!(reopened(&events[..first_final]), [full(opened[0]), full(opened[1])], "found by rsyslog's own rescan");
    assert_eq!(reopened(&events[first_final..]), [full(at_boot)], "found by the final scan, after the reboot");
    took("rules_made_applicable_by_a_fix_reopen_and_are_fixed", t);
}

/// With batched checks, each check scans the rules not applicable so far too. rsyslog's install
/// makes one fail (worked on in this pass, before any final scan) and one pass (it joins the
/// regression set, so the later fix that breaks it is blamed). One final scan, one reboot.
#[tokio::test]
async fn rules_made_applicable_mid_run_are_found_at_the_next_check() {
    let t = Instant::now();
    let mut sim = Sim::new("watch").await;
    let (rsyslog, filler, breaker) = ("package_rsyslog_installed", "package_cron_installed", "sysctl_fs_suid_dumpable");
    let (fails, passes) = ("ensure_logrotate_activated", "rsyslog_files_permissions");
    sim.settings.rules = [rsyslog, filler, breaker, fails, passes].map(String::from).to_vec();
    sim.settings.regression_every = Some(2);
    sim.guest.stock_fix(&stock_fix(rsyslog), vec![Effect::Pass(full(rsyslog)), Effect::Fail(full(fails)), Effect::Pass(full(passes))]);
    sim.guest.stock_fix(&stock_fix(breaker), vec![Effect::Pass(full(breaker)), Effect::Fail(full(passes))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let events = sim.store.events(run, None).await.unwrap();
    let finals: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| e.kind == EventKind::Scan && e.json().contains("final")).map(|(i, _)| i).collect();
    assert_eq!(finals.len(), 1, "no second final scan: {summary:?}");
    let applicable: Vec<(String, String)> = events
        .iter()
        .take(finals[0])
        .filter(|e| e.kind == EventKind::RuleApplicable)
        .map(|e| (e.rule_id.clone().unwrap_or_default(), e.json()))
        .collect();
    assert_eq!(
        applicable,
        [(full(fails), r#"{"status":"pending"}"#.to_string()), (full(passes), r#"{"status":"passing"}"#.to_string())],
        "both found by a regression check, before the final scan"
    );
    assert_eq!(sim.guest.reboots(), 1);
    assert_eq!(sim.rule(run, fails).await.status, RuleStatus::Fixed);
    assert_eq!(sim.rule(run, passes).await.status, RuleStatus::Passing);
    let blamed = sim.attempts(run, breaker).await;
    assert_eq!(blamed[0].verdict, Some(Verdict::Regression), "{blamed:?}");
    assert_eq!(blamed[0].findings.regressions, [full(passes)]);
    assert_eq!(sim.guest.result(passes), Some(Outcome::Pass), "its breaker was rolled back");
    took("rules_made_applicable_mid_run_are_found_at_the_next_check", t);
}

/// A stock run stopped in the middle of package_cron_installed's fix (half applied: it broke a
/// passing rule), then resumed: the VM goes back to its checkpoint, the interrupted attempt does
/// not count, the rule is fixed first, and the run fixes what an uninterrupted one fixes.
#[tokio::test]
async fn a_stock_run_killed_mid_attempt_resumes_and_loses_nothing() {
    let t = Instant::now();
    let sim = Sim::new("resume").await;
    let cron = stock_fix("package_cron_installed");
    sim.guest.stock_fix(&cron, vec![Effect::Pass(full("package_cron_installed")), Effect::Fail(P1.into())]);
    sim.guest.stock_fix_from_run(&cron, 2, vec![Effect::Pass(full("package_cron_installed"))]);
    let run = sim.new_run("stock").await;
    sim.kill_during(run, &cron).await;
    let before = sim.attempts(run, "package_cron_installed").await;
    assert_eq!(before.len(), 1);
    assert_eq!(sim.guest.result(P1), Some(Outcome::Fail), "the half-done fix is on the guest");

    let summary = sim.stock(run).await.unwrap();
    let cron_attempts = sim.attempts(run, "package_cron_installed").await;
    assert_eq!(cron_attempts.iter().map(|a| a.state).collect::<Vec<_>>(), [AttemptState::Interrupted, AttemptState::Done]);
    assert_eq!(cron_attempts[1].verdict, Some(Verdict::Fixed));
    assert_eq!(sim.rule(run, "package_cron_installed").await.attempts, 1, "the interrupted attempt is not a try");
    let mut want: Vec<String> = FIXABLE.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(sim.with_status(run, RuleStatus::Fixed).await, want);
    assert_eq!(sim.rule(run, P1).await.status, RuleStatus::Passing, "the checkpoint was restored: no regression");
    assert!(sim.store.attempts(run).await.unwrap().iter().all(|a| a.verdict != Some(Verdict::Regression)));
    let events = sim.store.events(run, None).await.unwrap();
    let picks: Vec<_> = events.iter().filter(|e| e.kind == EventKind::Pick).collect();
    let after_resume = picks
        .iter()
        .find(|e| serde_json::from_str::<serde_json::Value>(&e.json()).unwrap()["interrupted"] == true)
        .expect("the interrupted rule is picked again");
    assert_eq!(after_resume.rule_id.as_deref(), Some(full("package_cron_installed").as_str()));
    assert_eq!(summary.segments, 2, "{summary:?}");
    took("a_stock_run_killed_mid_attempt_resumes_and_loses_nothing", t);
}

/// A rule the skill holds back until every other rule is done is still tried when the last
/// other one is escalated for having no stock fix: the escalation frees it, and the harness
/// offers it at once instead of ending the run.
#[tokio::test]
async fn a_rule_held_back_behind_an_escalated_one_is_still_tried() {
    let t = Instant::now();
    let (nofix, last) = ("service_cron_enabled", "sshd_set_keepalive");
    let mut sim = Sim::new("held-back").await;
    sim.edit_skill(|toml| toml + &format!("\n[[order]]\nrule = \"{last}\"\nlast = true\nreason = \"after everything else\"\n"));
    sim.settings.rules = vec![nofix.into(), last.into()];
    sim.guest.stock_fix(&stock_fix(last), vec![Effect::Pass(full(last))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    assert_eq!(sim.rule(run, nofix).await.status, RuleStatus::Escalated, "{summary:?}");
    let attempts = sim.attempts(run, last).await;
    assert_eq!(attempts.iter().map(|a| a.verdict).collect::<Vec<_>>(), [Some(Verdict::Fixed)], "{summary:?}");
    assert_eq!(sim.rule(run, last).await.status, RuleStatus::Fixed);
    took("a_rule_held_back_behind_an_escalated_one_is_still_tried", t);
}

/// A rule not applicable at the baseline that one fix makes applicable (and failing), and that
/// another fix makes pass from the next boot on. The run stops at two rules, before the loop
/// gets to it: it passes at the final scan, after the reboot, so other rules' fixes fixed it;
/// it is not "still failing".
#[tokio::test]
async fn a_rule_made_applicable_that_passes_at_the_final_scan_is_not_still_failing() {
    let t = Instant::now();
    let mut sim = Sim::new("applicable-pass").await;
    let (rsyslog, cron, opened) = ("package_rsyslog_installed", "package_cron_installed", "ensure_logrotate_activated");
    sim.settings.rules = [rsyslog, cron, opened].map(String::from).to_vec();
    sim.settings.max_rules = Some(2);
    sim.guest.stock_fix(&stock_fix(rsyslog), vec![Effect::Pass(full(rsyslog)), Effect::Fail(full(opened))]);
    sim.guest.stock_fix(&stock_fix(cron), vec![Effect::Pass(full(cron)), Effect::AtBoot(Box::new(Effect::Pass(full(opened))))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();
    let rule = sim.rule(run, opened).await;
    assert_eq!(rule.initial_result, ScanResult::NotApplicable);
    assert_eq!(rule.attempts, 0, "the loop stopped before it: {summary:?}");
    assert_eq!(rule.final_result, Some(ScanResult::Pass));
    assert_eq!(rule.status, RuleStatus::Fixed, "{rule:?}");
    assert!(rule.reason.as_deref().unwrap_or("").contains("passes at the final scan"), "{rule:?}");
    assert!(!summary.failing_after.contains(&full(opened)), "{summary:?}");
    took("a_rule_made_applicable_that_passes_at_the_final_scan_is_not_still_failing", t);
}
