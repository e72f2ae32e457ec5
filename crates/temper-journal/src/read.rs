//! The journal's reads, apart from its writes: the reports and the web view hold a
//! [`ReadJournal`], which has no method that changes the store.
use async_trait::async_trait;

use crate::{Attempt, Ban, Event, EventId, JournalResult, Lesson, Recall, RememberedFix, Rule, RuleTime, Run, RunId, StoredTurn, Tip};

/// Runs.
#[async_trait]
pub trait ReadRuns: Send + Sync {
    async fn run(&self, id: RunId) -> JournalResult<Run>;
    async fn latest_run(&self) -> JournalResult<Option<Run>>;
    /// The newest run that has not finished (running, paused or interrupted), for `temper resume`.
    async fn unfinished_run(&self) -> JournalResult<Option<Run>>;
    async fn list_runs(&self, limit: i64) -> JournalResult<Vec<Run>>;
}

/// Rules, in first-scan order.
#[async_trait]
pub trait ReadRules: Send + Sync {
    async fn rules(&self, run: RunId) -> JournalResult<Vec<Rule>>;
    async fn rule(&self, run: RunId, rule_id: &str) -> JournalResult<Option<Rule>>;
}

/// Attempts.
#[async_trait]
pub trait ReadAttempts: Send + Sync {
    /// Fixes kept since the checkpoint that await the regression check, oldest first.
    async fn pending_fixes(&self, run: RunId) -> JournalResult<Vec<Attempt>>;
    /// Rolled-back fixes whose rule is still open: the harness replays them before the next pick.
    async fn fixes_to_replay(&self, run: RunId) -> JournalResult<Vec<Attempt>>;
    async fn attempts(&self, run: RunId) -> JournalResult<Vec<Attempt>>;
    async fn rule_attempts(&self, run: RunId, rule_id: &str) -> JournalResult<Vec<Attempt>>;
}

/// LLM calls.
#[async_trait]
pub trait ReadTurns: Send + Sync {
    async fn turns(&self, run: RunId) -> JournalResult<Vec<StoredTurn>>;
}

/// The run's event journal.
#[async_trait]
pub trait ReadEvents: Send + Sync {
    /// The run's events after `after` (all of them for `None`), oldest first.
    async fn events(&self, run: RunId, after: Option<EventId>) -> JournalResult<Vec<Event>>;
}

/// Semantic memory.
#[async_trait]
pub trait ReadMemory: Send + Sync {
    /// Active lessons, newest first; a recall of one rule is that rule's episodic memory.
    async fn lessons(&self, recall: Recall<'_>) -> JournalResult<Vec<Lesson>>;
    /// Active bans, oldest first.
    async fn bans(&self, recall: Recall<'_>) -> JournalResult<Vec<Ban>>;
    /// Active tips, newest first.
    async fn tips(&self, recall: Recall<'_>) -> JournalResult<Vec<Tip>>;
    /// The fix to try first for `rule` with `skill`: not retired, the most often kept.
    async fn remembered_fix(&self, skill: &str, rule: &str) -> JournalResult<Option<RememberedFix>>;
    /// Every remembered fix, retired ones too, newest first.
    async fn remembered_fixes(&self) -> JournalResult<Vec<RememberedFix>>;
    /// The rules of `skill` with a remembered fix in force (not retired), each once.
    async fn remembered_rules(&self, skill: &str) -> JournalResult<Vec<String>>;
    /// The rule times of the newest [`crate::RECALL_RUNS`] runs of `skill` that remembered any,
    /// for `Remembered::of`.
    async fn recalled_times(&self, skill: &str) -> JournalResult<Vec<RuleTime>>;
}

/// Everything the journal can tell, and nothing that changes it. It reads:
/// ```
/// # async fn f(j: &dyn temper_journal::ReadJournal, run: temper_journal::RunId) -> temper_journal::JournalResult<()> {
/// let _ = j.rules(run).await?;
/// # Ok(()) }
/// ```
/// and cannot write (this does not compile):
/// ```compile_fail,E0599
/// # async fn f(j: &dyn temper_journal::ReadJournal, run: temper_journal::RunId) -> temper_journal::JournalResult<()> {
/// j.set_status(run, temper_journal::RunStatus::Finished, None).await?;
/// # Ok(()) }
/// ```
#[async_trait]
pub trait ReadJournal: ReadRuns + ReadRules + ReadAttempts + ReadTurns + ReadEvents + ReadMemory {
    /// Where it lives, for messages (`sqlite .temper/temper.db`, `postgres 127.0.0.1:5433/temper`).
    fn describe(&self) -> String;
    /// The store's own identity, made once when it is created: the same store however reached.
    async fn identity(&self) -> JournalResult<String>;
    /// The database's own consistency check; "ok" when sound.
    async fn integrity_check(&self) -> JournalResult<String>;
}
