//! The journal's records: what the loop writes and the reports and the CLI read.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::vocab::{EscalationCause, EventKind, Phase, QueueState, RuleStatus, RunStatus, ScanResult, TipKind, TurnMode, TurnRole};
use temper_scap::Severity;
use temper_scap::oval::Evidence;

use crate::id::{AttemptId, EventId, MemoryId, RunId, TurnId};

/// What a new run is started with.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub skill: String,
    pub profile: String,
    pub datastream: String,
    pub content_version: Option<String>,
    /// The target's label, for reports (`Target::label`).
    pub target: String,
    pub agent: String,
    pub options_json: String,
    /// The snapshot the run starts from; its first checkpoint.
    pub baseline: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Run {
    pub id: RunId,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub skill: String,
    pub profile: String,
    pub datastream: String,
    pub content_version: Option<String>,
    pub target: String,
    pub agent: String,
    pub options_json: String,
    pub phase: Phase,
    pub current_rule: Option<String>,
    pub checkpoint: String,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    pub exit_code: Option<i64>,
    pub summary_json: Option<String>,
    pub error: Option<String>,
    pub heartbeat_at: Option<String>,
    /// Fixes per regression check; 1: the regression set rides in every rule rescan.
    pub regression_every: Option<i64>,
    /// The snapshot the run started from.
    pub baseline: String,
    /// The process that drives the run (`host:pid:nonce`), while its lease holds.
    pub driver: Option<String>,
    /// The driver's lease, in epoch milliseconds.
    pub lease_until: Option<i64>,
    /// Wall and guest time of the run's earlier segments and of this one so far (kept with the lease).
    pub wall_ms: i64,
    pub guest_ms: i64,
    /// The target the run drives, whole; `None` for runs started before targets were stored.
    #[cfg_attr(feature = "sqlx", sqlx(json(nullable)))]
    pub target_config: Option<crate::target::Target>,
}

impl Run {
    /// Marked running, but no process drives it: its lease ran out, or its process on this host
    /// is gone (a kill, a crash). `temper resume` continues it.
    pub fn driver_gone(&self, now_ms: i64) -> bool {
        self.status == RunStatus::Running
            && (self.lease_until.is_none_or(|u| u < now_ms) || self.driver.as_deref().is_none_or(crate::driver_is_dead))
    }
}

/// A rule as the first scan found it.
#[derive(Debug, Clone)]
pub struct NewRule {
    pub rule_id: String,
    pub title: String,
    pub severity: Severity,
    pub initial_result: ScanResult,
    pub status: RuleStatus,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Rule {
    pub id: i64,
    pub run_id: RunId,
    pub rule_id: String,
    pub title: String,
    /// Stored as its text; text outside the XCCDF values reads as `unknown`.
    #[cfg_attr(feature = "sqlx", sqlx(try_from = "String"))]
    pub severity: Severity,
    pub initial_result: ScanResult,
    pub final_result: Option<ScanResult>,
    pub status: RuleStatus,
    pub reason: Option<String>,
    /// Why it was escalated, when it was.
    pub escalation_cause: Option<EscalationCause>,
    /// Attempts that count as tries (an interrupted one does not).
    pub attempts: i64,
    pub elapsed_ms: i64,
    /// What the final scan found wrong with it, when it still fails and the scan says (the OVAL
    /// engine), attempted or not.
    #[cfg_attr(feature = "sqlx", sqlx(json(nullable)))]
    pub final_evidence: Option<Evidence>,
    /// Its verdict from outside the guest on the run's final state (`temper-offline`), when the
    /// disk was judged.
    #[cfg_attr(feature = "sqlx", sqlx(json(nullable)))]
    pub offline_verdict: Option<crate::offline::OfflineVerdict>,
}

/// Why a rule goes to a human: the cause, and the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub cause: EscalationCause,
    pub reason: String,
}

impl Escalation {
    pub fn new(cause: EscalationCause, reason: impl Into<String>) -> Self {
        Self { cause, reason: reason.into() }
    }
}

/// One LLM call. `tool_calls_dropped` and `sections` are JSON arrays.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct StoredTurn {
    pub id: TurnId,
    pub run_id: RunId,
    pub attempt_id: Option<AttemptId>,
    pub rule_id: Option<String>,
    pub role: TurnRole,
    pub model: String,
    pub prompt_chars: i64,
    pub prompt_tokens_est: i64,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub latency_ms: i64,
    pub retries: i64,
    pub tool_calls_seen: i64,
    pub tool_calls_dropped: String,
    pub mode: TurnMode,
    pub finish_reason: Option<String>,
    pub sections: String,
    pub error: Option<String>,
    pub created_at: String,
}

/// A turn to record: an LLM call's record, with the attempt and rule it served.
#[derive(Debug, Clone)]
pub struct NewTurn<'a> {
    pub attempt_id: Option<AttemptId>,
    pub rule_id: Option<&'a str>,
    pub record: &'a crate::turn::TurnRecord,
}

/// An event read back: its kind, and its data typed ([`crate::EventData`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub id: EventId,
    pub run_id: RunId,
    pub ts: String,
    pub kind: EventKind,
    pub rule_id: Option<String>,
    pub data: crate::EventData,
}

impl Event {
    /// The data's fields as the store keeps them (JSON text), for display.
    pub fn json(&self) -> String {
        self.data.fields().to_string()
    }
}

/// Which memory a step recalls: one skill's (`None`: every skill's), narrowed to one rule's,
/// and to what holds on one target. Memory made outside a run belongs to every skill.
///
/// What the Reflector learned in a run holds for that run's target (the target's label,
/// `runs.target`) until a person approves it for the skill (`temper memory approve`): the
/// Reflector reads what the guest wrote, and one poisoned guest must not teach every target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recall<'a> {
    pub skill: Option<&'a str>,
    pub rule: Option<&'a str>,
    /// Only what holds on this target: made by a run on it, or approved. `None`: all of it.
    pub target: Option<&'a str>,
}

impl<'a> Recall<'a> {
    /// Everything remembered, for every skill and target, approved or not.
    pub fn all() -> Self {
        Self::default()
    }

    pub fn skill(skill: &'a str) -> Self {
        Self { skill: Some(skill), ..Self::default() }
    }

    pub fn rule(self, rule: &'a str) -> Self {
        Self { rule: Some(rule), ..self }
    }

    /// What holds on the target labelled `target` (`Target::label`).
    pub fn on(self, target: &'a str) -> Self {
        Self { target: Some(target), ..self }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Lesson {
    pub id: MemoryId,
    pub run_id: Option<RunId>,
    pub rule_id: Option<String>,
    pub lesson: String,
    pub preferred: String,
    pub distilled: String,
    pub created_at: String,
    pub active: bool,
    /// When a person approved it for the skill; until then it holds on its run's target alone.
    pub approved_at: Option<String>,
    pub approved_by: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Ban {
    pub id: MemoryId,
    pub run_id: Option<RunId>,
    pub rule_id: Option<String>,
    pub pattern: String,
    pub reason: String,
    pub created_at: String,
    pub active: bool,
    /// When a person approved it for the skill; until then it holds on its run's target alone.
    pub approved_at: Option<String>,
    pub approved_by: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct Tip {
    pub id: MemoryId,
    pub run_id: Option<RunId>,
    pub rule_id: Option<String>,
    pub text: String,
    pub kind: TipKind,
    pub mechanism: String,
    pub created_at: String,
    pub active: bool,
    /// When a person approved it for the skill; until then it holds on its run's target alone.
    pub approved_at: Option<String>,
    pub approved_by: Option<String>,
}

/// A fix kept on one target and past its regression check, offered to other targets with the
/// same skill before their LLM is asked. Two failures in a row retire it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct RememberedFix {
    pub id: MemoryId,
    pub skill: String,
    pub rule_id: String,
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
    /// The run and attempt it was first kept in.
    pub run_id: RunId,
    pub attempt_id: AttemptId,
    /// Tries on other targets, and how many of those kept it.
    pub tried: i64,
    pub kept: i64,
    pub failed_in_row: i64,
    pub retired_at: Option<String>,
    pub created_at: String,
}

/// What [`MemoryLog::remember_fix`](crate::MemoryLog::remember_fix) stores.
#[derive(Debug, Clone)]
pub struct NewRememberedFix {
    pub skill: String,
    pub rule_id: String,
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
    pub run_id: RunId,
    pub attempt_id: AttemptId,
}

/// Failures in a row that retire a remembered fix.
pub const RETIRE_AFTER: i64 = 2;

/// The summary the loop writes at the end of a run (`runs.summary_json`). Read leniently: a
/// field an older or newer writer leaves out keeps its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSummary {
    /// `None` only in a summary made without its run (written as 0, as it always was).
    #[serde(with = "crate::id::zero_is_none")]
    pub run: Option<RunId>,
    pub exit_code: i64,
    /// Rules by final status: fixed, escalated, skipped, waived, deferred, still_failing, passing...
    pub statuses: BTreeMap<String, usize>,
    pub before: BTreeMap<String, usize>,
    pub after: BTreeMap<String, usize>,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    pub attempts: usize,
    pub reverts: BTreeMap<String, usize>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// The run's wall time over every process segment, and its parts.
    pub wall_secs: f64,
    pub guest_secs: f64,
    pub llm_secs: f64,
    pub harness_secs: f64,
    pub harness_pct: f64,
    /// How many processes drove the run (1 unless it was resumed).
    pub segments: usize,
    /// Rules the final scan found failing that the run did not set aside (disposition, scope).
    pub failing_after: Vec<String>,
    /// The lockout guard and the health check at the end (`None` in older summaries).
    pub healthy: Option<bool>,
    /// The final state survived a cold reboot and the final scan was taken after it; `None`
    /// when the run skipped the reboot proof.
    pub rebooted: Option<bool>,
    /// The guest's final scan against its disk judged from outside (`None`: not asked for, or
    /// a summary older than it).
    pub cross_examination: Option<crate::offline::CrossExam>,
}

/// One target on the fleet's queue: what to run, on what, and how far it got.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "sqlx", derive(sqlx::FromRow))]
pub struct QueueItem {
    pub id: i64,
    pub fleet: String,
    /// The target, whole, as the enqueuing host's config gave it.
    #[cfg_attr(feature = "sqlx", sqlx(json))]
    pub target: crate::target::Target,
    /// `temper run` arguments (checked when enqueued).
    #[cfg_attr(feature = "sqlx", sqlx(json))]
    pub args: Vec<String>,
    pub state: QueueState,
    pub run_id: Option<RunId>,
    pub worker: Option<String>,
    /// How many times a worker took it.
    pub tries: i64,
    /// Not claimable before this (ms since the epoch): a claim's lease until its run exists,
    /// then a pause before a run that stopped unfinished is taken again.
    pub lease_until: Option<i64>,
    pub enqueued_at: String,
    pub claimed_at: Option<String>,
    pub ended_at: Option<String>,
    pub exit_code: Option<i64>,
}

/// What a worker took from the queue.
#[derive(Debug, Clone)]
pub enum QueueClaim {
    /// A target with no run yet: start one.
    Start(QueueItem),
    /// A target whose run stopped unfinished, or whose worker died: resume it.
    Resume(QueueItem),
}

/// What a summary's `rebooted` says, in words (the CLI and the reports).
pub fn reboot_line(rebooted: Option<bool>) -> &'static str {
    match rebooted {
        Some(true) => "the final state survived a cold reboot; the final scan was taken after it",
        Some(false) => "NOT proven: the final state has not been through a reboot",
        None => "not proven: the run skipped the reboot proof",
    }
}

/// What a summary's `rebooted` says, as a value a program reads (the JSON report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RebootOutcome {
    /// The final state survived a cold reboot.
    Proven,
    /// Fixes were kept that no reboot has proven.
    NotProven,
    /// The run skipped the reboot proof (or has not finished).
    NotRun,
}

impl RebootOutcome {
    pub fn of(rebooted: Option<bool>) -> Self {
        match rebooted {
            Some(true) => Self::Proven,
            Some(false) => Self::NotProven,
            None => Self::NotRun,
        }
    }
}
