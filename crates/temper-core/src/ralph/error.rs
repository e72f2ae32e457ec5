//! How the loop stops: its errors, and where the end of a run stands after a final step.
use crate::ports::PortError;
use crate::scan::ScanError;
use temper_journal::{JournalError, RunId};

#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("baseline snapshot `{0}` does not exist: run `bash vm/up.sh` (or create it) first")]
    NoBaseline(String),
    #[error("preflight: {0}")]
    Preflight(String),
    #[error("the LLM is unavailable; run {run} is paused, `temper resume` continues it: {reason}")]
    Paused { run: RunId, reason: String },
    #[error("scan: {0}")]
    Scan(#[from] ScanError),
    #[error("target: {0}")]
    Port(#[from] PortError),
    #[error("store: {0}")]
    Store(#[from] JournalError),
    #[error("another process took over run {0} (this one stalled past its lease); it stopped here")]
    LeaseLost(RunId),
    #[error("the guest could not be restored to checkpoint `{checkpoint}`: {reason}")]
    Restore { checkpoint: String, reason: String },
    #[error(
        "a batch's check failed, and fails at checkpoint `{checkpoint}` too, where it held before ({problem}): no fix of the \
         batch is to blame; the fixes stay pending, and `temper resume` checks again"
    )]
    CheckpointFails { checkpoint: String, problem: String },
}

pub type LoopResult<T> = Result<T, LoopError>;

/// Where the end of a run stands after one of its final steps.
#[derive(Debug)]
pub(in crate::ralph) enum End<T = ()> {
    /// It holds: with the final scan, once that is taken.
    Holds(T),
    /// A fix was blamed or a rule reopened: the loop goes back to picking.
    Reopened,
}
