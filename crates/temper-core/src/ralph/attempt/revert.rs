//! Step 5, when a fix fails its checks: the Worker's revert script, verified, else the newest
//! kept state (its snapshot, or the newest one before it with the fixes since replayed:
//! `state/kept.rs`). A fix the skill calls one way goes straight to that: its revert cannot undo
//! what the kernel holds, though the rule's rescan may fail again (its file gone).
use std::time::Instant;

use temper_scap::Outcome;

use super::Attempter;
use crate::checks::GuardFailure;
use crate::ralph::error::LoopResult;
use crate::ralph::replay::stand_at;
use crate::ralph::state::RunState;
use crate::scan::tail;
use temper_journal::turn::ApplyFix;
use temper_journal::{EventData, RevertMethod};

impl Attempter<'_> {
    /// The Worker's revert script, verified; else (or when unreachable) the newest kept
    /// snapshot. Returns how, and how long it took in ms.
    #[tracing::instrument(name = "revert", skip_all)]
    pub(super) async fn revert(&self, state: &RunState, rule: &str, fix: &ApplyFix, reachable: bool) -> LoopResult<(RevertMethod, i64)> {
        let started = Instant::now();
        let mut method = RevertMethod::Snapshot;
        let one_way = self.skill.one_way(temper_scap::short_rule_id(rule));
        if let Some(why) = one_way {
            tracing::info!(rule, why, "one way: restored from the checkpoint, its revert script not run");
        }
        if reachable && one_way.is_none() && !fix.revert_script.trim().is_empty() {
            match self.revert_by_script(rule, fix).await {
                Ok(()) => method = RevertMethod::Script,
                Err(why) => {
                    self.books.note(Some(rule), EventData::RevertScriptFailed { reason: why }).await?;
                    method = RevertMethod::ScriptThenSnapshot;
                }
            }
        }
        if method != RevertMethod::Script {
            stand_at(self.books, self.machine, state.way_to_head()).await?;
        }
        let ms = started.elapsed().as_millis() as i64;
        self.books.note(Some(rule), EventData::Revert { method, ms, checkpoint: state.head().to_string() }).await?;
        Ok((method, ms))
    }

    /// Runs the revert script and checks the rule and the health are as before (rule failing, healthy).
    async fn revert_by_script(&self, rule: &str, fix: &ApplyFix) -> Result<(), String> {
        match self.machine.run_script(&fix.revert_script).await {
            Ok(out) if out.success() => {}
            Ok(out) => {
                let stderr = temper_scap::secret::withhold(&out.stderr_str()).into_owned();
                return Err(format!("revert script exited {:?}: {}", out.exit_code, tail(&stderr, 500)));
            }
            Err(e) => return Err(format!("revert script: {e}")),
        }
        let health = self.machine.guard().await.map_err(|e| match e {
            GuardFailure::Lockout(d) | GuardFailure::HealthError(d) | GuardFailure::GuestDown(d) => d,
        })?;
        if !health.ok {
            return Err(format!("health after revert: {}", health.output));
        }
        let scan = self.machine.scan(&[rule.to_string()]).await.map_err(|e| e.to_string())?;
        match scan.outcome(rule) {
            Some(Outcome::Fail) => Ok(()),
            other => Err(format!("after revert the rule is {other:?}, before it was fail")),
        }
    }
}
