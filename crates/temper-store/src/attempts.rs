use async_trait::async_trait;
use temper_journal::Verdict;
use temper_journal::{
    Attempt, AttemptLog, AttemptSpec, AttemptState, Culprit, Evaluation, JournalResult, KeptFix, KeptState, ReadAttempts, RevertMethod,
    RuleStatus,
};
use temper_journal::{AttemptId, AttemptNo, RunId};

use crate::{BeginWrite, Store, now, with_db};

/// Writes an attempt's evaluation and closes it (`done`).
macro_rules! finish {
    ($conn:expr, $id:expr, $e:expr) => {{
        let e: &Evaluation = $e;
        let regressions = serde_json::to_string(&e.findings.regressions).unwrap_or_else(|_| "[]".into());
        sqlx::query(
            "UPDATE attempts SET state = $1, fix_exit_code = $2, fix_stdout = $3, fix_stderr = $4, rule_result = $5,
               health_ok = $6, health_output = $7, access_ok = $8, regressions = $9, verdict = $10, verdict_reason = $11,
               revert_method = $12, revert_ms = $13, apply_ms = $14, evaluate_ms = $15, diagnostics = $16, ended_at = $17,
               evidence_after = $18
             WHERE id = $19",
        )
        .bind(AttemptState::Done)
        .bind(e.findings.fix_exit_code)
        .bind(&e.findings.fix_stdout)
        .bind(&e.findings.fix_stderr)
        .bind(e.findings.rule_result)
        .bind(e.findings.health_ok)
        .bind(&e.findings.health_output)
        .bind(e.findings.access_ok)
        .bind(regressions)
        .bind(e.verdict)
        .bind(&e.verdict_reason)
        .bind(e.revert_method)
        .bind(e.findings.revert_ms)
        .bind(e.findings.apply_ms)
        .bind(e.findings.evaluate_ms)
        .bind(&e.findings.diagnostics)
        .bind(now())
        .bind(e.findings.evidence_after.as_ref().map(sqlx::types::Json))
        .bind($id)
        .execute($conn)
        .await
    }};
}

/// A kept fix: its evaluation, its rule `fixed`, its snapshot and how far it is confirmed.
macro_rules! keep {
    ($tx:expr, $run:expr, $id:expr, $e:expr, $rule:expr, $snapshot:expr, $kept:expr) => {{
        finish!(&mut *$tx, $id, $e)?;
        sqlx::query("UPDATE rules SET status = $1, reason = NULL WHERE run_id = $2 AND rule_id = $3")
            .bind(RuleStatus::Fixed)
            .bind($run)
            .bind($rule)
            .execute(&mut *$tx)
            .await?;
        sqlx::query("UPDATE attempts SET snapshot = $1, kept = $2 WHERE id = $3")
            .bind($snapshot)
            .bind($kept)
            .bind($id)
            .execute(&mut *$tx)
            .await
    }};
}

/// Why a crash's open attempt was closed.
const INTERRUPTED: &str =
    "the harness stopped during this attempt; the VM was restored to the checkpoint, and the attempt does not count as a try";

/// Closes an open attempt as `interrupted` (the guest was restored to the checkpoint) with
/// `reason`, and takes it off its rule's count of tries.
macro_rules! interrupt {
    ($tx:expr, $run:expr, $id:expr, $reason:expr) => {{
        sqlx::query(
            "UPDATE attempts SET state = $1, verdict = COALESCE(verdict, $2), verdict_reason = COALESCE(verdict_reason, $3),
               revert_method = COALESCE(revert_method, $4), ended_at = COALESCE(ended_at, $5)
             WHERE id = $6",
        )
        .bind(AttemptState::Interrupted)
        .bind(Verdict::Interrupted)
        .bind($reason)
        .bind(RevertMethod::Snapshot)
        .bind(now())
        .bind($id)
        .execute(&mut *$tx)
        .await?;
        sqlx::query(
            "UPDATE rules SET attempts = attempts - 1
             WHERE run_id = $1 AND rule_id = (SELECT rule_id FROM attempts WHERE id = $2) AND attempts > 0",
        )
        .bind($run)
        .bind($id)
        .execute(&mut *$tx)
        .await
    }};
}

/// Puts `checkpoint` in force for the run: what a resume restores and what a failure falls back to.
macro_rules! set_checkpoint {
    ($conn:expr, $run:expr, $checkpoint:expr) => {
        sqlx::query("UPDATE runs SET checkpoint = $1 WHERE id = $2").bind($checkpoint).bind($run).execute($conn).await
    };
}

#[async_trait]
impl ReadAttempts for Store {
    async fn pending_fixes(&self, run: RunId) -> JournalResult<Vec<Attempt>> {
        with_db!(self, p => async {
            sqlx::query_as("SELECT * FROM attempts WHERE run_id = $1 AND kept = $2 ORDER BY id").bind(run).bind(KeptState::Pending).fetch_all(p).await
        })
    }

    async fn fixes_to_replay(&self, run: RunId) -> JournalResult<Vec<Attempt>> {
        with_db!(self, p => async {
            sqlx::query_as(
                "SELECT a.* FROM attempts a JOIN rules r ON r.run_id = a.run_id AND r.rule_id = a.rule_id
                 WHERE a.run_id = $1 AND a.kept = $2 AND a.verdict = $3 AND r.status = $4
                   AND a.n = (SELECT MAX(n) FROM attempts b WHERE b.run_id = a.run_id AND b.rule_id = a.rule_id)
                 ORDER BY a.id",
            )
            .bind(run)
            .bind(KeptState::RolledBack)
            .bind(Verdict::Fixed)
            .bind(RuleStatus::Pending)
            .fetch_all(p)
            .await
        })
    }

    async fn attempts(&self, run: RunId) -> JournalResult<Vec<Attempt>> {
        with_db!(self, p => async { sqlx::query_as("SELECT * FROM attempts WHERE run_id = $1 ORDER BY id").bind(run).fetch_all(p).await })
    }

    async fn rule_attempts(&self, run: RunId, rule_id: &str) -> JournalResult<Vec<Attempt>> {
        with_db!(self, p => async {
            sqlx::query_as("SELECT * FROM attempts WHERE run_id = $1 AND rule_id = $2 ORDER BY n").bind(run).bind(rule_id).fetch_all(p).await
        })
    }
}

#[async_trait]
impl AttemptLog for Store {
    async fn start_attempt(&self, run: RunId, a: &AttemptSpec) -> JournalResult<(AttemptId, AttemptNo)> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            // The rule's counter first: its row lock (PostgreSQL), or the write lock taken up
            // front (SQLite), makes a second writer on the same rule wait until this one commits,
            // so its MAX(n) below sees this attempt. Read first, two writers got the same n.
            sqlx::query("UPDATE rules SET attempts = attempts + 1 WHERE run_id = $1 AND rule_id = $2")
                .bind(run)
                .bind(&a.rule_id)
                .execute(&mut *tx)
                .await?;
            let (n,): (AttemptNo,) = sqlx::query_as("SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE run_id = $1 AND rule_id = $2")
                .bind(run)
                .bind(&a.rule_id)
                .fetch_one(&mut *tx)
                .await?;
            let (id,): (AttemptId,) = sqlx::query_as(
                "INSERT INTO attempts (run_id, rule_id, n, state, plan, source, replayed, fix_script, revert_script, description,
                   checkpoint, started_at, evidence_before)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
            )
            .bind(run)
            .bind(&a.rule_id)
            .bind(n)
            .bind(AttemptState::Started)
            .bind(&a.plan)
            .bind(a.source)
            .bind(a.replayed)
            .bind(&a.fix_script)
            .bind(&a.revert_script)
            .bind(&a.description)
            .bind(&a.checkpoint)
            .bind(now())
            .bind(a.evidence_before.as_ref().map(sqlx::types::Json))
            .fetch_one(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok((id, n))
        })
    }

    async fn set_attempt_state(&self, id: AttemptId, state: AttemptState) -> JournalResult<()> {
        with_db!(self, p => async { sqlx::query("UPDATE attempts SET state = $1 WHERE id = $2").bind(state).bind(id).execute(p).await.map(drop) })
    }

    async fn finish_attempt(&self, id: AttemptId, e: &Evaluation) -> JournalResult<()> {
        with_db!(self, p => async { finish!(p, id, e).map(drop) })
    }

    async fn record_fix(&self, run: RunId, id: AttemptId, e: &Evaluation, rule_id: &str, checkpoint: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            keep!(tx, run, id, e, rule_id, checkpoint, KeptState::Confirmed)?;
            set_checkpoint!(&mut *tx, run, checkpoint)?;
            tx.commit().await
        })
    }

    async fn record_fixes(&self, run: RunId, fixes: &[KeptFix], checkpoint: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            for f in fixes {
                keep!(tx, run, f.id, &f.evaluation, &f.rule_id, checkpoint, KeptState::Confirmed)?;
            }
            set_checkpoint!(&mut *tx, run, checkpoint)?;
            tx.commit().await
        })
    }

    async fn record_pending_fix(&self, run: RunId, id: AttemptId, e: &Evaluation, rule: &str, snapshot: Option<&str>) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            keep!(tx, run, id, e, rule, snapshot, KeptState::Pending)?;
            tx.commit().await
        })
    }

    async fn confirm_fixes(&self, run: RunId, checkpoint: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            // Each fix's rule result is its own rescan's, right after it: the check confirms
            // only that the batch broke nothing since.
            sqlx::query("UPDATE attempts SET kept = $1 WHERE run_id = $2 AND kept = $3")
                .bind(KeptState::Confirmed)
                .bind(run)
                .bind(KeptState::Pending)
                .execute(&mut *tx)
                .await?;
            set_checkpoint!(&mut *tx, run, checkpoint)?;
            tx.commit().await
        })
    }

    async fn prove_fix(&self, id: AttemptId, why: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE attempts SET verdict = $1, verdict_reason = COALESCE(verdict_reason, '') || $2 WHERE id = $3")
                .bind(Verdict::Fixed)
                .bind(why)
                .bind(id)
                .execute(p)
                .await
                .map(|_| ())
        })
    }

    async fn roll_back_fixes(&self, run: RunId, culprit: &Culprit, dropped: &[AttemptId]) -> JournalResult<()> {
        let regressions = serde_json::to_string(&culprit.regressions).unwrap_or_else(|_| "[]".into());
        let note = format!(" [rolled back: kept after the fix for {} ({}); replayed]", culprit.rule_id, culprit.verdict);
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            sqlx::query(
                "UPDATE attempts SET verdict = $1, verdict_reason = $2, regressions = $3, diagnostics = $4,
                   revert_method = $5, kept = $6, rule_result = COALESCE($8, rule_result) WHERE id = $7",
            )
            .bind(culprit.verdict)
            .bind(&culprit.reason)
            .bind(&regressions)
            .bind(&culprit.diagnostics)
            .bind(RevertMethod::Snapshot)
            .bind(KeptState::RolledBack)
            .bind(culprit.id)
            .bind(culprit.rule_result)
            .execute(&mut *tx)
            .await?;
            for id in std::iter::once(&culprit.id).chain(dropped) {
                sqlx::query(
                    "UPDATE rules SET status = $1, reason = NULL
                     WHERE run_id = $2 AND rule_id = (SELECT rule_id FROM attempts WHERE id = $3)",
                )
                .bind(RuleStatus::Pending)
                .bind(run)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            }
            for id in dropped {
                sqlx::query(
                    "UPDATE attempts SET kept = $1, revert_method = $2, verdict_reason = COALESCE(verdict_reason, '') || $3 WHERE id = $4",
                )
                .bind(KeptState::RolledBack)
                .bind(RevertMethod::Snapshot)
                .bind(&note)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await
        })
    }

    async fn interrupt_open_attempts(&self, run: RunId) -> JournalResult<Vec<Attempt>> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            let open: Vec<Attempt> = sqlx::query_as("SELECT * FROM attempts WHERE run_id = $1 AND state IN ($2, $3) ORDER BY id")
                .bind(run)
                .bind(AttemptState::Started)
                .bind(AttemptState::Applied)
                .fetch_all(&mut *tx)
                .await?;
            for a in &open {
                interrupt!(tx, run, a.id, INTERRUPTED)?;
            }
            tx.commit().await?;
            Ok(open)
        })
    }

    async fn set_aside_attempts(&self, run: RunId, ids: &[AttemptId], reason: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            let mut tx = p.begin_write().await?;
            for id in ids {
                interrupt!(tx, run, *id, reason)?;
            }
            tx.commit().await
        })
    }
}
