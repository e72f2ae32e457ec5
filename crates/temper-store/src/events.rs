use std::io::Write;

use async_trait::async_trait;
use temper_journal::{Event, EventData, EventKind, EventLog, JournalError, JournalResult, ReadEvents};
use temper_journal::{EventId, RunId};

use crate::{Store, now, with_db};

#[async_trait]
impl ReadEvents for Store {
    async fn events(&self, run: RunId, after: Option<EventId>) -> JournalResult<Vec<Event>> {
        let after_id = after.map_or(0, EventId::get);
        let rows: Vec<Row> = with_db!(self, p => async {
            sqlx::query_as("SELECT * FROM events WHERE run_id = $1 AND id > $2 ORDER BY id").bind(run).bind(after_id).fetch_all(p).await
        })?;
        rows.into_iter().map(Row::typed).collect()
    }
}

#[async_trait]
impl EventLog for Store {
    /// Appends an event to the table and to `runs/<id>/events.jsonl`.
    async fn event(&self, run: RunId, rule_id: Option<&str>, data: &EventData) -> JournalResult<()> {
        let ts = now();
        let kind = data.kind();
        let data = data.fields();
        let data_s = data.to_string();
        let id: EventId = with_db!(self, p => async {
            let (id,): (EventId,) = sqlx::query_as("INSERT INTO events (run_id, ts, kind, rule_id, data) VALUES ($1, $2, $3, $4, $5) RETURNING id")
                .bind(run)
                .bind(&ts)
                .bind(kind)
                .bind(rule_id)
                .bind(&data_s)
                .fetch_one(p)
                .await?;
            Ok(id)
        })?;
        let line = serde_json::json!({"id": id, "run": run, "ts": ts, "kind": kind, "rule": rule_id, "data": data});
        let dir = self.run_dir(run);
        let path = dir.join("events.jsonl");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
            writeln!(f, "{line}")
        };
        write().map_err(|e| JournalError::EventLog { path: path.display().to_string(), reason: e.to_string() })
    }
}

/// An event as its row holds it; its data is typed on the way out.
#[derive(sqlx::FromRow)]
struct Row {
    id: EventId,
    run_id: RunId,
    ts: String,
    kind: EventKind,
    rule_id: Option<String>,
    data: String,
}

impl Row {
    fn typed(self) -> JournalResult<Event> {
        let data = EventData::parse(self.kind, &self.data)?;
        Ok(Event { id: self.id, run_id: self.run_id, ts: self.ts, kind: self.kind, rule_id: self.rule_id, data })
    }
}
