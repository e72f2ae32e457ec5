//! Step 5: keep a fix as a new checkpoint (or, in a batch, a pending snapshot), or revert: the
//! Worker's script, verified, else the newest kept snapshot.
use std::time::Instant;

use serde_json::json;
use temper_scap::Outcome;
use temper_store::AttemptOutcome;

use super::{Kept, LoopResult, Ralph, RunState};
use crate::agent::ApplyFix;
use crate::checks;
use crate::ports::Exec;
use crate::scan::tail;

use super::attempt::OUTPUT_CAP;

impl Ralph<'_> {
    /// Keeps a fix: a snapshot with memory. When the regression set was scanned with the rule it
    /// is the new checkpoint and the old one is deleted; otherwise it waits for the batch check.
    #[tracing::instrument(name = "keep", skip_all)]
    pub(super) async fn keep(&self, run: i64, state: &mut RunState, id: i64, rule: &str, o: &mut AttemptOutcome) -> LoopResult<()> {
        let name = format!("{}a{id}", state.prefix);
        self.hv.snapshot_create(&name, &format!("temper run {run}: {rule} fixed")).await?;
        o.revert_method = "none".into();
        state.regression_set.push(rule.to_string());
        if state.batched() {
            self.store.record_pending_fix(run, id, o, rule, &name).await?;
            state.pending.push(Kept { attempt: id, rule: rule.to_string(), snapshot: name.clone() });
            let batch = json!({"snapshot": name, "pending": state.pending.len(), "every": state.regression_every});
            return Ok(self.store.event(run, "kept_pending", Some(rule), batch).await?);
        }
        self.store.record_fix(run, id, o, rule, &name).await?;
        let old = std::mem::replace(&mut state.checkpoint, name.clone());
        self.drop_snapshot(&old).await?;
        self.store.event(run, "checkpoint", Some(rule), json!({"snapshot": name, "replaced": old})).await?;
        Ok(())
    }

    /// Deletes a snapshot the run no longer needs; the baseline is never deleted.
    pub(super) async fn drop_snapshot(&self, name: &str) -> LoopResult<()> {
        if name != self.settings.baseline {
            self.hv.snapshot_delete(name).await?;
        }
        Ok(())
    }

    /// The Worker's revert script, verified; else (or when unreachable) the checkpoint.
    #[tracing::instrument(name = "revert", skip_all)]
    pub(super) async fn revert(&self, run: i64, state: &RunState, rule: &str, fix: &ApplyFix, reachable: bool, o: &mut AttemptOutcome) -> LoopResult<()> {
        let started = Instant::now();
        let mut method = "snapshot";
        if reachable && !fix.revert_script.trim().is_empty() {
            match self.revert_by_script(rule, fix).await {
                Ok(()) => method = "script",
                Err(why) => {
                    self.store.event(run, "revert_script_failed", Some(rule), json!({"reason": why})).await?;
                    method = "script+snapshot";
                }
            }
        }
        if method != "script" {
            self.restore(state.head()).await?;
        }
        o.revert_method = method.into();
        o.revert_ms = Some(started.elapsed().as_millis() as i64);
        self.store
            .event(run, "revert", Some(rule), json!({"method": method, "ms": o.revert_ms, "checkpoint": state.head()}))
            .await?;
        Ok(())
    }

    /// Runs the revert script and checks the rule and the health are as before (rule failing, healthy).
    async fn revert_by_script(&self, rule: &str, fix: &ApplyFix) -> Result<(), String> {
        let exec = Exec::script(&fix.revert_script).timeout(self.settings.fix_timeout).max_output(OUTPUT_CAP);
        match self.guest.exec(exec).await {
            Ok(out) if out.success() => {}
            Ok(out) => return Err(format!("revert script exited {:?}: {}", out.exit_code, tail(&out.stderr_str(), 500))),
            Err(e) => return Err(format!("revert script: {e}")),
        }
        let access = checks::access(self.guest, self.settings.ssh_ready).await;
        if !access.ok {
            return Err(access.detail);
        }
        let health = checks::health(self.guest, &self.settings.health_command).await.map_err(|e| e.to_string())?;
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
