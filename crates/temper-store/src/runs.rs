use serde::Serialize;

use crate::{Store, StoreError, StoreResult, now};

#[derive(Debug, Clone)]
pub struct NewRun {
    pub skill: String,
    pub profile: String,
    pub datastream: String,
    pub content_version: Option<String>,
    pub target: String,
    pub agent: String,
    pub options_json: String,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct RunRow {
    pub id: i64,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: String,
    pub skill: String,
    pub profile: String,
    pub datastream: String,
    pub content_version: Option<String>,
    pub target: String,
    pub agent: String,
    pub options_json: String,
    pub phase: String,
    pub current_rule: Option<String>,
    pub checkpoint: String,
    pub score_before: Option<f64>,
    pub score_after: Option<f64>,
    pub exit_code: Option<i64>,
    pub summary_json: Option<String>,
    pub error: Option<String>,
    pub heartbeat_at: Option<String>,
    /// Fixes per regression check; 1: the regression set rides in every rule rescan.
    pub regression_every: Option<i64>,
}

impl Store {
    pub async fn create_run(&self, r: &NewRun) -> StoreResult<i64> {
        let id = sqlx::query(
            "INSERT INTO runs (started_at, status, skill, profile, datastream, content_version, target, agent, options_json)
             VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(now())
        .bind(&r.skill)
        .bind(&r.profile)
        .bind(&r.datastream)
        .bind(&r.content_version)
        .bind(&r.target)
        .bind(&r.agent)
        .bind(&r.options_json)
        .execute(&self.pool)
        .await?
        .last_insert_rowid();
        Ok(id)
    }

    pub async fn run(&self, id: i64) -> StoreResult<RunRow> {
        sqlx::query_as("SELECT * FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("run {id}")))
    }

    pub async fn latest_run(&self) -> StoreResult<Option<RunRow>> {
        Ok(sqlx::query_as("SELECT * FROM runs ORDER BY id DESC LIMIT 1")
            .fetch_optional(&self.pool)
            .await?)
    }

    /// The newest run that has not finished (running, paused or interrupted), for `temper resume`.
    pub async fn unfinished_run(&self) -> StoreResult<Option<RunRow>> {
        Ok(sqlx::query_as("SELECT * FROM runs WHERE status != 'finished' ORDER BY id DESC LIMIT 1")
            .fetch_optional(&self.pool)
            .await?)
    }

    pub async fn list_runs(&self, limit: i64) -> StoreResult<Vec<RunRow>> {
        Ok(sqlx::query_as("SELECT * FROM runs ORDER BY id DESC LIMIT ?")
            .bind(limit)
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn set_phase(&self, run: i64, phase: &str, rule: Option<&str>) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET phase = ?, current_rule = ?, heartbeat_at = ? WHERE id = ?")
            .bind(phase)
            .bind(rule)
            .bind(now())
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_status(&self, run: i64, status: &str, error: Option<&str>) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET status = ?, error = ? WHERE id = ?")
            .bind(status)
            .bind(error)
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_checkpoint(&self, run: i64, name: &str) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET checkpoint = ? WHERE id = ?")
            .bind(name)
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_regression_every(&self, run: i64, every: u32) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET regression_every = ? WHERE id = ?")
            .bind(every)
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_scores(&self, run: i64, before: Option<f64>, after: Option<f64>) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET score_before = COALESCE(?, score_before), score_after = COALESCE(?, score_after) WHERE id = ?")
            .bind(before)
            .bind(after)
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_content_version(&self, run: i64, version: &str) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET content_version = ? WHERE id = ?")
            .bind(version)
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn finish_run(&self, run: i64, status: &str, exit_code: i64, summary_json: &str) -> StoreResult<()> {
        sqlx::query("UPDATE runs SET status = ?, exit_code = ?, summary_json = ?, ended_at = ?, phase = 'done', current_rule = NULL WHERE id = ?")
            .bind(status)
            .bind(exit_code)
            .bind(summary_json)
            .bind(now())
            .bind(run)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
