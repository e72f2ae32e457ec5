//! Step 5: keep a fix as a new checkpoint (or, in a batch, a pending snapshot); `revert.rs`
//! undoes one that failed.
use super::Attempter;
use crate::ralph::error::LoopResult;
use crate::ralph::retire::retire;
use crate::ralph::state::{Kept, RunState};
use temper_journal::{AttemptId, Evaluation, EventData};

impl Attempter<'_> {
    /// Keeps a fix. When the regression set was scanned with the rule it is the new checkpoint,
    /// a snapshot with memory, and the old one a stepping stone (`retire.rs`); otherwise it waits
    /// for the batch check, with a snapshot of its own only when replaying it and the pending
    /// fixes since the newest snapshot would cost more than the replay budget (`state/kept.rs`).
    #[tracing::instrument(name = "keep", skip_all)]
    pub(super) async fn keep(&self, state: &mut RunState, id: AttemptId, rule: &str, e: &Evaluation) -> LoopResult<()> {
        let name = Kept::name(state.prefix(), id);
        let script = Kept::script_time(&e.findings);
        let taken = !state.batched() || state.snapshot_due(script, self.replay_budget);
        if taken {
            self.machine.take_snapshot(&name, &format!("{rule} fixed")).await?;
        }
        // A fix awaiting its reboot joins the regression set once the proof sees its rule pass.
        if e.verdict == temper_journal::Verdict::Fixed {
            self.ledger.now_passes(state, rule);
        }
        if state.batched() {
            self.books.journal().record_pending_fix(id, e, rule, taken.then_some(name.as_str())).await?;
            state.keep(Kept { attempt: id, rule: rule.to_string(), snapshot: name.clone(), taken, script });
            let batch =
                EventData::KeptPending { snapshot: taken.then_some(name), pending: state.pending().len(), every: state.regression_every() };
            return self.books.note(Some(rule), batch).await;
        }
        self.books.journal().record_fix(id, e, rule, &name).await?;
        let kept = self.books.journal().rule_attempts(rule).await?.into_iter().filter(|a| a.id == id);
        self.books.remember(kept).await?;
        let old = state.set_checkpoint(name.clone());
        retire(self.books, self.machine, state, old.clone(), &[id]).await?;
        self.books.note(Some(rule), EventData::Checkpoint { snapshot: name, replaced: old, fixes: None }).await?;
        Ok(())
    }
}
