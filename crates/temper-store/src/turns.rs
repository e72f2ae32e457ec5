use async_trait::async_trait;
use temper_journal::{JournalResult, NewTurn, ReadTurns, StoredTurn, TurnLog};
use temper_journal::{RunId, TurnId};

use crate::{Store, now, with_db};

#[async_trait]
impl ReadTurns for Store {
    async fn turns(&self, run: RunId) -> JournalResult<Vec<StoredTurn>> {
        with_db!(self, p => async { sqlx::query_as("SELECT * FROM turns WHERE run_id = $1 ORDER BY id").bind(run).fetch_all(p).await })
    }
}

#[async_trait]
impl TurnLog for Store {
    async fn add_turn(&self, run: RunId, t: &NewTurn<'_>) -> JournalResult<TurnId> {
        let r = t.record;
        let dropped = serde_json::to_string(&r.tool_calls_dropped).unwrap_or_else(|_| "[]".into());
        let sections = serde_json::to_string(&r.sections).unwrap_or_else(|_| "[]".into());
        with_db!(self, p => async {
            let (id,): (TurnId,) = sqlx::query_as(
                "INSERT INTO turns (run_id, attempt_id, rule_id, role, model, prompt_chars, prompt_tokens_est, prompt_tokens,
                   completion_tokens, latency_ms, retries, tool_calls_seen, tool_calls_dropped, mode, finish_reason, sections, error, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id",
            )
            .bind(run)
            .bind(t.attempt_id)
            .bind(t.rule_id)
            .bind(r.role)
            .bind(&r.model)
            .bind(r.prompt_chars as i64)
            .bind(i64::from(r.prompt_tokens_est))
            .bind(r.prompt_tokens.map(i64::from))
            .bind(r.completion_tokens.map(i64::from))
            .bind(r.latency_ms as i64)
            .bind(i64::from(r.retries))
            .bind(i64::from(r.tool_calls_seen))
            .bind(&dropped)
            .bind(r.mode)
            .bind(&r.finish_reason)
            .bind(&sections)
            .bind(&r.error)
            .bind(now())
            .fetch_one(p)
            .await?;
            Ok(id)
        })
    }
}
