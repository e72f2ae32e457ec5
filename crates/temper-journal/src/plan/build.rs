//! The proven plan made from a finished run's records: its kept fixes, in the order it kept them,
//! each with what the run saw of it. The exports (`temper-report`) write a plan; they do not make it.
use temper_scap::{Benchmark, ContentRule};

use super::{ContentRef, Header, Plan, PlanStep, Script, ScriptKind, SourceRun, TailoringRef, VERSION};
use crate::controls::RunControls;
use crate::{Attempt, FixSource, Rule, Run, RunId, RunSummary, Verdict};

/// What a plan is made of: a run and what the store holds of it.
#[derive(Debug, Clone, Copy)]
pub struct Records<'a> {
    pub run: &'a Run,
    /// The summary the loop returned; `None` until the run finished.
    pub summary: Option<&'a RunSummary>,
    pub rules: &'a [Rule],
    pub attempts: &'a [Attempt],
}

/// Why a run has no plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("run {0} has not finished: it has no proven plan yet")]
    Unfinished(RunId),
    #[error("run {0} did not record its content's sha256, and the datastream is not on this host to compute it")]
    NoContentSha(RunId),
}

/// The plan of a finished run. `content_sha256` is the datastream's, for runs that did not record
/// it when they started ([`recorded_content_sha256`]).
pub fn build(r: Records<'_>, content: Option<&Benchmark>, content_sha256: Option<String>) -> Result<Plan, BuildError> {
    let run = r.run;
    let summary = r.summary.ok_or(BuildError::Unfinished(run.id))?;
    let sha256 = recorded_content_sha256(run).or(content_sha256).ok_or(BuildError::NoContentSha(run.id))?;
    let tailoring = RunControls::of(run).tailoring.map(|t| TailoringRef { path: t.file, sha256: t.sha256 });
    let version = run.content_version.clone().or_else(|| content.map(|c| c.version.clone())).unwrap_or_else(|| "unknown".into());
    let header = Header {
        skill: run.skill.clone(),
        profile: run.profile.clone(),
        tailoring,
        content: ContentRef { datastream: run.datastream.clone(), version, sha256 },
        source: SourceRun {
            target: run.target.clone(),
            run: run.id,
            started_at: run.started_at.clone(),
            ended_at: run.ended_at.clone(),
            regression_every: run.regression_every.map(|n| n.max(1) as u32),
        },
        temper_version: env!("CARGO_PKG_VERSION").to_string(),
        reboot_proven: summary.rebooted == Some(true),
        exported_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    Ok(Plan { version: VERSION, header, steps: steps(r, content) })
}

/// The datastream's sha256 as the run recorded it when it started (`content_sha256` in its
/// stored options).
pub fn recorded_content_sha256(run: &Run) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct OptionsWithContentSha {
        content_sha256: Option<String>,
    }
    serde_json::from_str::<OptionsWithContentSha>(&run.options_json).ok()?.content_sha256
}

/// The run's kept fixes as plan steps, in the order they were kept.
pub fn steps(r: Records<'_>, content: Option<&Benchmark>) -> Vec<PlanStep> {
    kept(r.attempts).into_iter().enumerate().map(|(i, a)| step(i + 1, a, r, content)).collect()
}

/// The fixes in force, in the order they were kept.
pub fn kept(attempts: &[Attempt]) -> Vec<&Attempt> {
    let mut kept: Vec<&Attempt> = attempts.iter().filter(|a| a.in_force()).collect();
    kept.sort_by(|a, b| (a.ended_at.as_deref(), a.id).cmp(&(b.ended_at.as_deref(), b.id)));
    kept
}

/// A rule's title: the content's, else the one stored with it, else its short id.
pub fn title(rule: &Rule, content: Option<&ContentRule>) -> String {
    let title = content.map(|c| c.title.clone()).filter(|t| !t.is_empty()).unwrap_or_else(|| rule.title.clone());
    if title.is_empty() { temper_scap::short_rule_id(&rule.rule_id).to_string() } else { title }
}

fn step(n: usize, a: &Attempt, r: Records<'_>, content: Option<&Benchmark>) -> PlanStep {
    let c = content.and_then(|c| c.rule(&a.spec.rule_id));
    let title = r.rules.iter().find(|x| x.rule_id == a.spec.rule_id).map(|x| title(x, c)).unwrap_or_default();
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
