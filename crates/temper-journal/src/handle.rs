//! The journal, scoped to one run: what the loop writes through, so that no loop function passes
//! a run id. The memory the runs share (lessons, bans, tips, remembered fixes) is read and
//! written through [`RunJournal::memory`]; what this run adds to it is placed in this run.
use temper_scap::oval::Evidence;

use crate::turn::NewTip;
use crate::{
    Attempt, Culprit, Escalation, Event, EventData, Journal, JournalResult, KeptFix, MemoryLog, NewRule, Phase, Rule, RuleStatus, Run,
    RunId, RunStatus, RunSummary, ScanResult,
};
use crate::{AttemptId, AttemptNo, AttemptSpec, AttemptState, Evaluation, EventId, MemoryId, NewTurn, StoredTurn, TurnId};

#[derive(Clone, Copy)]
pub struct RunJournal<'a> {
    journal: &'a dyn Journal,
    run: RunId,
}

impl<'a> RunJournal<'a> {
    pub fn new(journal: &'a dyn Journal, run: RunId) -> Self {
        Self { journal, run }
    }
    pub fn id(&self) -> RunId {
        self.run
    }
    pub fn memory(&self) -> &'a dyn MemoryLog {
        self.journal
    }

    pub async fn row(&self) -> JournalResult<Run> {
        self.journal.run(self.run).await
    }
    pub async fn set_phase(&self, phase: Phase, rule: Option<&str>) -> JournalResult<()> {
        self.journal.set_phase(self.run, phase, rule).await
    }
    pub async fn set_status(&self, status: RunStatus, error: Option<&str>) -> JournalResult<()> {
        self.journal.set_status(self.run, status, error).await
    }
    pub async fn set_regression_every(&self, every: u32) -> JournalResult<()> {
        self.journal.set_regression_every(self.run, every).await
    }
    pub async fn set_scores(&self, before: Option<f64>, after: Option<f64>) -> JournalResult<()> {
        self.journal.set_scores(self.run, before, after).await
    }
    /// Finishes the run: each settled rule's time remembered for its skill (the ETA of the
    /// skill's later runs reads it), then its summary.
    pub async fn finish(&self, summary: &RunSummary) -> JournalResult<()> {
        let times = crate::rule_times(self.run, &self.events(None).await?);
        self.journal.remember_times(self.run, &times).await?;
        self.journal.finish_run(self.run, summary).await
    }
    /// What the runs of this run's skill remember for the ETA (this run's own times come when it
    /// finishes).
    pub async fn remembered(&self) -> JournalResult<crate::Remembered> {
        let skill = self.row().await?.skill;
        let times = self.journal.recalled_times(&skill).await?;
        Ok(crate::Remembered::of(&times.into_iter().filter(|t| t.run_id != self.run).collect::<Vec<_>>()))
    }

    pub async fn add_rule(&self, rule: &NewRule) -> JournalResult<()> {
        self.journal.add_rule(self.run, rule).await
    }
    pub async fn rules(&self) -> JournalResult<Vec<Rule>> {
        self.journal.rules(self.run).await
    }
    pub async fn rule(&self, rule_id: &str) -> JournalResult<Option<Rule>> {
        self.journal.rule(self.run, rule_id).await
    }
    pub async fn set_rule_status(&self, rule_id: &str, status: RuleStatus, reason: Option<&str>) -> JournalResult<()> {
        self.journal.set_rule_status(self.run, rule_id, status, reason).await
    }
    pub async fn escalate_rule(&self, rule_id: &str, e: &Escalation) -> JournalResult<()> {
        self.journal.escalate_rule(self.run, rule_id, e).await
    }
    pub async fn add_rule_time(&self, rule_id: &str, ms: i64) -> JournalResult<()> {
        self.journal.add_rule_time(self.run, rule_id, ms).await
    }
    pub async fn set_final_result(&self, rule_id: &str, result: ScanResult) -> JournalResult<()> {
        self.journal.set_final_result(self.run, rule_id, result).await
    }
    pub async fn set_final_evidence(&self, rule_id: &str, evidence: &Evidence) -> JournalResult<()> {
        self.journal.set_final_evidence(self.run, rule_id, evidence).await
    }
    pub async fn set_offline_verdicts(&self, verdicts: &[crate::offline::RuleVerdict]) -> JournalResult<()> {
        self.journal.set_offline_verdicts(self.run, verdicts).await
    }

    pub async fn start_attempt(&self, a: &AttemptSpec) -> JournalResult<(AttemptId, AttemptNo)> {
        self.journal.start_attempt(self.run, a).await
    }
    pub async fn set_attempt_state(&self, id: AttemptId, state: AttemptState) -> JournalResult<()> {
        self.journal.set_attempt_state(id, state).await
    }
    pub async fn finish_attempt(&self, id: AttemptId, e: &Evaluation) -> JournalResult<()> {
        self.journal.finish_attempt(id, e).await
    }
    pub async fn prove_fix(&self, id: AttemptId, why: &str) -> JournalResult<()> {
        self.journal.prove_fix(id, why).await
    }
    pub async fn record_fix(&self, id: AttemptId, e: &Evaluation, rule_id: &str, checkpoint: &str) -> JournalResult<()> {
        self.journal.record_fix(self.run, id, e, rule_id, checkpoint).await
    }
    pub async fn record_fixes(&self, fixes: &[KeptFix], checkpoint: &str) -> JournalResult<()> {
        self.journal.record_fixes(self.run, fixes, checkpoint).await
    }
    pub async fn record_pending_fix(&self, id: AttemptId, e: &Evaluation, rule_id: &str, snapshot: Option<&str>) -> JournalResult<()> {
        self.journal.record_pending_fix(self.run, id, e, rule_id, snapshot).await
    }
    pub async fn pending_fixes(&self) -> JournalResult<Vec<Attempt>> {
        self.journal.pending_fixes(self.run).await
    }
    pub async fn confirm_fixes(&self, checkpoint: &str) -> JournalResult<()> {
        self.journal.confirm_fixes(self.run, checkpoint).await
    }
    pub async fn roll_back_fixes(&self, culprit: &Culprit, dropped: &[AttemptId]) -> JournalResult<()> {
        self.journal.roll_back_fixes(self.run, culprit, dropped).await
    }
    pub async fn fixes_to_replay(&self) -> JournalResult<Vec<Attempt>> {
        self.journal.fixes_to_replay(self.run).await
    }
    pub async fn interrupt_open_attempts(&self) -> JournalResult<Vec<Attempt>> {
        self.journal.interrupt_open_attempts(self.run).await
    }
    pub async fn set_aside_attempts(&self, ids: &[AttemptId], reason: &str) -> JournalResult<()> {
        self.journal.set_aside_attempts(self.run, ids, reason).await
    }
    pub async fn attempts(&self) -> JournalResult<Vec<Attempt>> {
        self.journal.attempts(self.run).await
    }
    pub async fn rule_attempts(&self, rule_id: &str) -> JournalResult<Vec<Attempt>> {
        self.journal.rule_attempts(self.run, rule_id).await
    }

    pub async fn add_turn(&self, turn: &NewTurn<'_>) -> JournalResult<TurnId> {
        self.journal.add_turn(self.run, turn).await
    }
    pub async fn turns(&self) -> JournalResult<Vec<StoredTurn>> {
        self.journal.turns(self.run).await
    }
    pub async fn event(&self, rule_id: Option<&str>, data: &EventData) -> JournalResult<()> {
        self.journal.event(self.run, rule_id, data).await
    }
    pub async fn events(&self, after: Option<EventId>) -> JournalResult<Vec<Event>> {
        self.journal.events(self.run, after).await
    }

    pub async fn add_lesson(&self, rule: &str, lesson: &str, preferred: &str, distilled: &str) -> JournalResult<MemoryId> {
        self.journal.add_lesson(self.run, rule, lesson, preferred, distilled).await
    }
    pub async fn add_ban(&self, rule: &str, pattern: &str, reason: &str) -> JournalResult<MemoryId> {
        self.journal.add_ban(self.run, rule, pattern, reason).await
    }
    pub async fn add_tip(&self, rule: &str, tip: &NewTip) -> JournalResult<MemoryId> {
        self.journal.add_tip(self.run, rule, tip).await
    }
}
