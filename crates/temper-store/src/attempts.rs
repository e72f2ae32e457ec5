use serde::Serialize;

use crate::{Store, StoreResult, now};

/// Written (state `started`) before the fix touches the guest.
#[derive(Debug, Clone)]
pub struct NewAttempt {
    pub run_id: i64,
    pub rule_id: String,
    pub plan: String,
    pub source: String,
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
    pub checkpoint: String,
}

/// The fix a bisected batch blames for its regressions.
#[derive(Debug, Clone)]
pub struct Culprit {
    pub id: i64,
    pub rule_id: String,
    pub reason: String,
    pub regressions: Vec<String>,
    pub diagnostics: String,
}

/// Everything the evaluation and the revert found.
#[derive(Debug, Clone, Default)]
pub struct AttemptOutcome {
    pub fix_exit_code: Option<i64>,
    pub fix_stdout: Option<String>,
    pub fix_stderr: Option<String>,
    pub rule_result: Option<String>,
    pub health_ok: Option<bool>,
    pub health_output: Option<String>,
    pub access_ok: Option<bool>,
    pub regressions: Vec<String>,
    pub verdict: String,
    pub verdict_reason: String,
    pub revert_method: String,
    pub revert_ms: Option<i64>,
    pub apply_ms: Option<i64>,
    pub evaluate_ms: Option<i64>,
    pub diagnostics: Option<String>,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct AttemptRow {
    pub id: i64,
    pub run_id: i64,
    pub rule_id: String,
    pub n: i64,
    pub state: String,
    pub plan: String,
    pub source: String,
    pub fix_script: String,
    pub revert_script: String,
    pub description: String,
    pub checkpoint: String,
    pub fix_exit_code: Option<i64>,
    pub fix_stdout: Option<String>,
    pub fix_stderr: Option<String>,
    pub rule_result: Option<String>,
    pub health_ok: Option<bool>,
    pub health_output: Option<String>,
    pub access_ok: Option<bool>,
    pub regressions: Option<String>,
    pub verdict: Option<String>,
    pub verdict_reason: Option<String>,
    pub revert_method: Option<String>,
    pub revert_ms: Option<i64>,
    pub apply_ms: Option<i64>,
    pub evaluate_ms: Option<i64>,
    pub diagnostics: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The snapshot taken after this fix was kept.
    pub snapshot: Option<String>,
    /// pending | confirmed | rolled_back, for a kept fix.
    pub kept: Option<String>,
}

impl Store {
    /// Numbers the attempt and bumps the rule's count in one transaction.
    pub async fn start_attempt(&self, a: &NewAttempt) -> StoreResult<(i64, i64)> {
        let mut tx = self.pool.begin().await?;
        let (n,): (i64,) = sqlx::query_as("SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE run_id = ? AND rule_id = ?")
            .bind(a.run_id)
            .bind(&a.rule_id)
            .fetch_one(&mut *tx)
            .await?;
        let id = sqlx::query(
            "INSERT INTO attempts (run_id, rule_id, n, state, plan, source, fix_script, revert_script, description, checkpoint, started_at)
             VALUES (?, ?, ?, 'started', ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(a.run_id)
        .bind(&a.rule_id)
        .bind(n)
        .bind(&a.plan)
        .bind(&a.source)
        .bind(&a.fix_script)
        .bind(&a.revert_script)
        .bind(&a.description)
        .bind(&a.checkpoint)
        .bind(now())
        .execute(&mut *tx)
        .await?
        .last_insert_rowid();
        sqlx::query("UPDATE rules SET attempts = attempts + 1 WHERE run_id = ? AND rule_id = ?")
            .bind(a.run_id)
            .bind(&a.rule_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok((id, n))
    }

    pub async fn set_attempt_state(&self, id: i64, state: &str) -> StoreResult<()> {
        sqlx::query("UPDATE attempts SET state = ? WHERE id = ?")
            .bind(state)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn finish_attempt(&self, id: i64, o: &AttemptOutcome) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await?;
        finish(&mut conn, id, o).await
    }

    /// Keeps a fix in one transaction: the attempt's outcome, the rule's status and the new
    /// checkpoint. A crash before the commit leaves the old checkpoint in force.
    pub async fn record_fix(&self, run: i64, id: i64, o: &AttemptOutcome, rule_id: &str, checkpoint: &str) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        keep(&mut tx, run, id, o, rule_id, checkpoint, "confirmed").await?;
        set_checkpoint(&mut tx, run, checkpoint).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Keeps a verified fix that awaits its batch's regression check: the attempt's outcome, the
    /// rule's status and the fix's snapshot, in one transaction. The checkpoint stays as it was.
    pub async fn record_pending_fix(&self, run: i64, id: i64, o: &AttemptOutcome, rule_id: &str, snapshot: &str) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        keep(&mut tx, run, id, o, rule_id, snapshot, "pending").await?;
        tx.commit().await?;
        Ok(())
    }

    /// Fixes kept since the checkpoint that await the regression check, oldest first.
    pub async fn pending_fixes(&self, run: i64) -> StoreResult<Vec<AttemptRow>> {
        Ok(sqlx::query_as("SELECT * FROM attempts WHERE run_id = ? AND kept = 'pending' ORDER BY id")
            .bind(run)
            .fetch_all(&self.pool)
            .await?)
    }

    /// The regression set passed: every pending fix is confirmed and `checkpoint` is in force.
    pub async fn confirm_fixes(&self, run: i64, checkpoint: &str) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("UPDATE attempts SET kept = 'confirmed' WHERE run_id = ? AND kept = 'pending'")
            .bind(run)
            .execute(&mut *tx)
            .await?;
        set_checkpoint(&mut tx, run, checkpoint).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A batch regressed and its snapshots were bisected: `culprit` broke `regressions` and becomes
    /// a `regression` verdict; `dropped` were kept on top of it and are rolled back to be replayed.
    /// Their rules reopen. One transaction, so a crash leaves the batch whole or settled.
    pub async fn roll_back_fixes(&self, run: i64, culprit: &Culprit, dropped: &[i64]) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "UPDATE attempts SET verdict = 'regression', verdict_reason = ?, regressions = ?, diagnostics = ?,
               revert_method = 'snapshot', kept = 'rolled_back' WHERE id = ?",
        )
        .bind(&culprit.reason)
        .bind(serde_json::to_string(&culprit.regressions).unwrap_or_else(|_| "[]".into()))
        .bind(&culprit.diagnostics)
        .bind(culprit.id)
        .execute(&mut *tx)
        .await?;
        let note = format!(
            " [rolled back: kept after the fix for {} that broke {}; replayed]",
            culprit.rule_id,
            culprit.regressions.join(", ")
        );
        for id in std::iter::once(&culprit.id).chain(dropped) {
            sqlx::query(
                "UPDATE rules SET status = 'pending', reason = NULL
                 WHERE run_id = ? AND rule_id = (SELECT rule_id FROM attempts WHERE id = ?)",
            )
            .bind(run)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        for id in dropped {
            sqlx::query(
                "UPDATE attempts SET kept = 'rolled_back', revert_method = 'snapshot',
                   verdict_reason = COALESCE(verdict_reason, '') || ? WHERE id = ?",
            )
            .bind(&note)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Rolled-back fixes whose rule is still open: the harness replays them before the next pick.
    pub async fn fixes_to_replay(&self, run: i64) -> StoreResult<Vec<AttemptRow>> {
        Ok(sqlx::query_as(
            "SELECT a.* FROM attempts a JOIN rules r ON r.run_id = a.run_id AND r.rule_id = a.rule_id
             WHERE a.run_id = ? AND a.kept = 'rolled_back' AND a.verdict = 'fixed' AND r.status = 'pending'
               AND a.n = (SELECT MAX(n) FROM attempts b WHERE b.run_id = a.run_id AND b.rule_id = a.rule_id)
             ORDER BY a.id",
        )
        .bind(run)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Marks attempts a crash left half-done; returns them. They are never run again.
    pub async fn interrupt_open_attempts(&self, run: i64) -> StoreResult<Vec<AttemptRow>> {
        let open: Vec<AttemptRow> = sqlx::query_as("SELECT * FROM attempts WHERE run_id = ? AND state != 'done' AND state != 'interrupted'")
            .bind(run)
            .fetch_all(&self.pool)
            .await?;
        sqlx::query(
            "UPDATE attempts SET state = 'interrupted', verdict = COALESCE(verdict, 'interrupted'),
               verdict_reason = COALESCE(verdict_reason, 'the harness stopped during this attempt; the VM was restored to the checkpoint'),
               revert_method = COALESCE(revert_method, 'snapshot'), ended_at = COALESCE(ended_at, ?)
             WHERE run_id = ? AND state != 'done' AND state != 'interrupted'",
        )
        .bind(now())
        .bind(run)
        .execute(&self.pool)
        .await?;
        Ok(open)
    }

    pub async fn attempts(&self, run: i64) -> StoreResult<Vec<AttemptRow>> {
        Ok(sqlx::query_as("SELECT * FROM attempts WHERE run_id = ? ORDER BY id")
            .bind(run)
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn rule_attempts(&self, run: i64, rule_id: &str) -> StoreResult<Vec<AttemptRow>> {
        Ok(sqlx::query_as("SELECT * FROM attempts WHERE run_id = ? AND rule_id = ? ORDER BY n")
            .bind(run)
            .bind(rule_id)
            .fetch_all(&self.pool)
            .await?)
    }
}

/// Puts `checkpoint` in force for the run: what a resume restores and what a failure falls back to.
async fn set_checkpoint(conn: &mut sqlx::SqliteConnection, run: i64, checkpoint: &str) -> StoreResult<()> {
    sqlx::query("UPDATE runs SET checkpoint = ? WHERE id = ?")
        .bind(checkpoint)
        .bind(run)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// A kept fix: its outcome, its rule `fixed`, its snapshot and how far it is confirmed.
async fn keep(
    conn: &mut sqlx::SqliteConnection,
    run: i64,
    id: i64,
    o: &AttemptOutcome,
    rule_id: &str,
    snapshot: &str,
    kept: &str,
) -> StoreResult<()> {
    finish(conn, id, o).await?;
    sqlx::query("UPDATE rules SET status = 'fixed', reason = NULL WHERE run_id = ? AND rule_id = ?")
        .bind(run)
        .bind(rule_id)
        .execute(&mut *conn)
        .await?;
    sqlx::query("UPDATE attempts SET snapshot = ?, kept = ? WHERE id = ?")
        .bind(snapshot)
        .bind(kept)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

async fn finish(conn: &mut sqlx::SqliteConnection, id: i64, o: &AttemptOutcome) -> StoreResult<()> {
    let regressions = serde_json::to_string(&o.regressions).unwrap_or_else(|_| "[]".into());
    sqlx::query(
        "UPDATE attempts SET state = 'done', fix_exit_code = ?, fix_stdout = ?, fix_stderr = ?, rule_result = ?,
           health_ok = ?, health_output = ?, access_ok = ?, regressions = ?, verdict = ?, verdict_reason = ?,
           revert_method = ?, revert_ms = ?, apply_ms = ?, evaluate_ms = ?, diagnostics = ?, ended_at = ?
         WHERE id = ?",
    )
    .bind(o.fix_exit_code)
    .bind(&o.fix_stdout)
    .bind(&o.fix_stderr)
    .bind(&o.rule_result)
    .bind(o.health_ok)
    .bind(&o.health_output)
    .bind(o.access_ok)
    .bind(regressions)
    .bind(&o.verdict)
    .bind(&o.verdict_reason)
    .bind(&o.revert_method)
    .bind(o.revert_ms)
    .bind(o.apply_ms)
    .bind(o.evaluate_ms)
    .bind(&o.diagnostics)
    .bind(now())
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}
