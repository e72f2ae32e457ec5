//! Step 5: keep a fix as a new checkpoint (or, in a batch, a pending snapshot), or revert: the
//! Worker's script, verified, else the newest kept snapshot.
use std::time::Instant;

use temper_scap::Outcome;

use super::{Kept, LoopResult, Ralph, RunState};
use crate::agent::ApplyFix;
use crate::checks::GuardFailure;
use crate::journal::{Evaluation, EventData, RevertMethod};
use crate::ports::Exec;
use crate::scan::tail;

use super::attempt::OUTPUT_CAP;

impl Ralph<'_> {
    /// Keeps a fix: a snapshot with memory. When the regression set was scanned with the rule it
    /// is the new checkpoint and the old one is deleted; otherwise it waits for the batch check.
    #[tracing::instrument(name = "keep", skip_all)]
    pub(super) async fn keep(&self, state: &mut RunState, id: i64, rule: &str, e: &Evaluation) -> LoopResult<()> {
        let name = format!("{}a{id}", state.prefix);
        self.hv.snapshot_create(&name, &format!("temper run {}: {rule} fixed", self.run)).await?;
        // A fix awaiting its reboot joins the regression set once the proof sees its rule pass.
        if e.verdict == crate::verdict::Verdict::Fixed {
            self.now_passes(state, rule);
        }
        if state.batched() {
            self.store.record_pending_fix(self.run, id, e, rule, &name).await?;
            state.pending.push(Kept { attempt: id, rule: rule.to_string(), snapshot: name.clone() });
            let batch = EventData::KeptPending { snapshot: name, pending: state.pending.len(), every: state.regression_every };
            return self.note(Some(rule), batch).await;
        }
        self.store.record_fix(self.run, id, e, rule, &name).await?;
        let kept = self.store.rule_attempts(self.run, rule).await?.into_iter().filter(|a| a.id == id);
        self.remember(kept).await?;
        let old = std::mem::replace(&mut state.checkpoint, name.clone());
        // The checkpoint proven to boot stays: the reboot proof replays fixes onto it.
        if !state.pinned(&old) {
            self.drop_snapshot(&old).await?;
        }
        self.note(Some(rule), EventData::Checkpoint { snapshot: name, replaced: old, fixes: None }).await?;
        Ok(())
    }

    /// Deletes a snapshot the run no longer needs; the run's baseline is never deleted.
    pub(super) async fn drop_snapshot(&self, name: &str) -> LoopResult<()> {
        if name != self.settings.baseline {
            self.hv.snapshot_delete(name).await?;
        }
        Ok(())
    }

    /// The Worker's revert script, verified; else (or when unreachable) the newest kept
    /// snapshot. Returns how, and how long it took in ms.
    #[tracing::instrument(name = "revert", skip_all)]
    pub(super) async fn revert(&self, state: &RunState, rule: &str, fix: &ApplyFix, reachable: bool) -> LoopResult<(RevertMethod, i64)> {
        let started = Instant::now();
        let mut method = RevertMethod::Snapshot;
        if reachable && !fix.revert_script.trim().is_empty() {
            match self.revert_by_script(rule, fix).await {
                Ok(()) => method = RevertMethod::Script,
                Err(why) => {
                    self.note(Some(rule), EventData::RevertScriptFailed { reason: why }).await?;
                    method = RevertMethod::ScriptThenSnapshot;
                }
            }
        }
        if method != RevertMethod::Script {
            self.restore(state.head()).await?;
        }
        let ms = started.elapsed().as_millis() as i64;
        self.note(Some(rule), EventData::Revert { method, ms, checkpoint: state.head().to_string() }).await?;
        Ok((method, ms))
    }

    /// Runs the revert script and checks the rule and the health are as before (rule failing, healthy).
    async fn revert_by_script(&self, rule: &str, fix: &ApplyFix) -> Result<(), String> {
        let exec = Exec::script(&fix.revert_script).timeout(self.settings.fix_timeout).max_output(OUTPUT_CAP);
        match self.guest.exec(exec).await {
            Ok(out) if out.success() => {}
            Ok(out) => return Err(format!("revert script exited {:?}: {}", out.exit_code, tail(&out.stderr_str(), 500))),
            Err(e) => return Err(format!("revert script: {e}")),
        }
        let health = self.guard().await.map_err(|e| match e {
            GuardFailure::Lockout(d) | GuardFailure::HealthError(d) => d,
        })?;
        if !health.ok {
            return Err(format!("health after revert: {}", health.output));
        }
        let scan = self.scanner.scan(self.guest, &[rule.to_string()]).await.map_err(|e| e.to_string())?;
        match scan.outcome(rule) {
            Some(Outcome::Fail) => Ok(()),
            other => Err(format!("after revert the rule is {other:?}, before it was fail")),
        }
    }
}
