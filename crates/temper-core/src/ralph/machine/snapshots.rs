//! The run's snapshots, all in one place: taken when a fix is kept or a state proven, restored to
//! undo or resume, dropped once no longer in force.
use std::time::Instant;

use super::Machine;
use crate::ralph::error::{LoopError, LoopResult};
use temper_journal::Overhead;

impl Machine<'_> {
    /// A snapshot with memory of the guest as it runs now.
    pub async fn take_snapshot(&self, name: &str, why: &str) -> LoopResult<()> {
        let description = format!("temper run {}: {why}", self.run);
        Ok(self.spent.timed(Overhead::SnapshotsTaken, self.hv.snapshot_create(name, &description)).await?)
    }

    /// Reverts to a snapshot and waits for SSH.
    #[tracing::instrument(name = "restore", skip(self))]
    pub async fn restore(&self, checkpoint: &str) -> LoopResult<()> {
        let fail = |reason: String| LoopError::Restore { checkpoint: checkpoint.to_string(), reason };
        let started = Instant::now();
        let restored = async {
            self.hv.snapshot_revert(checkpoint).await.map_err(|e| fail(e.to_string()))?;
            self.guest.reconnect(self.ssh_ready).await.map_err(|e| fail(e.to_string()))
        }
        .await;
        self.spent.outside_revert(Overhead::Restores, started.elapsed());
        restored
    }

    /// Deletes this run's snapshots other than those in force (a crash can leave one); returns
    /// the names it deleted.
    pub async fn drop_stale(&self, prefix: &str, keep: &[&str]) -> LoopResult<Vec<String>> {
        let mut dropped = Vec::new();
        for name in self.hv.snapshot_list().await? {
            if name.starts_with(prefix) && !keep.contains(&name.as_str()) {
                self.spent.timed(Overhead::SnapshotsDropped, self.hv.snapshot_delete(&name)).await?;
                dropped.push(name);
            }
        }
        Ok(dropped)
    }

    /// Deletes a snapshot the run no longer needs; the run's baseline is never deleted.
    pub async fn drop_snapshot(&self, name: &str) -> LoopResult<()> {
        if name != self.baseline {
            self.spent.timed(Overhead::SnapshotsDropped, self.hv.snapshot_delete(name)).await?;
        }
        Ok(())
    }
}
