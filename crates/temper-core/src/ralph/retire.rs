//! A checkpoint the run moves past: kept as a stepping stone for the reboot proof's replays
//! (`state/stones.rs`), or dropped when it holds no fix since the booted checkpoint. One place
//! for the keep, the regression check's promotion and the plan's batches.
use crate::ralph::books::Books;
use crate::ralph::error::LoopResult;
use crate::ralph::machine::Machine;
use crate::ralph::state::{RunState, Stone};
use temper_journal::AttemptId;

/// `old` was the checkpoint until one holding the fixes `newer` besides replaced it.
pub(super) async fn retire(
    books: &Books<'_>,
    machine: &Machine<'_>,
    state: &mut RunState,
    old: String,
    newer: &[AttemptId],
) -> LoopResult<()> {
    // The checkpoint proven to boot stays: the reboot proof replays fixes onto it.
    if state.pinned(&old) {
        return Ok(());
    }
    let holds: Vec<AttemptId> = in_force_since_booted(books, state).await?.into_iter().filter(|id| !newer.contains(id)).collect();
    if holds.is_empty() {
        return machine.drop_snapshot(&old).await;
    }
    add_stone(machine, state, Stone { snapshot: old, holds }).await
}

/// Snapshots taken on the way to the checkpoint just set (a plan batch's, `batch/check.rs`),
/// oldest first, each with the fixes `newer` than it: kept as stepping stones, as a checkpoint
/// moved past is.
pub(super) async fn retire_passed(
    books: &Books<'_>,
    machine: &Machine<'_>,
    state: &mut RunState,
    passed: Vec<(String, Vec<AttemptId>)>,
) -> LoopResult<()> {
    let held = in_force_since_booted(books, state).await?;
    for (snapshot, newer) in passed {
        let holds = held.iter().copied().filter(|id| !newer.contains(id)).collect();
        add_stone(machine, state, Stone { snapshot, holds }).await?;
    }
    Ok(())
}

/// The fixes in force kept since the booted checkpoint, oldest first.
async fn in_force_since_booted(books: &Books<'_>, state: &RunState) -> LoopResult<Vec<AttemptId>> {
    let since = state.booted().through;
    let attempts = books.journal().attempts().await?;
    Ok(attempts.into_iter().filter(|a| a.in_force() && Some(a.id) > since).map(|a| a.id).collect())
}

async fn add_stone(machine: &Machine<'_>, state: &mut RunState, stone: Stone) -> LoopResult<()> {
    for s in state.add_stone(stone) {
        machine.drop_snapshot(&s.snapshot).await?;
    }
    Ok(())
}

/// Drops the stones that hold any of `ids` (blamed fixes: no replay can use them), or all of
/// them (a new booted checkpoint, or the run's end).
pub(super) async fn drop_stones(machine: &Machine<'_>, state: &mut RunState, ids: Option<&[AttemptId]>) -> LoopResult<()> {
    for s in state.take_stones(ids) {
        machine.drop_snapshot(&s.snapshot).await?;
    }
    Ok(())
}
