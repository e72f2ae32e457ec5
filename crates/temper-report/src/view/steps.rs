//! The run's kept fixes as the proven plan's steps, and as one bash script (`replay.sh`).
use temper_journal::Verdict;
use temper_journal::plan::{PlanStep, Script, ScriptKind};
use temper_journal::{Attempt, FixSource};
use temper_scap::Benchmark;

use super::info::rule_info;
use super::rules::kept_attempts;
use crate::replay::{ReplayOrigin, replay};
use crate::run::RunData;

/// The run's kept fixes as plan steps, in the order they were kept.
pub fn steps(data: &RunData, content: Option<&Benchmark>) -> Vec<PlanStep> {
    kept_attempts(data).into_iter().enumerate().map(|(i, a)| step(i + 1, a, data, content)).collect()
}

fn step(n: usize, a: &Attempt, data: &RunData, content: Option<&Benchmark>) -> PlanStep {
    let c = content.and_then(|c| c.rule(&a.spec.rule_id));
    let title = data.rules.iter().find(|r| r.rule_id == a.spec.rule_id).map(|r| rule_info(r, c).title).unwrap_or_default();
    let stock_reboot = a.spec.source == FixSource::Stock && c.and_then(|c| c.fix.as_ref()).is_some_and(|f| f.reboot);
    let exit_code = a.findings.fix_exit_code;
    PlanStep {
        n,
        rule: a.spec.rule_id.clone(),
        title,
        source: a.spec.source,
        attempt: a.n,
        description: a.spec.description.clone(),
        fix: Script::new(n, &a.spec.rule_id, ScriptKind::Fix, &a.spec.fix_script),
        revert: Script::new(n, &a.spec.rule_id, ScriptKind::Revert, &a.spec.revert_script),
        exit_code,
        accepted_nonzero_exit: exit_code.is_some_and(|c| c != 0),
        needs_reboot: stock_reboot || a.verdict == Some(Verdict::NeedsReboot),
        one_way: None,
        derived: derived(a),
        evidence_before: a.spec.evidence_before.clone(),
        evidence_after: a.findings.evidence_after.clone(),
    }
}

/// A fix derived from the rule's check: by this run (source `derived`), or a plan's derived step
/// this run derived again (source `plan`, with a derived fix's header).
fn derived(a: &Attempt) -> bool {
    a.spec.source == FixSource::Derived || (a.spec.source == FixSource::Plan && a.spec.fix_script.starts_with(temper_derive::HEADER))
}

/// The run's kept fixes as one bash script (the plan's `replay.sh`), for the reports.
pub fn replay_script(data: &RunData, content: Option<&Benchmark>) -> String {
    replay(&ReplayOrigin::of_run(&data.run), &steps(data, content))
}
