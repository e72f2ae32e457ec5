//! On resume, the newest kept state restored: the checkpoint, or the last pending fix's snapshot.
//! When any of those snapshots is gone (the domain was defined again, say), the guest is rebuilt
//! from the newest older kept state left: the checkpoint when only pending snapshots are gone,
//! else the checkpoint proven to boot (the baseline before any). The fixes kept since are run
//! again in order, and the lost snapshots taken again. Nothing is confirmed that was not: the
//! next regression check verifies the pending fixes, and the reboot proof every replayed one.
use super::{Booted, Kept, LoopResult, Ralph};
use crate::journal::{Attempt, EventData, KeptState, ReplayWhy, Replayed};
use crate::script;

impl Ralph<'_> {
    /// Restores the newest kept state, rebuilding what is gone. Returns the checkpoint in force
    /// (a new one when the old was gone and fixes were replayed).
    pub(super) async fn restore_head(&self, checkpoint: &str, pending: &[Kept], booted: &Booted, prefix: &str) -> LoopResult<String> {
        // One listing: each `snapshot_exists` lists them all again.
        let have = self.hv.snapshot_list().await?;
        let kept = std::iter::once(checkpoint).chain(pending.iter().map(|k| k.snapshot.as_str()));
        let missing: Vec<String> = kept.filter(|n| !have.iter().any(|h| h == n)).map(String::from).collect();
        if missing.is_empty() {
            self.restore(pending.last().map_or(checkpoint, |k| k.snapshot.as_str())).await?;
            return Ok(checkpoint.to_string());
        }
        let attempts = self.journal.attempts().await?;
        let lost_checkpoint = missing.iter().any(|m| m == checkpoint);
        let (from, confirmed): (&str, Vec<&Attempt>) = if lost_checkpoint {
            let since = attempts.iter().filter(|a| a.id > booted.through && a.in_force() && a.kept != Some(KeptState::Pending));
            (&booted.snapshot, since.collect())
        } else {
            (checkpoint, Vec::new())
        };
        let pending_fixes: Vec<(&Attempt, &Kept)> =
            pending.iter().filter_map(|k| attempts.iter().find(|a| a.id == k.attempt).map(|a| (a, k))).collect();
        let replayed = confirmed.len() + pending_fixes.len();
        self.note(None, EventData::CheckpointLost { missing: missing.clone(), from: from.to_string(), replayed }).await?;
        self.restore(from).await?;
        self.replay(&confirmed, from, ReplayWhy::CheckpointLost).await?;
        let head = if !lost_checkpoint {
            checkpoint.to_string()
        } else if confirmed.is_empty() {
            from.to_string()
        } else {
            let name = format!("{prefix}lost{}", confirmed.last().map_or(0, |a| a.id.0));
            // One left by a rebuild a crash cut short is replaced.
            if have.contains(&name) {
                self.hv.snapshot_delete(&name).await?;
            }
            self.take_snapshot(&name, "rebuilt after its checkpoint was lost").await?;
            name
        };
        if lost_checkpoint {
            // In force from here; the pending fixes stay pending.
            self.journal.record_fixes(&[], &head).await?;
            let data = EventData::Checkpoint { snapshot: head.clone(), replaced: checkpoint.to_string(), fixes: Some(confirmed.len()) };
            self.note(None, data).await?;
        }
        for (a, k) in pending_fixes {
            self.replay(&[a], &head, ReplayWhy::CheckpointLost).await?;
            if missing.contains(&k.snapshot) {
                self.take_snapshot(&k.snapshot, &format!("{} fixed, rebuilt after its snapshot was lost", k.rule)).await?;
            }
        }
        Ok(head)
    }

    /// Runs kept fixes again, in order, on the guest as it is (`onto` names the state it was
    /// restored to). A fix that fails is noted and left to the checks that follow.
    pub(super) async fn replay(&self, fixes: &[&Attempt], onto: &str, why: ReplayWhy) -> LoopResult<()> {
        for a in fixes {
            let code = match script::run(self.guest, &a.spec.fix_script, super::attempt::OUTPUT_CAP, self.settings.fix_watch).await {
                Ok(out) => out.exit_code,
                Err(e) => {
                    tracing::warn!(rule = %a.spec.rule_id, error = %e, "replaying a kept fix failed");
                    None
                }
            };
            let data = Replayed::Onto { attempt: a.n, onto: onto.to_string(), exit_code: code, why };
            self.note(Some(&a.spec.rule_id), EventData::Replay(data)).await?;
        }
        Ok(())
    }
}
