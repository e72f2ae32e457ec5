//! The guest cross-examined, as every report shows it: the run's final scan held against its
//! disk, judged from outside the guest. A rule the guest passes and its disk fails comes first.
use serde::Serialize;
use temper_journal::offline::{CrossExam, Disagreement, JudgeFailure, OfflineVerdict};
use temper_scap::Benchmark;

use super::info::{RuleInfo, rule_info};
use super::rules::RuleFindings;
use crate::run::RunData;

/// How the cross-examination went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CrossOutcome {
    Done,
    /// The host could not judge the disk (a tool missing, a remote hypervisor).
    Failed,
    /// The disk itself does not read: a finding.
    Unreadable,
    Skipped,
}

#[derive(Debug, Serialize)]
pub struct CrossView {
    pub outcome: CrossOutcome,
    /// Why it failed or was skipped; empty when done.
    pub reason: String,
    /// What was read: the snapshot of the final state.
    pub source: String,
    pub rules: usize,
    /// Rules the guest's final scan judged (pass or fail), and how many of them the disk judged.
    pub live_judged: usize,
    pub both: usize,
    /// `both` of `live_judged`, in percent, one decimal.
    pub coverage: String,
    pub agree: usize,
    pub live_only: usize,
    pub not_judged: usize,
    /// The guest reports pass, its disk shows fail: the findings.
    pub lies: Vec<DisagreementView>,
    /// The other disagreements between decided results.
    pub differ: Vec<DisagreementView>,
    pub secs: f64,
    /// Why the guest's `sync` failed before its disk was read, when it did.
    pub unflushed: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct DisagreementView {
    pub info: RuleInfo,
    pub live: String,
    pub offline: String,
    /// What the disk shows, when it fails the rule.
    pub found: Option<RuleFindings>,
}

impl CrossView {
    /// The finished run's cross-examination, when it had one.
    pub fn of(data: &RunData, content: Option<&Benchmark>) -> Option<Self> {
        let exam = data.summary.as_ref()?.cross_examination.as_ref()?;
        let view = |d: &Disagreement| {
            let info = match data.rules.iter().find(|r| r.rule_id == d.rule) {
                Some(r) => rule_info(r, content.and_then(|c| c.rule(&r.rule_id))),
                None => bare(&d.rule),
            };
            DisagreementView {
                info,
                live: d.live.to_string(),
                offline: d.offline.to_string(),
                found: d.evidence.as_ref().map(RuleFindings::of),
            }
        };
        let empty = |outcome, reason: &str| CrossView {
            outcome,
            reason: reason.to_string(),
            source: String::new(),
            rules: 0,
            live_judged: 0,
            both: 0,
            coverage: String::new(),
            agree: 0,
            live_only: 0,
            not_judged: 0,
            lies: Vec::new(),
            differ: Vec::new(),
            secs: 0.0,
            unflushed: None,
        };
        Some(match exam {
            CrossExam::Done(x) => CrossView {
                outcome: CrossOutcome::Done,
                reason: String::new(),
                source: x.source.clone(),
                rules: x.rules,
                live_judged: x.live_judged,
                both: x.both,
                coverage: format!("{:.1}%", 100.0 * x.coverage()),
                agree: x.agree,
                live_only: x.live_only,
                not_judged: x.not_judged,
                lies: x.lies.iter().map(view).collect(),
                differ: x.differ.iter().map(view).collect(),
                secs: x.times.total_secs,
                unflushed: x.unflushed.clone(),
            },
            CrossExam::Failed { reason, cause: JudgeFailure::Host } => empty(CrossOutcome::Failed, reason),
            CrossExam::Failed { reason, cause: JudgeFailure::Disk } => empty(CrossOutcome::Unreadable, reason),
            CrossExam::Skipped { why } => empty(CrossOutcome::Skipped, why),
        })
    }
}

/// A rule the run has no row for: its id alone.
fn bare(id: &str) -> RuleInfo {
    let short_id = crate::text::short(id).to_string();
    RuleInfo { rule_id: id.to_string(), title: short_id.clone(), short_id, ..RuleInfo::default() }
}

/// A rule's verdict from outside the guest, in a few words, for the rules table: `pass`,
/// `fail`, `live only`, `not judged`; empty when the disk was not judged.
pub fn offline_cell(v: Option<&OfflineVerdict>) -> String {
    match v {
        Some(OfflineVerdict::Offline { result, .. }) => result.to_string(),
        Some(OfflineVerdict::LiveOnly { .. }) => "live only".into(),
        Some(OfflineVerdict::NotJudged { why, .. }) => format!("not judged ({why})"),
        None => String::new(),
    }
}
