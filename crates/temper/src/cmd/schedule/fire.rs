//! `temper schedule fire`: what the timer runs. One fire of a schedule at a time (an exclusive,
//! non-blocking flock beside the store); it resumes the unfinished run, else starts a new one.
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use temper_journal::prelude::*;
use temper_journal::{RunStatus, now_ms};
use temper_store::Location;
use tracing::Level;

use super::ScheduleError;
use super::units::check_name;
use crate::cli::RunArgs;
use crate::cmd::run;
use crate::config::Config;
use crate::telemetry::notice;
use temper_journal::RunId;

pub fn parse_run_args(args: &[String]) -> Result<RunArgs, ScheduleError> {
    crate::cli::parse_run_args(args).map_err(ScheduleError::BadRunArgs)
}

/// What a fire does, from the newest unfinished run.
#[derive(Debug, PartialEq, Eq)]
enum FireAction {
    Start,
    Resume {
        run: RunId,
        was: RunStatus,
    },
    /// A live process drives this run: the VM is in use.
    Busy {
        run: RunId,
        driver: String,
    },
}

pub async fn fire(config: &Config, name: &str, run_args: Vec<String>) -> anyhow::Result<u8> {
    check_name(name)?;
    let args = parse_run_args(&run_args)?;
    let path = lock_dir(config).join(format!("schedule-{name}.lock"));
    let Some(_lock) = lock(&path)? else {
        return Ok(0);
    };
    match plan(config).await? {
        FireAction::Busy { run, driver } => {
            notice(Level::WARN, format_args!("schedule {name}: run {run} is being driven by another process ({driver}); not running"));
            Ok(0)
        }
        FireAction::Resume { run, was } => {
            tracing::info!(schedule = name, %run, was = was.as_str(), "scheduled run: resuming the unfinished run");
            run::resume(config, Some(run), args.agent, args.quiet, args.json).await
        }
        FireAction::Start => {
            tracing::info!(schedule = name, "scheduled run: starting a new run");
            run::start(config, args).await
        }
    }
}

/// Beside a SQLite file; `.temper/` (under the working directory) for PostgreSQL.
fn lock_dir(config: &Config) -> PathBuf {
    match Location::parse(&config.db) {
        Ok(Location::Sqlite(file)) => file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf(),
        _ => PathBuf::from(".temper"),
    }
}

/// Takes the lock, or says who holds it and returns None. Held until the file is dropped.
fn lock(path: &Path) -> Result<Option<File>, ScheduleError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(ScheduleError::io("creating", dir))?;
    }
    let mut file =
        OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(ScheduleError::io("opening", path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            // The pid the last taker wrote, when that process is still there.
            let holder = holder.trim();
            let alive = !holder.is_empty() && holder.bytes().all(|b| b.is_ascii_digit()) && Path::new("/proc").join(holder).exists();
            let by = if alive { format!(" (pid {holder})") } else { String::new() };
            notice(Level::WARN, format_args!("another scheduled run holds {}{by}; this one did not run", path.display()));
            return Ok(None);
        }
        Err(TryLockError::Error(e)) => return Err(ScheduleError::io("locking", path)(e)),
    }
    // The holder's pid, for the message above; the lock itself is the flock.
    let pid = std::process::id();
    file.set_len(0).and_then(|()| file.rewind()).and_then(|()| writeln!(file, "{pid}")).map_err(ScheduleError::io("writing", path))?;
    Ok(Some(file))
}

async fn plan(config: &Config) -> anyhow::Result<FireAction> {
    let store = crate::wiring::store(config).await?;
    let Some(row) = store.unfinished_run().await? else {
        return Ok(FireAction::Start);
    };
    Ok(match row.status {
        RunStatus::Paused | RunStatus::Interrupted => FireAction::Resume { run: row.id, was: row.status },
        RunStatus::Running if row.driver_gone(now_ms()) => FireAction::Resume { run: row.id, was: RunStatus::Interrupted },
        RunStatus::Running => FireAction::Busy { run: row.id, driver: row.driver.unwrap_or_default() },
        RunStatus::Finished | RunStatus::Failed => FireAction::Start,
    })
}
