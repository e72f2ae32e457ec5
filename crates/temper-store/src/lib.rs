//! temper-store: the run's state in one SQLite file (WAL), through sqlx.
//! Each call commits on its own, so a crash between calls loses nothing that was returned.
mod attempts;
mod events;
mod memory;
mod rules;
mod runs;
mod summary;
mod turns;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

pub use attempts::{AttemptOutcome, AttemptRow, Culprit, NewAttempt};
pub use events::EventRow;
pub use memory::{BanRow, LessonRow, TipRow};
pub use rules::RuleRow;
pub use runs::{NewRun, RunRow};
pub use summary::RunSummary;
pub use turns::TurnRow;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database {path}: {source}")]
    Open { path: PathBuf, source: sqlx::Error },
    #[error("migrating {path}: {source}")]
    Migrate { path: PathBuf, source: sqlx::migrate::MigrateError },
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("event log {path}: {source}")]
    EventLog { path: PathBuf, source: std::io::Error },
    #[error("{0} not found")]
    NotFound(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// The store. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
}

impl Store {
    /// Opens (or creates) the database, in WAL mode, and applies the migrations.
    pub async fn open(path: impl AsRef<Path>) -> StoreResult<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.clone(),
                source: sqlx::Error::Io(e),
            })?;
        }
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(|source| StoreError::Open { path: path.clone(), source })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(std::time::Duration::from_secs(10));
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts)
            .await
            .map_err(|source| StoreError::Open { path: path.clone(), source })?;
        MIGRATOR
            .run(&pool)
            .await
            .map_err(|source| StoreError::Migrate { path: path.clone(), source })?;
        Ok(Self { pool, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a run's JSONL event log and artifacts live: `<db dir>/runs/<id>/`.
    pub fn run_dir(&self, run_id: i64) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join("runs")
            .join(run_id.to_string())
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// SQLite's own consistency check; "ok" when sound.
    pub async fn integrity_check(&self) -> StoreResult<String> {
        let (s,): (String,) = sqlx::query_as("PRAGMA integrity_check").fetch_one(&self.pool).await?;
        Ok(s)
    }
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
