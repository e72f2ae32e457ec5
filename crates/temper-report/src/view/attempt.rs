//! One attempt as an escalated rule's section shows it.
use serde::Serialize;
use temper_journal::Verdict;
use temper_journal::{Attempt, AttemptNo, KeptState, RevertMethod};
use temper_scap::oval::Evidence;

use crate::run::BlamedBy;
use crate::text::ms;

#[derive(Debug, Serialize)]
pub struct AttemptView {
    pub n: AttemptNo,
    pub source: String,
    pub state: String,
    pub plan: String,
    pub description: String,
    pub fix_script: String,
    pub revert_script: String,
    pub exit_code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub rule_result: String,
    pub health: String,
    pub health_output: String,
    pub access: String,
    pub regressions: Vec<String>,
    pub verdict: String,
    pub verdict_reason: String,
    pub revert_method: String,
    pub reverted: String,
    pub apply: String,
    pub evaluate: String,
    pub revert: String,
    pub warning: Option<String>,
    /// What the scanner found wrong before the fix, and after it (OVAL engine runs).
    pub evidence_before: Option<String>,
    pub evidence_after: Option<String>,
}

pub(super) fn yes_no(v: Option<bool>, yes: &str, no: &str) -> String {
    match v {
        Some(true) => yes.into(),
        Some(false) => no.into(),
        None => "not checked".into(),
    }
}

pub(super) fn attempt_view(a: &Attempt, rule_attempts: &[&Attempt], blamed: Option<BlamedBy>) -> AttemptView {
    let method = a.revert_method.map(|m| m.to_string()).unwrap_or_default();
    let rolled_back = a.kept == Some(KeptState::RolledBack);
    let fixed = a.verdict == Some(Verdict::Fixed);
    let reverted = match a.revert_method {
        _ if rolled_back && fixed => "rolled back with its batch when an earlier fix was found to regress; replayed",
        _ if rolled_back && blamed == Some(BlamedBy::RebootProof) => {
            "kept, then rolled back by the reboot proof (what a cold reboot found is its verdict); the VM went back to the last checkpoint that booted"
        }
        _ if rolled_back && blamed == Some(BlamedBy::FinalScan) => {
            "kept, then rolled back when the final scan found a rule it broke (the run had no reboot proof); the other fixes were replayed"
        }
        _ if rolled_back => "kept, then blamed by the batch's regression check; the VM went back to the snapshot before it",
        Some(RevertMethod::None) if fixed => "kept (new checkpoint)",
        Some(RevertMethod::None) => "nothing to revert (the script never ran)",
        Some(RevertMethod::Script) => "reverted by its revert script, verified by a rescan and the health check",
        Some(RevertMethod::Snapshot) => "restored from the checkpoint snapshot",
        Some(RevertMethod::ScriptThenSnapshot) => "the revert script did not verify; restored from the checkpoint snapshot",
        None => "not recorded",
    }
    .to_string();
    AttemptView {
        n: a.n,
        source: a.label(rule_attempts.iter().copied()),
        state: a.state.to_string(),
        plan: a.spec.plan.clone(),
        description: a.spec.description.clone(),
        fix_script: a.spec.fix_script.clone(),
        revert_script: a.spec.revert_script.clone(),
        exit_code: a.findings.fix_exit_code,
        stdout: a.findings.fix_stdout.clone().unwrap_or_default(),
        stderr: a.findings.fix_stderr.clone().unwrap_or_default(),
        rule_result: a.findings.rule_result.map_or_else(|| "not scanned".into(), |r| r.to_string()),
        health: yes_no(a.findings.health_ok, "healthy", "BROKEN"),
        health_output: a.findings.health_output.clone().unwrap_or_default(),
        access: yes_no(a.findings.access_ok, "ssh and sudo work", "LOST"),
        regressions: a.findings.regressions.clone(),
        verdict: a.outcome(),
        verdict_reason: a.verdict_reason.clone().unwrap_or_default(),
        revert_method: method,
        reverted,
        apply: a.findings.apply_ms.map(ms).unwrap_or_else(|| "-".into()),
        evaluate: a.findings.evaluate_ms.map(ms).unwrap_or_else(|| "-".into()),
        revert: a.findings.revert_ms.map(ms).unwrap_or_else(|| "-".into()),
        warning: a.warning(),
        evidence_before: a.spec.evidence_before.as_ref().map(Evidence::to_text),
        evidence_after: a.findings.evidence_after.as_ref().map(Evidence::to_text),
    }
}
