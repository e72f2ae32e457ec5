//! Semantic memory: lessons, bans and tips, kept across runs until forgotten.
use serde::Serialize;

use crate::{Store, StoreError, StoreResult, now};

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct LessonRow {
    pub id: i64,
    pub run_id: Option<i64>,
    pub rule_id: Option<String>,
    pub lesson: String,
    pub preferred: String,
    pub distilled: String,
    pub created_at: String,
    pub active: bool,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct BanRow {
    pub id: i64,
    pub run_id: Option<i64>,
    pub rule_id: Option<String>,
    pub pattern: String,
    pub reason: String,
    pub created_at: String,
    pub active: bool,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct TipRow {
    pub id: i64,
    pub run_id: Option<i64>,
    pub rule_id: Option<String>,
    pub text: String,
    pub kind: String,
    pub mechanism: String,
    pub created_at: String,
    pub active: bool,
}


impl Store {
    pub async fn add_lesson(&self, run: i64, rule: &str, lesson: &str, preferred: &str, distilled: &str) -> StoreResult<i64> {
        Ok(sqlx::query("INSERT INTO lessons (run_id, rule_id, lesson, preferred, distilled, created_at) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(run)
            .bind(rule)
            .bind(lesson)
            .bind(preferred)
            .bind(distilled)
            .bind(now())
            .execute(&self.pool)
            .await?
            .last_insert_rowid())
    }

    pub async fn add_ban(&self, run: i64, rule: &str, pattern: &str, reason: &str) -> StoreResult<i64> {
        Ok(sqlx::query("INSERT INTO bans (run_id, rule_id, pattern, reason, created_at) VALUES (?, ?, ?, ?, ?)")
            .bind(run)
            .bind(rule)
            .bind(pattern)
            .bind(reason)
            .bind(now())
            .execute(&self.pool)
            .await?
            .last_insert_rowid())
    }

    pub async fn add_tip(&self, run: i64, rule: &str, text: &str, kind: &str, mechanism: &str) -> StoreResult<i64> {
        Ok(sqlx::query("INSERT INTO tips (run_id, rule_id, text, kind, mechanism, created_at) VALUES (?, ?, ?, ?, ?, ?)")
            .bind(run)
            .bind(rule)
            .bind(text)
            .bind(kind)
            .bind(mechanism)
            .bind(now())
            .execute(&self.pool)
            .await?
            .last_insert_rowid())
    }

    /// Active lessons, newest first; `rule` narrows to one rule's episodic memory.
    pub async fn lessons(&self, rule: Option<&str>) -> StoreResult<Vec<LessonRow>> {
        Ok(sqlx::query_as("SELECT * FROM lessons WHERE active = 1 AND (? IS NULL OR rule_id = ?) ORDER BY id DESC")
            .bind(rule)
            .bind(rule)
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn bans(&self) -> StoreResult<Vec<BanRow>> {
        Ok(sqlx::query_as("SELECT * FROM bans WHERE active = 1 ORDER BY id").fetch_all(&self.pool).await?)
    }

    pub async fn tips(&self) -> StoreResult<Vec<TipRow>> {
        Ok(sqlx::query_as("SELECT * FROM tips WHERE active = 1 ORDER BY id DESC").fetch_all(&self.pool).await?)
    }

    /// Forgets one item (`lessons`, `bans` or `tips`); it stays in the table, inactive, for the record.
    pub async fn forget(&self, table: &str, id: i64) -> StoreResult<()> {
        let sql = match table {
            "lessons" => "UPDATE lessons SET active = 0 WHERE id = ? AND active = 1",
            "bans" => "UPDATE bans SET active = 0 WHERE id = ? AND active = 1",
            "tips" => "UPDATE tips SET active = 0 WHERE id = ? AND active = 1",
            other => return Err(StoreError::NotFound(format!("memory kind `{other}` (use lessons, bans or tips)"))),
        };
        let done = sqlx::query(sql)
            .bind(id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("{table} {id}")));
        }
        Ok(())
    }
}
