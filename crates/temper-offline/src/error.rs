//! What can go wrong reading a disk from outside and judging it.
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    #[error("`{tool}` failed: {detail}")]
    Tool { tool: &'static str, detail: String },
    #[error("`{tool}` could not be run: {source} (is it installed on the host?)")]
    Spawn { tool: &'static str, source: std::io::Error },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("image {path}: {why}")]
    Image { path: PathBuf, why: String },
    #[error("the disk has no ext2/3/4 file system with /etc/os-release (partitions looked at: {looked})")]
    NoRoot { looked: String },
    #[error("the disk's file system does not read: {0}")]
    Ext4(String),
    #[error("snapshot name `{0}` cannot be passed to qemu-img (a comma)")]
    BadSnapshotName(String),
    #[error("the content: {0}")]
    Content(#[from] temper_scap::oval::OvalError),
    #[error("the host's oscap over the disk: {0}")]
    Scan(String),
}

pub type OfflineResult<T, E = OfflineError> = std::result::Result<T, E>;

impl OfflineError {
    /// Whose side the failure is on: the disk's own content (no root file system, a file system
    /// that does not read), or the host's.
    pub fn cause(&self) -> temper_journal::offline::JudgeFailure {
        use temper_journal::offline::JudgeFailure;
        match self {
            Self::NoRoot { .. } | Self::Ext4(_) => JudgeFailure::Disk,
            _ => JudgeFailure::Host,
        }
    }
}

impl OfflineError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}
