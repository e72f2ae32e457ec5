//! The derived tier in the loop, in-process (see `sim/`), with the OVAL engine: a rule the content
//! has no fix for is fixed by a fix derived from its check, verified and kept like any fix; one
//! whose check the tier cannot meet is escalated with the reason.
mod sim;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use sim::*;
use temper_journal::Verdict;
use temper_journal::{EventKind, FixSource, MemoryKind, MemoryLog, RuleStatus};
use temper_scap::Outcome;
use temper_scap::oval::{Evidence, OvalReport};

const CRON: &str = "service_cron_enabled";
const RSYSLOG: &str = "service_rsyslog_enabled";

/// A recorded `oscap oval eval --results` of one rule's definition (`tests/data/oval`): cron
/// disabled and stopped (written as ComplianceAsCode's scenario leaves it); rsyslog as oscap found
/// it on a host without systemd's bus (its unit tests are `error`).
fn recorded(rule: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oval").join(format!("{rule}.xml"))).unwrap()
}

/// The evidence the loop reads from that document.
fn evidence(rule: &str) -> Evidence {
    let report = OvalReport::parse(recorded(rule).as_bytes()).unwrap();
    let id = format!("oval:ssg-{rule}:def:1");
    let (result, title, tests) = report.definition(&id).unwrap();
    Evidence { rule: full(rule), outcome: Outcome::Fail, definition: id.clone(), title, result, tests, criteria: report.criteria(&id) }
}

#[tokio::test]
async fn a_rule_without_a_stock_fix_is_fixed_by_a_derived_fix_and_one_it_cannot_meet_says_why() {
    let t = Instant::now();
    let mut sim = Sim::new("derived").await;
    sim.with_oval();
    sim.settings.rules = [CRON, RSYSLOG].map(String::from).to_vec();
    for r in [CRON, RSYSLOG] {
        assert!(content().rule(&full(r)).is_some_and(|c| !c.has_fix()), "{r} has no stock fix in the content");
        sim.guest.oval_results(r, &recorded(r));
    }
    // What the derived fix does in the guest: cron enabled and running, so its check passes.
    let derived = temper_derive::derive(&evidence(CRON)).unwrap();
    sim.guest.stock_fix(&derived.fix_script, vec![Effect::Pass(full(CRON))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let tries = sim.attempts(run, CRON).await;
    assert_eq!(tries.iter().map(|a| (a.spec.source, a.verdict)).collect::<Vec<_>>(), [(FixSource::Derived, Some(Verdict::Fixed))]);
    let a = &tries[0];
    assert_eq!((a.spec.fix_script.as_str(), a.spec.revert_script.as_str()), (derived.fix_script.as_str(), derived.revert_script.as_str()));
    assert!(a.spec.fix_script.contains("systemctl enable 'cron.service'") && a.spec.fix_script.contains("systemctl start 'cron.service'"));
    assert!(a.spec.evidence_before.as_ref().is_some_and(|e| e.criteria.is_some()), "the evidence the fix came from is kept");
    assert!(sim.guest.scripts().contains(&derived.fix_script), "it ran in the guest");
    assert_eq!(sim.rule(run, CRON).await.status, RuleStatus::Fixed);
    assert_eq!(sim.guest.result(CRON), Some(Outcome::Pass));

    let rsyslog = sim.rule(run, RSYSLOG).await;
    assert_eq!(rsyslog.status, RuleStatus::Escalated);
    let reason = rsyslog.reason.unwrap_or_default();
    assert!(
        reason.contains("no stock fix in the content")
            && reason.contains("no derived fix (the check's shape): test oval:ssg-test_service_running_rsyslog:tst:1 is error"),
        "{reason}"
    );
    assert!(sim.attempts(run, RSYSLOG).await.is_empty(), "nothing ran for it");
    assert!(sim.report(run).await.contains("derived"), "the report names the source");
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let ckl = temper_report::render(&data, Some(content()), temper_report::Format::Ckl).unwrap();
    assert!(ckl.contains("derived fix"), "the checklist says how the rule was fixed");
    assert_eq!(summary.exit_code, 2, "one rule escalated");
    took("a_rule_without_a_stock_fix_is_fixed_by_a_derived_fix_and_one_it_cannot_meet_says_why", t);
}

/// A ban that would forbid every derived fix (`pipefail`: every one starts with `set -euo
/// pipefail`) is not enforced however it reached the store (learned before bans were checked so,
/// written there by hand, even approved): the derived fix runs and fixes its rule, and the run's
/// journal says why the ban is not in force.
#[tokio::test]
async fn a_ban_that_forbids_every_derived_fix_is_not_enforced_however_it_reached_the_store() {
    let t = Instant::now();
    let mut sim = Sim::new("derived-ban").await;
    sim.with_oval();
    sim.settings.rules = vec![CRON.into()];
    sim.guest.oval_results(CRON, &recorded(CRON));
    let derived = temper_derive::derive(&evidence(CRON)).unwrap();
    sim.guest.stock_fix(&derived.fix_script, vec![Effect::Pass(full(CRON))]);
    let earlier = sim.new_run("stock").await;
    let ban = sim.store.add_ban(earlier, &full(CRON), "pipefail", "the guest's output said so").await.unwrap();
    sim.store.approve(MemoryKind::Bans, ban, "someone").await.unwrap();
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let tries = sim.attempts(run, CRON).await;
    assert_eq!(tries.iter().map(|a| (a.spec.source, a.verdict)).collect::<Vec<_>>(), [(FixSource::Derived, Some(Verdict::Fixed))]);
    assert!(sim.guest.scripts().contains(&derived.fix_script), "it ran in the guest");
    let refused = sim.events(run, EventKind::BanInvalid).await;
    assert!(!refused.is_empty(), "the journal says why the ban is not in force");
    for e in &refused {
        assert_eq!(e["pattern"], "pipefail");
        assert!(e["reason"].as_str().unwrap_or_default().contains("every derived fix"), "{e}");
    }
    took("a_ban_that_forbids_every_derived_fix_is_not_enforced_however_it_reached_the_store", t);
}

/// Without the OVAL engine there is no evidence to derive from: the rule escalates, saying so.
#[tokio::test]
async fn without_evidence_no_fix_is_derived() {
    let mut sim = Sim::new("derived-xccdf").await;
    sim.settings.rules = vec![CRON.into()];
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();
    let reason = sim.rule(run, CRON).await.reason.unwrap_or_default();
    assert!(reason.contains("no derived fix (no evidence to derive from): no OVAL evidence"), "{reason}");
    assert!(sim.attempts(run, CRON).await.is_empty());
}

const ASLR: &str = "sysctl_kernel_randomize_va_space";

/// A stock fix the reboot proof finds undone at boot (as SSG's sysctl fixes are on Debian 12
/// once `/etc/sysctl.d/99-sysctl.conf`, the link to `/etc/sysctl.conf`, is gone): the rule is
/// offered again, and the fix derived from its check (a drop-in in `/etc/sysctl.d`) is kept.
/// `tests/data/oval/sysctl_kernel_randomize_va_space.xml` is oscap's results on the test VM with
/// `kernel.randomize_va_space = 0` and nothing in `/etc/sysctl.d`.
#[tokio::test]
async fn a_stock_fix_undone_at_boot_is_followed_by_the_derived_fix() {
    let t = Instant::now();
    let mut sim = Sim::new("derived-after-boot").await;
    sim.with_oval();
    sim.settings.rules = vec![ASLR.into()];
    sim.guest.oval_results(ASLR, &recorded(ASLR));
    sim.guest.stock_fix(&stock_fix(ASLR), vec![Effect::Pass(full(ASLR)), Effect::AtBoot(Box::new(Effect::Fail(full(ASLR))))]);
    let derived = temper_derive::derive(&evidence(ASLR)).unwrap();
    sim.guest.stock_fix(&derived.fix_script, vec![Effect::Pass(full(ASLR))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    let tries = sim.attempts(run, ASLR).await;
    let got: Vec<_> = tries.iter().map(|a| (a.spec.source, a.verdict)).collect();
    assert_eq!(got, [(FixSource::Stock, Some(Verdict::NotPersistent)), (FixSource::Derived, Some(Verdict::Fixed))], "{summary:?}");
    assert!(tries[1].spec.fix_script.contains("/etc/sysctl.d/99-temper-sysctl_kernel_randomize_va_space.conf"));
    assert_eq!(sim.rule(run, ASLR).await.status, RuleStatus::Fixed);
    assert_eq!(summary.rebooted, Some(true));
    assert_eq!(sim.guest.result(ASLR), Some(Outcome::Pass));
    took("a_stock_fix_undone_at_boot_is_followed_by_the_derived_fix", t);
}

/// Rules escalated with no fix to try run nothing on the guest, so one rescan looks ahead to the
/// open untried rules like them (no stock fix): each is worked from that rescan's evidence, a
/// derived fix included, not from a rescan of its own. The skill here lets the partition rules
/// in (its own skips them), first: the content has no fix for them and their checks none to derive.
#[tokio::test]
async fn rules_with_no_fix_to_try_share_one_rescan_for_their_evidence() {
    let t = Instant::now();
    let parts = ["partition_for_home", "partition_for_tmp", "partition_for_var", "partition_for_var_log", "partition_for_var_log_audit"];
    let mut sim = Sim::new("derived-ahead").await;
    sim.with_oval();
    sim.edit_skill(|toml| {
        let skip = "[[skip]]\nrule = \"partition_for_.*\"\n";
        assert!(toml.contains(skip), "the skill skips partitioning");
        let first = "risk_order = [\n  \"partition_for_home\",\n  \"partition_.*\",\n";
        toml.replace(skip, "[[skip]]\nrule = \"no_such_rule\"\n").replace("risk_order = [\n", first)
    });
    sim.settings.rules = parts.iter().chain(&[CRON, RSYSLOG]).map(|r| r.to_string()).collect();
    sim.guest.oval_results(CRON, &recorded(CRON));
    let derived = temper_derive::derive(&evidence(CRON)).unwrap();
    sim.guest.stock_fix(&derived.fix_script, vec![Effect::Pass(full(CRON))]);
    let run = sim.new_run("stock").await;
    let summary = sim.stock(run).await.unwrap();

    for r in parts.iter().chain(&[RSYSLOG]) {
        let rule = sim.rule(run, r).await;
        assert_eq!(rule.status, RuleStatus::Escalated, "{r}: {summary:?}");
        assert!(rule.reason.as_deref().unwrap_or_default().contains("no fix to try"), "{r}: {:?}", rule.reason);
    }
    // The first is rescanned alone; the rest, one rescan together, before anything ran. Cron's
    // came with the first scan's OVAL results, as the sim registers a document for it.
    // The rules of the run each scan named (a scan names the content's platform checks too).
    let scope: Vec<String> = sim.settings.rules.iter().map(|r| full(r)).collect();
    let naming = |r: &str| {
        let scans = sim.guest.scanned().into_iter().filter(|s| s.contains(&full(r)));
        scans.map(|s| s.into_iter().filter(|x| scope.contains(x)).collect::<BTreeSet<_>>()).collect::<Vec<_>>()
    };
    assert_eq!(naming(parts[0])[0], BTreeSet::from([full(parts[0])]), "the first rule's own rescan");
    let ahead: BTreeSet<String> = parts[1..].iter().chain(&[RSYSLOG]).map(|r| full(r)).collect();
    for r in &parts[1..] {
        assert_eq!(naming(r)[0], ahead, "{r} was first scanned with the others");
        // Then once more at the end, for the report's evidence of the rules left failing.
        assert_eq!(naming(r).len(), 2, "{r}: {:?}", naming(r));
    }
    // The derived fix came from that rescan's evidence, as from a rescan of its own.
    let tries = sim.attempts(run, CRON).await;
    assert_eq!(tries.iter().map(|a| (a.spec.source, a.verdict)).collect::<Vec<_>>(), [(FixSource::Derived, Some(Verdict::Fixed))]);
    assert_eq!(tries[0].spec.fix_script, derived.fix_script);
    assert!(tries[0].spec.evidence_before.as_ref().is_some_and(|e| e.criteria.is_some()), "the evidence it came from is kept");
    let attempts = sim.events(run, temper_journal::EventKind::Attempt).await;
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["evidence_looked_ahead"], true, "{attempts:?}");
    took("rules_with_no_fix_to_try_share_one_rescan_for_their_evidence", t);
}

/// The full scans' own OVAL results (`--oval-results`) are the evidence of the rules failing in
/// them: the first scan's serves the first attempt, the final scan's the report, so a rule with
/// no fix to try is never rescanned on its own.
#[tokio::test]
async fn the_full_scans_own_oval_results_are_the_evidence_first_and_last() {
    let t = Instant::now();
    let mut sim = Sim::new("derived-full-evidence").await;
    sim.with_oval();
    sim.settings.rules = vec![RSYSLOG.into()];
    // A set cadence: no rescans to measure one.
    sim.settings.regression_every = Some(1);
    sim.guest.oval_results(RSYSLOG, &recorded(RSYSLOG));
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    let rule = sim.rule(run, RSYSLOG).await;
    assert_eq!(rule.status, RuleStatus::Escalated);
    assert!(rule.reason.as_deref().unwrap_or_default().contains("is error"), "derived from the first scan's evidence: {:?}", rule.reason);
    // The final scan's results and items, read against the host's definitions (which write a
    // few defaults oscap's copy spells out, so the tests are compared by what was found).
    let found =
        |e: &Evidence| (e.definition.clone(), e.tests.iter().map(|t| (t.id.clone(), t.result, t.items.clone())).collect::<Vec<_>>());
    assert_eq!(rule.final_evidence.as_ref().map(found), Some(found(&evidence(RSYSLOG))));
    let named: Vec<Vec<String>> = sim.guest.scanned().into_iter().filter(|s| s.contains(&full(RSYSLOG))).collect();
    assert!(named.is_empty(), "no rescan named it: {named:?}");
    assert_eq!(sim.guest.scanned().iter().filter(|s| s.is_empty()).count(), 2, "the first and the final scan");
    took("the_full_scans_own_oval_results_are_the_evidence_first_and_last", t);
}

/// A plan step as the source exported it: derived there, from the source's items (this script
/// names `atd`, which the target's evidence does not call for), marked so.
fn derived_step(n: usize, rule: &str) -> temper_journal::plan::PlannedFix {
    let fix_script = format!("{} for {rule} on the source target\nsystemctl enable 'atd.service'\n", temper_derive::HEADER);
    let fix =
        temper_journal::turn::ApplyFix { fix_script, revert_script: "true\n".into(), description: format!("the source's fix for {rule}") };
    temper_journal::plan::PlannedFix { n, rule: full(rule), fix, accepted_exits: vec![0], needs_reboot: false, derived: true }
}

/// A plan's derived steps are derived again on each target, from that target's own evidence:
/// the source's scripts never run, in a batch (`batch`) or alone. A derived step the target's
/// evidence gives no fix for is refused with why, nothing run, and its rule goes to the normal
/// loop. The plan this run exports marks the step derived.
async fn derived_again(name: &str, rules: &[&str]) {
    let t = Instant::now();
    let mut sim = Sim::new(name).await;
    sim.with_oval();
    sim.settings.rules = rules.iter().map(|r| r.to_string()).collect();
    sim.settings.plan = rules.iter().enumerate().map(|(i, r)| derived_step(i + 1, r)).collect();
    for r in rules {
        sim.guest.oval_results(r, &recorded(r));
    }
    let derived = temper_derive::derive(&evidence(CRON)).unwrap();
    sim.guest.stock_fix(&derived.fix_script, vec![Effect::Pass(full(CRON))]);
    let run = sim.new_run("stock").await;
    sim.stock(run).await.unwrap();

    let scripts = sim.guest.scripts();
    assert!(!scripts.iter().any(|s| s.contains("atd.service")), "a source's script ran: {scripts:#?}");
    assert!(scripts.contains(&derived.fix_script), "the target's own derived fix ran");
    let cron = sim.attempts(run, CRON).await;
    assert_eq!((cron[0].spec.source, cron[0].verdict), (FixSource::Plan, Some(Verdict::Fixed)), "{cron:?}");
    assert_eq!(cron[0].spec.fix_script, derived.fix_script);
    assert!(cron[0].spec.description.starts_with("derived again on this target from its own evidence"), "{}", cron[0].spec.description);
    assert_eq!(sim.rule(run, CRON).await.status, RuleStatus::Fixed);
    if rules.contains(&RSYSLOG) {
        let rsyslog = sim.attempts(run, RSYSLOG).await;
        assert_eq!((rsyslog[0].spec.source, rsyslog[0].verdict), (FixSource::Plan, Some(Verdict::Refused)), "{rsyslog:?}");
        let why = rsyslog[0].verdict_reason.clone().unwrap_or_default();
        assert!(why.contains("is derived, and derived again on this target: no derived fix (the check's shape)"), "{why}");
        assert_eq!(sim.rule(run, RSYSLOG).await.status, RuleStatus::Escalated, "the normal loop took it up, and had no fix either");
    }
    let data = temper_report::load(sim.store.as_ref(), run).await.unwrap();
    let plan = temper_journal::plan::build(data.records(), Some(content()), Some("0".repeat(64))).unwrap();
    let step = plan.steps.iter().find(|s| s.rule == full(CRON)).unwrap();
    assert!(step.derived && step.source == FixSource::Plan, "exported again, the step is still derived: {step:?}");
    assert!(temper_report::plan::readme(&plan, &temper_journal::plan::Terms::default()).contains("derives each again on its target"));
    took(name, t);
}

#[tokio::test]
async fn a_plans_derived_steps_in_a_batch_are_derived_again_from_this_targets_evidence() {
    derived_again("derived-plan-batch", &[CRON, RSYSLOG]).await;
}

#[tokio::test]
async fn a_plans_derived_step_alone_is_derived_again_from_this_targets_evidence() {
    derived_again("derived-plan-single", &[CRON]).await;
}
