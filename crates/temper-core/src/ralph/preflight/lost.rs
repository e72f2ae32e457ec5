//! On resume, the newest kept state restored: the checkpoint, or the last pending fix's state (its
//! snapshot, or the newest one before it with the fixes since replayed: `state/kept.rs`).
//! When any of those snapshots is gone (the domain was defined again, say), the guest is rebuilt
//! from the newest older kept state left: the checkpoint when only pending snapshots are gone,
//! else the checkpoint proven to boot (the baseline before any). The fixes kept since are run
//! again in order, and the lost snapshots taken again. Nothing is confirmed that was not: the
//! next regression check verifies the pending fixes, and the reboot proof every replayed one.
use super::Preflight;
use crate::ralph::error::LoopResult;
use crate::ralph::replay::{replay, stand_at};
use crate::ralph::state::{Kept, KeptWay};
use temper_journal::Booted;
use temper_journal::{Attempt, EventData, KeptState, ReplayWhy};

impl Preflight<'_> {
    /// Restores the newest kept state, rebuilding what is gone. Returns the checkpoint in force
    /// (a new one when the old was gone and fixes were replayed).
    pub(super) async fn restore_head(&self, checkpoint: &str, pending: &[Kept], booted: &Booted, prefix: &str) -> LoopResult<String> {
        // One listing: each `snapshot_exists` lists them all again.
        let have = self.machine.hv().snapshot_list().await?;
        let kept = std::iter::once(checkpoint).chain(pending.iter().filter_map(Kept::taken_snapshot));
        let missing: Vec<String> = kept.filter(|n| !have.iter().any(|h| h == n)).map(String::from).collect();
        if missing.is_empty() {
            stand_at(self.books, self.machine, KeptWay::to(checkpoint, pending, pending.len())).await?;
            return Ok(checkpoint.to_string());
        }
        let attempts = self.books.journal().attempts().await?;
        let lost_checkpoint = missing.iter().any(|m| m == checkpoint);
        let (from, confirmed): (&str, Vec<&Attempt>) = if lost_checkpoint {
            let since = attempts.iter().filter(|a| Some(a.id) > booted.through && a.in_force() && a.kept != Some(KeptState::Pending));
            (&booted.snapshot, since.collect())
        } else {
            (checkpoint, Vec::new())
        };
        let pending_fixes: Vec<(&Attempt, &Kept)> =
            pending.iter().filter_map(|k| attempts.iter().find(|a| a.id == k.attempt).map(|a| (a, k))).collect();
        let replayed = confirmed.len() + pending_fixes.len();
        self.books.note(None, EventData::CheckpointLost { missing: missing.clone(), from: from.to_string(), replayed }).await?;
        self.machine.restore(from).await?;
        replay(self.books, self.machine, &confirmed, from, ReplayWhy::CheckpointLost).await?;
        let head = if !lost_checkpoint {
            checkpoint.to_string()
        } else if confirmed.is_empty() {
            from.to_string()
        } else {
            let name = format!("{prefix}lost{}", confirmed.last().map_or(0, |a| a.id.get()));
            // One left by a rebuild a crash cut short is replaced.
            if have.contains(&name) {
                self.machine.hv().snapshot_delete(&name).await?;
            }
            self.machine.take_snapshot(&name, "rebuilt after its checkpoint was lost").await?;
            name
        };
        if lost_checkpoint {
            // In force from here; the pending fixes stay pending.
            self.books.journal().record_fixes(&[], &head).await?;
            let data = EventData::Checkpoint { snapshot: head.clone(), replaced: checkpoint.to_string(), fixes: Some(confirmed.len()) };
            self.books.note(None, data).await?;
        }
        for (a, k) in pending_fixes {
            replay(self.books, self.machine, &[a], &head, ReplayWhy::CheckpointLost).await?;
            if missing.contains(&k.snapshot) {
                self.machine.take_snapshot(&k.snapshot, &format!("{} fixed, rebuilt after its snapshot was lost", k.rule)).await?;
            }
        }
        Ok(head)
    }
}
