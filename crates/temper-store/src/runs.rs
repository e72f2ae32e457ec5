use async_trait::async_trait;
use sqlx::types::Json;
use temper_journal::RunId;
use temper_journal::target::Target;
use temper_journal::{JournalError, JournalResult, NewRun, Phase, ReadRuns, Run, RunLog, RunStatus, RunSummary};

use crate::{Store, now, with_db};

impl Store {
    async fn insert_run(&self, r: &NewRun, target: Option<&Target>) -> JournalResult<RunId> {
        with_db!(self, p => async {
            let (id,): (RunId,) = sqlx::query_as(
                "INSERT INTO runs (started_at, status, skill, profile, datastream, content_version, target, agent, options_json,
                   baseline, checkpoint, target_config)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11) RETURNING id",
            )
            .bind(now())
            .bind(RunStatus::Running)
            .bind(&r.skill)
            .bind(&r.profile)
            .bind(&r.datastream)
            .bind(&r.content_version)
            .bind(&r.target)
            .bind(&r.agent)
            .bind(&r.options_json)
            .bind(&r.baseline)
            .bind(target.map(Json))
            .fetch_one(p)
            .await?;
            Ok(id)
        })
    }
}

#[async_trait]
impl ReadRuns for Store {
    async fn run(&self, id: RunId) -> JournalResult<Run> {
        let row: Option<Run> =
            with_db!(self, p => async { sqlx::query_as("SELECT * FROM runs WHERE id = $1").bind(id).fetch_optional(p).await })?;
        row.ok_or_else(|| JournalError::NotFound(format!("run {id}")))
    }

    async fn latest_run(&self) -> JournalResult<Option<Run>> {
        with_db!(self, p => async { sqlx::query_as("SELECT * FROM runs ORDER BY id DESC LIMIT 1").fetch_optional(p).await })
    }

    async fn unfinished_run(&self) -> JournalResult<Option<Run>> {
        with_db!(self, p => async {
            sqlx::query_as("SELECT * FROM runs WHERE status != $1 ORDER BY id DESC LIMIT 1").bind(RunStatus::Finished).fetch_optional(p).await
        })
    }

    async fn list_runs(&self, limit: i64) -> JournalResult<Vec<Run>> {
        with_db!(self, p => async { sqlx::query_as("SELECT * FROM runs ORDER BY id DESC LIMIT $1").bind(limit).fetch_all(p).await })
    }
}

#[async_trait]
impl RunLog for Store {
    async fn create_run(&self, r: &NewRun) -> JournalResult<RunId> {
        self.insert_run(r, None).await
    }

    async fn create_run_on(&self, r: &NewRun, target: &Target) -> JournalResult<RunId> {
        self.insert_run(r, Some(target)).await
    }

    async fn set_phase(&self, run: RunId, phase: Phase, rule: Option<&str>) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET phase = $1, current_rule = $2, heartbeat_at = $3 WHERE id = $4")
                .bind(phase).bind(rule).bind(now()).bind(run).execute(p).await.map(drop)
        })
    }

    async fn set_status(&self, run: RunId, status: RunStatus, error: Option<&str>) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET status = $1, error = $2 WHERE id = $3").bind(status).bind(error).bind(run).execute(p).await.map(drop)
        })
    }

    async fn set_regression_every(&self, run: RunId, every: u32) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET regression_every = $1 WHERE id = $2").bind(i64::from(every)).bind(run).execute(p).await.map(drop)
        })
    }

    async fn set_scores(&self, run: RunId, before: Option<f64>, after: Option<f64>) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET score_before = COALESCE($1, score_before), score_after = COALESCE($2, score_after) WHERE id = $3")
                .bind(before).bind(after).bind(run).execute(p).await.map(drop)
        })
    }

    async fn set_content_version(&self, run: RunId, version: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET content_version = $1 WHERE id = $2").bind(version).bind(run).execute(p).await.map(drop)
        })
    }

    async fn finish_run(&self, run: RunId, s: &RunSummary) -> JournalResult<()> {
        let json = serde_json::to_string(s).map_err(|e| JournalError::Db(format!("summary: {e}")))?;
        with_db!(self, p => async {
            sqlx::query(
                "UPDATE runs SET status = $1, exit_code = $2, summary_json = $3, ended_at = $4, phase = $5, current_rule = NULL,
                   wall_ms = $6, guest_ms = $7 WHERE id = $8",
            )
            .bind(RunStatus::Finished)
            .bind(s.exit_code)
            .bind(&json)
            .bind(now())
            .bind(Phase::Done)
            .bind((s.wall_secs * 1000.0) as i64)
            .bind((s.guest_secs * 1000.0) as i64)
            .bind(run)
            .execute(p)
            .await
            .map(drop)
        })
    }

    async fn claim_run(&self, run: RunId, driver: &str, dead: Option<&str>, now_ms: i64, until_ms: i64) -> JournalResult<bool> {
        with_db!(self, p => async {
            sqlx::query(
                "UPDATE runs SET driver = $1, lease_until = $2
                 WHERE id = $3 AND (driver IS NULL OR lease_until IS NULL OR lease_until < $4 OR driver = $1 OR driver = $5)",
            )
            .bind(driver)
            .bind(until_ms)
            .bind(run)
            .bind(now_ms)
            .bind(dead)
            .execute(p)
            .await
            .map(|r| r.rows_affected() == 1)
        })
    }

    async fn renew_lease(&self, run: RunId, driver: &str, until_ms: i64, wall_ms: i64, guest_ms: i64) -> JournalResult<bool> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET lease_until = $1, wall_ms = $2, guest_ms = $3 WHERE id = $4 AND driver = $5")
                .bind(until_ms)
                .bind(wall_ms)
                .bind(guest_ms)
                .bind(run)
                .bind(driver)
                .execute(p)
                .await
                .map(|r| r.rows_affected() == 1)
        })
    }

    async fn release_run(&self, run: RunId, driver: &str) -> JournalResult<()> {
        with_db!(self, p => async {
            sqlx::query("UPDATE runs SET driver = NULL, lease_until = NULL WHERE id = $1 AND driver = $2")
                .bind(run).bind(driver).execute(p).await.map(drop)
        })
    }
}
