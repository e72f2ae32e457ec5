//! temper-journal: what a run leaves behind, and the traits it is written through. The records
//! and events, the vocabularies (every status, source, method and kind as an enum), the verdict,
//! the proven plan's model, the run's controls (tailoring, waivers) and target, and the
//! journal's traits. It knows neither the loop nor a database: `temper-core` writes through
//! these traits, `temper-store` implements them (SQLite, PostgreSQL), and the reports and the
//! web view read them. Each call commits on its own; the calls that must be atomic (keeping a
//! fix, settling a batch) are one call each.
mod attempt;
pub mod controls;
mod driver;
mod eta;
mod event;
mod event_parts;
pub mod footprint;
mod handle;
mod id;
pub mod offline;
pub mod plan;
pub mod plan_from;
mod read;
mod records;
mod review;
mod split;
mod standing;
mod tally;
pub mod target;
pub mod turn;
mod verdict;
mod vocab;
pub mod waiver;

use async_trait::async_trait;

pub use attempt::{Attempt, AttemptSpec, Culprit, Evaluation, Findings, KeptFix};
pub use driver::{driver_id, driver_is_dead, now_ms};
pub use eta::{Eta, Outlook, RECALL_RUNS, Remembered, RuleTime, open_and_not_applicable, open_ids, predict as predict_end, rule_times};
pub use event::{
    Blamed, Booted, Cadence, EventData, Picked, PickedBy, PlanBatched, PlanBisected, Regressed, ReplayWhy, Replayed, RescanTimes, ScanKind,
};
pub use handle::RunJournal;
pub use id::{AttemptId, AttemptNo, EventId, IdError, MemoryId, RunId, TurnId, zero_is_none};
pub use read::{ReadAttempts, ReadEvents, ReadJournal, ReadMemory, ReadRules, ReadRuns, ReadTurns};
pub use records::{
    Ban, Escalation, Event, Lesson, NewRememberedFix, NewRule, NewRun, NewTurn, QueueClaim, QueueItem, RETIRE_AFTER, RebootOutcome, Recall,
    RememberedFix, Rule, Run, RunSummary, StoredTurn, Tip, reboot_line,
};
pub use split::{Overhead, Part, Share, Spend, Spending, TimeSplit};
pub use standing::Standing;
pub use tally::{Tally, count_by, reverts};
pub use verdict::Verdict;
pub(crate) use vocab::text_enum;
pub use vocab::{
    AttemptState, Engine, EscalationCause, EventKind, FixSource, KeptState, MemoryKind, Phase, PowerOff, QueueState, RevertMethod,
    RuleStatus, RunStatus, ScanResult, TipKind, TurnMode, TurnRole, UnknownValue,
};

/// The journal's traits (and [`Recall`], which their memory reads take), for callers that hold a
/// concrete store: `use temper_journal::prelude::*`.
pub mod prelude {
    pub use super::{
        AttemptLog, EventLog, Journal, MemoryLog, ReadAttempts, ReadEvents, ReadJournal, ReadMemory, ReadRules, ReadRuns, ReadTurns,
        Recall, RuleLog, RunLog, TurnLog,
    };
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{0}")]
    Open(String),
    #[error("database: {0}")]
    Db(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("event log {path}: {reason}")]
    EventLog { path: String, reason: String },
    #[error("{0}")]
    Unsupported(String),
}

pub type JournalResult<T> = Result<T, JournalError>;

/// Runs: created, driven under a lease, finished (read through [`ReadRuns`]).
#[async_trait]
pub trait RunLog: ReadRuns {
    /// A run with no stored target (`resume` then falls back to the configured one).
    async fn create_run(&self, run: &NewRun) -> JournalResult<RunId>;
    /// A run on `target`, stored whole with it (JSON) in the same statement: `temper resume`
    /// rebuilds its ports from it, whatever the configuration says by then.
    async fn create_run_on(&self, run: &NewRun, target: &crate::target::Target) -> JournalResult<RunId>;
    async fn set_phase(&self, run: RunId, phase: Phase, rule: Option<&str>) -> JournalResult<()>;
    async fn set_status(&self, run: RunId, status: RunStatus, error: Option<&str>) -> JournalResult<()>;
    async fn set_regression_every(&self, run: RunId, every: u32) -> JournalResult<()>;
    /// Each score is set only when given.
    async fn set_scores(&self, run: RunId, before: Option<f64>, after: Option<f64>) -> JournalResult<()>;
    async fn set_content_version(&self, run: RunId, version: &str) -> JournalResult<()>;
    async fn finish_run(&self, run: RunId, summary: &RunSummary) -> JournalResult<()>;
    /// Takes the run for `driver` when no live driver holds it: no driver, an expired lease,
    /// the same driver, or `dead` (a driver known to be gone). One statement, so two processes
    /// never both take it.
    async fn claim_run(&self, run: RunId, driver: &str, dead: Option<&str>, now_ms: i64, until_ms: i64) -> JournalResult<bool>;
    /// Extends the lease and records the time spent so far; false when the lease was lost.
    async fn renew_lease(&self, run: RunId, driver: &str, until_ms: i64, wall_ms: i64, guest_ms: i64) -> JournalResult<bool>;
    async fn release_run(&self, run: RunId, driver: &str) -> JournalResult<()>;
}

/// Rules: as the first scan found them, then as the loop settles them.
#[async_trait]
pub trait RuleLog: ReadRules {
    /// Records a rule of the first scan; a rule already recorded keeps its row (resume).
    async fn add_rule(&self, run: RunId, rule: &NewRule) -> JournalResult<()>;
    async fn set_rule_status(&self, run: RunId, rule_id: &str, status: RuleStatus, reason: Option<&str>) -> JournalResult<()>;
    /// The rule goes to a human: `escalated`, with its cause and reason.
    async fn escalate_rule(&self, run: RunId, rule_id: &str, e: &Escalation) -> JournalResult<()>;
    async fn add_rule_time(&self, run: RunId, rule_id: &str, ms: i64) -> JournalResult<()>;
    async fn set_final_result(&self, run: RunId, rule_id: &str, result: ScanResult) -> JournalResult<()>;
    /// What the final scan found wrong with a rule still failing.
    async fn set_final_evidence(&self, run: RunId, rule_id: &str, evidence: &temper_scap::oval::Evidence) -> JournalResult<()>;
    /// Each rule's verdict from outside the guest, in one transaction (rules not in the run are
    /// left alone).
    async fn set_offline_verdicts(&self, run: RunId, verdicts: &[offline::RuleVerdict]) -> JournalResult<()>;
}

/// Attempts: started before the fix runs, finished with their evaluation, kept or settled.
#[async_trait]
pub trait AttemptLog: ReadAttempts {
    /// Numbers the attempt and counts it on its rule, in one transaction: its id, and its number
    /// on the rule.
    async fn start_attempt(&self, run: RunId, a: &AttemptSpec) -> JournalResult<(AttemptId, AttemptNo)>;
    async fn set_attempt_state(&self, id: AttemptId, state: AttemptState) -> JournalResult<()>;
    async fn finish_attempt(&self, id: AttemptId, e: &Evaluation) -> JournalResult<()>;
    /// Keeps a fix in one transaction: the evaluation, the rule `fixed`, and `checkpoint` in force.
    async fn record_fix(&self, run: RunId, id: AttemptId, e: &Evaluation, rule_id: &str, checkpoint: &str) -> JournalResult<()>;
    /// Keeps a batch's fixes (a plan batch's steps) in one transaction, all with `checkpoint`,
    /// which is then in force: none is kept without the others.
    async fn record_fixes(&self, run: RunId, fixes: &[KeptFix], checkpoint: &str) -> JournalResult<()>;
    /// Keeps a verified fix that awaits its batch's regression check, with its snapshot when one
    /// was taken.
    async fn record_pending_fix(&self, run: RunId, id: AttemptId, e: &Evaluation, rule: &str, snapshot: Option<&str>) -> JournalResult<()>;
    /// The regression set passed: every pending fix is confirmed and `checkpoint` is in force.
    async fn confirm_fixes(&self, run: RunId, checkpoint: &str) -> JournalResult<()>;
    /// A fix kept until the reboot proof (`needs_reboot`) whose rule passes after the reboot: its
    /// verdict becomes `fixed`, `why` appended to its reason.
    async fn prove_fix(&self, id: AttemptId, why: &str) -> JournalResult<()>;
    /// A regressed batch: `culprit` gets the `regression` verdict, `dropped` (kept on top of it)
    /// are rolled back; their rules reopen. One transaction.
    async fn roll_back_fixes(&self, run: RunId, culprit: &Culprit, dropped: &[AttemptId]) -> JournalResult<()>;
    /// Closes the attempts a crash left half-done and returns them. They are never run again,
    /// and they do not count as tries on their rule.
    async fn interrupt_open_attempts(&self, run: RunId) -> JournalResult<Vec<Attempt>>;
    /// Closes open attempts undone with their batch (the guest restored to the checkpoint) as
    /// `interrupted`, with `reason`: they do not count as tries, and are applied again later.
    async fn set_aside_attempts(&self, run: RunId, ids: &[AttemptId], reason: &str) -> JournalResult<()>;
}

/// LLM calls.
#[async_trait]
pub trait TurnLog: ReadTurns {
    async fn add_turn(&self, run: RunId, turn: &NewTurn<'_>) -> JournalResult<TurnId>;
}

/// The run's event journal (also appended to `runs/<id>/events.jsonl` beside a file database).
#[async_trait]
pub trait EventLog: ReadEvents {
    /// Appends `data` (its kind is the variant's) to the run's journal.
    async fn event(&self, run: RunId, rule_id: Option<&str>, data: &EventData) -> JournalResult<()>;
}

/// Semantic memory: lessons, bans, tips and verified fixes, kept across runs until forgotten.
#[async_trait]
pub trait MemoryLog: ReadMemory {
    async fn add_lesson(&self, run: RunId, rule: &str, lesson: &str, preferred: &str, distilled: &str) -> JournalResult<MemoryId>;
    async fn add_ban(&self, run: RunId, rule: &str, pattern: &str, reason: &str) -> JournalResult<MemoryId>;
    async fn add_tip(&self, run: RunId, rule: &str, tip: &crate::turn::NewTip) -> JournalResult<MemoryId>;
    /// Forgets one item; it stays in its table, inactive, for the record.
    async fn forget(&self, kind: MemoryKind, id: MemoryId) -> JournalResult<()>;
    /// A person approves a lesson, ban or tip for its skill: from then on it holds on every
    /// target, not only its run's. `NotFound` when there is no such item in force, or it was
    /// approved already; `Unsupported` for remembered fixes (each target verifies them itself).
    async fn approve(&self, kind: MemoryKind, id: MemoryId, by: &str) -> JournalResult<()>;
    /// Remembers a kept, regression-checked fix (once per skill, rule and script).
    async fn remember_fix(&self, fix: &NewRememberedFix) -> JournalResult<()>;
    /// Counts one try of fix `id`: kept, or failed ([`RETIRE_AFTER`] in a row retire it).
    /// Returns the fix as it now stands.
    async fn count_remembered(&self, id: MemoryId, kept: bool) -> JournalResult<RememberedFix>;
    /// Remembers each rule's time in finished run `run` (`eta::rule_times`), for its skill; a
    /// run remembered again has its times replaced.
    async fn remember_times(&self, run: RunId, times: &[RuleTime]) -> JournalResult<()>;
}

/// The whole journal: its reads and its writes. Every store that has both is one.
pub trait Journal: ReadJournal + RunLog + RuleLog + AttemptLog + TurnLog + EventLog + MemoryLog {}

impl<T: ReadJournal + RunLog + RuleLog + AttemptLog + TurnLog + EventLog + MemoryLog + ?Sized> Journal for T {}
