//! Kept fixes run again, in order, on the guest as it is: after a restore to an older kept state
//! (`preflight/lost.rs`), in the reboot proof's probes and rebuilds (`proof/`), and to stand at a
//! pending fix's state that has no snapshot of its own (`stand_at`, `state/kept.rs`).
use std::time::Instant;

use crate::ralph::books::Books;
use crate::ralph::error::LoopResult;
use crate::ralph::machine::Machine;
use crate::ralph::state::KeptWay;
use temper_journal::{Attempt, EventData, Overhead, ReplayWhy, Replayed};

/// Stands the guest at a kept state: restores the way's snapshot and replays the pending fixes
/// after it that have none of their own.
pub(super) async fn stand_at(books: &Books<'_>, machine: &Machine<'_>, way: KeptWay<'_>) -> LoopResult<()> {
    machine.restore(way.from).await?;
    if way.replay.is_empty() {
        return Ok(());
    }
    let attempts = books.journal().attempts().await?;
    let fixes: Vec<&Attempt> = way.replay.iter().filter_map(|k| attempts.iter().find(|a| a.id == k.attempt)).collect();
    replay(books, machine, &fixes, way.from, ReplayWhy::NoSnapshot).await?;
    // Guarded, as each of these fixes was right after it ran when it was kept: the state is
    // judged after the same steps. A failure is left to the check that follows (the revert's
    // guard, the probe's, the batch's), which reads the guard again.
    if let Some((verdict, why)) = machine.guard_fails_now().await {
        tracing::warn!(?verdict, why, replayed = fixes.len(), "the kept state rebuilt by replays fails its guard");
    }
    Ok(())
}

/// Runs kept fixes again, in order, on the guest as it is (`onto` names the state it was
/// restored to). A fix that fails is noted and left to the checks that follow. Their time is the
/// rest's replays.
pub(super) async fn replay(books: &Books<'_>, machine: &Machine<'_>, fixes: &[&Attempt], onto: &str, why: ReplayWhy) -> LoopResult<()> {
    for a in fixes {
        let started = Instant::now();
        let code = match machine.run_script(&a.spec.fix_script).await {
            Ok(out) => out.exit_code,
            Err(e) => {
                tracing::warn!(rule = %a.spec.rule_id, error = %e, "replaying a kept fix failed");
                None
            }
        };
        books.spend(Overhead::Replays, started.elapsed());
        let data = Replayed::Onto { attempt: a.n, onto: onto.to_string(), exit_code: code, why };
        books.note(Some(&a.spec.rule_id), EventData::Replay(data)).await?;
    }
    Ok(())
}
