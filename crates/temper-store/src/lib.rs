//! temper-store: the journal (`temper_journal`) in SQLite (one file, WAL; the embedded
//! default) or PostgreSQL (shared by many temper processes on many hosts). Every query is
//! written once, with `$N` parameters both databases read, and runs on whichever pool is open.
//! Each call commits on its own, so a crash between calls loses nothing that was returned.
mod attempts;
mod events;
mod memory;
mod queue;
mod rules;
mod runs;
#[doc(hidden)]
pub mod testing;
#[cfg(test)]
mod tests;
mod turns;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use temper_journal::{JournalError, JournalResult, ReadJournal, RunId};

static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// Which database a `db` setting names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A file path, or `sqlite://PATH`.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…`.
    Postgres(String),
}

impl Location {
    /// A path or `sqlite://` is SQLite, `postgres://` PostgreSQL; any other scheme is an error
    /// (it is never taken for a file name).
    pub fn parse(spec: &str) -> JournalResult<Self> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(JournalError::Open("the database setting `db` is empty".into()));
        }
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            return Ok(Self::Postgres(spec.to_string()));
        }
        if let Some(path) = spec.strip_prefix("sqlite://").or_else(|| spec.strip_prefix("sqlite:")) {
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = spec.split_once("://") {
            return Err(JournalError::Open(format!(
                "database `{scheme}://…` is not supported: use a file path or sqlite://PATH (SQLite), or postgres://USER@HOST/DB (PostgreSQL)"
            )));
        }
        Ok(Self::Sqlite(PathBuf::from(spec)))
    }
}

/// The open database's connection pool.
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The store. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    db: std::sync::Arc<Pool>,
    label: String,
    /// Where each run's `events.jsonl` is mirrored: beside a database file, else `.temper/runs`.
    runs_dir: PathBuf,
}

/// Runs `$body` (an async block over the pool `$p`) on the open database; sqlx errors become
/// journal errors.
macro_rules! with_db {
    ($self:expr, $p:ident => $body:expr) => {
        match &*$self.db {
            $crate::Pool::Sqlite($p) => $body.await,
            $crate::Pool::Postgres($p) => $body.await,
        }
        .map_err($crate::db_error)
    };
}
pub(crate) use with_db;

/// Begins a transaction that writes. SQLite takes its write lock at `BEGIN IMMEDIATE`, so a
/// read inside never meets a newer commit by another lane (`SQLITE_BUSY`, which the busy
/// timeout does not wait for); PostgreSQL's row locks already serialize the writers.
pub(crate) trait BeginWrite {
    type Db: sqlx::Database;
    fn begin_write(&self) -> impl Future<Output = Result<sqlx::Transaction<'static, Self::Db>, sqlx::Error>> + Send;
}

impl BeginWrite for SqlitePool {
    type Db = sqlx::Sqlite;
    fn begin_write(&self) -> impl Future<Output = Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error>> + Send {
        self.begin_with("BEGIN IMMEDIATE")
    }
}

impl BeginWrite for PgPool {
    type Db = sqlx::Postgres;
    fn begin_write(&self) -> impl Future<Output = Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error>> + Send {
        self.begin()
    }
}

pub(crate) fn db_error(e: sqlx::Error) -> JournalError {
    match e {
        sqlx::Error::RowNotFound => JournalError::NotFound("row".into()),
        e => JournalError::Db(e.to_string()),
    }
}

impl Store {
    /// Opens (or creates) the database named by `spec` (see [`Location::parse`]) and applies
    /// its migrations.
    pub async fn open(spec: impl AsRef<str>) -> JournalResult<Self> {
        match Location::parse(spec.as_ref())? {
            Location::Sqlite(path) => Self::open_sqlite(&path).await,
            Location::Postgres(url) => Self::open_postgres(&url).await,
        }
    }

    async fn open_sqlite(path: &Path) -> JournalResult<Self> {
        let fail = |e: String| JournalError::Open(format!("database {}: {e}", path.display()));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        }
        // Two processes (or two lanes) opening a new file at once would both migrate it, and the
        // switch to WAL takes a lock that SQLite's busy timeout does not wait for: either one
        // fails with "database is locked". One opener at a time does both.
        let lock_path = format!("{}.migrate-lock", path.display());
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| fail(format!("{lock_path}: {e}")))?;
        // Waits without blocking the runtime: the lane holding the lock needs it to finish.
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
                Err(std::fs::TryLockError::Error(e)) => return Err(fail(format!("locking {lock_path}: {e}"))),
            }
        }
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .map_err(|e| fail(e.to_string()))?
            .create_if_missing(true)
            .synchronous(SqliteSynchronous::Full)
            // The vocabularies are foreign keys to lookup tables: without this, any text passes.
            .foreign_keys(true)
            .busy_timeout(std::time::Duration::from_secs(10));
        // WAL is kept in the file: one connection sets it and migrates, so the pool's
        // connections never switch modes nor hold statements prepared before a migration.
        let ready = async {
            let one = opts.clone().journal_mode(SqliteJournalMode::Wal);
            let conn = SqlitePoolOptions::new().max_connections(1).connect_with(one).await.map_err(|e| e.to_string())?;
            let migrated = SQLITE.run(&conn).await.map_err(|e| format!("migrating: {e}"));
            conn.close().await;
            migrated
        }
        .await;
        drop(lock);
        ready.map_err(fail)?;
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(opts).await.map_err(|e| fail(e.to_string()))?;
        let runs_dir = path.parent().unwrap_or_else(|| Path::new(".")).join("runs");
        Ok(Self { db: std::sync::Arc::new(Pool::Sqlite(pool)), label: format!("sqlite {}", path.display()), runs_dir })
    }

    async fn open_postgres(url: &str) -> JournalResult<Self> {
        let opts = PgConnectOptions::from_str(url).map_err(|e| JournalError::Open(format!("database URL: {e}")))?;
        // Never show a password: only user, host, port and database.
        let label =
            format!("postgres {}@{}:{}/{}", opts.get_username(), opts.get_host(), opts.get_port(), opts.get_database().unwrap_or(""));
        let fail = |e: String| JournalError::Open(format!("{label}: {e}"));
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(std::time::Duration::from_secs(30))
            .connect_with(opts)
            .await
            .map_err(|e| fail(e.to_string()))?;
        POSTGRES.run(&pool).await.map_err(|e| fail(format!("migrating: {e}")))?;
        Ok(Self { db: std::sync::Arc::new(Pool::Postgres(pool)), label, runs_dir: PathBuf::from(".temper/runs") })
    }

    /// Mirrors each run's events under `dir/<id>/events.jsonl` instead of the default.
    pub fn with_runs_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.runs_dir = dir.into();
        self
    }

    /// A fleet's own files (`temper fleet run --plan-from`'s plan): `fleets/<name>/` beside the
    /// runs dir, the name's characters other than letters, digits, `.`, `-` and `_` as `_`.
    pub fn fleet_dir(&self, fleet: &str) -> PathBuf {
        let name: String = fleet.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
        let name = if name.trim_matches('.').is_empty() { "_".to_string() } else { name };
        self.runs_dir.parent().unwrap_or_else(|| Path::new(".")).join("fleets").join(name)
    }

    /// Which backend is open: `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match &*self.db {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// Where a run's JSONL event log lives: `<runs dir>/<id>/`.
    pub fn run_dir(&self, run_id: RunId) -> PathBuf {
        self.runs_dir.join(run_id.to_string())
    }

    /// Runs one statement given as text (the dashboards' queries, in tests) and returns how
    /// many rows it produced.
    pub async fn raw_rows(&self, sql: &str) -> JournalResult<usize> {
        let sql = sqlx::AssertSqlSafe(sql.to_string());
        with_db!(self, p => async { sqlx::raw_sql(sql).fetch_all(p).await.map(|r| r.len()) })
    }
}

#[async_trait]
impl ReadJournal for Store {
    fn describe(&self) -> String {
        self.label.clone()
    }

    async fn identity(&self) -> JournalResult<String> {
        let q = "SELECT id FROM store_identity";
        with_db!(self, p => async { sqlx::query_as::<_, (String,)>(q).fetch_one(p).await.map(|(id,)| id) })
    }

    async fn integrity_check(&self) -> JournalResult<String> {
        match &*self.db {
            Pool::Sqlite(p) => {
                let (s,): (String,) = sqlx::query_as("PRAGMA integrity_check").fetch_one(p).await.map_err(db_error)?;
                Ok(s)
            }
            // PostgreSQL keeps its own consistency; an answer is all there is to check here.
            Pool::Postgres(p) => sqlx::query("SELECT 1").execute(p).await.map(|_| "ok".to_string()).map_err(db_error),
        }
    }
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
