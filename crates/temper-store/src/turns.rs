use serde::Serialize;

use crate::{Store, StoreResult, now};

/// One LLM call. `tool_calls_dropped` and `sections` are JSON arrays.
#[derive(Debug, Clone, Default, Serialize, sqlx::FromRow)]
pub struct TurnRow {
    pub id: i64,
    pub run_id: i64,
    pub attempt_id: Option<i64>,
    pub rule_id: Option<String>,
    pub role: String,
    pub model: String,
    pub prompt_chars: i64,
    pub prompt_tokens_est: i64,
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub latency_ms: i64,
    pub retries: i64,
    pub tool_calls_seen: i64,
    pub tool_calls_dropped: String,
    pub mode: String,
    pub finish_reason: Option<String>,
    pub sections: String,
    pub error: Option<String>,
    pub created_at: String,
}

impl Store {
    /// Inserts a turn; `id` and `created_at` of the argument are ignored.
    pub async fn add_turn(&self, t: &TurnRow) -> StoreResult<i64> {
        let id = sqlx::query(
            "INSERT INTO turns (run_id, attempt_id, rule_id, role, model, prompt_chars, prompt_tokens_est, prompt_tokens,
               completion_tokens, latency_ms, retries, tool_calls_seen, tool_calls_dropped, mode, finish_reason, sections, error, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(t.run_id)
        .bind(t.attempt_id)
        .bind(&t.rule_id)
        .bind(&t.role)
        .bind(&t.model)
        .bind(t.prompt_chars)
        .bind(t.prompt_tokens_est)
        .bind(t.prompt_tokens)
        .bind(t.completion_tokens)
        .bind(t.latency_ms)
        .bind(t.retries)
        .bind(t.tool_calls_seen)
        .bind(&t.tool_calls_dropped)
        .bind(&t.mode)
        .bind(&t.finish_reason)
        .bind(&t.sections)
        .bind(&t.error)
        .bind(now())
        .execute(&self.pool)
        .await?
        .last_insert_rowid();
        Ok(id)
    }

    pub async fn turns(&self, run: i64) -> StoreResult<Vec<TurnRow>> {
        Ok(sqlx::query_as("SELECT * FROM turns WHERE run_id = ? ORDER BY id")
            .bind(run)
            .fetch_all(&self.pool)
            .await?)
    }
}
