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
    let since = state.booted().through;
    let holds: Vec<AttemptId> = books
        .journal()
        .attempts()
        .await?
        .into_iter()
        .filter(|a| a.in_force() && Some(a.id) > since && !newer.contains(&a.id))
        .map(|a| a.id)
        .collect();
    if holds.is_empty() {
        return machine.drop_snapshot(&old).await;
    }
    for s in state.add_stone(Stone { snapshot: old, holds }) {
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
