//! The fleet's queue, PostgreSQL only: `temper fleet enqueue` puts targets on it, and any
//! number of `temper worker` processes, on any hosts, take them with `FOR UPDATE SKIP LOCKED`
//! (two workers never take one item). A taken item becomes a run, driven under the run's own
//! lease; when that lease runs out unfinished (a worker died, or stopped), the item is taken
//! again and the run resumed.
use std::time::Duration;

use sqlx::PgPool;
use sqlx::types::Json;
use temper_journal::RunId;
use temper_journal::target::Target;
use temper_journal::{JournalError, JournalResult, QueueClaim, QueueItem, QueueState, RunStatus, now_ms};

use crate::{Pool, Store, db_error, now};

/// Items a worker may take: queued ones, and claimed ones not held (`lease_until` passed)
/// whose run, if any, is unfinished and has no live driver.
const TAKEABLE: &str = "SELECT q.* FROM queue q LEFT JOIN runs r ON r.id = q.run_id
     WHERE (q.state = $1 OR (q.state = $2 AND COALESCE(q.lease_until, 0) < $3
            AND (q.run_id IS NULL OR (r.status NOT IN ($4, $5) AND COALESCE(r.lease_until, 0) < $3))))
     ORDER BY q.id LIMIT 1 FOR UPDATE OF q SKIP LOCKED";

impl Store {
    fn pg(&self) -> JournalResult<&PgPool> {
        match &*self.db {
            Pool::Postgres(p) => Ok(p),
            Pool::Sqlite(_) => Err(JournalError::Unsupported(
                "the fleet queue needs PostgreSQL shared by the workers (db = \"postgres://USER@HOST/DB\"); \
                 with SQLite, drive each target with `temper run --target NAME`"
                    .into(),
            )),
        }
    }

    /// Puts `target` on the queue of `fleet`, to be run with `args`.
    pub async fn enqueue(&self, fleet: &str, target: &Target, args: &[String]) -> JournalResult<i64> {
        let (id,): (i64,) =
            sqlx::query_as("INSERT INTO queue (fleet, target, args, state, enqueued_at) VALUES ($1, $2, $3, $4, $5) RETURNING id")
                .bind(fleet)
                .bind(Json(target))
                .bind(Json(args))
                .bind(QueueState::Queued)
                .bind(now())
                .fetch_one(self.pg()?)
                .await
                .map_err(db_error)?;
        Ok(id)
    }

    /// Takes the next item for `worker`, held for `hold` until its run exists. An item taken
    /// `max_tries` times already is marked failed instead. Items whose run finished are closed.
    pub async fn claim(&self, worker: &str, hold: Duration, max_tries: i64) -> JournalResult<Option<QueueClaim>> {
        let p = self.pg()?;
        self.close_finished(p).await?;
        loop {
            let mut tx = p.begin().await.map_err(db_error)?;
            let t = now_ms();
            let item: Option<QueueItem> = sqlx::query_as(TAKEABLE)
                .bind(QueueState::Queued)
                .bind(QueueState::Claimed)
                .bind(t)
                .bind(RunStatus::Finished)
                .bind(RunStatus::Failed)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_error)?;
            let Some(item) = item else { return Ok(None) };
            if item.tries >= max_tries {
                sqlx::query("UPDATE queue SET state = $1, ended_at = $2 WHERE id = $3")
                    .bind(QueueState::Failed)
                    .bind(now())
                    .bind(item.id)
                    .execute(&mut *tx)
                    .await
                    .map_err(db_error)?;
                tx.commit().await.map_err(db_error)?;
                continue;
            }
            let item: QueueItem = sqlx::query_as(
                "UPDATE queue SET state = $1, worker = $2, tries = tries + 1, lease_until = $3, claimed_at = $4 WHERE id = $5 RETURNING *",
            )
            .bind(QueueState::Claimed)
            .bind(worker)
            .bind(t + hold.as_millis() as i64)
            .bind(now())
            .bind(item.id)
            .fetch_one(&mut *tx)
            .await
            .map_err(db_error)?;
            tx.commit().await.map_err(db_error)?;
            return Ok(Some(if item.run_id.is_some() { QueueClaim::Resume(item) } else { QueueClaim::Start(item) }));
        }
    }

    /// Closes claimed items whose run has ended (its worker may have died just after).
    async fn close_finished(&self, p: &PgPool) -> JournalResult<()> {
        for (run_status, state) in [(RunStatus::Finished, QueueState::Done), (RunStatus::Failed, QueueState::Failed)] {
            sqlx::query(
                "UPDATE queue q SET state = $1, exit_code = r.exit_code, ended_at = $2 FROM runs r
                 WHERE r.id = q.run_id AND q.state = $3 AND r.status = $4",
            )
            .bind(state)
            .bind(now())
            .bind(QueueState::Claimed)
            .bind(run_status)
            .execute(p)
            .await
            .map_err(db_error)?;
        }
        Ok(())
    }

    /// The run started for `item`: from now on the run's lease says who drives it.
    pub async fn set_queue_run(&self, item: i64, run: RunId) -> JournalResult<()> {
        sqlx::query("UPDATE queue SET run_id = $1 WHERE id = $2").bind(run).bind(item).execute(self.pg()?).await.map_err(db_error)?;
        Ok(())
    }

    /// The run's driver holds its lease: from now on that lease (30 s, renewed) alone guards the
    /// run's queue item, not the worker's hold, so a killed worker's target is taken over as soon
    /// as the lease runs out. Nothing to do on SQLite (no queue).
    pub async fn lease_guards_item(&self, run: RunId) -> JournalResult<()> {
        let Pool::Postgres(p) = &*self.db else { return Ok(()) };
        sqlx::query("UPDATE queue SET lease_until = $1 WHERE run_id = $2 AND state = $3")
            .bind(now_ms())
            .bind(run)
            .bind(QueueState::Claimed)
            .execute(p)
            .await
            .map_err(db_error)?;
        Ok(())
    }

    /// A worker is done with `item` for now: closed when its run finished, else left to be
    /// taken again (by any worker) after `pause`.
    pub async fn release_item(&self, item: i64, pause: Duration) -> JournalResult<()> {
        let p = self.pg()?;
        sqlx::query("UPDATE queue SET lease_until = $1 WHERE id = $2 AND state = $3")
            .bind(now_ms() + pause.as_millis() as i64)
            .bind(item)
            .bind(QueueState::Claimed)
            .execute(p)
            .await
            .map_err(db_error)?;
        self.close_finished(p).await
    }

    /// The queue, oldest first; one fleet's items when `fleet` is given.
    pub async fn queue(&self, fleet: Option<&str>) -> JournalResult<Vec<QueueItem>> {
        sqlx::query_as("SELECT * FROM queue WHERE $1::TEXT IS NULL OR fleet = $1 ORDER BY id")
            .bind(fleet)
            .fetch_all(self.pg()?)
            .await
            .map_err(db_error)
    }
}
