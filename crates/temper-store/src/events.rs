use std::io::Write;

use serde::Serialize;

use crate::{Store, StoreError, StoreResult, now};

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct EventRow {
    pub id: i64,
    pub run_id: i64,
    pub ts: String,
    pub kind: String,
    pub rule_id: Option<String>,
    pub data: String,
}

impl Store {
    /// Appends an event to the table and to `runs/<id>/events.jsonl`.
    pub async fn event(&self, run: i64, kind: &str, rule_id: Option<&str>, data: serde_json::Value) -> StoreResult<()> {
        let ts = now();
        let data_s = data.to_string();
        let id = sqlx::query("INSERT INTO events (run_id, ts, kind, rule_id, data) VALUES (?, ?, ?, ?, ?)")
            .bind(run)
            .bind(&ts)
            .bind(kind)
            .bind(rule_id)
            .bind(&data_s)
            .execute(&self.pool)
            .await?
            .last_insert_rowid();
        let line = serde_json::json!({"id": id, "run": run, "ts": ts, "kind": kind, "rule": rule_id, "data": data});
        let dir = self.run_dir(run);
        let path = dir.join("events.jsonl");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
            writeln!(f, "{line}")
        };
        write().map_err(|source| StoreError::EventLog { path, source })
    }

    pub async fn events(&self, run: i64, after_id: i64) -> StoreResult<Vec<EventRow>> {
        Ok(sqlx::query_as("SELECT * FROM events WHERE run_id = ? AND id > ? ORDER BY id")
            .bind(run)
            .bind(after_id)
            .fetch_all(&self.pool)
            .await?)
    }
}
