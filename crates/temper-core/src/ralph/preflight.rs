//! Step 1: restore the checkpoint, check access and health, scan the whole profile.
use serde_json::json;
use temper_scap::Outcome;

use super::{LoopError, LoopResult, Phase, Ralph, RunState};
use crate::checks;

impl Ralph<'_> {
    #[tracing::instrument(name = "preflight", skip_all)]
    pub(super) async fn preflight(&self, run: i64) -> LoopResult<RunState> {
        self.phase(run, Phase::Preflight, None, 0).await?;
        let baseline = &self.settings.baseline;
        if !self.hv.snapshot_exists(baseline).await? {
            return Err(LoopError::NoBaseline(baseline.clone()));
        }
        // A crash may have left an attempt half-done: close it, never run it again.
        for a in self.store.interrupt_open_attempts(run).await? {
            self.store
                .event(run, "attempt_interrupted", Some(&a.rule_id), json!({"attempt": a.n, "state": a.state}))
                .await?;
        }
        let checkpoint = self.store.run(run).await?.checkpoint;
        self.restore(&checkpoint).await?;
        self.drop_stale_checkpoints(run, &checkpoint).await?;

        let access = checks::access(self.guest, self.settings.ssh_ready).await;
        if !access.ok {
            return Err(LoopError::Preflight(format!("the harness user has no working sudo: {}", access.detail)));
        }
        let health = checks::health(self.guest, &self.settings.health_command).await?;
        if !health.ok {
            return Err(LoopError::Preflight(format!("the health check fails before any change: {}", health.output)));
        }
        let oscap = self.scanner.check(self.guest).await?;
        self.store.event(run, "preflight", None, json!({"checkpoint": checkpoint, "oscap": oscap})).await?;

        if self.store.rules(run).await?.is_empty() {
            self.first_scan(run).await?;
        }
        let rules = self.store.rules(run).await?;
        let regression_set = rules
            .iter()
            .filter(|r| r.initial_result == "pass" || r.status == "fixed")
            .map(|r| r.rule_id.clone())
            .collect();
        let worked = rules.iter().filter(|r| r.attempts > 0 || r.status == "escalated").count();
        Ok(RunState { regression_set, checkpoint, worked })
    }

    /// The full scan that sets each rule's starting point and disposition.
    #[tracing::instrument(name = "first_scan", skip_all)]
    async fn first_scan(&self, run: i64) -> LoopResult<()> {
        let scan = self.scanner.scan(self.guest, &[]).await?;
        for r in &scan.results.rule_results {
            if r.result == Outcome::NotSelected {
                continue;
            }
            let short = temper_scap::short_rule_id(&r.idref);
            let title = self.content.rule(&r.idref).map(|c| c.title.as_str()).unwrap_or("");
            let (status, reason) = match (r.result, self.skill.disposition(short)) {
                (Outcome::Fail, Some(d)) => (d.disposition.as_str(), Some(d.reason.as_str())),
                (Outcome::Fail, None) => ("pending", None),
                (Outcome::Pass, _) => ("passing", None),
                (other, _) => (other.as_str(), None),
            };
            self.store
                .add_rule(run, &r.idref, title, &r.severity, r.result.as_str(), status, reason)
                .await?;
        }
        let score = scan.results.score().map(|s| s.value);
        self.store.set_scores(run, score, None).await?;
        let counts = scan.results.counts(false);
        self.store
            .event(run, "scan", None, json!({"kind": "full", "counts": counts, "score": score, "secs": scan.took.as_secs_f64()}))
            .await?;
        Ok(())
    }

    /// Reverts to a snapshot and waits for SSH.
    #[tracing::instrument(name = "restore", skip(self))]
    pub(super) async fn restore(&self, checkpoint: &str) -> LoopResult<()> {
        let fail = |reason: String| LoopError::Restore { checkpoint: checkpoint.to_string(), reason };
        self.hv.snapshot_revert(checkpoint).await.map_err(|e| fail(e.to_string()))?;
        self.guest.reconnect(self.settings.ssh_ready).await.map_err(|e| fail(e.to_string()))?;
        Ok(())
    }

    /// Deletes this run's checkpoints other than the one in force (a crash can leave one).
    async fn drop_stale_checkpoints(&self, run: i64, keep: &str) -> LoopResult<()> {
        let prefix = checkpoint_prefix(run);
        for name in self.hv.snapshot_list().await? {
            if name.starts_with(&prefix) && name != keep {
                self.hv.snapshot_delete(&name).await?;
                self.store.event(run, "checkpoint_dropped", None, json!({"snapshot": name})).await?;
            }
        }
        Ok(())
    }
}

pub(super) fn checkpoint_prefix(run: i64) -> String {
    format!("temper-r{run}-")
}
