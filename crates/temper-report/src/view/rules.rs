//! A rule as the report shows it: its section when escalated, its line in the list of all
//! rules, and the fixes kept.
use serde::Serialize;
use temper_journal::{self as journal, Attempt, RuleStatus};
use temper_scap::oval::{Evidence, Finding};
use temper_scap::{Benchmark, ContentRule, Severity};

use super::attempt::{AttemptView, attempt_view};
use super::info::{RuleInfo, rule_info};
use super::next_step::{NextStep, next_steps};
use crate::run::RunData;

#[derive(Debug, Serialize)]
pub struct RuleSection {
    pub info: RuleInfo,
    pub initial_result: String,
    pub final_result: Option<String>,
    pub reason: String,
    pub verdicts: Vec<String>,
    pub attempts: Vec<AttemptView>,
    pub lessons: Vec<LessonView>,
    pub bans: Vec<LessonView>,
    pub next_steps: Vec<NextStep>,
    /// What the final scan found wrong with it, when it says.
    pub found: Option<RuleFindings>,
}

/// What the scanner found wrong with a rule: each failed test's items against the state
/// expected, and the whole evidence as text.
#[derive(Debug, Serialize)]
pub struct RuleFindings {
    pub findings: Vec<Finding>,
    pub text: String,
}

impl RuleFindings {
    pub(super) fn of(e: &Evidence) -> Self {
        Self { findings: e.findings(), text: e.to_text() }
    }
}

/// A rule left failing that no section covers (still failing, out of scope, waived...), with what
/// the final scan found.
#[derive(Debug, Serialize)]
pub struct LeftFailing {
    pub info: RuleInfo,
    pub status: RuleStatus,
    pub reason: String,
    pub found: RuleFindings,
}

#[derive(Debug, Serialize)]
pub struct LessonView {
    pub text: String,
    pub detail: String,
    pub extra: String,
}

#[derive(Debug, Serialize)]
pub struct FixedRule {
    pub order: usize,
    pub info: RuleInfo,
    pub attempt: journal::AttemptNo,
    pub source: String,
    pub description: String,
    pub fix_script: String,
    pub final_result: String,
    /// Kept though its script exited non-zero.
    pub warning: Option<String>,
    /// What the scanner found wrong before the fix (OVAL engine runs).
    pub evidence: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct RuleLine {
    pub rule_id: String,
    pub short_id: String,
    pub anchor: String,
    pub title: String,
    pub severity: Severity,
    /// The most severe first, for sorting: high 0, medium 1, low 2, info 3, unknown 4.
    pub sev_rank: u8,
    pub stig_ids: String,
    pub initial_result: String,
    pub final_result: String,
    pub status: RuleStatus,
    pub attempts: i64,
    pub reason: String,
    /// Its verdict from outside the guest on the final state: `pass`, `fail`, `live only`...;
    /// empty when the disk was not judged.
    pub offline: String,
}

/// The rules of one status, for the report's jump links and headings.
#[derive(Debug, Serialize)]
pub struct StatusGroup {
    pub status: RuleStatus,
    pub n: usize,
}

pub(super) fn section(data: &RunData, r: &journal::Rule, c: Option<&ContentRule>) -> RuleSection {
    let attempts: Vec<&Attempt> = data.attempts.iter().filter(|a| a.spec.rule_id == r.rule_id).collect();
    let info = rule_info(r, c);
    let next_steps = next_steps(&info, r, &attempts, data);
    RuleSection {
        initial_result: r.initial_result.to_string(),
        final_result: r.final_result.map(|f| f.to_string()),
        reason: r.reason.clone().unwrap_or_else(|| "no reason recorded".into()),
        verdicts: attempts.iter().map(|a| a.outcome()).collect(),
        attempts: attempts.iter().map(|a| attempt_view(a, &attempts, data.blamed_by(a))).collect(),
        lessons: data
            .lessons
            .iter()
            .filter(|l| l.rule_id.as_deref() == Some(&r.rule_id))
            .map(|l| LessonView { text: l.distilled.clone(), detail: l.lesson.clone(), extra: l.preferred.clone() })
            .collect(),
        bans: data
            .bans
            .iter()
            .filter(|b| b.rule_id.as_deref() == Some(&r.rule_id))
            .map(|b| LessonView { text: b.pattern.clone(), detail: b.reason.clone(), extra: String::new() })
            .collect(),
        next_steps,
        found: r.final_evidence.as_ref().map(RuleFindings::of),
        info,
    }
}

/// The fixes in force at the end of the run, in the order they were kept.
pub fn kept_attempts(data: &RunData) -> Vec<&Attempt> {
    temper_journal::plan::kept(&data.attempts)
}

/// The kept fixes, in the order they were kept.
pub fn fixed_rules(data: &RunData, content: Option<&Benchmark>) -> Vec<FixedRule> {
    kept_attempts(data)
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let r = data.rules.iter().find(|r| r.rule_id == a.spec.rule_id)?;
            Some(FixedRule {
                order: i + 1,
                info: rule_info(r, content.and_then(|c| c.rule(&r.rule_id))),
                attempt: a.n,
                source: a.label(&data.attempts),
                description: a.spec.description.clone(),
                fix_script: a.spec.fix_script.clone(),
                final_result: r.final_result.map_or_else(|| "not scanned".into(), |r| r.to_string()),
                warning: a.warning(),
                evidence: a.spec.evidence_before.as_ref().map(Evidence::to_text),
            })
        })
        .collect()
}
