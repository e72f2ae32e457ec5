//! A fix is stopped for stalling, never for being slow (`temper_core::script`): in-process, with
//! the watch's times scaled down (every 50 ms, stalled after 400 ms) so that the test runs in
//! seconds. The watch itself, at its real times on a paused clock, is tested in temper-core.
mod sim;

use std::time::{Duration, Instant};

use sim::*;
use temper_core::script::Watch;
use temper_journal::Verdict;
use temper_journal::{EscalationCause, RuleStatus};
use temper_scap::Outcome;

const WORKING: &str = "package_audit_installed";
const SLEEPING: &str = "package_cron_installed";
const LOCKED: &str = "package_ntp_installed";

#[tokio::test]
async fn a_working_fix_runs_on_and_a_stalled_one_is_stopped_with_its_cause_named_everywhere() {
    let t = Instant::now();
    let mut sim = Sim::new("watch").await;
    let watch = Watch { stall_after: Duration::from_millis(400), every: Duration::from_millis(50), cap: Duration::from_secs(60) };
    sim.settings.fix_watch = watch;
    sim.settings.rules = [WORKING, SLEEPING, LOCKED].map(String::from).to_vec();
    // Five times the stall time, working all along; then a sleeper, and one queued behind dpkg's lock.
    let busy = Duration::from_secs(2);
    sim.guest.stock_fix(&stock_fix(WORKING), vec![Effect::Takes(busy, SimDoing::Working), Effect::Pass(full(WORKING))]);
    sim.guest
        .stock_fix(&stock_fix(SLEEPING), vec![Effect::Takes(Duration::from_secs(30), SimDoing::Sleeping), Effect::Pass(full(SLEEPING))]);
    sim.guest
        .stock_fix(&stock_fix(LOCKED), vec![Effect::Takes(Duration::from_secs(30), SimDoing::WaitingOnDpkg), Effect::Pass(full(LOCKED))]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    let working = sim.attempts(run, WORKING).await;
    assert_eq!(working[0].verdict, Some(Verdict::Fixed), "{:?}", working[0].verdict_reason);
    assert!(working[0].findings.apply_ms.unwrap_or(0) >= busy.as_millis() as i64, "it ran to its end: {:?}", working[0].findings.apply_ms);
    assert_eq!(sim.guest.result(WORKING), Some(Outcome::Pass));

    for (rule, cause) in
        [(SLEEPING, "no CPU and wrote nothing for"), (LOCKED, "/var/lib/dpkg/lock-frontend held by process 812 (unattended-upgr)")]
    {
        let a = sim.attempts(run, rule).await;
        let reason = a[0].verdict_reason.clone().unwrap_or_default();
        assert_eq!(a[0].verdict, Some(Verdict::Stalled), "{rule}: {reason}");
        assert!(reason.contains(cause) && reason.contains("fix_stall_secs"), "{rule}: {reason}");
        assert!(a[0].findings.apply_ms.unwrap() < 5_000, "{rule} was stopped, not waited for: {:?}", a[0].findings.apply_ms);
        assert_eq!(sim.guest.result(rule), Some(Outcome::Fail), "{rule}: killed before its change");
        let r = sim.rule(run, rule).await;
        assert_eq!(r.status, RuleStatus::Escalated);
        let why = r.reason.clone().unwrap_or_default();
        assert!(why.contains("stopped as stalled") && why.contains(cause), "{rule}'s escalation names the cause: {why}");
        assert_eq!(r.escalation_cause, Some(EscalationCause::Architect), "{rule}");
    }
    assert_eq!(sim.guest.killed(), 2, "each stalled fix's processes were killed");

    let report = sim.report(run).await;
    for rule in [SLEEPING, LOCKED] {
        let section = section(&report, rule);
        assert!(section.contains("stalled") && section.contains("fix_stall_secs"), "{rule}'s next step names the setting:\n{section}");
    }
    took("a_working_fix_runs_on_and_a_stalled_one_is_stopped_with_its_cause_named_everywhere", t);
}

#[tokio::test]
async fn a_fix_still_working_at_the_cap_is_timed_out_and_the_next_step_names_the_cap() {
    let mut sim = Sim::new("watch-cap").await;
    sim.settings.fix_watch =
        Watch { stall_after: Duration::from_secs(5), every: Duration::from_millis(50), cap: Duration::from_millis(600) };
    sim.settings.rules = vec![WORKING.to_string()];
    sim.guest.stock_fix(&stock_fix(WORKING), vec![Effect::Takes(Duration::from_secs(30), SimDoing::Working), Effect::Pass(full(WORKING))]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let a = sim.attempts(run, WORKING).await;
    let reason = a[0].verdict_reason.clone().unwrap_or_default();
    assert_eq!(a[0].verdict, Some(Verdict::TimedOut), "{reason}");
    assert!(reason.contains("hard cap") && reason.contains("fix_timeout_secs"), "{reason}");
    let report = sim.report(run).await;
    assert!(report.contains("Raise `fix_timeout_secs`"), "{report}");
}

/// The report's section on `rule`: from its heading (`### Title (rule)`) to the next heading.
fn section<'a>(report: &'a str, rule: &str) -> &'a str {
    let at = report.find(&format!("({rule})\n")).unwrap_or_else(|| panic!("{rule}'s heading in:\n{report}"));
    let rest = &report[at..];
    let end = rest[1..].find("\n#").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}
