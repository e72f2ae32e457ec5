use serde::Serialize;

use crate::{Store, StoreResult};

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct RuleRow {
    pub id: i64,
    pub run_id: i64,
    pub rule_id: String,
    pub title: String,
    pub severity: String,
    pub initial_result: String,
    pub final_result: Option<String>,
    pub status: String,
    pub reason: Option<String>,
    pub attempts: i64,
    pub elapsed_ms: i64,
}

impl Store {
    /// Records the rules of the first scan; a rule already recorded keeps its row (resume).
    pub async fn add_rule(
        &self,
        run: i64,
        rule_id: &str,
        title: &str,
        severity: &str,
        initial_result: &str,
        status: &str,
        reason: Option<&str>,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO rules (run_id, rule_id, title, severity, initial_result, status, reason)
             VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, rule_id) DO NOTHING",
        )
        .bind(run)
        .bind(rule_id)
        .bind(title)
        .bind(severity)
        .bind(initial_result)
        .bind(status)
        .bind(reason)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn rules(&self, run: i64) -> StoreResult<Vec<RuleRow>> {
        Ok(sqlx::query_as("SELECT * FROM rules WHERE run_id = ? ORDER BY id")
            .bind(run)
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn rule(&self, run: i64, rule_id: &str) -> StoreResult<Option<RuleRow>> {
        Ok(sqlx::query_as("SELECT * FROM rules WHERE run_id = ? AND rule_id = ?")
            .bind(run)
            .bind(rule_id)
            .fetch_optional(&self.pool)
            .await?)
    }

    pub async fn set_rule_status(&self, run: i64, rule_id: &str, status: &str, reason: Option<&str>) -> StoreResult<()> {
        sqlx::query("UPDATE rules SET status = ?, reason = ? WHERE run_id = ? AND rule_id = ?")
            .bind(status)
            .bind(reason)
            .bind(run)
            .bind(rule_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn add_rule_time(&self, run: i64, rule_id: &str, ms: i64) -> StoreResult<()> {
        sqlx::query("UPDATE rules SET elapsed_ms = elapsed_ms + ? WHERE run_id = ? AND rule_id = ?")
            .bind(ms)
            .bind(run)
            .bind(rule_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn set_final_result(&self, run: i64, rule_id: &str, result: &str) -> StoreResult<()> {
        sqlx::query("UPDATE rules SET final_result = ? WHERE run_id = ? AND rule_id = ?")
            .bind(result)
            .bind(run)
            .bind(rule_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
